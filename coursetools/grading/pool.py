"""Executing many notebooks at once on Dask: the worker side of `make grade`.

The grading process sends each sanitized notebook as an `ExecutionJob` (the notebook, the files beside it, the
trusted test cells, and the run's settings); a worker executes it in one of its slots and sends back an
`ExecutionResult`. A slot is what one notebook at a time needs: an event loop thread and a configured
`SandboxedExecute` (every kernel a sandbox of its own); the slots of a worker share one trusted checker server,
which forks a session per notebook (its tables are computed once per worker, not per slot). A worker's slots are a
Dask worker plugin (`GradingSlots`), installed once the worker is proven; they live as long as the run and serve
notebook after notebook; each notebook gets kernels and a checker session of its own, never used for another.

On the default LocalCluster the workers are threads of the grading process (the work happens in the kernels
and checkers, which are processes of their own); `--scheduler` uses an existing cluster, whose workers need this
course's Python environment.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import errno
import logging
import os
import stat
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Optional

from distributed.diagnostics.plugin import WorkerPlugin

from coursetools.grading.course import ATTENTION_ERRORS, checks_modules
from coursetools.grading.kernels import SOCKET_ROOM, ForkedKernels, Kernels
from coursetools.judge.checker_host import CheckerError
from coursetools.sandbox.host.files import remove_tree

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunSpec:
    """What every job of one grading run shares, decided in the grading process (not by a worker's environment)."""
    token: str                      # tells one run's slots from another's
    executor_class: type            # the configured execute preprocessor's class (SandboxedExecute)
    traits: dict                    # its configured traits
    folder_name: str = 'submission'     # the kernel's folder name (the assignment id)
    sandboxed: bool = True          # whether kernels run in the sandbox: the grading process's decision
    digest: str = ''                # content hash of the grading process's course package


class WorkerFault(RuntimeError):
    """A notebook could not be graded because of the worker (its sandbox, its processes): it goes to another."""


@dataclass
class ExecutionJob:
    run: RunSpec
    student: str
    notebook: str
    nb: object                      # the sanitized NotebookNode
    resources: dict
    files: dict                     # the files beside the notebook: relative path -> (kind, data, mode)
    trusted: object = None          # coursetools.judge.checker_host.TrustedCells, or None
    submitted: float = field(default_factory=time.time)

    def bound(self, margin: float = 300) -> Optional[float]:
        """Seconds a worker may take over this notebook before the grading process gives up on it, from the executor's
        settings: `notebook_timeout` for its own cells, plus `timeout` and `interrupt_grace_period` for the last one
        begun and for each test cell, `startup_timeout` for each of up to `max_kernel_restarts` + 1 kernels, and
        `margin`: about 4,100 s with the defaults and 12 test cells, for notebooks that take seconds (it is for a
        grader that hangs; the executor's limits stop a slow student). None (no bound) if either timeout is off."""
        get = self.run.traits.get
        if not get('notebook_timeout') or not get('timeout'):
            return None
        tests = len(self.trusted.tests) if self.trusted else sum(c.get('cell_type') == 'code' for c in self.nb.cells)
        cell = get('timeout') + (get('interrupt_grace_period') or 0)
        starts = ((get('max_kernel_restarts') or 0) + 1) * (get('startup_timeout') or 60)
        return get('notebook_timeout') + cell * (tests + 1) + starts + margin


@dataclass
class ExecutionResult:
    nb: object
    notes: list
    timing: dict


def snapshot(folder: str) -> dict:
    """The files of a folder, to ship with a job (no shared file system needed)."""
    files: dict = {}
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(dirs) + sorted(names):
            path = os.path.join(root, name)
            rel = os.path.relpath(path, folder)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                files[rel] = ('link', os.readlink(path), 0)
            elif stat.S_ISDIR(info.st_mode):
                files[rel] = ('dir', None, stat.S_IMODE(info.st_mode))
            elif stat.S_ISREG(info.st_mode):
                with open(path, 'rb') as f:
                    files[rel] = ('file', f.read(), stat.S_IMODE(info.st_mode))
    return files


def materialize(files: dict, folder: str) -> None:
    """Write a job's files (`snapshot`) under `folder`, and nowhere else: the worker may run as root, and with
    --scheduler jobs come over the network. Every entry is checked before any is written (a relative path without
    empty, '.' or '..' components, inside no entry but a folder: not through a link); each is made from a
    descriptor of its folder, reached without following links, and files are created new (O_EXCL|O_NOFOLLOW). A
    link entry is made as a link (the sandbox copies links as links). ValueError names an entry refused."""
    for rel, (kind, data, mode) in files.items():
        parts = rel.split('/') if isinstance(rel, str) else ['']
        above = [path for path in ('/'.join(parts[:n]) for n in range(1, len(parts)))
                 if files.get(path, ('dir',))[0] != 'dir']
        if {'', '.', '..'} & set(parts) or rel.startswith('/') or '\0' in rel or kind not in ('file', 'dir', 'link'):
            raise ValueError(f"job file {rel!r} refused: not a file, folder or link at a relative path without empty, "
                             "'.' or '..' components")
        if above:
            raise ValueError(f'job file {rel!r} refused: it is inside {above[0]!r}, a {files[above[0]][0]}, not a '
                             'folder')
    for rel, (kind, data, mode) in files.items():
        parts, fds = rel.split('/'), [os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)]
        try:
            for name in parts[:-1] + (parts[-1:] if kind == 'dir' else []):
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=fds[-1])
                fds.append(os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fds[-1]))
            if kind == 'link':
                os.symlink(data, parts[-1], dir_fd=fds[-1])
            elif kind == 'file':
                fds.append(os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                                   0o600, dir_fd=fds[-1]))
                view = memoryview(data)
                while view:
                    view = view[os.write(fds[-1], view):]
            if kind != 'link':
                os.fchmod(fds[-1], mode)
        except OSError as error:
            if error.errno not in (errno.EEXIST, errno.ELOOP, errno.ENOTDIR):
                raise
            raise ValueError(f'job file {rel!r} refused: a link or another file is in its way on disk '
                             f'({error.strerror})') from None
        finally:
            for fd in fds:
                os.close(fd)


def attention_notes(nb) -> list:
    """'timeout in cell score-values: ...' for every error output that means a student needs attention."""
    notes = []
    for index, cell in enumerate(nb.get('cells', [])):
        grade_id = (cell.get('metadata', {}).get('nbgrader') or {}).get('grade_id')
        label = f'cell {grade_id}' if grade_id else f'cell {index + 1}'
        for output in cell.get('outputs', []) or []:
            if output.get('output_type') == 'error' and output.get('ename') in ATTENTION_ERRORS:
                reason = (output.get('evalue') or '').strip().split('\n')[0]
                notes.append(f'{ATTENTION_ERRORS[output["ename"]]} in {label}' + (f': {reason}' if reason else ''))
    return notes


# --- slots, on the worker ----------------------------------------------------------------------------------

class Slot:
    """One notebook at a time: an event loop thread, an executor; the worker's checker server."""

    def __init__(self, run: RunSpec, number: int, checker):
        self.run = run
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=f'grading-slot-{number}', daemon=True)
        self.thread.start()
        self.scratch = tempfile.mkdtemp(prefix='nbslot-')
        self.checker = checker          # the run's checker server on this worker: it forks each notebook's session
        self.executor = run.executor_class(**dict(run.traits, sandbox=run.sandboxed), checker_server=self.checker,
                                           kernel_source=ForkedKernels() if run.sandboxed else Kernels())
        self.executor.environment_may_unsandbox = False
        self.started = threading.Event()

    def warm_up(self) -> None:
        """Start the checker and the kernels' zygote now, before the first notebook arrives."""
        try:
            self.checker.ensure()
            self.executor.kernel_source.warm_up()
        except (RuntimeError, OSError) as error:     # the first notebook will say what is wrong
            log.warning('could not warm up a grading slot: %s', error)
        finally:
            self.started.set()

    def execute(self, job: ExecutionJob) -> ExecutionResult:
        self.started.wait(120)
        began, arrived = time.perf_counter(), time.time()
        folder = os.path.join(self.scratch, 'job', job.run.folder_name)
        remove_tree(os.path.dirname(folder))
        os.makedirs(folder)
        materialize(job.files, folder)
        resources = dict(job.resources, metadata=dict(job.resources.get('metadata') or {}, path=folder),
                         trusted_cells=job.trusted)
        executor = self.executor
        from coursetools.sandbox.host.bubblewrap import SandboxUnavailable
        try:
            nb = self._run(job.nb, resources, job.bound())
        except (SandboxUnavailable, CheckerError) as error:
            raise WorkerFault(f'{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ""}') from None
        timing = dict(executor.timing, execute=time.perf_counter() - began,
                      queued=arrived - job.submitted, started=arrived)
        return ExecutionResult(nb, attention_notes(nb) + list(dict.fromkeys(executor.notes)), timing)

    running = None          # the asyncio task of the notebook out here, if any

    def _run(self, nb, resources, bound=None):
        """Execute one notebook; past `bound` seconds it is cancelled (its sandbox stopped): its slot is freed."""
        async def preprocess():
            self.running = asyncio.current_task()
            return await self.executor.async_preprocess(nb, resources)
        future = asyncio.run_coroutine_threadsafe(preprocess(), self.loop)
        try:
            return future.result(bound)[0]
        except concurrent.futures.TimeoutError:
            future.cancel()
            with contextlib.suppress(concurrent.futures.CancelledError, concurrent.futures.TimeoutError):
                future.result(60)       # the cancelled notebook's kernel stops
            raise RuntimeError(f'not graded: grading took longer than {bound:.0f} s') from None

    async def _stop(self):
        if self.running is not None and self.running.cancel():     # a notebook out here: it is not graded
            await asyncio.wait([self.running], timeout=30)
        await self.executor.kernel_source.aclose()

    def close(self) -> None:
        self.started.wait(120)          # a slot still warming up would start its processes after this close
        try:
            asyncio.run_coroutine_threadsafe(self._stop(), self.loop).result(60)
        except Exception as error:
            log.warning('could not stop a grading slot\'s kernels: %s', error)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            remove_tree(self.scratch)


class GradingSlots(WorkerPlugin):
    """The grading slots of one Dask worker, held as a worker plugin (Dask's own per-worker state), installed by
    `prove_worker` once the worker is proven and closed with the worker: idle slots are reused; a new run closes
    the last run's."""

    def __init__(self):
        self.lock = threading.Lock()
        self.idle: list = []
        self.all: list = []
        self.token = None
        self.checker = None         # one checker server for the run's slots (each notebook gets its own session)

    def _begin(self, run: RunSpec) -> list:
        """Under the lock: make `run` this worker's run; what the last run left, to be closed."""
        if run.token == self.token:
            return []
        from coursetools.judge.checker_host import CheckerServer
        stale = self.all + ([self.checker] if self.checker is not None else [])
        self.all, self.idle, self.token = [], [], run.token
        self.checker = CheckerServer(assignment=run.folder_name, warm=checks_modules(run.folder_name))
        return stale

    def acquire(self, run: RunSpec) -> Slot:
        with self.lock:
            stale = self._begin(run)
            slot = self.idle.pop() if self.idle else None
        for old in stale:
            old.close()
        if slot is None:
            slot = Slot(run, len(self.all) + 1, self.checker)
            slot.warm_up()
            with self.lock:
                self.all.append(slot)
        return slot

    def release(self, slot: Slot) -> None:
        with self.lock:
            if slot in self.all:
                self.idle.append(slot)

    def prepare(self, run: RunSpec, count: int) -> int:
        """Make `count` slots and warm them up in the background."""
        with self.lock:
            stale = self._begin(run)
        for old in stale:
            old.close()
        made = []
        for _ in range(count):
            slot = Slot(run, len(self.all) + len(made) + 1, self.checker)
            threading.Thread(target=slot.warm_up, name='grading-slot-warm-up', daemon=True).start()
            made.append(slot)
        with self.lock:
            self.all.extend(made)
            self.idle.extend(made)
        return count

    def teardown(self, worker) -> None:
        self.close()

    def close(self, token=None) -> int:
        with self.lock:
            if token is not None and token != self.token:
                return 0
            slots, self.all, self.idle, self.token = self.all, [], [], None
            checker, self.checker = self.checker, None
        closing = [threading.Thread(target=slot.close, name='grading-slot-close') for slot in slots]
        for thread in closing:          # each waits for its processes to exit: all at once
            thread.start()
        for thread in closing:
            thread.join()
        if checker is not None:         # then the checker, which a slot still warming up would start again
            checker.close()
        return len(slots)


SLOTS_PLUGIN = 'course-grading-slots'


def run_job(job: ExecutionJob) -> ExecutionResult:
    """Dask task: execute one notebook in a slot of this worker. A fault of the worker takes its grading slots
    away (no more notebooks come here) and is raised as WorkerFault."""
    from distributed import get_worker
    slots = get_worker().plugins[SLOTS_PLUGIN]
    slot = slots.acquire(job.run)
    try:
        return slot.execute(job)
    except WorkerFault as fault:
        raise WorkerFault(f'{_withdraw()}: {fault}') from None
    except Exception as error:          # this notebook's alone, told as text: Dask could not send some errors back
        raise RuntimeError(f'{type(error).__name__}: {error}'[:2000]) from None
    finally:
        slots.release(slot)


# --- proving a worker before it grades --------------------------------------------------------------------------

SLOT_RESOURCE = 'course-grading-slots'      # a Dask resource: a worker gets it only once proven; every job needs 1


def course_digest() -> str:
    """A content hash of the course package's code: a worker grades only with the grading process's code."""
    import hashlib
    import pathlib
    import coursetools
    root = pathlib.Path(coursetools.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob('*.py')):
        if '__pycache__' not in path.parts:
            digest.update(str(path.relative_to(root)).encode() + b'\0' + path.read_bytes() + b'\0')
    return digest.hexdigest()


def worker_problem(run: RunSpec) -> Optional[str]:
    """Why this process may not grade for `run` (with the fix), or None."""
    from coursetools.sandbox.host import bubblewrap as sandbox
    if course_digest() != run.digest:
        return ('its course package is not the grading process\'s (another copy or version of coursetools): '
                'install the same commit of the course there')
    if run.sandboxed and sandbox.unsandboxed_requested():
        return (f'its environment sets {sandbox.UNSANDBOXED_ENV}, but this run grades in the sandbox: start it '
                'without that variable')
    if run.sandboxed and (reason := sandbox.probe()):
        return f'the sandbox does not start there: {reason}'
    if len(os.fsencode(tempfile.gettempdir())) > SOCKET_ROOM:
        return (f"its temporary folder {tempfile.gettempdir()} leaves no room for the kernels' sockets (at most "
                f'{SOCKET_ROOM} bytes): start it with a shorter TMPDIR, such as TMPDIR=/tmp')
    return None


async def prove_worker(run: RunSpec, dask_worker=None) -> Optional[str]:
    """`client.run` target: check this worker for `run`; if it may grade, give it one grading slot per thread
    (`SLOT_RESOURCE`) and warm the slots up. Returns None, or why it may not grade."""
    loop = asyncio.get_running_loop()
    problem = await loop.run_in_executor(None, worker_problem, run)
    if problem is None:
        count = getattr(getattr(dask_worker, 'state', None), 'nthreads', None) or 1
        if SLOTS_PLUGIN not in dask_worker.plugins:
            await dask_worker.plugin_add(GradingSlots(), name=SLOTS_PLUGIN)
        dask_worker.plugins[SLOTS_PLUGIN].prepare(run, count)
        await dask_worker.set_resources(**{SLOT_RESOURCE: count})
    return problem


def _withdraw() -> str:
    """Take this worker's grading slots away (it failed a notebook through its own fault); its address."""
    try:
        from distributed import get_worker
        worker = get_worker()
    except (ImportError, ValueError):
        return 'a worker'
    worker.loop.add_callback(worker.set_resources, **{SLOT_RESOURCE: 0})
    return worker.address


def close_slots(token=None, dask_worker=None) -> int:
    """`client.run` target: stop this worker's kernels and checkers (the end of a run)."""
    slots = dask_worker.plugins.get(SLOTS_PLUGIN) if dask_worker is not None else None
    return slots.close(token) if slots is not None else 0
