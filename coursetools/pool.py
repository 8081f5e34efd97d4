"""Executing many notebooks at once on Dask: the worker side of `make grade`.

The grading process sends each sanitized notebook as an `ExecutionJob` (the notebook, the files beside it, the
trusted test cells, and the run's settings); a worker executes it in one of its slots and sends back an
`ExecutionResult`. A slot is what one notebook at a time needs: an event loop thread, a configured
`SandboxedExecute`, a kernel source (kernels forked from a warm fork server by default) and a trusted checker
process. Slots live as long as the run and serve notebook after notebook.

On the default LocalCluster the workers are threads of the grading process (the work happens in the kernels
and checkers, which are processes of their own); `--scheduler` uses an existing cluster, whose workers need this
course's Python environment.
"""
from __future__ import annotations

import asyncio
import logging
import os
import shutil
import stat
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Optional

from coursetools.course import ATTENTION_ERRORS

log = logging.getLogger(__name__)
KERNEL_SOURCES = ('forked', 'prestarted', 'cold')


@dataclass(frozen=True)
class RunSpec:
    """What every job of one grading run shares."""
    token: str                      # tells one run's slots from another's
    executor_class: type            # the configured execute preprocessor's class (SandboxedExecute)
    traits: dict                    # its configured traits
    kernels: str = 'forked'         # where kernels come from: 'forked', 'prestarted' or 'cold'
    folder_name: str = 'submission'     # the kernel's folder name (the assignment id)


@dataclass
class ExecutionJob:
    run: RunSpec
    student: str
    notebook: str
    nb: object                      # the sanitized NotebookNode
    resources: dict
    files: dict                     # the files beside the notebook: relative path -> (kind, data, mode)
    trusted: object = None          # coursetools.checker_host.TrustedCells, or None
    submitted: float = field(default_factory=time.time)


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
    for rel, (kind, data, mode) in files.items():
        path = os.path.join(folder, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if kind == 'dir':
            os.makedirs(path, exist_ok=True)
            os.chmod(path, mode)
        elif kind == 'link':
            os.symlink(data, path)
        else:
            with open(path, 'wb') as f:
                f.write(data)
            os.chmod(path, mode)


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
    """One notebook at a time: an event loop thread, an executor, a kernel source, a checker."""

    def __init__(self, run: RunSpec, number: int):
        from coursetools.checker_host import Checker
        self.run = run
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=f'grading-slot-{number}', daemon=True)
        self.thread.start()
        self.scratch = tempfile.mkdtemp(prefix='nbslot-')
        self.checker = Checker(log_path=os.path.join(self.scratch, 'checker.log'))
        self.executor = run.executor_class(**run.traits, checker=self.checker)
        self.executor.kernel_source = self._kernel_source(run.kernels)
        self.started = threading.Event()

    def _kernel_source(self, kind):
        from coursetools import kernels
        from coursetools.forkserver import ForkServerError
        from coursetools.sandbox import SandboxUnavailable
        if kind == 'forked' and self.executor.sandboxed:
            try:
                return kernels.ForkedKernels(self.executor, self.run.folder_name)
            except (ForkServerError, SandboxUnavailable) as error:
                log.warning('no kernel fork server here (%s): kernels are started ahead instead', error)
                kind = 'prestarted'
        if kind == 'prestarted' and self.executor.sandboxed:
            return kernels.PrestartedKernels()
        return kernels.ColdKernels()

    def warm_up(self) -> None:
        """Start the checker and the fork server now, before the first notebook arrives."""
        from coursetools.forkserver import ForkServerError
        try:
            self.checker.ensure()
            live = getattr(self.executor.kernel_source, 'live', None)
            if live is not None:
                live()
        except (ForkServerError, OSError) as error:       # the first notebook will say what is wrong
            log.warning('could not warm up a grading slot: %s', error)
        finally:
            self.started.set()

    def execute(self, job: ExecutionJob) -> ExecutionResult:
        from coursetools.forkserver import ForkServerError
        self.started.wait(120)
        began, arrived = time.perf_counter(), time.time()
        folder = os.path.join(self.scratch, 'job', job.run.folder_name)
        shutil.rmtree(os.path.dirname(folder), ignore_errors=True)
        os.makedirs(folder)
        materialize(job.files, folder)
        resources = dict(job.resources, metadata=dict(job.resources.get('metadata') or {}, path=folder),
                         trusted_cells=job.trusted)
        executor = self.executor
        try:
            nb, _ = asyncio.run_coroutine_threadsafe(executor.async_preprocess(job.nb, resources), self.loop).result()
        except ForkServerError as error:      # the fork server cannot run here: start kernels ahead from now on
            log.warning('kernel fork server unavailable, starting kernels instead: %s', error)
            executor.kernel_source.close()
            executor.kernel_source = self._kernel_source('prestarted')
            nb, _ = asyncio.run_coroutine_threadsafe(executor.async_preprocess(job.nb, resources), self.loop).result()
        timing = dict(executor.timing, execute=time.perf_counter() - began, kernels=executor.kernel_source.name,
                      queued=arrived - job.submitted, started=arrived)
        return ExecutionResult(nb, attention_notes(nb) + list(dict.fromkeys(executor.notes)), timing)

    def close(self) -> None:
        try:
            asyncio.run_coroutine_threadsafe(self.executor.kernel_source.aclose(), self.loop).result(60)
        except Exception as error:
            log.warning('could not stop a grading slot\'s kernels: %s', error)
        finally:
            self.checker.close()
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            shutil.rmtree(self.scratch, ignore_errors=True)


class _Slots:
    """The slots of this worker process: idle ones are reused; a new run closes the last run's."""

    def __init__(self):
        self.lock = threading.Lock()
        self.idle: list = []
        self.all: list = []
        self.token = None

    def acquire(self, run: RunSpec) -> Slot:
        with self.lock:
            if run.token != self.token:
                stale, self.all, self.idle, self.token = self.all, [], [], run.token
            else:
                stale = []
            slot = self.idle.pop() if self.idle else None
        for old in stale:
            old.close()
        if slot is None:
            slot = Slot(run, len(self.all) + 1)
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
            if run.token != self.token:
                stale, self.all, self.idle, self.token = self.all, [], [], run.token
            else:
                stale = []
        for old in stale:
            old.close()
        made = []
        for _ in range(count):
            slot = Slot(run, len(self.all) + len(made) + 1)
            threading.Thread(target=slot.warm_up, name='grading-slot-warm-up', daemon=True).start()
            made.append(slot)
        with self.lock:
            self.all.extend(made)
            self.idle.extend(made)
        return count

    def close(self, token=None) -> int:
        with self.lock:
            if token is not None and token != self.token:
                return 0
            slots, self.all, self.idle, self.token = self.all, [], [], None
        closing = [threading.Thread(target=slot.close, name='grading-slot-close') for slot in slots]
        for thread in closing:          # each waits for its processes to exit: all at once
            thread.start()
        for thread in closing:
            thread.join()
        return len(slots)


_SLOTS = _Slots()


def run_job(job: ExecutionJob) -> ExecutionResult:
    """Dask task: execute one notebook in a slot of this worker."""
    slot = _SLOTS.acquire(job.run)
    try:
        return slot.execute(job)
    finally:
        _SLOTS.release(slot)


def prepare_slots(run: RunSpec, dask_worker=None) -> int:
    """`client.run` target (which passes the worker as `dask_worker`): one warm slot per worker thread, started
    while the assignment is released and the first notebooks are sanitized."""
    count = getattr(getattr(dask_worker, 'state', None), 'nthreads', None) or 1
    return _SLOTS.prepare(run, count)


def close_slots(token=None) -> int:
    """`client.run` target: stop this worker's kernels, fork servers and checkers (the end of a run)."""
    return _SLOTS.close(token)


# --- the cluster, in the grading process ---------------------------------------------------------------------

def default_workers() -> int:
    """One notebook per core, plus one to use the cores while another notebook's kernel starts."""
    try:
        return len(os.sched_getaffinity(0)) + 1
    except AttributeError:
        return (os.cpu_count() or 1) + 1


class Cluster:
    """A Dask client: on a LocalCluster of worker threads in this process, or on an existing scheduler."""

    def __init__(self, scheduler: Optional[str] = None, workers: Optional[int] = None):
        import dask
        from distributed import Client, LocalCluster
        self.local = None
        if scheduler:
            self.client = Client(scheduler, timeout='30s', set_as_default=False)
        else:
            # The worker's statistical profiler would sample this process's threads every 10 ms, for a dashboard
            # that is not started.
            with dask.config.set({'distributed.worker.profile.enabled': False}):
                self.local = LocalCluster(n_workers=1, threads_per_worker=workers or default_workers(),
                                          processes=False, dashboard_address=None, silence_logs=logging.ERROR)
            self.client = Client(self.local, set_as_default=False)
        self.threads = sum(int(w.get('nthreads', 1)) for w in self.client.scheduler_info().get('workers', {}).values())

    def prepare(self, run: RunSpec) -> None:
        self.client.run(prepare_slots, run)

    def submit(self, job: ExecutionJob):
        return self.client.submit(run_job, job, pure=False, key=f'grade-{job.student}-{job.notebook}-'
                                                                   f'{job.run.token[:8]}')

    def close(self, token=None) -> None:
        try:
            self.client.run(close_slots, token)
        except Exception as error:
            log.warning('could not stop the workers\' kernels: %s', error)
        try:
            self.client.close()
        finally:
            if self.local is not None:
                self.local.close()
