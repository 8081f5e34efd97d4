"""The part of the kernel fork server that runs inside the sandbox (see `coursetools.grading.forkserver`).

Standard library only: the host binds this one file read-only into the sandbox (`coursetools.sandbox.bubblewrap.PROGRAMS`)
and runs it there, so that nothing else of the course package (the hidden checks, the oracle) is visible to
student kernels.
"""
import contextlib
import json
import os
import select
import signal
import sys
import threading
import time
from typing import Optional

_IGNORED = ('SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGTSTP', 'SIGTTIN', 'SIGTTOU', 'SIGUSR1', 'SIGUSR2',
            'SIGPIPE', 'SIGALRM')
KERNEL_MODULES = ('ipykernel.kernelapp', 'ipykernel.ipkernel', 'ipykernel.zmqshell', 'ipykernel.debugger',
                  'IPython', 'jedi')


def _set_dumpable(flag: bool) -> None:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_DUMPABLE = 4
    if libc.prctl(PR_SET_DUMPABLE, int(flag), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), 'prctl(PR_SET_DUMPABLE) failed')


def _preload(modules) -> list:
    import importlib
    loaded = []
    for name in list(KERNEL_MODULES) + list(modules):
        try:
            module = importlib.import_module(name)
        except Exception as error:   # a missing optional module only costs its warm-up
            print(f'fork server: could not preload {name}: {error!r}', file=sys.stderr)
            continue
        warm_up = getattr(module, 'warm_up', None)
        if callable(warm_up) and name in modules:
            warm_up()
        loaded.append(name)
    return loaded


def _mount_points() -> list[str]:
    with open('/proc/self/mountinfo') as f:
        return [line.split()[4].replace('\\040', ' ') for line in f]


def _wipe(path: str, ours: list, mounts: Optional[list] = None) -> None:
    """Remove everything inside `path` (not `path` itself), whatever its permissions. Of the mount points below
    it, only `ours` (the submission folder, the connection files) are emptied; the others (read-only binds of
    the course's Python, when the course lives under /tmp) are left alone, and so are the folders leading to
    them."""
    import subprocess

    def remove(target):         # coreutils: any depth (shutil.rmtree stops with RecursionError at about 1,000)
        for command in ('rm -rf --', 'chmod -R u+rwx --', 'rm -rf --'):      # again, after a folder made unreadable
            if os.path.lexists(target):
                subprocess.run(command.split() + [target], capture_output=True)
        if os.path.lexists(target):
            raise OSError(f'could not remove {target}')

    mounts = _mount_points() if mounts is None else mounts
    try:
        names = os.listdir(path)
    except OSError:
        return
    for name in names:
        target = os.path.join(path, name)
        if target in mounts:
            if target in ours:
                _wipe(target, ours, mounts)
        elif any(m.startswith(target + '/') for m in mounts):
            _wipe(target, ours, mounts)
        elif os.path.isdir(target) and not os.path.islink(target):
            remove(target)
        else:
            os.unlink(target)


def _others() -> list[int]:
    me = os.getpid()
    return [int(d) for d in os.listdir('/proc') if d.isdigit() and int(d) not in (1, me)]


class _Server:
    def __init__(self, control_in: int, control_out: int, wipe: dict):
        self.control_in, self.control_out = control_in, control_out
        self.wipe_paths, self.our_mounts = wipe['paths'], wipe['mounts']
        self.children: dict[int, int] = {}     # pid -> request id
        self.buffer = b''
        self.wake_r, self.wake_w = os.pipe()   # SIGCHLD wakes the select loop through this pipe

    def send(self, message: dict) -> None:
        data = (json.dumps(message) + '\n').encode()
        while data:
            data = data[os.write(self.control_out, data):]

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if self.children.pop(pid, None) is not None:
                self.send({'exit': pid, 'status': os.waitstatus_to_exitcode(status)})

    def spawn(self, request: dict) -> dict:
        if threading.active_count() != 1:
            return {'error': 'the fork server has threads; it cannot fork safely'}
        pid = os.fork()
        if pid == 0:
            self._become_kernel(request)
        self.children[pid] = request['id']
        return {'pid': pid}

    def _become_kernel(self, request: dict) -> None:
        code = 1
        try:
            os.setsid()
            for name in _IGNORED + ('SIGCHLD',):
                signal.signal(getattr(signal, name), signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.default_int_handler)     # as in a fresh Python
            signal.signal(signal.SIGPIPE, signal.SIG_IGN)
            signal.set_wakeup_fd(-1)
            for fd in (self.control_in, self.control_out, self.wake_r, self.wake_w):
                os.close(fd)
            _set_dumpable(True)
            log = os.open(request['log'], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            os.dup2(log, 1)
            os.dup2(log, 2)
            os.close(log)
            os.chdir(request['cwd'])
            os.environ.clear()
            os.environ.update(request['env'])
            sys.argv = ['ipykernel_launcher', *request['argv']]
            # as ipykernel_launcher: IPython puts '' (the folder) back itself; this program's folder goes
            sys.path[:] = [p for p in sys.path if p not in ('', os.path.dirname(os.path.abspath(__file__)))]
            import importlib
            importlib.invalidate_caches()
            if 'numpy.random' in sys.modules:     # a cold kernel would have its own seed
                sys.modules['numpy.random'].seed()
            from ipykernel import kernelapp
            kernelapp.launch_new_instance()
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        except BaseException:
            import traceback
            traceback.print_exc()
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)

    def clear(self, request: dict) -> dict:
        deadline = time.monotonic() + 5
        killed = 0
        while True:
            self.reap()
            others = _others()
            if not others:
                break
            if time.monotonic() > deadline:
                return {'error': f'{len(others)} process(es) would not die'}
            killed = max(killed, len(others))
            with contextlib.suppress(ProcessLookupError):
                os.kill(-1, signal.SIGKILL)
            time.sleep(0.005)
        self.reap()
        self.children.clear()
        if request.get('wipe'):
            for path in self.wipe_paths:
                try:
                    _wipe(path, self.our_mounts)
                except OSError as error:
                    return {'error': f'could not empty {path}: {error}'}
        return {'killed': killed}

    def signal(self, request: dict) -> dict:
        pid = request['pid']
        if pid in self.children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, request['sig'])
        return {}

    def handle(self, request: dict) -> None:
        op = request.get('op')
        try:
            reply = {'spawn': self.spawn, 'clear': self.clear, 'signal': self.signal}[op](request)
        except Exception as error:
            reply = {'error': f'{type(error).__name__}: {error}'}
        if request.get('id') is not None:
            reply['id'] = request['id']
            self.send(reply)

    def serve(self) -> None:
        wake_r = self.wake_r
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        while True:
            try:
                ready, _, _ = select.select([self.control_in, wake_r], [], [])
            except InterruptedError:
                continue
            if wake_r in ready:
                os.read(wake_r, 4096)
                self.reap()
            if self.control_in in ready:
                chunk = os.read(self.control_in, 65536)
                if not chunk:
                    return      # the grader closed the pipe: the sandbox goes with us
                self.buffer += chunk
                while b'\n' in self.buffer:
                    line, self.buffer = self.buffer.split(b'\n', 1)
                    if line.strip():
                        self.handle(json.loads(line))


def serve(preload_json: str, wipe_json: str) -> None:
    """Entry point inside the sandbox (see `ForkServer.command`)."""
    control_in, control_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)           # stray prints go to the server's log, never into the protocol
    for name in _IGNORED:
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    started = time.process_time()
    loaded = _preload(json.loads(preload_json))
    _set_dumpable(False)
    server = _Server(control_in, control_out, json.loads(wipe_json))
    server.send({'ready': True, 'preloaded': loaded, 'cpu': time.process_time() - started})
    server.serve()


if __name__ == '__main__':
    serve(sys.argv[1], sys.argv[2])
