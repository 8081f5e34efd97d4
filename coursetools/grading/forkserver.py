"""A kernel fork server: a warm, sandboxed Python that forks a fresh kernel for each notebook.

Starting a Python kernel costs about 0.4 s of CPU (interpreter, ipykernel, IPython). When the CPU is the
bottleneck, as it is when a class is graded on two cores, that is a large part of the work. The fork server
pays it once: it starts inside the bubblewrap sandbox (`coursetools.sandbox.bubblewrap`, the same layout and limits as a
kernel), imports ipykernel and IPython, and then, for every notebook, forks a child that becomes the kernel.
Its code inside the sandbox is `coursetools/sandbox/forkserver_inside.py`, bound read-only as the one file of the course
package that the sandbox shows (the hidden checks and the oracle are not visible there).

Isolation between students does not rely on the children being polite:

* one kernel at a time: before a new student's kernel is forked, `clear` kills every other process in the
  sandbox's PID namespace (``kill(-1, SIGKILL)``, repeated until /proc shows only the sandbox's init and the
  server) and empties every writable place (HOME with the submission folder, /tmp, /dev/shm), so nothing a
  student started or wrote outlives their notebook;
* the server is not dumpable, so a kernel cannot ptrace it or read its memory or file descriptors; its control
  pipe is closed in every child; it ignores the signals a kernel could send it except SIGKILL and SIGSTOP,
  and the host side treats a server that dies or stops answering as gone and starts a new one;
* the server never reads anything a kernel can write: its own state is fixed before the first fork.

Within one notebook, a kernel that dies is replaced without wiping the folder (`clear(wipe=False)`), as a
restarted cold kernel would find it.

Protocol: JSON lines. Requests on the server's stdin ``{"id", "op": "spawn" | "signal" | "clear", ...}``,
replies ``{"id", ...}`` and events ``{"exit": pid, "status": code}`` on its stdout (code as Popen.returncode).
"""
from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
from typing import Optional

from coursetools.sandbox import bubblewrap as sbx
from coursetools.sandbox.workdir import chown_tree

_INSIDE = importlib.util.find_spec('coursetools.sandbox.forkserver_inside').origin

READY_TIMEOUT = 60
REQUEST_TIMEOUT = 10     # a fork or a clear takes well under a second; a server silent this long is stopped
class ForkServerError(RuntimeError):
    """The fork server could not start, or stopped answering."""


# ============================================================================ on the host

_launcher_lock = threading.Lock()
_launches = None


def _popen_in_lasting_thread(*args, **kwargs) -> subprocess.Popen:
    """subprocess.Popen, called from a thread that lasts as long as this process. bwrap's --die-with-parent
    is PR_SET_PDEATHSIG, which fires when the *thread* that started bwrap ends, not the process: a server
    started from a short-lived thread would be killed with it."""
    import queue
    global _launches
    with _launcher_lock:
        if _launches is None:
            _launches = queue.Queue()

            def launch_forever():
                while True:
                    result, done = _launches.get()
                    try:
                        result['process'] = subprocess.Popen(*result.pop('args'), **result.pop('kwargs'))
                    except BaseException as error:
                        result['error'] = error
                    done.set()

            threading.Thread(target=launch_forever, name='fork-server-launcher', daemon=True).start()
    result, done = {'args': args, 'kwargs': kwargs}, threading.Event()
    _launches.put((result, done))
    done.wait()
    if 'error' in result:
        raise result['error']
    return result['process']


class ForkedKernel:
    """The Popen-like handle jupyter_client's LocalProvisioner uses for a kernel the fork server made."""

    stdin = stdout = stderr = None

    def __init__(self, server: 'ForkServer', pid: int):
        self.server, self.pid = server, pid
        self.returncode: Optional[int] = None
        self.exited = threading.Event()

    def mark_exited(self, status: int) -> None:
        if self.returncode is None:
            self.returncode = status
        self.exited.set()

    def poll(self) -> Optional[int]:
        return self.returncode

    def wait(self, timeout: Optional[float] = None) -> Optional[int]:
        if not self.exited.wait(timeout):
            raise subprocess.TimeoutExpired('forked kernel', timeout)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            self.server.notify({'op': 'signal', 'pid': self.pid, 'sig': int(sig)})

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


class ForkServer:
    """Host side: starts the server in its sandbox and talks to it. Thread-safe; blocking calls."""

    def __init__(self, *, workdir: str, inner_workdir: str, conn_root: str, limits: sbx.Limits,
                 uid: Optional[int], preload=(), env: Optional[dict] = None, log_path: Optional[str] = None,
                 extra_ro_binds=()):
        self.workdir, self.inner_workdir, self.conn_root = workdir, inner_workdir, conn_root
        self.limits, self.uid, self.preload = limits, uid, list(preload)
        self.extra_ro_binds = list(extra_ro_binds)
        self.log_path = log_path or conn_root + '.log'
        self.extra_env = dict(env or {})
        self.env = {**sbx.base_env(), **self.extra_env}
        self.process: Optional[subprocess.Popen] = None
        self.lock = threading.Lock()
        self.replies: dict = {}
        self.kernels: dict[int, ForkedKernel] = {}
        self.next_id = 0
        self.ready: dict = {}
        self.gone: Optional[str] = None
        self.changed = threading.Condition(self.lock)

    def command(self) -> list[str]:
        wipe = {'paths': [sbx.SANDBOX_HOME, '/tmp', '/dev/shm'], 'mounts': [self.inner_workdir, self.conn_root]}
        cmd = [sys.executable, f'{sbx.PROGRAMS}/fork_server.py', json.dumps(self.preload), json.dumps(wipe)]
        layout = sbx.SandboxLayout(workdir=self.workdir, conn_dir=self.conn_root,
                                   sandbox_workdir=self.inner_workdir, env=self.extra_env,
                                   extra_ro_binds=self.extra_ro_binds,
                                   programs={'fork_server.py': _INSIDE})
        return sbx.build_command(cmd, layout, self.limits, uid=self.uid)

    def start(self) -> 'ForkServer':
        if self.uid is not None:
            chown_tree(self.workdir, self.uid)
            chown_tree(self.conn_root, self.uid)
        with open(self.log_path, 'ab') as log:
            self.process = _popen_in_lasting_thread(
                self.command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, cwd=self.conn_root,
                env={'PATH': os.environ.get('PATH', '/usr/bin:/bin')})
        threading.Thread(target=self._read, name='fork-server-reader', daemon=True).start()
        with self.lock:
            if not self.changed.wait_for(lambda: self.ready or self.gone, READY_TIMEOUT):
                self.gone = f'did not become ready within {READY_TIMEOUT} s'
        if self.gone:
            self.close()
            raise ForkServerError(f'the kernel fork server could not start: {self.gone}\n{self.log_tail()}')
        return self

    def _read(self) -> None:
        for line in self.process.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            with self.lock:
                if 'exit' in message:
                    kernel = self.kernels.pop(message['exit'], None)
                    if kernel:
                        kernel.mark_exited(message['status'])
                elif 'ready' in message:
                    self.ready = message
                elif 'id' in message:
                    if 'pid' in message:    # registered here, before its exit event can arrive
                        message['kernel'] = self.kernels[message['pid']] = ForkedKernel(self, message['pid'])
                    self.replies[message['id']] = message
                self.changed.notify_all()
        with self.lock:
            self.gone = self.gone or 'the fork server exited' + self._exit_text()
            for kernel in self.kernels.values():
                kernel.mark_exited(-signal.SIGKILL)
            self.kernels.clear()
            self.changed.notify_all()

    def _exit_text(self) -> str:
        rc = self.process.poll() if self.process else None
        return '' if rc is None else f' (status {rc})'

    @property
    def alive(self) -> bool:
        return self.gone is None and self.process is not None and self.process.poll() is None

    def _write(self, message: dict) -> None:
        try:
            self.process.stdin.write((json.dumps(message) + '\n').encode())
            self.process.stdin.flush()
        except (OSError, ValueError) as error:
            raise ForkServerError(f'the kernel fork server is gone: {error}') from error

    def notify(self, message: dict) -> None:
        """Send a request without waiting for its reply (signals)."""
        with self.lock:
            if self.gone is None:
                self._write(message)

    request_timeout = REQUEST_TIMEOUT

    def request(self, op: str, **fields) -> dict:
        timeout = self.request_timeout
        with self.lock:
            if self.gone:
                raise ForkServerError(f'the kernel fork server is gone: {self.gone}')
            self.next_id += 1
            rid = self.next_id
            self._write({'id': rid, 'op': op, **fields})
            if not self.changed.wait_for(lambda: rid in self.replies or self.gone, timeout):
                self.gone = f'no answer to {op!r} within {timeout} s'
            reply = self.replies.pop(rid, None)
        if reply is None:
            self.close()
            raise ForkServerError(f'the kernel fork server stopped answering: {self.gone}')
        if 'error' in reply:
            raise ForkServerError(f'the kernel fork server could not {op}: {reply["error"]}')
        return reply

    def clear(self, wipe: bool) -> int:
        """Kill every process the kernels left; with `wipe`, also empty HOME (the submission folder), /tmp and
        /dev/shm. Returns how many processes had to be killed."""
        return self.request('clear', wipe=wipe)['killed']

    def spawn(self, argv: list[str], log: str, env: Optional[dict] = None) -> ForkedKernel:
        """Fork a kernel running ipykernel with `argv` (such as ``['-f', connection_file]``)."""
        reply = self.request('spawn', argv=list(argv), cwd=self.inner_workdir, log=log,
                             env={**self.env, **(env or {})})
        return reply['kernel']

    def close(self) -> None:
        process = self.process
        if process is None:
            return
        sbx.stop_process(process)
        with self.lock:
            self.gone = self.gone or 'closed'
            self.changed.notify_all()

    def log_tail(self, n: int = 2000) -> str:
        return sbx.log_tail(self.log_path, n)
