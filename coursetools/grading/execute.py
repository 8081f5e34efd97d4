"""Safe notebook execution for autograding: `SandboxedExecute`, nbgrader's `Execute` with two differences.

* **The student's cells run in a sandboxed kernel** (bubblewrap, `coursetools.sandbox.host.bubblewrap`) with limits on memory,
  CPU, processes, file size, output and time per cell. A kernel that dies, or a cell that will not stop, costs
  that cell only: the cell gets an error, a fresh kernel starts, the earlier cells are replayed silently, and
  execution goes on.
* **The test cells run in the trusted checker** (`coursetools.judge.checker`), a process where no student code runs.
  Their sources come from the gradebook; the notebook's graded functions are proxies there that call the
  student's functions in the kernel and bring back plain data. A test cell's outputs and error are written into
  the notebook exactly where the kernel's would be, so nbgrader's grading, feedback and formgrader see nothing
  different.

    # nbgrader_config.py
    c.Autograde.autograde_preprocessors = [SandboxedExecute, ...]   # where Execute was
    c.SandboxedExecute.timeout = 120

Where kernels come from and where they run is `kernel_source` (`coursetools.grading.kernels`): every kernel a
sandbox of its own. Outside nbgrader (no gradebook in the resources) every cell
runs in the kernel.
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
import uuid
from queue import Empty
from typing import Any, Optional

from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import run_sync
from nbclient.client import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from traitlets import Bool, DottedObjectName, Float, Integer, Unicode, default

from nbgrader.preprocessors import Execute

from coursetools.sandbox.host import bubblewrap as sbx
from coursetools.grading.channel import KernelGone, channel_broken, mb, wait_until_ready
from coursetools.judge.checker_host import CheckerServer, TrustedCells
from coursetools.grading.course import ATTENTION_ERRORS
from coursetools.grading.kernels import Kernels, KernelPlace, SandboxProvisioner
from coursetools.sandbox.host.processes import SandboxStuck
from coursetools.grading.outputs import CappedOutputs
from coursetools.sandbox.host.bubblewrap import Limits, SandboxUnavailable
from coursetools.grading.testcells import TestCellsInChecker

__all__ = ['SandboxedExecute', 'SandboxedKernelManager', 'SandboxUnavailable', 'ATTENTION_ERRORS']


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel manager for one kernel in a `KernelPlace`, launched by a kernel source."""

    client_class = DottedObjectName('coursetools.grading.channel.GradingKernelClient')
    folder = None           # the kernel's files (coursetools.sandbox.host.files.KernelFolder)

    def place_kernel(self, source, place: KernelPlace, limits: Limits) -> None:
        self.folder = place.folder.kernel()
        if place.sandboxed:
            self.transport = 'ipc'          # no network in the sandbox: ZeroMQ over unix sockets
            self.ip = os.path.join(self.folder.sockets, 'k')
            self.kernel_spec.interrupt_mode = 'message'     # bwrap does not forward SIGINT
        self.connection_file = self.folder.connection_file
        self.kernel_id = str(uuid.uuid4())
        self.provisioner = SandboxProvisioner(kernel_id=self.kernel_id, kernel_spec=self.kernel_spec, parent=self,
                                              source=source, place=place, limits=limits, kernel=self.folder)

    def cleanup_ipc_files(self) -> None:
        """Nothing: the sockets go with the notebook's folder, removed once its sandboxes are gone."""

    def log_tail(self) -> str:
        return self.folder.log_tail() if self.folder is not None else ''


class SandboxedExecute(TestCellsInChecker, CappedOutputs, Execute):
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
    store_widget_state = Bool(False, help="Widgets' state is not kept in the graded notebook: the course's widget "
                                          'is off while grading, and a kernel could send any amount.').tag(config=True)
    notebook_timeout = Integer(1800, allow_none=True, help="Wall time of a notebook's own cells in all, replays "
                               'included, in seconds; the rest of them are then not run (its test cells still are: '
                               'each has `timeout`). None/0: no limit.').tag(config=True)
    interrupt_grace_period = Float(5.0, help='Seconds a timed-out cell gets to stop after the interrupt before its '
                                             'kernel is killed and restarted.').tag(config=True)
    sandbox_tmpdir = Unicode('', help='Where the kernels\' scratch folders are made (default: the system temp '
                                      'folder).').tag(config=True)
    scratch_limit = Integer(256 * 1024**2, allow_none=True,
                            help="Size of each of a sandboxed kernel's HOME (its working folder), /tmp and /dev/shm, "
                                 'in bytes: private tmpfs that vanish with the kernel.').tag(config=True)
    nbgrader_execution = Unicode('autograde', help='NBGRADER_EXECUTION in the kernels: notebooks can tell they are '
                                                   'being graded (the widget switches itself off).').tag(config=True)

    @default('shutdown_kernel')
    def _kill_at_the_end(self):
        # a kernel's sandbox dies with it; a graceful shutdown only spent 0.075 CPU-s (docs/parallel.md)
        return 'immediate'

    def __init__(self, *args, kernel_source=None, checker_server=None, **kwargs):
        kwargs.setdefault('kernel_manager_class', SandboxedKernelManager)
        super().__init__(*args, **kwargs)
        self.kernel_source = kernel_source or Kernels()
        self.checker_server: Optional[CheckerServer] = checker_server
        self.session = None
        self.place: Optional[KernelPlace] = None
        self.timing: dict = {}
        self.notes: list = []
        self._trusted_cache: dict = {}

    # ------------------------------------------------------------------ settings

    environment_may_unsandbox = True     # False on a grading worker: the grading process decided (pool.RunSpec)

    @property
    def sandboxed(self) -> bool:
        return bool(self.sandbox) and not (self.environment_may_unsandbox and sbx.unsandboxed_requested())

    def limits(self) -> Limits:
        return Limits(memory_bytes=self.memory_limit, cpu_seconds=self.cpu_time_limit,
                      max_processes=self.max_processes, file_size_bytes=self.file_size_limit,
                      scratch_bytes=self.scratch_limit)

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
            self._end_session()
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
            if place.sandboxed:         # ready, and none of the student's code has run: its sockets are fixed now
                km.folder.lock_sockets()
        except Exception as error:
            with contextlib.suppress(Exception):
                await km.shutdown_kernel(now=True)
            if isinstance(error, SandboxUnavailable):       # the machine's fault: the run stops
                raise
            raise RuntimeError(f'The grading kernel could not start: {error}\nkernel log:\n{km.log_tail()}') from error
        return km, kc

    async def _start_kernel(self) -> None:
        started = time.perf_counter()
        self.km, self.kc = await self.start_kernel(self.place)
        self._agent_kernel = None
        self.timing['kernel_start'] += time.perf_counter() - started

    async def _stop_kernel(self, now: bool = False) -> None:
        km, kc = self.km, self.kc
        self.km = self.kc = None
        if kc is not None:
            with contextlib.suppress(Exception):
                kc.stop_channels()
        if km is None:
            return
        try:
            if now:
                await km.shutdown_kernel(now=True)
            elif await km.is_alive():
                await km.shutdown_kernel(now=self.shutdown_kernel == 'immediate')
        except SandboxStuck:
            raise
        except Exception as error:
            self.log.debug('kernel shutdown: %s', error)
            with contextlib.suppress(Exception):
                if km.provisioner is not None:
                    await km.provisioner.kill()
        try:
            await km.cleanup_resources()
        except SandboxStuck:
            raise
        except Exception as error:
            self.log.debug('kernel cleanup: %s', error)

    def _exit_description(self) -> str:
        with contextlib.suppress(Exception):        # no process, or still running (None < 0 raises)
            rc = self.km.provisioner.process.poll()
            sig = -rc if rc < 0 else rc - 128 if rc > 128 else None
            return f' (killed by {signal.Signals(sig).name})' if sig in signal.valid_signals() else \
                f' (exit status {rc})'
        return ''

    def _spent(self, replay_started=None) -> bool:
        """Whether the notebook's own cells, and the replay under way, have used its `notebook_timeout`."""
        used = self.timing['kernel_cells'] + (time.perf_counter() - replay_started if replay_started else 0)
        return bool(self.notebook_timeout) and used > self.notebook_timeout

    def _death(self) -> KernelGone:
        return KernelGone('KernelDied', f'The kernel died while running this cell{self._exit_description()}: it '
                                         f'crashed, exited, or hit a resource limit (memory '
                                         f'{mb(self.memory_limit or 0)}, CPU {self.cpu_time_limit} s). Later cells '
                                         'run in a fresh kernel.')

    # ------------------------------------------------------------------ the notebook

    async def _run_notebook(self, trusted: Optional[TrustedCells]) -> None:
        """Kernel cells in the notebook's order; test cells in the trusted order (from the checker), each once
        the notebook has reached it and every test cell before it in that order has run."""
        await self._start_kernel()
        info = await self.async_wait_for_reply(self.kc.kernel_info())
        if info is not None and 'language_info' in info['content']:
            self.nb.metadata['language_info'] = info['content']['language_info']
        order = []
        if trusted is not None and trusted.tests:
            order = await self._begin_checker(trusted)
            self._note_test_cell_order(trusted, order)
        self._done, self._skip_replay, self._deaths = [], set(), 0
        self._tests_run: list = []
        waiting: dict = {}            # grade_id -> index of a test cell reached before its turn
        for index, cell in enumerate(self.nb.cells):
            if cell.cell_type != 'code' or not cell.source.strip():
                await self.async_execute_cell(cell, index, execution_count=None)
                continue
            grade_id = (cell.metadata.get('nbgrader') or {}).get('grade_id')
            if trusted is None or grade_id not in trusted.tests or not cell.metadata['nbgrader'].get('grade'):
                await self._run_one(cell, index, None)
            elif grade_id in self._tests_run or grade_id in waiting:
                await self._run_one(cell, index, grade_id)          # a duplicate keeps its old behaviour
            else:
                waiting[grade_id] = index
            while order and order[0] in waiting:
                grade_id = order.pop(0)
                await self._run_one(self.nb.cells[waiting[grade_id]], waiting.pop(grade_id), grade_id)
            while order and order[0] not in waiting and order[0] in self._tests_run:
                order.pop(0)
        for grade_id in [g for g in order if g in waiting] + list(waiting):   # cells the notebook has not got
            if grade_id in waiting:
                await self._run_one(self.nb.cells[waiting[grade_id]], waiting.pop(grade_id), grade_id)
        self.set_widgets_metadata()

    async def _run_one(self, cell, index, grade_id) -> None:
        """Run one code cell (a test cell in the checker when `grade_id` is given); a kernel that dies or a broken
        channel costs this cell, and the next cells get a fresh kernel with the completed cells replayed."""
        if self._deaths > self.max_kernel_restarts:
            self._add_error(cell, 'KernelDied', f'not run: too many kernel deaths ({self._deaths}) in this notebook')
            return
        if grade_id is None and self._spent():
            self._add_error(cell, 'CellTimeoutError', "not run: this notebook's cells have run for over "
                                                      f'{self.notebook_timeout} s in all (the limit of a notebook)')
            return
        try:
            if grade_id is not None:
                self._tests_run.append(grade_id)
                await self._run_test_cell(cell, grade_id)
            elif await self._run_kernel_cell(cell, index):
                self._done.append(index)
            else:
                self._skip_replay.add(index)
        except KernelGone as gone:
            self._deaths += 1
            self._skip_replay.add(index)
            if not any(o.get('ename') == gone.ename for o in cell.get('outputs', [])):
                self._add_error(cell, gone.ename, gone.message)
            if self._deaths <= self.max_kernel_restarts:
                self._deaths = await self._restart_and_replay(self._done, self._skip_replay, self._deaths)

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
            raise KernelGone('CellTimeoutError', f'Cell did not finish within {self.timeout} s and did not stop '
                                                  'when interrupted; the kernel was restarted.') from None
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as error:          # a message the grader could not read: nothing of this kernel is kept
            cell.execution_count = self.code_cells_executed
            raise channel_broken(error) from None
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

        drainer, started = asyncio.ensure_future(drain()), time.perf_counter()
        try:
            for i in indices:
                if self._spent(started):
                    return None             # the cells after are not run either
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
            self.timing['kernel_cells'] += time.perf_counter() - started
            stop.set()
            await drainer
