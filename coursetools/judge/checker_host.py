"""The executor's side of the trusted checker (`coursetools.judge.checker`): what a notebook's test cells are, and the
checker processes that run them (a warm server per Dask worker, a forked session per notebook).

`TrustedCells` is read from the gradebook, never from the submission: the test cells' sources (hidden checks
included), the locked cells they need (`picture`, `EMPTY_BOARD`, ...), and the names of the functions the
students write (the `def`s of the solution cells).
"""
from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path


from coursetools.judge import checker_plan, frames
from coursetools.sandbox.host import uids
from coursetools.sandbox.host.bubblewrap import find_bwrap, launcher_command, stop_process

READY_TIMEOUT = 60
REPORT_GRACE = 5.0   # seconds the checker has to finish a cell after its kernel call ran out of time
SERVER = 'from coursetools.judge.checker_server import main; main({uid})'


@dataclass(frozen=True)
class TrustedCells:
    """What the checker needs for one notebook of an assignment, from the instructor's source."""
    assignment: str
    tests: dict                     # grade_id -> source of a test cell
    helpers: list                   # [(grade_id, source)] of locked code cells the tests use, in notebook order
    graded: list                    # names of the functions the solution cells define
    kernel_helpers: list = field(default_factory=list)   # every locked code cell that is not a test

    @classmethod
    def from_gradebook(cls, db_url, assignment, notebook):
        from nbgrader.api import Gradebook
        with Gradebook(db_url) as gradebook:
            found = gradebook.find_notebook(notebook, assignment)
            test_ids = {cell.name for cell in found.grade_cells if cell.cell_type == 'code'}
            solution_ids = {cell.name for cell in found.solution_cells}
            cells = [(cell.name, cell.cell_type, cell.locked, cell.source) for cell in found.source_cells]
        return cls.from_cells(assignment, cells, test_ids, solution_ids)

    @classmethod
    def from_cells(cls, assignment, cells, test_ids, solution_ids):
        """`cells`: (grade_id, cell_type, locked, source) of every nbgrader cell, in notebook order."""
        tests = {gid: source for gid, kind, locked, source in cells if gid in test_ids and gid not in solution_ids}
        graded = []
        for gid, kind, locked, source in cells:
            if gid in solution_ids and kind == 'code':
                graded.extend(sorted(checker_plan.function_names(source) - set(graded)))
        locked_code = [(gid, source) for gid, kind, locked, source in cells
                       if kind == 'code' and locked and gid not in test_ids and gid not in solution_ids]
        wanted = set().union(*(checker_plan.used_names(source) for source in tests.values())) if tests else set()
        helpers = [(gid, source) for gid, source in locked_code if checker_plan.defined_names(source) & wanted]
        return cls(assignment, tests, helpers, graded, [gid for gid, _ in locked_code])

    def notebook(self):
        return {'assignment': self.assignment, 'graded': self.graded, 'helpers': self.helpers, 'tests': self.tests}


class CheckerError(RuntimeError):
    """The checker process failed (not the student's fault)."""


class CheckerServer:
    """The warm checker process of one slot (or one executor): it forks a fresh `CheckerSession` for every
    notebook, so that nothing one student's answers reached is ever used for another."""

    def __init__(self, log_path=None, assignment='', warm=()):
        """`warm`: the checks modules the server imports and warms up before its first session."""
        self.log_path, self.assignment, self.warm = log_path, assignment, list(warm)
        self.process = None
        self.pid = None                   # the server's own process (under bwrap, a child of `process`)
        self.folder = None
        self.lease = None                 # the server's throw-away uid, while it lives (the grader is root)
        self._pidfd = None
        self.lock = threading.RLock()     # a close waits for a start under way

    def start(self):
        """Start the server; when the grader is root, as a throw-away uid held until `close`."""
        try:
            self._launch()
            ready, _, _ = select.select([self.process.stdout], [], [], READY_TIMEOUT)
            try:
                kind, payload = frames.receive(self.process.stdout) if ready else ('no answer', None)
            except EOFError:
                kind, payload = f'it ended{_status(self.process)}', None
            if kind != 'ready':
                raise CheckerError(f'the checker did not start ({kind})')
            self.pid = payload.get('pid') if isinstance(payload, dict) else None
            self.pid = self.pid if type(self.pid) is int else self.process.pid
            if self.pid != self.process.pid:      # bwrap's child: pinned, for close to stop it
                with contextlib.suppress(OSError):
                    self._pidfd = os.pidfd_open(self.pid)
        except BaseException:
            self.close()
            raise
        return self

    def _launch(self):
        try:
            self.lease = uids.lease()
        except OSError as error:
            raise CheckerError(f'no uid for the checker ({error})') from error
        uid = self.lease.uid
        env = dict(os.environ)
        env.pop('NBGRADER_EXECUTION', None)
        self.folder = tempfile.mkdtemp(prefix='checker-')
        command = [sys.executable, '-c', SERVER.format(uid=uid), self.socket_path, *self.warm]
        options = {}
        if uid is not None:
            os.chown(self.folder, uid, uid)       # its socket goes here; HOME too, so nothing writes root's
            env.update(HOME=self.folder, MPLCONFIGDIR=self.folder)
            command, options = _as_uid(command, uid, self.folder)
        log = open(self.log_path, 'ab') if self.log_path else subprocess.DEVNULL
        try:
            self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=log, env=env, bufsize=0, **options)
        finally:
            if log is not subprocess.DEVNULL:
                log.close()

    _shared: dict = {}

    @classmethod
    def shared(cls, assignment, warm=()):
        """This process's server for `assignment` (stopped when the process ends): plain `nbgrader autograde`
        makes an executor per notebook, and the sessions, not the server, are what a notebook must not share."""
        if assignment not in cls._shared:
            cls._shared[assignment] = cls(assignment=assignment, warm=warm)
        return cls._shared[assignment]

    @classmethod
    def close_shared(cls):
        """Stop this process's shared servers (at exit; a test that made executors of its own)."""
        while cls._shared:
            cls._shared.popitem()[1].close()

    @property
    def socket_path(self):
        return os.path.join(self.folder, 'checker.sock')

    @property
    def alive(self):
        return self.process is not None and self.process.poll() is None

    def ensure(self):
        with self.lock:
            if not self.alive:
                self.close()
                self.start()
        return self

    def session(self) -> 'CheckerSession':
        """A new checker process for one notebook."""
        self.ensure()
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            connection.connect(self.socket_path)
        except OSError as error:
            connection.close()
            raise CheckerError(f'could not reach the checker ({error})') from error
        return CheckerSession(connection)

    def close(self):
        with self.lock:
            process, self.process = self.process, None
            if process is not None:
                stop_process(process)
            pidfd, self._pidfd, self.pid = self._pidfd, None, None
            if pidfd is not None:             # the server, if bwrap ended (or was killed) without it
                with contextlib.suppress(OSError):
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                os.close(pidfd)
            if self.folder:
                shutil.rmtree(self.folder, ignore_errors=True)
                self.folder = None
            lease, self.lease = self.lease, None
            if lease is not None:
                lease.release()


atexit.register(CheckerServer.close_shared)


def _as_uid(command, uid, folder):
    """`command` run as `uid` (no other groups, no capabilities) by the sandbox's launcher, which drops root
    before the server's Python starts; under bwrap when something the server reads lies behind a folder other
    users cannot search (a Python installed under /root); and the Popen options for it."""
    command = launcher_command(command, {}, uid=uid)
    reach = _reach(folder)
    if not reach:
        return command, {}
    bwrap = find_bwrap()
    if not bwrap:
        raise CheckerError('bubblewrap is needed to start the checker as a throw-away uid: what it reads lies '
                           f'behind {reach[3]}, closed to other users')
    # its own process group: Ctrl-C is for the grading process, and would end bwrap's monitor
    return [bwrap, '--dev-bind', '/', '/', *reach, '--', *command], {'process_group': 0}


def _reach(folder):
    """bwrap arguments that put the Python installation, the venv, the course package (read-only) and the
    server's folder within its uid's reach: an empty tmpfs over each folder on their way that other users cannot
    search, holding only them. [] when all are in reach."""
    import coursetools
    wanted = {os.path.realpath(path) for path in (sys.base_prefix, sys.prefix, *coursetools.__path__)}
    wanted |= {sys.base_prefix, sys.prefix}
    args, made = [], set()
    for path, how in [(path, '--ro-bind') for path in sorted(wanted)] + [(folder, '--bind')]:
        parents = list(reversed(Path(path).parents))[1:]
        closed = next((str(p) for p in parents if not os.stat(p).st_mode & stat.S_IXOTH), None)
        if closed is None:
            continue
        if closed not in made:
            made.add(closed)
            args += ['--perms', '0755', '--tmpfs', closed]
        for parent in map(str, parents[parents.index(Path(closed)) + 1:]):
            if parent not in made:
                made.add(parent)
                args += ['--perms', '0755', '--dir', parent]
        args += [how, path, path]
        made.add(path)
    return args


def _status(process):
    code = process.poll() if process else None
    return '' if code is None else f' (status {code})'


class CheckerSession:
    """The checker process of one notebook (a child of the server). Blocking I/O, called from worker threads by
    the async executor (`run_in_executor`). Once closed, it is gone: a notebook that needs the checker again
    (after a failure) gets a new session."""

    def __init__(self, connection):
        self.connection = connection
        self.reader = connection.makefile('rb', buffering=0)
        self.writer = connection.makefile('wb', buffering=0)
        self.pid = None
        kind, payload = self._receive(READY_TIMEOUT)
        if kind != 'ready' or type(payload.get('pid')) is not int:
            self.close()
            raise CheckerError(f'the checker session did not start ({kind})')
        self.pid = payload['pid']

    def begin(self, trusted: TrustedCells, done=()):
        """Load the notebook's trusted cells; returns (errors of locked cells, the order to run test cells in).
        `done`: test cells that already ran for this notebook in an earlier session."""
        self.send(('begin', dict(trusted.notebook(), done=list(done))))
        kind, payload = self._receive(READY_TIMEOUT)
        if kind != 'begun':
            raise CheckerError(f'unexpected message from the checker: {kind}')
        return payload.get('errors', []), payload.get('order') or list(trusted.tests)

    def send(self, message):
        try:
            frames.send(self.writer, message)
        except OSError as error:
            raise CheckerError(f'the checker process ended ({error})') from error

    def _receive(self, timeout=None):
        if timeout is not None:
            ready, _, _ = select.select([self.reader], [], [], timeout)
            if not ready:
                raise TimeoutError
        try:
            return frames.receive(self.reader)
        except (EOFError, OSError) as error:
            raise CheckerError('the checker process ended: its checks were stopped (too much CPU time or '
                               'memory) or failed') from error

    def close(self):
        """End the session's process, whatever it is doing."""
        for stream in (self.reader, self.writer, self.connection):
            with contextlib.suppress(OSError):
                stream.close()
        if self.pid is not None:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
            self.pid = None

    async def run_cell(self, trusted, cell_id, call_kernel, deadline):
        """Run one test cell; returns (outputs, notes). `call_kernel(request, deadline)` is the executor's
        coroutine that performs one call in the kernel and returns the answer for the checker."""
        loop = asyncio.get_running_loop()
        self.send(('run', {'cell': cell_id, 'source': trusted.tests[cell_id]}))
        late = 0.0          # once a call was stopped at the deadline, the checker gets a moment to say so
        while True:
            remaining = max(late, deadline - loop.time()) if deadline is not None else None
            kind, payload = await loop.run_in_executor(None, self._receive, remaining)
            if kind == 'call':
                self.send(('answer', await call_kernel(payload, deadline)))
                if deadline is not None and loop.time() >= deadline:
                    late = REPORT_GRACE
            elif kind == 'done':
                return payload['outputs'], payload.get('notes', [])
            else:
                raise CheckerError(f'unexpected message from the checker: {kind}')
