"""The executor's side of the trusted checker (`coursetools.checker`): what a notebook's test cells are, and the
checker process that runs them.

`TrustedCells` is read from the gradebook, never from the submission: the test cells' sources (hidden checks
included), the locked cells they need (`picture`, `EMPTY_BOARD`, ...), and the names of the functions the
students write (the `def`s of the solution cells).
"""
from __future__ import annotations

import asyncio
import os
import select
import subprocess
import sys
import threading
from dataclasses import dataclass, field

from coursetools import checker

READY_TIMEOUT = 60


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
                graded.extend(sorted(checker.function_names(source) - set(graded)))
        locked_code = [(gid, source) for gid, kind, locked, source in cells
                       if kind == 'code' and locked and gid not in test_ids and gid not in solution_ids]
        wanted = set().union(*(checker.used_names(source) for source in tests.values())) if tests else set()
        helpers = [(gid, source) for gid, source in locked_code if checker.defined_names(source) & wanted]
        return cls(assignment, tests, helpers, graded, [gid for gid, _ in locked_code])

    def notebook(self):
        return {'assignment': self.assignment, 'graded': self.graded, 'helpers': self.helpers}


class CheckerError(RuntimeError):
    """The checker process failed (not the student's fault)."""


class Checker:
    """A checker process, reused from notebook to notebook (its namespace is new for each). Blocking I/O, called
    from worker threads by the async executor (`run_in_executor`)."""

    def __init__(self, log_path=None):
        self.log_path = log_path
        self.process = None
        self.lock = threading.Lock()

    def start(self):
        env = dict(os.environ)
        env.pop('NBGRADER_EXECUTION', None)
        log = open(self.log_path, 'ab') if self.log_path else subprocess.DEVNULL
        try:
            self.process = subprocess.Popen([sys.executable, '-c', 'from coursetools.checker import main; main()'],
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env,
                                            bufsize=0)
        finally:
            if log is not subprocess.DEVNULL:
                log.close()
        kind, _ = self._receive(READY_TIMEOUT)
        if kind != 'ready':
            raise CheckerError(f'the checker did not start ({kind})')
        return self

    @property
    def alive(self):
        return self.process is not None and self.process.poll() is None

    def ensure(self):
        if not self.alive:
            self.close()
            self.start()
        return self

    def begin(self, trusted: TrustedCells):
        """A fresh namespace for a new notebook; returns errors of locked cells (a defect of the course)."""
        self.ensure()
        checker.send(self.process.stdin, ('begin', trusted.notebook()))
        kind, payload = self._receive(READY_TIMEOUT)
        return payload.get('errors', [])

    def send(self, message):
        checker.send(self.process.stdin, message)

    def _receive(self, timeout=None):
        stream = self.process.stdout
        if timeout is not None:
            ready, _, _ = select.select([stream], [], [], timeout)
            if not ready:
                raise TimeoutError
        try:
            return checker.receive(stream)
        except EOFError as error:
            raise CheckerError(f'the checker process ended{self._status()}') from error

    def receive(self, timeout=None):
        return self._receive(timeout)

    def _status(self):
        code = self.process.poll() if self.process else None
        return '' if code is None else f' (status {code})'

    def close(self):
        process, self.process = self.process, None
        if process is None:
            return
        try:
            process.stdin.close()
        except OSError:
            pass
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def kill(self):
        if self.process is not None:
            self.process.kill()
            self.process.wait()
        self.close()

    async def run_cell(self, trusted, cell_id, call_kernel, deadline):
        """Run one test cell; returns (outputs, notes). `call_kernel(request, deadline)` is the executor's
        coroutine that performs one call in the kernel and returns the answer for the checker."""
        loop = asyncio.get_running_loop()
        self.send(('run', {'cell': cell_id, 'source': trusted.tests[cell_id]}))
        while True:
            remaining = max(0.0, deadline - loop.time()) if deadline is not None else None
            try:
                kind, payload = await loop.run_in_executor(None, self._receive, remaining)
            except TimeoutError:
                self.kill()       # the checks themselves are too slow (never the student's code): start again
                raise
            if kind == 'call':
                self.send(('answer', await call_kernel(payload, deadline)))
            elif kind == 'done':
                return payload['outputs'], payload.get('notes', [])
            else:
                raise CheckerError(f'unexpected message from the checker: {kind}')
