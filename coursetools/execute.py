"""Safe notebook execution for autograding: `SandboxedExecute`, nbgrader's `Execute` with two differences.

* **The student's cells run in a sandboxed kernel** (bubblewrap, `coursetools.sandbox`) with limits on memory,
  CPU, processes, file size, output and time per cell. A kernel that dies, or a cell that will not stop, costs
  that cell only: the cell gets an error, a fresh kernel starts, the earlier cells are replayed silently, and
  execution goes on.
* **The test cells run in the trusted checker** (`coursetools.checker`), a process where no student code runs.
  Their sources come from the gradebook; the notebook's graded functions are proxies there that call the
  student's functions in the kernel and bring back plain data. A test cell's outputs and error are written into
  the notebook exactly where the kernel's would be, so nbgrader's grading, feedback and formgrader see nothing
  different.

    # nbgrader_config.py
    c.Autograde.autograde_preprocessors = [SandboxedExecute, ...]   # where Execute was
    c.SandboxedExecute.timeout = 120

Where kernels come from and where they run is `kernel_source` (`coursetools.kernels`): cold by default,
forked or started ahead when `make grade` chooses. Outside nbgrader (no gradebook in the resources) every cell
runs in the kernel.
"""
from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
import weakref
from queue import Empty
from typing import Any, Optional

import jupyter_client
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import run_sync
from nbclient.client import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from traitlets import Bool, Float, Integer, Unicode

from nbgrader.preprocessors import Execute

from coursetools import kernel_agent, sandbox as sbx
from coursetools.checker_host import Checker, CheckerError, TrustedCells
from coursetools.course import ATTENTION_ERRORS
from coursetools.kernels import ColdKernels, KernelPlace, SandboxProvisioner
from coursetools.sandbox import Limits, SandboxUnavailable

__all__ = ['SandboxedExecute', 'SandboxedKernelManager', 'SandboxUnavailable', 'ATTENTION_ERRORS']


# The agent arrives as a user expression of an empty execute request (evaluated as it is, never through IPython's
# cell machinery: input transformers, hooks, history); calls then travel as comm messages.
_AGENT_SOURCE = open(kernel_agent.__file__, encoding='utf-8').read()
_BOOT = ("(lambda sys, module: (sys.modules.__setitem__('_course_grader', module), exec(compile({source!r}, "
         "{filename!r}, 'exec'), module.__dict__), module.install()))(__import__('sys'), "
         "__import__('types').ModuleType('_course_grader'))")


_STREAM_LIMIT = 100_000       # characters a call's stray output may add to a test cell


def _mb(n: int) -> str:
    return f'{n / 1024**2:g} MB' if n < 1024**3 else f'{n / 1024**3:g} GB'


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel manager for one kernel in a `KernelPlace`, launched by a kernel source."""

    log_path = None

    def place_kernel(self, source, place: KernelPlace, limits: Limits) -> None:
        folder = place.connection_folder()
        self.log_path = os.path.join(folder, 'kernel.log')
        if place.sandboxed:
            self.transport = 'ipc'          # no network in the sandbox: ZeroMQ over unix sockets
            self.ip = os.path.join(folder, 'k')
            self.kernel_spec.interrupt_mode = 'message'     # bwrap does not forward SIGINT
        self.connection_file = os.path.join(folder, 'kernel.json')
        self.kernel_id = str(uuid.uuid4())
        self.provisioner = SandboxProvisioner(kernel_id=self.kernel_id, kernel_spec=self.kernel_spec, parent=self,
                                              source=source, place=place, limits=limits, connection=folder,
                                              log_path=self.log_path)

    def log_tail(self, n: int = 2000) -> str:
        try:
            with open(self.log_path, 'rb') as f:
                return f.read()[-n:].decode('utf-8', 'replace')
        except (TypeError, OSError):
            return ''


class _KernelGone(Exception):
    """The kernel died or had to be killed while running a cell or a call."""

    def __init__(self, ename: str, message: str):
        super().__init__(message)
        self.ename, self.message = ename, message


async def wait_until_ready(kc, timeout):
    """Wait until the kernel answers on its shell channel and its IOPub channel is connected: the handshake of
    jupyter_client's `wait_for_ready`, which then waits for 0.2 s of silence on IOPub (0.2 s more per notebook,
    half of a forked kernel's start). Here IOPub is drained up to the kernel's idle status for the handshake's own
    request, the last message it sends for it."""
    deadline = time.monotonic() + timeout
    while True:
        request = kc.kernel_info()
        try:
            reply = await kc.shell_channel.get_msg(timeout=1)
        except Empty:
            reply = None
        if reply is not None and reply['msg_type'] == 'kernel_info_reply':
            if await _idle_seen(kc, request, 0.2, deadline):
                version = int(reply['content']['protocol_version'].split('.')[0])
                if version != jupyter_client.protocol_version_info[0]:
                    kc.session.adapt_version = version     # as jupyter_client does for an older kernel
                return
        if not await kc.is_alive():
            raise RuntimeError('Kernel died before replying to kernel_info')
        if time.monotonic() > deadline:
            raise RuntimeError(f"Kernel didn't respond in {timeout:g} seconds")


async def _idle_seen(kc, request, timeout, deadline):
    """True once IOPub carried the kernel's idle status for `request`; False if IOPub stayed silent for
    `timeout` (not connected yet: the handshake starts over) or the deadline passed."""
    while time.monotonic() < deadline:
        try:
            message = await kc.iopub_channel.get_msg(timeout=timeout)
        except Empty:
            return False
        if (message['msg_type'] == 'status' and message['parent_header'].get('msg_id') == request
                and message['content'].get('execution_state') == 'idle'):
            return True
    return False


class SandboxedExecute(Execute):
    """nbgrader's `Execute`, with sandboxed kernels that may die, and test cells judged by the trusted checker."""

    timeout = Integer(120, allow_none=True, help='Wall time per cell, in seconds (None/0: no limit).').tag(config=True)
    sandbox = Bool(True, help='Run kernels under bubblewrap. False (or COURSE_GRADE_UNSANDBOXED=1): unsandboxed, '
                              'only for trusted code.').tag(config=True)
    memory_limit = Integer(2 * 1024**3, allow_none=True,
                           help='Address-space limit of the kernel (RLIMIT_AS), bytes.').tag(config=True)
    cpu_time_limit = Integer(900, allow_none=True, help='CPU seconds per kernel (RLIMIT_CPU).').tag(config=True)
    max_processes = Integer(64, allow_none=True, help="Processes and threads of the kernel's uid (RLIMIT_NPROC); "
                                                      'sandboxed only.').tag(config=True)
    file_size_limit = Integer(50 * 1024**2, allow_none=True,
                              help='Largest file the kernel may write (RLIMIT_FSIZE), bytes.').tag(config=True)
    max_output_bytes = Integer(1024**2, allow_none=True, help='Output kept per notebook (text and data, bytes); '
                                                              'the rest is dropped with a note.').tag(config=True)
    max_kernel_restarts = Integer(5, help='Kernel deaths tolerated per notebook before the remaining cells are not '
                                          'run.').tag(config=True)
    interrupt_grace_period = Float(5.0, help='Seconds a timed-out cell gets to stop after the interrupt before its '
                                             'kernel is killed and restarted.').tag(config=True)
    sandbox_tmpdir = Unicode('', help='Where the kernels\' scratch folders are made (default: the system temp '
                                      'folder).').tag(config=True)
    nbgrader_execution = Unicode('autograde', help='NBGRADER_EXECUTION in the kernels: notebooks can tell they are '
                                                   'being graded (the widget switches itself off).').tag(config=True)

    def __init__(self, *args, kernel_source=None, checker=None, **kwargs):
        kwargs.setdefault('kernel_manager_class', SandboxedKernelManager)
        super().__init__(*args, **kwargs)
        self.kernel_source = kernel_source or ColdKernels()
        self.checker: Optional[Checker] = checker
        self.place: Optional[KernelPlace] = None
        self.timing: dict = {}
        self.notes: list = []
        self._trusted_cache: dict = {}

    # ------------------------------------------------------------------ settings

    @property
    def sandboxed(self) -> bool:
        return bool(self.sandbox) and not sbx.unsandboxed_requested()

    def limits(self) -> Limits:
        return Limits(memory_bytes=self.memory_limit, cpu_seconds=self.cpu_time_limit,
                      max_processes=self.max_processes, file_size_bytes=self.file_size_limit)

    def trusted_cells(self, resources) -> Optional[TrustedCells]:
        """The test cells and what they need, from the resources (`make grade`) or the gradebook (nbgrader)."""
        given = resources.get('trusted_cells')
        if isinstance(given, TrustedCells):
            return given
        info = resources.get('nbgrader') or {}
        if not info.get('db_url') or not info.get('assignment') or not info.get('notebook'):
            return None
        key = (info['db_url'], info['assignment'], info['notebook'])
        if key not in self._trusted_cache:
            self._trusted_cache[key] = TrustedCells.from_gradebook(*key)
        return self._trusted_cache[key]

    # ------------------------------------------------------------------ entry points

    def preprocess(self, nb: NotebookNode, resources: Any = None, km=None):
        return run_sync(self.async_preprocess)(nb, resources)

    async def async_preprocess(self, nb: NotebookNode, resources: Any = None):
        """Execute the notebook; returns (nb, resources). `self.timing` and `self.notes` describe the run."""
        NotebookClient.__init__(self, nb)
        self.reset_execution_trackers()
        self.resources = resources if resources is not None else {}
        self.timing = {'kernel_start': 0.0, 'kernel_cells': 0.0, 'test_cells': 0.0, 'calls': 0, 'call_seconds': 0.0}
        self.notes = []
        self._output_used, self._truncated_cells = 0, set()
        self.iopub_timeout = max(1, int(round(self.interrupt_grace_period)))
        self.raise_on_iopub_timeout = True
        path = os.path.abspath((self.resources.get('metadata') or {}).get('path') or os.getcwd())
        trusted = self.trusted_cells(self.resources)
        self.place = await self.kernel_source.prepare(self, path)
        try:
            await self._run_notebook(trusted)
        finally:
            try:
                await self._stop_kernel()
            finally:
                await self.kernel_source.finish(self.place)
                self.place = None
        if self.notes:
            self.nb.metadata.setdefault('coursetools', {})['grading_notes'] = list(dict.fromkeys(self.notes))
        return self.nb, self.resources

    # ------------------------------------------------------------------ kernels

    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        if not isinstance(km, SandboxedKernelManager):
            raise TypeError('SandboxedExecute.kernel_manager_class must be SandboxedKernelManager')
        return km

    async def start_kernel(self, place: KernelPlace, source=None):
        """Start a kernel in `place` through `source` (default: this executor's); returns (km, kc)."""
        km = self.create_kernel_manager()
        km.place_kernel(source or self.kernel_source, place, self.limits())
        extra = list(self.extra_arguments)
        if self.ipython_hist_file and not any(a.startswith('--HistoryManager.hist_file') for a in extra):
            extra.append(f'--HistoryManager.hist_file={self.ipython_hist_file}')
        try:
            await km.start_kernel(extra_arguments=extra, cwd=place.workdir)
            kc = km.client()
            kc.start_channels()
            await wait_until_ready(kc, self.startup_timeout)
        except Exception as error:
            try:
                await km.shutdown_kernel(now=True)
            except Exception:
                pass
            raise RuntimeError(f'The grading kernel could not start: {error}\nkernel log:\n{km.log_tail()}') from error
        return km, kc

    async def _start_kernel(self) -> None:
        started = time.perf_counter()
        ready = await self.kernel_source.first_kernel(self, self.place)
        self.km, self.kc = ready or await self.start_kernel(self.place)
        self._agent_kernel = None
        self.timing['kernel_start'] += time.perf_counter() - started

    async def _stop_kernel(self, now: bool = False) -> None:
        km, kc = self.km, self.kc
        self.km = self.kc = None
        if kc is not None:
            try:
                kc.stop_channels()
            except Exception:
                pass
        if km is None:
            return
        try:
            if now:
                await km.shutdown_kernel(now=True)
            elif await km.is_alive():
                await km.shutdown_kernel(now=self.shutdown_kernel == 'immediate')
        except Exception as error:
            self.log.debug('kernel shutdown: %s', error)
            try:
                if km.provisioner is not None:
                    await km.provisioner.kill()
            except Exception:
                pass
        try:
            await km.cleanup_resources()
        except Exception:
            pass

    def _exit_description(self) -> str:
        try:
            rc = self.km.provisioner.process.poll()
        except Exception:
            rc = None
        if rc is None:
            return ''
        sig = -rc if rc < 0 else (rc - 128 if rc > 128 else None)
        if sig:
            try:
                return f' (killed by {signal.Signals(sig).name})'
            except ValueError:
                pass
        return f' (exit status {rc})'

    def _death(self) -> _KernelGone:
        return _KernelGone('KernelDied', f'The kernel died while running this cell{self._exit_description()}: it '
                                         f'crashed, exited, or hit a resource limit (memory '
                                         f'{_mb(self.memory_limit or 0)}, CPU {self.cpu_time_limit} s). Later cells '
                                         'run in a fresh kernel.')

    # ------------------------------------------------------------------ the notebook

    async def _run_notebook(self, trusted: Optional[TrustedCells]) -> None:
        await self._start_kernel()
        info = await self.async_wait_for_reply(self.kc.kernel_info())
        if info is not None and 'language_info' in info['content']:
            self.nb.metadata['language_info'] = info['content']['language_info']
        if trusted is not None and trusted.tests:
            await self._begin_checker(trusted)
        done: list[int] = []          # kernel cells that ran to completion, in order (replayed after a death)
        skip_replay: set = set()      # cells that killed or hung a kernel, or timed out
        deaths = 0
        for index, cell in enumerate(self.nb.cells):
            if cell.cell_type != 'code' or not cell.source.strip():
                await self.async_execute_cell(cell, index, execution_count=None)
                continue
            if deaths > self.max_kernel_restarts:
                self._add_error(cell, 'KernelDied', f'not run: too many kernel deaths ({deaths}) in this notebook')
                continue
            grade_id = (cell.metadata.get('nbgrader') or {}).get('grade_id')
            try:
                if trusted is not None and grade_id in trusted.tests and cell.metadata['nbgrader'].get('grade'):
                    await self._run_test_cell(cell, trusted, grade_id)
                elif await self._run_kernel_cell(cell, index):
                    done.append(index)
                else:
                    skip_replay.add(index)
            except _KernelGone as gone:
                deaths += 1
                skip_replay.add(index)
                if not any(o.get('ename') == gone.ename for o in cell.get('outputs', [])):
                    self._add_error(cell, gone.ename, gone.message)
                if deaths <= self.max_kernel_restarts:
                    deaths = await self._restart_and_replay(done, skip_replay, deaths)
        self.set_widgets_metadata()

    async def _run_kernel_cell(self, cell, index) -> bool:
        """Run a cell in the kernel; False if it timed out (it is not replayed after a restart)."""
        started = time.perf_counter()
        try:
            await self.async_execute_cell(cell, index, execution_count=self.code_cells_executed + 1)
        except DeadKernelError:
            cell.execution_count = self.code_cells_executed
            raise self._death() from None
        except CellTimeoutError:
            cell.execution_count = self.code_cells_executed
            raise _KernelGone('CellTimeoutError', f'Cell did not finish within {self.timeout} s and did not stop '
                                                  'when interrupted; the kernel was restarted.') from None
        finally:
            self.timing['kernel_cells'] += time.perf_counter() - started
        return not any(o.get('output_type') == 'error' and o.get('ename') == 'CellTimeoutError'
                       for o in cell.get('outputs', []))

    async def _restart_and_replay(self, done: list[int], skip: set, deaths: int) -> int:
        """Start a fresh kernel and silently re-run the kernel cells that completed; returns the death count
        (a replayed cell can kill the kernel too)."""
        while deaths <= self.max_kernel_restarts:
            await self._stop_kernel(now=True)
            await self._start_kernel()
            bad = await self._replay([i for i in done if i not in skip])
            if bad is None:
                return deaths
            self.log.warning('cell %d killed the kernel while being replayed', bad)
            skip.add(bad)
            deaths += 1
        return deaths

    async def _replay(self, indices: list[int]) -> Optional[int]:
        """Re-run cells without touching their outputs; the index of a cell that killed or hung the kernel."""
        kc = self.kc
        stop = asyncio.Event()

        async def drain():           # replayed output is discarded
            while not stop.is_set():
                try:
                    await kc.iopub_channel.get_msg(timeout=0.2)
                except Empty:
                    pass
                except Exception:
                    return

        drainer = asyncio.ensure_future(drain())
        try:
            for i in indices:
                msg_id = kc.execute(self.nb.cells[i].source, store_history=True, stop_on_error=False,
                                    allow_stdin=False)
                deadline = None if not self.timeout else time.monotonic() + self.timeout
                while True:
                    try:
                        msg = await kc.shell_channel.get_msg(timeout=1)
                    except Empty:
                        if not await self.km.is_alive() or (deadline is not None and time.monotonic() > deadline):
                            return i
                        continue
                    if msg['parent_header'].get('msg_id') == msg_id:
                        break
            return None
        finally:
            stop.set()
            await drainer

    # ------------------------------------------------------------------ test cells, in the checker

    async def _begin_checker(self, trusted: TrustedCells) -> None:
        loop = asyncio.get_running_loop()
        if self.checker is None:
            self.checker = Checker()
            weakref.finalize(self, self.checker.close)
        errors = await loop.run_in_executor(None, self.checker.begin, trusted)
        for error in errors:
            self.log.error('%s', error)

    async def _run_test_cell(self, cell, trusted: TrustedCells, grade_id: str) -> None:
        """Run a test cell in the checker; raises _KernelGone if the kernel died or hung during a call."""
        loop = asyncio.get_running_loop()
        self.code_cells_executed += 1
        cell.execution_count = self.code_cells_executed
        cell.outputs = []
        self._gone = None
        started = time.perf_counter()
        deadline = loop.time() + self.timeout if self.timeout else None
        try:
            outputs, notes = await self.checker.run_cell(trusted, grade_id, self._call_kernel, deadline)
        except TimeoutError:
            outputs, notes = [_error(
                'CellTimeoutError', f'The checks of this cell did not finish within {self.timeout} s.')], []
            await loop.run_in_executor(None, self.checker.begin, trusted)
        except CheckerError as error:
            self.log.error('the checker failed in cell %s: %s', grade_id, error)
            outputs, notes = [_error('CheckerError', f'The grader\'s checker failed ({error}); ask your '
                                                     'instructor to regrade.')], []
            await loop.run_in_executor(None, self.checker.begin, trusted)
        finally:
            self.timing['test_cells'] += time.perf_counter() - started
        cell.outputs = [NotebookNode(output) for output in outputs]
        self.notes.extend(notes)
        if self._gone is not None:
            raise self._gone

    async def _call_kernel(self, request: str, deadline: Optional[float]) -> dict:
        """Perform one checker request (JSON text) in the kernel; the answer's text, or why there is none."""
        started = time.perf_counter()
        try:
            return await self._call(request, deadline)
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
                self._gone = _KernelGone('CellTimeoutError', f'Cell did not finish within {self.timeout} s and did '
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
            elif kind == 'stream' and kept < _STREAM_LIMIT:
                piece = str(content.get('text', ''))[:_STREAM_LIMIT - kept]
                kept += len(piece)
                streams.append((content.get('name') == 'stderr' and 'stderr' or 'stdout', piece))
            elif kind == 'status' and content.get('execution_state') == 'idle':
                idle = True
        if interrupted_at is not None:
            return {'gone': 'CellTimeoutError', 'message': f'Cell did not finish within {self.timeout} s and was '
                                                           'interrupted.', 'streams': streams}
        return {'text': text, 'streams': streams}

    async def _install_agent(self, kc, deadline):
        """Send the agent to a new kernel and open its comm; the answers to calls come back on that comm."""
        boot = _BOOT.format(source=_AGENT_SOURCE, filename=kernel_agent.FILENAME)
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

    # ------------------------------------------------------------------ outputs

    @staticmethod
    def _add_error(cell: NotebookNode, ename: str, message: str) -> None:
        cell.setdefault('outputs', [])
        cell.outputs.append(NotebookNode(_error(ename, message)))

    def _note(self) -> NotebookNode:
        return NotebookNode(output_type='stream', name='stdout',
                            text=f'\n[output truncated by the grader after {_mb(self.max_output_bytes)}]\n')

    def output(self, outs, msg, display_id, cell_index):
        limit = self.max_output_bytes
        if not limit:
            return super().output(outs, msg, display_id, cell_index)
        msg_type, content = msg['msg_type'], msg['content']
        if msg_type == 'error':
            tb = content.get('traceback') or []
            if sum(len(t) for t in tb) > 20_000:   # keep errors, but not megabytes of them
                content['traceback'] = [t[:4000] for t in tb[:5] + ['...'] + tb[-5:]]
            return super().output(outs, msg, display_id, cell_index)
        if msg_type == 'stream':
            size = len(content.get('text', ''))
        elif msg_type in ('display_data', 'execute_result', 'update_display_data'):
            size = sum(len(v) if isinstance(v, str) else len(str(v)) for v in (content.get('data') or {}).values())
        else:
            return super().output(outs, msg, display_id, cell_index)
        remaining = limit - self._output_used
        if size <= remaining:
            self._output_used += size
            return super().output(outs, msg, display_id, cell_index)
        out = None
        if msg_type == 'stream' and remaining > 0:      # keep what fits of a stream, drop the rest
            content['text'] = content['text'][:remaining]
            out = super().output(outs, msg, display_id, cell_index)
        self._output_used = limit
        if cell_index not in self._truncated_cells:
            self._truncated_cells.add(cell_index)
            outs.append(self._note())
        return out


def _error(ename: str, message: str) -> dict:
    return {'output_type': 'error', 'ename': ename, 'evalue': message,
            'traceback': [f'\x1b[0;31m{ename}\x1b[0m: {message}']}

