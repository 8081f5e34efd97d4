"""One autograde run of one assignment: `nbgrader autograde <assignment> --force`, with the notebooks executed
in parallel on Dask (`coursetools.grading.pool`) and everything else done by nbgrader in this process, one submission
after another (`coursetools.grading.pipeline`). So only this process writes the gradebook.

    report = grading.autograde('noughts_and_crosses')     # in the course folder; see `autograde` for options

    run = grading.start('noughts_and_crosses')             # the workers start now, in the background ...
    report = run.run()                                     # ... and grade when the submissions are ready
    run.close()

Its settings are `c.Grading.*` (`coursetools.grading.settings`).
"""
from __future__ import annotations

import copy
import logging
import threading
import time
import traceback
import uuid
import warnings
from dataclasses import dataclass, field

from coursetools.grading import adapters
from coursetools.grading import cluster, pool
from coursetools.grading.pipeline import Pipeline, PreparedNotebook, Unreadable
from coursetools.grading.progress import Progress
from coursetools.grading.settings import Grading


class NoWorkerCanGrade(RuntimeError):
    """Every worker of the cluster failed its check (or none is connected)."""


@dataclass
class RunReport:
    """What happened in a run: notes per student who needs attention, who could not be graded, and timings."""
    notes: dict = field(default_factory=dict)
    failed: list = field(default_factory=list)
    errors: dict = field(default_factory=dict)
    graded: list = field(default_factory=list)
    timings: list = field(default_factory=list)     # one dict per executed notebook
    main: dict = field(default_factory=dict)        # seconds spent in this process, by step
    wall: float = 0.0
    workers: int = 0
    bad_workers: dict = field(default_factory=dict)     # address -> why it may not grade
    unfinished: list = field(default_factory=list)      # students not graded because of the workers
    grader_faults: list = field(default_factory=list)   # students not graded because of the grader (not `unfinished`)

    def note(self, student, note):
        notes = self.notes.setdefault(student, [])
        if note not in notes:
            notes.append(note)


def autograde(assignment, *, db_url=None, submitted_dir=None, students=None, scheduler=None, workers=None,
              progress=True, notes=None, options=(), stream=None, on_tail=None) -> RunReport:
    """Autograde every submission of `assignment` in the course folder (the current one).

    `submitted_dir`: read submissions from there instead of submitted/ (a repaired copy); `students`: only
    these; `scheduler`, `workers`: override the settings; `notes`: {student: [notes]} known
    beforehand, shown on the student's status line; `options`: nbgrader settings, as on its command line;
    `on_tail`: called once when no more notebooks are waiting for a worker (workers start to fall idle)."""
    run = start(assignment, db_url=db_url, submitted_dir=submitted_dir, students=students, scheduler=scheduler,
                workers=workers, progress=progress, options=options, stream=stream)
    try:
        return run.run(notes=notes, on_tail=on_tail)
    finally:
        run.close()


def start(assignment, *, db_url=None, submitted_dir=None, students=None, scheduler=None, workers=None,
          progress=True, options=(), stream=None, notebooks=None) -> Run:
    """An autograde run (the arguments of `autograde`) whose workers start now, in the background: the Dask
    cluster, its slots, and each worker's checker server. `make grade` starts them before it
    releases the assignment and stages the submissions, which keep one core busy and leave the other idle.
    `run.run(notes, on_tail)` then grades, and begins to stop the workers in the background when the last
    notebook is graded; `run.close()` waits until they have stopped (or stops them if `run` was never called).
    `notebooks`: how many will be graded, if known: a LocalCluster starts no more slots than that."""
    return Run(assignment, db_url, submitted_dir, students, scheduler, workers, progress, options, stream,
               notebooks)


class Run:
    """One autograde run of one assignment (made by `start`)."""

    def __init__(self, assignment, db_url, submitted_dir, students, scheduler, workers, progress, options,
                 stream, notebooks=None):
        self.assignment, self.students = assignment, students
        self.report = RunReport()
        self.pipeline = Pipeline.for_course(assignment, db_url=db_url, submitted_dir=submitted_dir,
                                            options=options, log_level=logging.ERROR)
        self.settings = Grading(config=self.pipeline.app.config)
        self.scheduler = scheduler if scheduler is not None else (self.settings.scheduler or None)
        self.workers = workers or self.settings.workers or (
            min(cluster.default_workers(), notebooks) if notebooks and not self.scheduler else None)
        self.show_progress, self.stream = progress, stream
        self.cluster = None
        self.pending = {}           # future -> (submission, prepared, notebook, results, job, attempt, completed, ..)
        self.spec = None
        executor = self.pipeline.executor
        if executor is not None:
            traits = {name: copy.deepcopy(getattr(executor, name)) for name in executor.trait_names(config=True)}
            self.spec = pool.RunSpec(uuid.uuid4().hex, type(executor), traits, self.assignment,
                                     sandboxed=executor.sandboxed, digest=pool.course_digest())
        self.starter = threading.Thread(target=self._start_cluster, args=(self.spec,), daemon=True)
        if self.spec is not None:
            self.starter.start()

    def _time(self, step, seconds):
        self.report.main[step] = self.report.main.get(step, 0.0) + seconds

    def run(self, notes=None, on_tail=None) -> RunReport:
        self.started = time.perf_counter()
        self.known_notes = {student: list(found) for student, found in (notes or {}).items()}
        self.on_tail = on_tail
        cpu = time.process_time()
        with warnings.catch_warnings(), adapters.speed_ups(pooled_gradebook=self.settings.pooled_gradebook,
                                cached_validation=self.settings.cached_validation,
                                in_process_alembic=self.settings.in_process_alembic):
            # nbgrader's own "object not in session" warnings when it creates submissions (harmless)
            warnings.filterwarnings('ignore', module='nbgrader.api')
            submissions = self.pipeline.submissions(self.students)
            self.progress = Progress(len(submissions), stream=self.stream, enabled=self.show_progress)
            try:
                self._grade(submissions, self.starter)
            finally:
                self.closing = threading.Thread(target=self._stop_workers, name='grading-stop', daemon=True)
                self.closing.start()
                self.progress.close()
        self.report.wall = time.perf_counter() - self.started
        self._time('process_cpu', time.process_time() - cpu)
        return self.report

    closing = None
    MARGIN = 300        # seconds: for proving the workers (beyond the scheduler's timeout), for stopping them

    def close(self):
        """Wait until the workers have stopped (stop them if `run` has not begun to)."""
        if self.closing is None:
            self._stop_workers()
        else:           # a worker that does not stop in time is left to end with this process
            self.closing.join(self.MARGIN)

    def _stop_workers(self):
        self.starter.join(self.settings.scheduler_timeout + self.MARGIN)
        running, self.cluster = self.cluster, None
        if running is not None:
            running.close(self.spec.token if self.spec else None)

    def _start_cluster(self, run):
        started = time.perf_counter()
        try:
            self.cluster = cluster.Cluster(self.scheduler, self.workers, timeout=self.settings.scheduler_timeout)
            self.report.workers = self.cluster.threads
            self.report.bad_workers.update(self.cluster.prove(run))
        except BaseException as error:      # reported when the first notebook needs the cluster
            self.cluster_error = error
        self._time('cluster_start', time.perf_counter() - started)

    cluster_error = None

    def _bad_workers(self, found):
        for address, problem in found.items():
            self.report.bad_workers[address] = problem
            self.progress.status(f'worker {address} will not grade: {problem}')

    def _grade(self, submissions, starter):
        """Every submission through the pipeline and the workers; if this stops half-way (no worker can grade, an
        interrupt), nothing of an unfinished submission stays in the gradebook or autograded/."""
        self.unfinished = {}
        try:
            self._grade_each(submissions, starter)
        except BaseException:
            for future in self.pending:     # the workers then stop them as cancelled, not as failed
                future.cancel()
            for submission in self.unfinished.values():
                self.pipeline.forget(submission)
            raise

    def _grade_each(self, submissions, starter):
        waiting = []          # sanitized while the cluster was still starting
        completed = None
        self.no_worker = None
        for submission in submissions:
            if self.no_worker is not None:
                self._not_sent(submission, self.no_worker)
                continue
            prepared = self._prepare(submission)
            if prepared is None:
                continue
            if self.pipeline.executor is None:
                self._finish(submission, prepared)
                continue
            waiting.append((submission, prepared))
            if starter.is_alive():
                continue
            completed = completed or self._completed(starter)
            for item in waiting:
                self._submit(completed, *item)
            waiting.clear()
            self._wait(completed, keep=self._window())
        if waiting:
            completed = completed or self._completed(starter)
            for item in waiting:
                self._submit(completed, *item)
        if completed is not None:
            self._wait(completed, keep=0)

    def _window(self):
        """How many notebooks may be out at once: every slot busy; the rest of the class waits here, unread."""
        return 2 * max(self.cluster.threads, 1) + 2

    def _wait(self, completed, keep):
        """Collect results until at most `keep` notebooks are out; give up on one out longer than its bound
        (`ExecutionJob.bound`); check new workers as they join; when none can grade any more, the notebooks out are
        not graded (machine faults, not the students'), nor are those not sent yet."""
        checked = time.monotonic()
        while len(self.pending) > keep:
            batch = completed.next_batch(block=False)
            for future in batch:
                if future in self.pending:          # not one given up on below
                    self._collect(future)
            now = time.monotonic()      # Dask starts them in the order sent: the oldest, one per slot, are running
            for future in list(self.pending)[:max(self.cluster.threads, 1)]:
                clock = self.pending[future][-1]        # [bound, when it may have begun]
                clock[1] = clock[1] or now
                if clock[0] and now - clock[1] > clock[0]:
                    self._collect(future, overdue=clock[0])
            if batch or time.monotonic() - checked < 2:
                time.sleep(0.02 if not batch else 0)
                continue
            checked = time.monotonic()
            self._bad_workers(self.cluster.prove(self.spec))
            if not self.cluster.can_grade():
                self.no_worker = 'no worker can grade: ' + '; '.join(
                    f'{address}: {problem}' for address, problem in self.report.bad_workers.items())
                for future in list(self.pending):
                    submission = self.pending.pop(future)[0]
                    future.release()
                    self._machine_fault(submission, self.no_worker)
                return

    def _completed(self, starter):
        from distributed import as_completed
        bound = self.settings.scheduler_timeout + self.MARGIN
        starter.join(bound)
        if starter.is_alive():
            raise NoWorkerCanGrade(f'the workers did not start within {bound:g} s')
        if self.cluster_error is not None:
            raise self.cluster_error
        self._bad_workers(self.report.bad_workers)
        if not self.cluster.can_grade():
            raise NoWorkerCanGrade('No worker can grade: ' + ''.join(
                f'\n  {address}: {problem}' for address, problem in self.report.bad_workers.items()))
        return as_completed(loop=self.cluster.client.loop)

    def _prepare(self, submission):
        started = time.perf_counter()
        try:
            prepared = self.pipeline.prepare(submission)
        except Unreadable as error:
            self._fail(submission, error, f'not a notebook / unreadable: {error}', theirs=True)
            return None
        except adapters.FATAL_ERRORS:
            self.pipeline.discard(submission)
            raise
        except Exception as error:
            self._fail(submission, error)
            return None
        finally:
            self._time('prepare', time.perf_counter() - started)
        if prepared is None:            # nbgrader would skip it too
            self._advance()
            return None
        self.unfinished[id(submission)] = submission
        for notebook in prepared:       # nbgrader's warnings, locked cells, tampering (decided in this process)
            for note in notebook.notes:
                self.report.note(submission.student, note)
        return prepared

    def _submit(self, completed, submission, prepared):
        results = {}
        for notebook in prepared:
            job = pool.ExecutionJob(self.spec, submission.student, notebook.name, notebook.nb,
                                    _plain_resources(notebook.resources), pool.snapshot(notebook.folder),
                                    notebook.trusted)
            self._send(completed, job, (submission, prepared, notebook, results), 0)

    def _send(self, completed, job, owner, attempt):
        future = self.cluster.submit(job, attempt)
        self.pending[future] = owner + (job, attempt, completed, [job.bound(), None])
        completed.add(future)

    MAX_ATTEMPTS = 3

    def _collect(self, future, overdue=None):
        submission, prepared, notebook, results, job, attempt, completed, _ = self.pending.pop(future)
        try:
            if overdue:             # given up on: its job, if running, ends on its own, unread
                future.cancel()
                raise TimeoutError(f'grading took longer than {overdue:.0f} s')
            results[notebook.name] = future.result()
        except pool.WorkerFault as fault:
            who, _, why = str(fault).partition(': ')
            self.cluster.withdrawn.add(who)
            self._bad_workers({who: why})
            if attempt + 1 < self.MAX_ATTEMPTS and self.cluster.can_grade():
                self._send(completed, job, (submission, prepared, notebook, results), attempt + 1)
            else:
                self._machine_fault(submission, f'a worker could not grade it ({fault})')
            return
        except Exception as error:
            results[notebook.name] = error
        finally:
            future.release()
        if len(results) == len(prepared):
            executed = []
            try:
                for item in prepared:
                    result = results[item.name]
                    if isinstance(result, BaseException):
                        raise result
                    self.report.timings.append(dict(result.timing, student=submission.student))
                    for note in result.notes:
                        self.report.note(submission.student, note)
                    executed.append(PreparedNotebook(item.student, item.name, result.nb, item.resources, item.folder,
                                                     notes=item.notes))
            except Exception as error:
                self._fail(submission, error, f'not graded: {error}' if isinstance(error, TimeoutError) else None)
                return
            self._finish(submission, executed)

    def _machine_fault(self, submission, why):
        """Not graded because of the machines: nothing is recorded for it, and the run will end with an error."""
        if self.unfinished.pop(id(submission), None) is not None:
            self.pipeline.forget(submission)
            self._not_sent(submission, why)

    def _not_sent(self, submission, why):
        """Never sent to a worker, the workers being gone: nothing is recorded for it either."""
        self.report.unfinished.append(submission.student)
        self.report.note(submission.student, f'not graded because of the workers: {why}')
        self._status(submission.student)
        self._advance()

    def _finish(self, submission, executed):
        started = time.perf_counter()
        try:
            for note in self.pipeline.finish(submission, executed):
                self.report.note(submission.student, note)
            self.unfinished.pop(id(submission), None)       # only now: an interrupt before this records nothing
            self.report.graded.append(submission.student)
        except adapters.FATAL_ERRORS:
            self.pipeline.discard(submission)
            raise
        except Exception as error:
            self._fail(submission, error, advance=False)
        finally:
            self._time('finish', time.perf_counter() - started)
        self._status(submission.student)
        self._advance()

    def _advance(self):
        self.progress.advance()
        if self.on_tail is not None and self.progress.total - self.progress.done <= (self.report.workers or 1):
            on_tail, self.on_tail = self.on_tail, None
            on_tail()

    def _fail(self, submission, error, note=None, advance=True, theirs=False):
        self.unfinished.pop(id(submission), None)
        self.pipeline.discard(submission)
        if note is None:
            first = str(error).strip().splitlines()[0] if str(error).strip() else ''
            note = f'not graded: {type(error).__name__}: {first}'
        self.report.note(submission.student, note)
        self.report.failed.append(submission.student)
        if not theirs:          # `theirs`: because of the student's notebook (unreadable), not of the grader
            self.report.grader_faults.append(submission.student)
        self.report.errors[submission.student] = ''.join(traceback.format_exception(error))
        if advance:
            self._status(submission.student)
            self._advance()

    def _status(self, student):
        """Print what this run found about `student`; the notes known before it (staging) were printed then."""
        known = self.known_notes.pop(student, [])
        found = [note for note in self.report.notes.get(student, []) if note not in known]
        for note in known:
            self.report.note(student, note)
        if found:
            self.progress.status(f'   {student}: ' + '; '.join(found))


def _plain_resources(resources):
    """The resources a worker needs, without the objects that only this process has."""
    return {key: resources[key] for key in ('metadata', 'nbgrader', 'unique_key', 'output_files_dir')
            if key in resources}
