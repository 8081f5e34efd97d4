"""The Dask cluster, seen from the grading process: a LocalCluster of worker threads by default, or an existing
scheduler (`--scheduler`); every worker proven (`pool.prove_worker`) before it is given a notebook.
"""
from __future__ import annotations

import concurrent.futures
import logging
import os
from typing import Optional

from coursetools.grading.pool import SLOT_RESOURCE, ExecutionJob, RunSpec, close_slots, prove_worker, run_job

PROVE_TIMEOUT = 300     # seconds a worker's check may take (the sandbox's probe, the course's digest: seconds)

log = logging.getLogger(__name__)


class SchedulerUnreachable(RuntimeError):
    """The Dask scheduler given did not answer."""


def default_workers() -> int:
    """One notebook per core, plus two: a notebook's slot spends part of its time waiting (its kernel starting, a
    check's call crossing from the checker to the kernel and back), and the spare notebooks use the cores meanwhile
    (docs/parallel.md)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else (os.cpu_count() or 1)
    return cores + 2


class Cluster:
    """A Dask client: on a LocalCluster of worker threads in this process, or on an existing scheduler."""

    def __init__(self, scheduler: Optional[str] = None, workers: Optional[int] = None, timeout: float = 30):
        import dask
        from distributed import Client, LocalCluster
        self.local = None
        self.proven: dict = {}          # worker address -> None (may grade) or why it may not
        self.withdrawn: set = set()     # proven workers that later failed a notebook through their own fault
        # distributed keeps its last low-level messages for debugging (1,000 by default); in this process they
        # are the jobs and results themselves, about 0.45 MiB a notebook: keep few, so memory stays flat.
        dask.config.set({'distributed.admin.low-level-log-length': 16})
        if scheduler:
            try:
                self.client = Client(scheduler, timeout=f'{timeout}s', set_as_default=False)
            except (OSError, TimeoutError):
                raise SchedulerUnreachable(f'Cannot reach the Dask scheduler at {scheduler} within {timeout:g} s: is '
                                           'it running, and is that address reachable from here (host, port, '
                                           'firewall)? --scheduler-timeout sets the wait.') from None
        else:
            # The worker's statistical profiler would sample this process's threads every 10 ms, for a dashboard
            # that is not started; its event-loop tick (20 ms), memory check (100 ms) and system monitor (500 ms)
            # take this process's CPU from grading too, for warnings and pages no one reads here: less often.
            # Dask serves HTTP pages (task keys name students) on :8787 of every interface, dashboard or not: none.
            with dask.config.set({'distributed.worker.profile.enabled': False, 'distributed.scheduler.http.routes': [],
                                  'distributed.worker.http.routes': [], 'distributed.admin.tick.interval': '500ms',
                                  'distributed.worker.memory.monitor-interval': '1s',
                                  'distributed.admin.system-monitor.interval': '5s'}):
                self.local = LocalCluster(n_workers=1, threads_per_worker=workers or default_workers(),
                                          processes=False, dashboard_address=None, silence_logs=logging.ERROR,
                                          scheduler_kwargs={'dashboard_address': '127.0.0.1:0'},
                                          worker_dashboard_address='127.0.0.1:0')
            self.client = Client(self.local, set_as_default=False)
        self.threads = sum(int(w.get('nthreads', 1)) for w in self.client.scheduler_info().get('workers', {}).values())

    def prove(self, run: RunSpec) -> dict:
        """Check every worker not checked yet for `run` (`prove_worker`); {address: why it may not grade} of the
        workers that failed now. A worker that cannot even run the check (the course package does not import
        there) fails with its error."""
        workers = [address for address in self.client.scheduler_info(n_workers=-1).get('workers', {})
                   if address not in self.proven]
        if not workers:
            return {}
        asked = concurrent.futures.ThreadPoolExecutor(1, 'prove-workers')
        try:            # a worker that hangs in its check must not hold the run: it is not proven
            found = asked.submit(self.client.run, prove_worker, run, workers=workers, on_error='return').result(
                PROVE_TIMEOUT)
        except concurrent.futures.TimeoutError:
            found = {address: f'its check did not answer within {PROVE_TIMEOUT} s' for address in workers}
        finally:
            asked.shutdown(wait=False)
        failed = {}
        for address in workers:
            problem = found.get(address, 'it left before it could be checked')
            if isinstance(problem, BaseException):
                problem = (f'the check could not run there ({type(problem).__name__}: {str(problem)[:200]}); is '
                           'the course package installed in its Python environment (pip install -e . in a copy '
                           'of the course)?')
            self.proven[address] = problem
            if problem is not None:
                failed[address] = problem
        return failed

    def can_grade(self) -> bool:
        """True while some worker the scheduler has now (asked, not a cached view) was proven and has not failed
        a notebook since."""
        return any(address in self.proven and self.proven[address] is None and address not in self.withdrawn
                   for address in self.client.nthreads())

    def submit(self, job: ExecutionJob, attempt: int = 0):
        return self.client.submit(run_job, job, pure=False, resources={SLOT_RESOURCE: 1},
                                  key=f'grade-{job.student}-{job.notebook}-{job.run.token[:8]}-{attempt}')

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
