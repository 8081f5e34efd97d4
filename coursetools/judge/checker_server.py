"""The checker's process: warm up the checks once, then fork one session per notebook, each under its own
CPU-time and memory limits, so that nothing one notebook's answers reached serves another.
"""
import contextlib
import os
import resource
import select
import shutil
import signal
import socket
import sys
import traceback

from coursetools.judge import checker
from coursetools.judge.checker import CheckerLimit, Session
from coursetools.judge.checker_plan import answer_table, order_of_tests
from coursetools.judge.frames import receive, send

# --- limits --------------------------------------------------------------------------------------------------

CPU_SECONDS_PER_CELL = 60           # CPU time the checks of one test cell may use
MEMORY_BYTES = 3 * 1024 ** 3         # address space of one session


def _over_cpu_time(signum, frame):
    raise CheckerLimit(f'The grader\'s checks of this cell used more than {CPU_SECONDS_PER_CELL} s of CPU time '
                       'on your answers and were stopped (is a value unusually large?).')


def _limit_cpu_for_a_cell():
    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = int(used.ru_utime + used.ru_stime) + 1
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CPU, (spent + CPU_SECONDS_PER_CELL, spent + CPU_SECONDS_PER_CELL + 10))


def _limit_memory():
    with contextlib.suppress(ValueError, OSError):
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = MEMORY_BYTES if hard == resource.RLIM_INFINITY else min(MEMORY_BYTES, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


# --- the process ------------------------------------------------------------------------------------------------

PR_SET_NO_NEW_PRIVS = 38


def confirm_unprivileged(uid):
    """Exit, saying why, unless this process is `uid` through and through (real, effective and saved uid and
    gid; no other group), holds no capability and can gain none (no_new_privs, set here): the host is root
    and meant to start it as that throw-away uid."""
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    with open('/proc/self/status') as file:
        status = dict((part.strip() for part in line.split(':', 1)) for line in file if ':' in line)
    wrong = []
    if os.getresuid() != (uid,) * 3 or os.getresgid() != (uid,) * 3:
        wrong.append(f'its uids are {status.get("Uid")} and its gids {status.get("Gid")}')
    if set(os.getgroups()) - {uid}:
        wrong.append(f'it is in groups {status.get("Groups")}')
    wrong += [f'its {name} is {status.get(name)}' for name in ('CapEff', 'CapPrm', 'CapAmb')
              if int(status.get(name, '1'), 16)]
    if status.get('NoNewPrivs') != '1':
        wrong.append('no_new_privs is not set')
    if wrong:
        sys.exit(f'checker server: not started, as it is not uid {uid} alone: ' + '; '.join(wrong))


def warm_up(modules=()):
    """Import the checks modules named (the grading side names them: the judge imports no checks of its own) and
    let them compute their tables and the answers the kernel may be given, once per process (the sessions
    forked from it inherit them)."""
    import importlib
    for name in modules:
        checks = importlib.import_module(name)
        if callable(getattr(checks, 'warm_up', None)):
            checks.warm_up()
        for reference, arguments in getattr(checks, 'KERNEL_ANSWERS', {}).values():
            answer_table(reference, arguments)


def serve_session(host_in, host_out):
    """One notebook, in a child of the server: begin, then its test cells, until the host hangs up."""
    signal.signal(signal.SIGXCPU, _over_cpu_time)
    _limit_memory()
    send(host_out, ('ready', {'pid': os.getpid()}))
    session = None
    while True:
        try:
            kind, payload = receive(host_in)
        except EOFError:
            return
        if kind == 'begin' and session is None:
            session = checker._current[0] = Session(host_in, host_out, payload)
            order = order_of_tests(session.tests, session.graded)
            send(host_out, ('begun', {'errors': session.errors, 'order': order}))
        elif kind == 'run' and session is not None:
            _limit_cpu_for_a_cell()
            outputs = session.run(payload['cell'], payload['source'])
            notes, session.notes = session.notes, []
            send(host_out, ('done', {'outputs': outputs, 'notes': notes}))
        else:
            return


def main(uid=None):
    """The checker server: warm up the checks modules named in argv[2:], then fork a session for every
    connection to the socket at argv[1]; stop when the host closes stdin. `uid`: the throw-away uid a root host
    started it as, confirmed before anything else."""
    if uid is not None:
        confirm_unprivileged(uid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)        # Ctrl-C is for the grading process, which then closes us
    control = os.fdopen(os.dup(1), 'wb', buffering=0)
    os.dup2(2, 1)             # stray prints go to the log, never into a protocol
    warm_up(sys.argv[2:])
    path = sys.argv[1]
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)        # children are reaped by the system
    send(control, ('ready', {'pid': os.getpid()}))
    while True:
        ready, _, _ = select.select([listener, sys.stdin], [], [])
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 4096):
            shutil.rmtree(os.path.dirname(path), ignore_errors=True)     # the host's folder, if it was killed
            return
        if listener in ready:
            connection, _ = listener.accept()
            if os.fork() == 0:
                listener.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                code = 0
                try:
                    serve_session(connection.makefile('rb', buffering=0), connection.makefile('wb', buffering=0))
                except BaseException:
                    traceback.print_exc()
                    code = 1
                finally:
                    sys.stderr.flush()
                    os._exit(code)
            connection.close()


if __name__ == '__main__':
    from coursetools.judge.checker_server import main as main_of_the_module     # one module object
    main_of_the_module()
