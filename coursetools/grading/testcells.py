"""Test cells judged by the trusted checker, for `SandboxedExecute` (a mixin of it).

A notebook's test cells never run in its kernel: each runs in the notebook's own checker session (a process
forked for this notebook alone, `coursetools.judge.checker_host`), in the order the checker gives (the assignment's
released order, never the notebook's), and the graded functions there are proxies whose calls this executor
performs in the kernel through the kernel agent, bringing back JSON text that only the checker reads. Anything
unexpected during a call ends the kernel and the session (`channel.channel_broken`); the next test cell gets a
fresh session.
"""
from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from queue import Empty
from typing import Optional

from nbformat.notebooknode import NotebookNode

from coursetools.judge import answers
from coursetools.sandbox.inside import call_trace, cell_fork, kernel_agent
from coursetools.grading.channel import KernelGone, cap_error, channel_broken, error_output, mb
from coursetools.judge.checker_host import CheckerError, CheckerServer, TrustedCells
from coursetools.grading.course import checks_modules

# The agent arrives as a user expression of an empty execute request (evaluated as it is, never through IPython's
# cell machinery: input transformers, hooks, history), with the two modules it uses; calls then travel as comm
# messages.
_AGENT_SOURCES = [(name, open(module.__file__, encoding='utf-8').read()) for name, module in (
    ('_course_grader_call_trace', call_trace), ('_course_grader_cell_fork', cell_fork),
    ('_course_grader', kernel_agent))]
_BOOT = ("(lambda sys, types, sources: [sys.modules.__setitem__(name, types.ModuleType(name)) or exec(compile(text, "
         "{filename!r}, 'exec'), sys.modules[name].__dict__) for name, text in sources] and sys.modules["
         "'_course_grader'].install(sys.modules['_course_grader_cell_fork']))(__import__('sys'), __import__('types'), "
         "{sources!r})")


_STREAM_LIMIT = 100_000       # characters a call's stray output may add to a test cell


class TestCellsInChecker:
    """The part of the executor that runs test cells in the checker (see the module docstring)."""

    checker_server: Optional[CheckerServer] = None
    session = None

    def _note_test_cell_order(self, trusted: TrustedCells, order: list) -> None:
        """Notes for the instructor when the notebook's locked test cells are not as released."""
        found = [(cell.metadata.get('nbgrader') or {}).get('grade_id') for cell in self.nb.cells
                 if cell.cell_type == 'code' and (cell.metadata.get('nbgrader') or {}).get('grade')]
        found = [grade_id for grade_id in found if grade_id in trusted.tests]
        for grade_id in dict.fromkeys(found):
            if found.count(grade_id) > 1:
                self.notes.append(f'locked test cell {grade_id} appears {found.count(grade_id)} times')
        released = list(trusted.tests)
        seen = [grade_id for grade_id in dict.fromkeys(found)]
        if seen != [grade_id for grade_id in released if grade_id in seen]:
            self.notes.append('its locked test cells were moved out of the released order (they ran in the '
                              'released order)')

    async def _begin_checker(self, trusted: TrustedCells, done=()) -> list:
        """A new checker session for this notebook (never one another notebook used); the order to run its test
        cells in. `done`: test cells an earlier session of this notebook ran."""
        loop = asyncio.get_running_loop()
        if self.checker_server is None:      # plain nbgrader: one server per process, shared by its executors
            self.checker_server = CheckerServer.shared(trusted.assignment, checks_modules(trusted.assignment))
        self._end_session()
        self._trusted = trusted
        self.session = await loop.run_in_executor(None, self.checker_server.session)
        errors, order = await loop.run_in_executor(None, self.session.begin, trusted, list(done))
        for error in errors:
            self.log.error('%s', error)
        return order

    def _end_session(self) -> None:
        session, self.session = self.session, None
        if session is not None:
            session.close()

    async def _run_test_cell(self, cell, grade_id: str) -> None:
        """Run a test cell in the checker; raises KernelGone if the kernel died, hung or broke its channel during
        a call. Anything unexpected ends this checker session (the next test cell gets a new one)."""
        loop = asyncio.get_running_loop()
        trusted = self._trusted
        self.code_cells_executed += 1
        cell.execution_count = self.code_cells_executed
        cell.outputs = []
        self._gone = None
        started = time.perf_counter()
        deadline = loop.time() + self.timeout if self.timeout else None
        try:
            if self.session is None:
                await self._begin_checker(trusted, done=self._tests_run[:-1])
            outputs, notes = await self.session.run_cell(trusted, grade_id, self._call_kernel, deadline)
        except TimeoutError:
            outputs, notes = [error_output(
                'CellTimeoutError', f'The checks of this cell did not finish within {self.timeout} s.')], []
            self._end_session()
        except CheckerError as error:
            self.log.error('the checker failed in cell %s: %s', grade_id, error)
            outputs, notes = [error_output('CheckerError', f'The grader\'s checker failed ({error}); ask your '
                                                     'instructor to regrade.')], []
            self._end_session()
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as error:
            self.log.error('grading cell %s failed: %s: %s', grade_id, type(error).__name__, error)
            self._gone = self._gone or channel_broken(error)
            outputs, notes = [], []
        finally:
            self.timing['test_cells'] += time.perf_counter() - started
            self.timing.setdefault('cells', {})[grade_id] = round(time.perf_counter() - started, 3)
        cell.outputs = [NotebookNode(output) for output in self._capped(outputs, cell)]
        self.notes.extend(notes)
        if self._gone is not None:
            self._end_session()
            raise self._gone

    async def _call_kernel(self, request: str, deadline: Optional[float]) -> dict:
        """Perform one checker request (JSON text) in the kernel; the answer's text, or why there is none. Anything
        unexpected (a message that cannot be read, an exception) ends the kernel: it is never asked again."""
        started = time.perf_counter()
        try:
            return await self._call(request, deadline)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as error:
            self._gone = channel_broken(error)
            with contextlib.suppress(Exception):
                await self.km.shutdown_kernel(now=True)
            return {'gone': self._gone.ename, 'message': self._gone.message}
        finally:
            self.timing['call_seconds'] += time.perf_counter() - started

    async def _call(self, request: str, deadline: Optional[float]) -> dict:
        if self._gone is not None:
            return {'gone': self._gone.ename, 'message': self._gone.message}
        kc = self.kc
        if self._agent_kernel is not kc:
            await self._install_agent(kc, deadline)
        self.timing['calls'] += 1
        message = kc.session.msg('comm_msg', {'comm_id': self._comm_id, 'data': {'request': request}})
        kc.shell_channel.send(message)
        msg_id = message['header']['msg_id']
        loop = asyncio.get_running_loop()
        text, idle = None, False
        interrupted_at = None
        streams, kept = [], 0          # what reached the kernel's stdout and stderr by other ways than print
        while not idle:
            now = loop.time()
            if deadline is not None and now >= deadline and interrupted_at is None:
                interrupted_at = now
                await self.km.interrupt_kernel()
            if interrupted_at is not None and now >= interrupted_at + self.interrupt_grace_period:
                self._gone = KernelGone('CellTimeoutError', f'Cell did not finish within {self.timeout} s and did '
                                                             'not stop when interrupted; the kernel was restarted.')
                return {'gone': self._gone.ename, 'message': self._gone.message}
            limit = 1.0
            if deadline is not None:
                limit = max(0.05, min(limit, (interrupted_at + self.interrupt_grace_period if interrupted_at
                                              else deadline) - now))
            try:
                msg = await kc.iopub_channel.get_msg(timeout=limit)
            except Empty:
                if not await self.km.is_alive():
                    self._gone = self._death()
                    return {'gone': self._gone.ename, 'message': self._gone.message}
                continue
            if msg['parent_header'].get('msg_id') != msg_id:
                continue
            kind, content = msg['msg_type'], msg['content']
            if kind == 'comm_msg' and content.get('comm_id') == self._comm_id:
                text = (content.get('data') or {}).get('answer')
                if isinstance(text, str) and len(text) > answers.MAX_ANSWER_CHARS:
                    text = None
                    streams.append(('stderr', f'[an answer larger than {mb(answers.MAX_ANSWER_CHARS)} was '
                                              'refused by the grader]\n'))
            elif kind == 'stream' and kept < _STREAM_LIMIT:
                piece = str(content.get('text', ''))[:_STREAM_LIMIT - kept]
                kept += len(piece)
                streams.append((content.get('name') == 'stderr' and 'stderr' or 'stdout', piece))
            elif kind == 'status' and content.get('execution_state') == 'idle':
                idle = True
        if interrupted_at is not None:      # the interrupted call's answer tells what it printed
            return {'gone': 'CellTimeoutError', 'message': f'Cell did not finish within {self.timeout} s and was '
                                                           'interrupted.', 'streams': streams, 'text': text}
        return {'text': text, 'streams': streams}

    async def _install_agent(self, kc, deadline):
        """Send the agent to a new kernel and open its comm; the answers to calls come back on that comm."""
        boot = _BOOT.format(sources=_AGENT_SOURCES, filename=kernel_agent.FILENAME)
        msg_id = kc.execute('', silent=True, store_history=False, user_expressions={'agent': boot},
                            allow_stdin=False, stop_on_error=False)
        await self._wait_idle(kc, msg_id, deadline)
        self._comm_id = uuid.uuid4().hex
        message = kc.session.msg('comm_open', {'comm_id': self._comm_id, 'target_name': kernel_agent.TARGET,
                                               'data': {}})
        kc.shell_channel.send(message)
        await self._wait_idle(kc, message['header']['msg_id'], deadline)
        self._agent_kernel = kc

    async def _wait_idle(self, kc, msg_id, deadline):
        loop = asyncio.get_running_loop()
        while deadline is None or loop.time() < deadline:
            try:
                msg = await kc.iopub_channel.get_msg(timeout=1)
            except Empty:
                if not await self.km.is_alive():
                    return
                continue
            if (msg['parent_header'].get('msg_id') == msg_id and msg['msg_type'] == 'status'
                    and msg['content'].get('execution_state') == 'idle'):
                return

    def _capped(self, outputs: list, cell) -> list:
        """A test cell's outputs from the checker, within the notebook's output budget like the kernel's."""
        kept = []
        for output in outputs:
            output = dict(output)
            if output.get('output_type') == 'error':
                cap_error(output)
                kept.append(output)
                continue
            text = str(output.get('text', ''))
            remaining = (self.max_output_bytes - self._output_used) if self.max_output_bytes else len(text)
            if len(text) > remaining:
                output['text'] = text[:max(remaining, 0)]
                if id(cell) not in self._truncated_cells:
                    self._truncated_cells.add(id(cell))
                    kept.append(output)
                    output = dict(self._note())
            self._output_used += len(output.get('text', ''))
            kept.append(output)
        return kept
