"""Where a grading kernel comes from, and where it runs: the seam between `SandboxedExecute` and the sandbox.

Every kernel is a new sandbox of its own (`coursetools.sandbox.host.bubblewrap`): a new Python in its own PID and
IPC namespaces, with its own sized tmpfs for HOME, the working folder and /tmp. A notebook's kernels share a
`KernelPlace`: the notebook's folder on the host (`coursetools.sandbox.host.files.NotebookFolder`, only the grader
can write it), the throw-away uid reserved for the notebook, the environment. When a kernel stops, everything it
started dies with its PID namespace, and the grader waits for that before the next kernel's files are made.

A warm fork server once saved about a tenth of the kernels' CPU; it was taken out (issue 41, docs/sandbox.md):
it shared one writable connection folder and one uid between a notebook's kernels and outlived them.
`ForkedKernels` (`make grade` as root) wins that back without either: each kernel is forked from a zygote outside
every sandbox into a new sandbox bubblewrap made for it (`coursetools.sandbox.host.zygote`).
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
from dataclasses import dataclass, field
from typing import Mapping, Optional

from jupyter_client.provisioning import LocalProvisioner
from traitlets import Any as AnyTrait

from coursetools.sandbox.host import bubblewrap as sbx
from coursetools.sandbox.host import uids
from coursetools.sandbox.host.files import KernelFolder, NotebookFolder
from coursetools.sandbox.host import processes
from coursetools.sandbox.host.zygote import Zygote

#: bytes a temporary folder's path may have: a Unix socket's path holds 107, and a kernel's sockets are at
#: <temp>/nbsbx-XXXXXXXX/kernelNNN/sockets/k-N
SOCKET_ROOM = 107 - len('/nbsbx-XXXXXXXX/kernel999/sockets/k-9')


@dataclass
class KernelPlace:
    """Where one notebook's kernels run."""
    sandboxed: bool
    folder: NotebookFolder
    workdir: str                        # the kernel's working folder, as the kernel sees it
    lease: Optional[uids.Lease] = None  # the throw-away uid of a sandboxed kernel (when grading as root)
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def uid(self) -> Optional[int]:
        return self.lease.uid if self.lease else None


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
            "sys.modules['debugpy'] = None\nimport ipykernel.debugger\ndel sys.modules['debugpy']\n"
            "from ipykernel import kernelapp\nkernelapp.launch_new_instance()\n")
    return [cmd[0], '-c', boot, *cmd[3:]]


class Kernels:
    """Every kernel a new Python, sandboxed unless the executor says otherwise."""

    async def prepare(self, executor, submission: str) -> KernelPlace:
        """A place for one notebook: the grader's copy of the submission (sandboxed), or the folder itself."""
        loop = asyncio.get_running_loop()
        env = {'NBGRADER_EXECUTION': executor.nbgrader_execution} if executor.nbgrader_execution else {}
        if not executor.sandboxed:
            return KernelPlace(False, NotebookFolder(None, executor.sandbox_tmpdir), submission, env=env)
        await loop.run_in_executor(None, sbx.require_sandbox)   # before a folder is made
        lease = uids.lease()
        try:
            folder = await loop.run_in_executor(None, NotebookFolder, submission, executor.sandbox_tmpdir,
                                                lease.uid)
        except BaseException:
            lease.release()
            raise
        return KernelPlace(True, folder, inner_folder(os.path.basename(submission)), lease, env)

    def launch(self, place: KernelPlace, cmd: list, kernel: KernelFolder, log: int, limits: sbx.Limits):
        """Start one kernel process in `place`; returns its Popen and, sandboxed, its sandbox's init (a pidfd)."""
        cmd = kernel_command(cmd)
        if not place.sandboxed:
            rlimits = limits.rlimits()
            rlimits.pop('RLIMIT_NPROC', None)     # it would count every process of the grader's user
            env = {**os.environ, 'MPLBACKEND': 'Agg', 'MALLOC_ARENA_MAX': '2', **place.env}
            process = subprocess.Popen(sbx.launcher_command(cmd, rlimits), cwd=place.workdir, env=env,
                                       stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
            return process, None
        return processes.start(sbx.build_command(cmd, self.layout(place, kernel), limits, uid=place.uid), log, log)

    @staticmethod
    def layout(place: KernelPlace, kernel: KernelFolder) -> sbx.SandboxLayout:
        """What a sandboxed kernel of `place` sees; its connection file is readable by the kernel from now on."""
        kernel.share_connection_file()
        return sbx.SandboxLayout(submission=place.folder.submission, connection_file=kernel.connection_file,
                                 sockets=kernel.sockets, inner_workdir=place.workdir, env=dict(place.env))

    def warm_up(self) -> None:
        """Nothing to start ahead: every kernel is a new Python."""

    async def finish(self, place: KernelPlace) -> None:
        """The notebook is done and every sandbox of it is gone."""
        try:
            await asyncio.get_running_loop().run_in_executor(None, place.folder.remove)
        finally:
            if place.lease is not None:
                place.lease.release()

    async def aclose(self) -> None:
        """The end of a grading run, from the event loop the kernels were started in."""


class ForkedKernels(Kernels):
    """`make grade`'s kernels, when it runs as root: each in a new sandbox as above, made by bubblewrap, but forked
    from a warm zygote that has imported ipykernel and never runs a student's code (`sandbox/host/zygote.py`),
    instead of a new Python importing it again (about 0.2 CPU-s a kernel)."""

    def __init__(self):
        self.zygote: Optional[Zygote] = None

    def warm_up(self) -> None:
        if self.zygote is None and os.geteuid() == 0:
            self.zygote = Zygote(sbx.base_env())
            self.zygote.start()

    def launch(self, place: KernelPlace, cmd: list, kernel: KernelFolder, log: int, limits: sbx.Limits):
        if not place.sandboxed or place.uid is None or cmd[1:3] != ['-m', 'ipykernel_launcher']:
            return super().launch(place, cmd, kernel, log, limits)
        self.warm_up()
        layout = self.layout(place, kernel)
        request = {'argv': cmd[3:], 'env': {**sbx.sandbox_env(layout), 'PWD': sbx.SANDBOX_HOME},   # as bwrap's --chdir
                   'launcher': sbx.launcher_config(layout, limits, place.uid)}
        return self.zygote.launch(sbx.build_command([], layout, limits, uid=place.uid), log, request)

    async def aclose(self) -> None:
        if self.zygote is not None:
            zygote, self.zygote = self.zygote, None
            await asyncio.get_running_loop().run_in_executor(None, zygote.close)


class SandboxProvisioner(LocalProvisioner):
    """jupyter_client's local provisioner, launching the kernel through the executor's kernel source. Its
    cleanup kills the whole sandbox and waits until it is gone."""

    source = AnyTrait()
    place = AnyTrait()
    limits = AnyTrait()
    kernel = AnyTrait()
    sandbox_init = None

    async def launch_kernel(self, cmd, **kwargs):
        log = self.kernel.open_log()
        try:
            process, self.sandbox_init = self.source.launch(self.place, list(cmd), self.kernel, log, self.limits)
        finally:
            os.close(log)
        self.process, self.pid = process, process.pid
        self.pgid = process.pid             # its own session: start_new_session
        self.cwd = self.place.workdir
        return self.connection_info

    async def cleanup(self, restart: bool = False) -> None:
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(OSError):
                self.process.kill()
        pidfd, self.sandbox_init = self.sandbox_init, None
        if pidfd is not None:
            if self.process is not None and self.process.poll() is None:
                await asyncio.get_running_loop().run_in_executor(None, self.process.wait)
            await asyncio.get_running_loop().run_in_executor(None, processes.wait_gone, pidfd)
        await super().cleanup(restart)
