"""Where a grading kernel comes from, and where it runs: the seam between `SandboxedExecute` and whoever calls it.

A notebook's kernels run in a `KernelPlace`: a folder with (a private copy of) the submission, a folder for the
connection files, the throw-away uid, the environment. A kernel source prepares the place for each notebook and
launches each kernel there:

* `ColdKernels` (the default): every kernel is a new sandboxed Python.
* `ForkedKernels`: every kernel is forked from a warm fork server in the same sandbox (`coursetools.grading.forkserver`),
  which kills and wipes what the last student's kernel left before the next notebook.
`make grade` uses forked kernels (`coursetools.grading.pool`), and cold ones only where no fork server can start;
plain `nbgrader autograde` uses cold ones.
"""
from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional

from jupyter_client.launcher import launch_kernel
from jupyter_client.provisioning import LocalProvisioner
from traitlets import Any as AnyTrait

from coursetools.sandbox import bubblewrap as sbx
from coursetools.sandbox.workdir import chown_tree, copy_submission, remove_tree, special_files

_serial = itertools.count(1)


@dataclass(frozen=True)
class KernelPlace:
    """Where one notebook's kernels run."""
    sandboxed: bool
    workdir: str                        # the kernel's folder on the host: a private copy of the submission
    scratch: str                        # host folder holding one connection folder per kernel
    inner_workdir: Optional[str] = None     # the same folder as the sandboxed kernel sees it
    uid: Optional[int] = None           # the throw-away uid of a sandboxed kernel (when grading as root)
    env: Mapping[str, str] = field(default_factory=dict)

    def connection_folder(self) -> str:
        folder = os.path.join(self.scratch, f'kernel{next(_serial)}')
        os.mkdir(folder, 0o700)
        if self.uid is not None:
            chown_tree(folder, self.uid)
        return folder


def inner_folder(name: str) -> str:
    """The submission folder as a sandboxed kernel sees it."""
    return f'{sbx.SANDBOX_HOME}/{name or "submission"}'


def kernel_command(cmd: list) -> list:
    """`python -m ipykernel_launcher ARGS` as `python -c BOOT ARGS`, where BOOT takes the kernel's folder off
    sys.path before ipykernel imports anything, so that a student's `json.py` cannot break the kernel's start
    (IPython puts the folder back, after the standard library, when the shell starts)."""
    if cmd[1:3] != ['-m', 'ipykernel_launcher']:
        return list(cmd)
    boot = ("import sys\nwhile '' in sys.path: sys.path.remove('')\n"
            "from ipykernel import kernelapp\nkernelapp.launch_new_instance()\n")
    return [cmd[0], '-c', boot, *cmd[3:]]


class ColdKernels:
    """Every kernel is a new Python, sandboxed unless the executor says otherwise."""

    name = 'cold'

    async def prepare(self, executor, submission: str) -> KernelPlace:
        """A place for one notebook: a private copy of the submission folder (sandboxed), or the folder itself."""
        if executor.sandboxed:          # before a folder is made: a sandbox that cannot start leaves none behind
            await asyncio.get_running_loop().run_in_executor(None, sbx.require_sandbox)
        scratch = tempfile.mkdtemp(prefix='nbsbx-', dir=executor.sandbox_tmpdir or None)
        os.chmod(scratch, 0o755)
        env = {'NBGRADER_EXECUTION': executor.nbgrader_execution} if executor.nbgrader_execution else {}
        if not executor.sandboxed:
            return KernelPlace(False, submission, scratch, env=env)
        uid = sbx.pick_sandbox_uid()
        workdir = os.path.join(scratch, 'work')
        copy_submission(submission, workdir, uid)
        return KernelPlace(True, workdir, scratch, inner_folder(Path(submission).name), uid, env)

    async def launch(self, place: KernelPlace, cmd: list, connection: str, log, limits: sbx.Limits):
        """Start one kernel process in `place`; returns a Popen-like handle."""
        cmd = kernel_command(cmd)
        if place.sandboxed:
            layout = sbx.SandboxLayout(workdir=place.workdir, conn_dir=connection,
                                       sandbox_workdir=place.inner_workdir, env=dict(place.env))
            cmd = sbx.build_command(cmd, layout, limits, uid=place.uid)
            if place.uid is not None:     # the connection file (root's, 0600) must be readable by the kernel
                chown_tree(connection, place.uid)
            env = {'PATH': os.environ.get('PATH', '/usr/bin:/bin')}
            cwd = connection
        else:
            rlimits = limits.rlimits()
            rlimits.pop('RLIMIT_NPROC', None)     # it would count every process of the grader's user
            cmd = sbx.launcher_command(cmd, rlimits)
            env = {**os.environ, 'MPLBACKEND': 'Agg', 'MALLOC_ARENA_MAX': '2', **place.env}
            cwd = place.workdir
        return launch_kernel(cmd, cwd=cwd, env=env, stdout=log, stderr=log)

    async def finish(self, place: KernelPlace) -> None:
        """The notebook is done and its kernels are stopped."""
        await asyncio.get_running_loop().run_in_executor(None, remove_tree, place.scratch)

    def close(self) -> None:
        """The end of a grading run."""

    async def aclose(self) -> None:
        """The end of a grading run, from the event loop the kernels were started in."""
        self.close()


#: bytes a temporary folder's path may have: a Unix socket's path holds 107, and a kernel's sockets are at
#: <temp>/nbfork-XXXXXXXX/conn/kernelNNNN/k-N
SOCKET_ROOM = 107 - len('/nbfork-XXXXXXXX/conn/kernel9999/k-9')


class ForkedKernels(ColdKernels):
    """Kernels forked from one warm fork server; one notebook at a time. If a kernel takes the server down,
    the next kernel gets a new server on the same folders."""

    name = 'forked'

    def __init__(self, executor, folder_name: str, preload=()):
        from coursetools.grading import forkserver
        sbx.require_sandbox()
        self.limits = executor.limits()
        self.folder_name = folder_name
        self.preload = list(preload)
        self.env = {'NBGRADER_EXECUTION': executor.nbgrader_execution} if executor.nbgrader_execution else {}
        self.scratch = tempfile.mkdtemp(prefix='nbfork-', dir=executor.sandbox_tmpdir or None)
        os.chmod(self.scratch, 0o755)
        for sub in ('work', 'conn'):
            os.mkdir(os.path.join(self.scratch, sub), 0o755)
        self.server: Optional['forkserver.ForkServer'] = None
        self.lock = threading.Lock()
        self.restarts = 0

    def live(self):
        """The fork server, started (again) if it is not running."""
        from coursetools.grading import forkserver
        with self.lock:
            if self.server is None or not self.server.alive:
                if self.server is not None:
                    self.server.close()
                    self.restarts += 1
                self.server = forkserver.ForkServer(
                    workdir=os.path.join(self.scratch, 'work'), conn_root=os.path.join(self.scratch, 'conn'),
                    inner_workdir=inner_folder(self.folder_name), limits=self.limits,
                    uid=sbx.pick_sandbox_uid(), preload=self.preload, env=self.env)
                self.server.start()
            return self.server

    async def prepare(self, executor, submission: str) -> KernelPlace:
        from coursetools.grading.forkserver import ForkServerError
        loop = asyncio.get_running_loop()
        for attempt in (1, 2):        # a server the last student's kernel froze or killed is replaced
            try:
                server = await loop.run_in_executor(None, self.live)
                await loop.run_in_executor(None, server.clear, True)
                break
            except ForkServerError:
                if attempt == 2:
                    raise
        await loop.run_in_executor(None, _copy_into, submission, server.workdir, server.uid)
        return KernelPlace(True, server.workdir, server.conn_root, server.inner_workdir, server.uid, self.env)

    async def launch(self, place, cmd, connection, log, limits):
        from coursetools.grading.forkserver import ForkServerError
        if 'ipykernel_launcher' not in cmd:
            raise RuntimeError(f'the kernel fork server runs ipykernel kernels only, not {cmd}')
        argv = cmd[cmd.index('ipykernel_launcher') + 1:]
        loop = asyncio.get_running_loop()
        for attempt in (1, 2):
            try:
                server = await loop.run_in_executor(None, self.live)
                # the connection file is root's; a server started since the notebook began has a new uid
                folder = self.scratch if place.uid != server.uid else connection
                if server.uid is not None:
                    await loop.run_in_executor(None, chown_tree, folder, server.uid)
                await loop.run_in_executor(None, server.clear, False)   # what an earlier kernel left running
                return await loop.run_in_executor(None, server.spawn, argv, log.name)
            except ForkServerError:
                if attempt == 2:
                    raise

    async def finish(self, place):
        """Nothing: the next notebook's `prepare` kills and wipes what this one left."""

    def close(self):
        with self.lock:
            if self.server is not None:
                self.server.close()
        remove_tree(self.scratch)


def _copy_into(submission: str, folder: str, uid: Optional[int]) -> None:
    """Copy the submission's files into a kernel's (empty) folder and hand them to the kernel's uid; the folder's
    time changes so that the running kernel's import caches see the new files."""
    before = os.stat(folder).st_mtime_ns
    shutil.copytree(submission, folder, symlinks=True, dirs_exist_ok=True, ignore=special_files)
    if uid is not None:
        chown_tree(folder, uid)
    if os.stat(folder).st_mtime_ns == before:
        os.utime(folder, ns=(time.time_ns(), before + 1_000_000_000))


class SandboxProvisioner(LocalProvisioner):
    """jupyter_client's local provisioner, launching the kernel through the executor's kernel source."""

    source = AnyTrait()
    place = AnyTrait()
    limits = AnyTrait()
    connection = AnyTrait()
    log_path = AnyTrait()

    async def launch_kernel(self, cmd, **kwargs):
        with open(self.log_path, 'ab') as log:
            process = await self.source.launch(self.place, list(cmd), self.connection, log, self.limits)
        self.process, self.pid = process, process.pid
        self.pgid = getattr(process, 'pgid', None)
        if self.pgid is None and not hasattr(process, 'server'):
            try:
                self.pgid = os.getpgid(process.pid)
            except OSError:
                self.pgid = None
        self.cwd = self.place.workdir
        return self.connection_info
