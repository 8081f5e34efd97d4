"""A warm start for `make grade`'s kernels (`python zygote.py FD`): imports ipykernel once, then forks each kernel into
a sandbox bubblewrap has made for it.

The zygote runs as root outside every sandbox and never runs a student's code: it only imports the kernel's own
libraries and forks. For each kernel the grading process starts a sandbox of its own with bubblewrap, with the cold
kernel's command line but a program that only holds the sandbox open (`bubblewrap.HOLD`), and sends the zygote a
descriptor of the sandbox's init. The zygote forks a watcher, which stays on the host, joins the sandbox's PID
namespace for its children, forks the kernel (whose parent becomes the sandbox's init, as a cold kernel's), and
ends the whole sandbox when the kernel ends. The kernel joins the sandbox's other namespaces (mounts, network, IPC,
host name, cgroup) and does what the launcher does for a cold kernel, with the launcher's own functions: copies the
submission in, applies the limits, drops root. It closes every descriptor it does not need and only then starts
ipykernel. It says so on a pipe, or says what failed; the grading process waits for that word.

What a kernel sees is what a cold kernel sees (`grader_tests/test_forked_kernels.py` compares them). What it keeps of
the zygote is the kernel's imported libraries. Standard library and IPython only."""
import ctypes
import importlib.util
import json
import os
import select
import signal
import socket
import sys
import threading
import time

PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 24, 38
CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS = 0x00020000, 0x02000000, 0x04000000
CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = 0x08000000, 0x20000000, 0x40000000
JOINED = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET
REQUEST_BYTES = 65536

libc = ctypes.CDLL(None, use_errno=True)


class SubmissionNotCopied(Exception):
    """The submission did not fit its sandbox: not the machine's fault."""


def checked(result):
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))


def prctl(option, value):
    checked(libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0))


def setns(pidfd, kinds):
    checked(libc.setns(pidfd, kinds))


def load_launcher():
    """The launcher's functions, from the file beside this one, without putting its folder on sys.path."""
    spec = importlib.util.spec_from_file_location('_sandbox_launcher', os.path.join(os.path.dirname(__file__),
                                                                                     'launcher.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def warm():
    """What a kernel imports before it runs anything (as `kernels.kernel_command`'s boot: no debugpy)."""
    sys.modules['debugpy'] = None
    importlib.import_module('ipykernel.debugger')
    del sys.modules['debugpy']
    from ipykernel import kernelapp
    return kernelapp


def serve(channel, kernelapp, launcher, sigchld):
    """Fork a watcher for every request, until the grading process closes the channel (or ends: a parent-death
    signal would come when the thread that started the zygote ends, not the process)."""
    while True:
        message, fds, _, _ = socket.recv_fds(channel, REQUEST_BYTES, 3)
        if not message:
            return
        if threading.active_count() != 1:
            raise SystemExit('zygote: a thread started; a fork would copy it half-done')
        if os.fork() == 0:
            try:
                watch(channel, json.loads(message), *fds, kernelapp=kernelapp, launcher=launcher, sigchld=sigchld)
            finally:
                os._exit(1)
        for fd in fds:
            os.close(fd)


def watch(channel, request, init, log, status, kernelapp, launcher, sigchld):
    """On the host: fork the kernel into the sandbox's PID namespace, through a middle process that ends at once, so
    that the kernel's parent is the sandbox's init, as a cold kernel's is. When the kernel ends, the sandbox ends."""
    channel.close()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    request['sigchld'] = sigchld
    ours, theirs = socket.socketpair()
    setns(init, CLONE_NEWPID)
    middle = os.fork()
    if middle == 0:
        if os.fork() == 0:
            try:
                ours.close()
                kernel(request, init, log, status, theirs, kernelapp, launcher)
            finally:
                os._exit(1)
        os._exit(0)
    for fd in (log, status, theirs.detach()):
        os.close(fd)
    os.waitpid(middle, 0)
    _, fds, _, _ = socket.recv_fds(ours, 16, 1)
    if fds:
        select.select([fds[0]], [], [])
    try:
        signal.pidfd_send_signal(init, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os._exit(0)


def kernel(request, init, log, status, watcher, kernelapp, launcher):
    """In the sandbox: become the kernel a cold start would have made, then run it."""
    try:
        itself = os.pidfd_open(os.getpid())
        socket.send_fds(watcher, [b'kernel'], [itself])
        os.close(itself)
        watcher.close()
        for _ in range(1000):
            if os.getppid() == 1:
                break
            time.sleep(0.001)
        setns(init, JOINED)
        os.close(init)
        enter(request, log, launcher)
        os.closerange(3, status)
        os.closerange(status + 1, 1 << 20)
        if os.getppid() != 1:
            raise RuntimeError('the sandbox\'s init did not become the kernel\'s parent')
    except BaseException as error:
        os.write(status, f'{type(error).__name__}: {error}'.encode())
        raise
    os.write(status, b'ok')
    os.close(status)
    sys.argv = ['-c', *request['argv']]
    kernelapp.launch_new_instance(argv=request['argv'])
    os._exit(0)


def enter(request, log, launcher):
    """The process state a cold kernel starts with: its own session, the signals as the zygote got them, the
    sandbox's environment, the launcher's limits, uid and folder, no capability left and no way to gain one."""
    devnull = os.open('/dev/null', os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(devnull)
    os.close(log)
    os.setsid()
    signal.signal(signal.SIGCHLD, request['sigchld'])       # the zygote's own, as its Python started with it
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    os.environ.clear()
    os.environ.update(request['env'])
    config = request['launcher']
    try:
        launcher.copy_in(config['submission'], config['workdir'], config['uid'])
    except OSError as error:
        raise SubmissionNotCopied(error) from None
    launcher.limit(config)
    for cap in range(64):
        if libc.prctl(PR_CAPBSET_DROP, ctypes.c_ulong(cap), 0, 0, 0) != 0:
            break
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    launcher.become(config)


def main(fd):
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if p not in ('', here)]
    launcher = load_launcher()
    kernelapp = warm()
    sigchld = signal.signal(signal.SIGCHLD, signal.SIG_IGN)       # the watchers are reaped as they end
    channel = socket.socket(fileno=fd)
    channel.sendall(b'ready')
    serve(channel, kernelapp, launcher, sigchld)


if __name__ == '__main__':
    main(int(sys.argv[1]))
