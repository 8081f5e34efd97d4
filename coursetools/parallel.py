"""Parallel autograding on Dask: ``nbgrader autograde <assignment> --force``, notebooks run on many cores or machines.

    from coursetools import parallel
    notes = parallel.autograde(course_root, 'noughts_and_crosses')            # LocalCluster sized to the machine
    notes = parallel.autograde(course_root, 'noughts_and_crosses', scheduler='tcp://host:8786')

    python -m coursetools.parallel noughts_and_crosses [--scheduler ADDR] [--workers N] [--db URL] [--submitted DIR]

It produces the same gradebook and ``autograded/`` notebooks as ``nbgrader autograde <assignment> --force`` with
the course's ``nbgrader_config.py`` (loaded by nbgrader's own ``AutogradeApp``), split in three:

* in the calling process, in nbgrader's order, one student after another: ``init_destination`` and
  ``init_assignment`` (student, submission and timestamp in the gradebook, files copied from source/, missing
  notebooks scored zero) and the sanitize preprocessors (ClearOutput, ..., OverwriteCells);
* on Dask workers: the execute preprocessor (``SandboxedExecute`` with the configured traits) on the sanitized
  notebook and a copy of the files next to it (shipped with the task, so workers need no shared file system);
* back in the calling process, as results arrive (``as_completed``): the remaining autograde preprocessors
  (IgnorePattern, ..., SaveAutoGrades, AssignLatePenalties, CheckCellMetadata), the write to autograded/ and
  the permissions. So only this process writes to the gradebook (SQLite never sees two writers), and it keeps
  one database engine and connection for the whole run instead of one per preprocessor and notebook.

Kernels are forked from fork servers (:mod:`coursetools.forkserver`): one warm, sandboxed Python per notebook
running at once, which has imported ipykernel and the hidden checks and computed their tables, forks a fresh
kernel for every notebook, and kills and wipes everything the last one left before the next. Where a fork
server cannot run, a worker keeps a sandboxed kernel started ahead of time instead (``prestart_kernels``).
Kernel restarts after deaths and timeouts are ``SandboxedExecute``'s own.

On the default LocalCluster the workers are threads of this process: the work happens in the kernels, which are
processes of their own. ``workers`` is the number of notebooks at once (default: cores + 1).

Config (``nbgrader_config.py``; command-line options override)::

    c.ParallelGrading.scheduler = 'tcp://host:8786'   # default '': a LocalCluster on this machine
    c.ParallelGrading.workers = 0                     # notebooks at once on the LocalCluster (0: cores + 1)
    c.ParallelGrading.fork_server = True
    c.ParallelGrading.prestart_kernels = True

Workers of an external cluster need this course's Python environment (nbgrader, coursetools, bubblewrap).
"""
from __future__ import annotations

import argparse
import asyncio
import copy
import itertools
import logging
import os
import pathlib
import re
import shutil
import stat
import sys
import tempfile
import threading
import time
import traceback
import uuid
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Optional

from traitlets import Bool, Integer, List, Unicode
from traitlets.config import Configurable

__all__ = ["autograde", "ParallelGrading", "GradingReport", "Progress", "main"]

# jsonschema imports rfc3987_syntax for its "iri" format checker, and that module builds a parser when it is
# imported: 1.6 s of the grader's start-up, for a format that neither the notebook nor nbgrader's schemas use.
# Blocked here, before anything imports jsonschema, so jsonschema skips that checker as if it were not installed.
if "jsonschema" not in sys.modules:
    sys.modules.setdefault("rfc3987_syntax", None)

#: error outputs written by SandboxedExecute that mean a student needs attention
ATTENTION_ERRORS = {"CellTimeoutError": "timeout", "KernelDied": "kernel death"}


class ParallelGrading(Configurable):
    """Settings of :func:`autograde`, read from nbgrader_config.py (``c.ParallelGrading.*``)."""

    scheduler = Unicode("", help="Address of an existing Dask scheduler (tcp://host:8786); "
                                 "empty: start a LocalCluster on this machine.").tag(config=True)
    workers = Integer(0, help="Notebooks executed at once on the LocalCluster, one worker thread each "
                              "(0: one per CPU core, plus one).").tag(config=True)
    prestart_kernels = Bool(True, help="Workers start each notebook's kernel while the previous notebook "
                                       "runs (a fresh kernel per notebook either way).").tag(config=True)
    fork_server = Bool(True, help="Workers fork each notebook's kernel from a warm, sandboxed fork server "
                                  "(coursetools.forkserver) instead of starting a new Python; falls back to "
                                  "started kernels where the server cannot run.").tag(config=True)
    preload = List(Unicode(), ["coursetools.checks.noughts_and_crosses", "coursetools.checks.alpha_beta"],
                   help="Modules the fork server imports (and warms up, through their warm_up()) before it "
                        "forks kernels.").tag(config=True)


class GradingReport(dict):
    """``{student: [notes]}`` for every student needing attention, plus run details.

    ``failed``: students whose submission could not be graded (nbgrader would exit 1 for them);
    ``errors``: their tracebacks; ``timings``: one dict per executed notebook; ``wall``: seconds."""

    def __init__(self):
        super().__init__()
        self.failed: list[str] = []
        self.errors: dict[str, str] = {}
        self.timings: list[dict] = []
        self.graded: list[str] = []
        self.wall = 0.0
        self.workers = 0
        self.main_timing: dict = {}


# ============================================================================ progress


class Progress:
    """One-line progress bar with count, percentage and ETA on stderr (plain lines when not a tty)."""

    def __init__(self, total: int, stream=None, enabled: bool = True, label: str = "grading"):
        self.total, self.done, self.label = total, 0, label
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.t0 = time.monotonic()
        self.t_first: Optional[float] = None
        self._shown = False
        self._last_plain = -1
        if enabled and not self.tty:
            self._write(f"{label}: {total} submission(s)\n")
        self.draw()

    def _write(self, s: str) -> None:
        try:
            self.stream.write(s)
            self.stream.flush()
        except (OSError, ValueError):
            pass

    def eta(self) -> Optional[float]:
        if self.done == 0 or self.done >= self.total:
            return None if self.done == 0 else 0.0
        # rate since the first result, so that cluster start-up does not distort it
        if self.t_first is not None and self.done > 1:
            rate = (time.monotonic() - self.t_first) / (self.done - 1)
        else:
            rate = (time.monotonic() - self.t0) / self.done
        return rate * (self.total - self.done)

    def line(self) -> str:
        pct = 100.0 * self.done / self.total if self.total else 100.0
        eta = self.eta()
        eta_s = "--:--" if eta is None else f"{int(eta) // 60:d}:{int(eta) % 60:02d}"
        elapsed = time.monotonic() - self.t0
        return (f"{self.label} {self.done}/{self.total} {pct:3.0f}% ETA {eta_s} "
                f"(elapsed {int(elapsed) // 60:d}:{int(elapsed) % 60:02d})")

    def draw(self) -> None:
        if not self.enabled:
            return
        if self.tty:
            width = shutil.get_terminal_size((80, 20)).columns
            text = self.line()
            bar_w = max(10, min(40, width - len(text) - 4))
            filled = int(bar_w * self.done / self.total) if self.total else bar_w
            self._write("\r\x1b[K[" + "#" * filled + "." * (bar_w - filled) + "] " + text)
            self._shown = True
        elif self.done and self.done != self._last_plain:
            step = max(1, self.total // 10)
            if self.done % step == 0 or self.done == self.total:
                self._write(self.line() + "\n")
                self._last_plain = self.done

    def status(self, message: str) -> None:
        """A line of its own above the bar (always shown, also with the bar disabled)."""
        if self.tty and self._shown:
            self._write("\r\x1b[K")
        self._write(message.rstrip("\n") + "\n")
        if self.enabled:
            self.draw()

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self.t_first is None:
            self.t_first = time.monotonic()
        self.draw()

    def close(self) -> None:
        if self.tty and self._shown:
            self._write("\n")
            self._shown = False


# ============================================================================ worker side
#
# Everything below up to "calling process" runs in Dask worker processes.


@dataclass
class _Slot:
    """A kernel started ahead of time in an empty private folder, waiting for its notebook."""
    km: Any
    kc: Any
    scratch: str
    workdir: str
    inner_workdir: Optional[str]
    uid: Optional[int]
    sandboxed: bool
    n_kernels: int
    started: float          # perf_counter when the start began
    ready: float            # perf_counter when the kernel answered
    mtime_ns: int = 0


_WARM_CLASSES: dict = {}


class _RecordsTimeouts:
    """Mixin for the executors below: remembers the cells that hit the time limit, for the status lines."""
    _timed_out: list

    async def _async_handle_timeout(self, timeout, cell=None):
        self._timed_out.append(cell)
        return await super()._async_handle_timeout(timeout, cell)


def _cached_subclass(cache: dict, prefix: str, cls, make):
    if cls not in cache:
        sub = make()
        sub.__name__ = sub.__qualname__ = f"{prefix}{cls.__name__}"
        cache[cls] = sub
    return cache[cls]


def _warm_class(cls):
    """``cls`` (a SandboxedExecute subclass) that can take a pre-started kernel and stops it in the background."""
    def make():
        class Warm(_RecordsTimeouts, cls):
            _prestarted = None

            async def grade(self, nb, resources, slot: _Slot):
                # what SandboxedExecute.preprocess/_async_preprocess do, with the slot's folder and kernel
                self._reset_run(nb, resources)
                self._timed_out = []
                self._place(sandboxed=slot.sandboxed, scratch=slot.scratch, uid=slot.uid, workdir=slot.workdir,
                            inner_workdir=slot.inner_workdir, n_kernels=slot.n_kernels)
                self._prestarted = (slot.km, slot.kc)
                try:
                    await self._run_notebook()
                finally:
                    asyncio.get_running_loop().create_task(self._cleanup())
                return self.nb, self.resources

            async def _cleanup(self):
                try:
                    await self._stop_kernel()
                finally:
                    await asyncio.get_running_loop().run_in_executor(
                        None, lambda: shutil.rmtree(self._scratch, ignore_errors=True))

            async def _start_kernel(self):
                if self._prestarted is not None:
                    self.km, self.kc = self._prestarted
                    self._prestarted = None
                    return
                await super()._start_kernel()

        return Warm

    return _cached_subclass(_WARM_CLASSES, "Warm", cls, make)


def _forked_class(cls):
    """``cls`` (a SandboxedExecute subclass) whose kernels are forked from the worker's fork server."""
    def make():
        class Forked(_RecordsTimeouts, cls):
            async def grade(self, nb, resources, server_for):
                self._reset_run(nb, resources)
                self._timed_out = []
                self._kernel_start = 0.0
                self._server_for = server_for
                server = server_for()
                # unique connection folders (n_kernels): the last kernel's cleanup may still be running
                self._place(sandboxed=True, scratch=server.conn_root, uid=server.uid, workdir=server.workdir,
                            inner_workdir=server.inner_workdir, n_kernels=next(_KERNEL_SERIAL))
                try:
                    await self._run_notebook()
                finally:
                    asyncio.get_running_loop().create_task(self._stop_kernel(now=True))
                return self.nb, self.resources

            def create_kernel_manager(self):
                server = self._server_for()     # a new server if a kernel took the old one down
                self._uid = server.uid
                km = super().create_kernel_manager()
                km.fork_server = server
                return km

            async def _start_kernel(self):
                from coursetools.forkserver import ForkServerError
                t0 = time.perf_counter()
                try:
                    await super()._start_kernel()
                except RuntimeError as error:
                    if not isinstance(error.__cause__, ForkServerError):
                        raise
                    # the server died or froze (a kernel can SIGSTOP it): it was closed, so this makes a new one
                    await super()._start_kernel()
                self._kernel_start += time.perf_counter() - t0

        return Forked

    return _cached_subclass(_FORKED_CLASSES, "Forked", cls, make)


_FORKED_CLASSES: dict = {}
_KERNEL_SERIAL = itertools.count(0, 1000)


class _ForkSlot:
    """Host folders for one fork server (its submission folder and connection files) and the server itself,
    replaced by a new one, on the same folders, if a kernel takes it down."""

    def __init__(self, job: dict, starter):
        from coursetools import sandbox as sbx
        sbx.require_sandbox()
        self.job, self.limits = job, starter.limits()
        self.preload = list(dict.fromkeys([*starter.preload_modules, *job.get("preload", ())]))
        self.scratch = tempfile.mkdtemp(prefix="nbfork-", dir=starter.sandbox_tmpdir or None)
        os.chmod(self.scratch, 0o755)
        for sub in ("work", "conn"):
            os.mkdir(os.path.join(self.scratch, sub), 0o755)
        self.server = None
        self.lock = threading.Lock()

    def live(self):
        from coursetools import forkserver, sandbox as sbx
        with self.lock:
            if self.server is None or not self.server.alive:
                if self.server is not None:
                    self.server.close()
                self.server = forkserver.ForkServer(
                    workdir=os.path.join(self.scratch, "work"), conn_root=os.path.join(self.scratch, "conn"),
                    inner_workdir=f"{sbx.SANDBOX_HOME}/{self.job['dirname'] or 'submission'}",
                    limits=self.limits, uid=sbx.pick_sandbox_uid(), preload=self.preload,
                    env={"NBGRADER_EXECUTION": "autograde"})
                self.server.start()
            return self.server

    def close(self) -> None:
        with self.lock:
            if self.server is not None:
                self.server.close()
            shutil.rmtree(self.scratch, ignore_errors=True)


class _Engine:
    """Per worker process: an event loop thread that owns all kernels, and the kernels started ahead of time."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, name="grading-kernels", daemon=True)
        self.thread.start()
        self.spares: dict = {}      # key -> list of asyncio.Task[_Slot]
        self.fork_idle: dict = {}   # (run, assignment) -> [_ForkSlot] not running a notebook now
        self.servers_lock = threading.Lock()
        self.fork_failed: Optional[str] = None

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def call(self, coro, timeout=None):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    # -- kernels forked from warm fork servers, one server per notebook running at once

    def acquire_fork_slot(self, job: dict) -> Optional["_ForkSlot"]:
        """An idle fork server slot for the job's run (a new one if all are busy); None when kernels must not
        be sandboxed (the fork server runs only in the sandbox)."""
        key = (job["token"], job["dirname"])
        with self.servers_lock:
            for old in [k for k in self.fork_idle if k != key]:      # a new run: stop the old run's servers
                for slot in self.fork_idle.pop(old):
                    slot.close()
            idle = self.fork_idle.setdefault(key, [])
            if idle:
                return idle.pop()
        starter = job["cls"](**copy.deepcopy(job["traits"]))
        if not starter.sandboxed:
            return None
        return _ForkSlot(job, starter)

    def prepare_fork_slots(self, spec: dict, n: int) -> int:
        """Start `n` fork servers in the background (they are idle slots at once: a notebook that takes one
        before it is ready waits for it)."""
        from coursetools.forkserver import ForkServerError
        if not spec.get("fork_server") or self.fork_failed:
            return 0
        starter = spec["cls"](**copy.deepcopy(spec["traits"]))
        if not starter.sandboxed:
            return 0
        key = (spec["token"], spec["dirname"])
        slots = [_ForkSlot(spec, starter) for _ in range(n)]

        def warm(slot):
            try:
                slot.live()
            except ForkServerError as error:     # the notebook that takes this slot will say so
                logging.getLogger(__name__).warning("kernel fork server did not start: %s", error)

        with self.servers_lock:
            self.fork_idle.setdefault(key, []).extend(slots)
        for slot in slots:      # a notebook that takes the slot meanwhile waits on the slot's lock
            threading.Thread(target=warm, args=(slot,), name="fork-server-start", daemon=True).start()
        return n

    def release_fork_slot(self, job: dict, slot: "_ForkSlot") -> None:
        with self.servers_lock:
            self.fork_idle.setdefault((job["token"], job["dirname"]), []).append(slot)

    def close_servers(self) -> int:
        with self.servers_lock:
            slots = [slot for idle in self.fork_idle.values() for slot in idle]
            self.fork_idle.clear()
        for slot in slots:
            slot.close()
        return len(slots)

    async def _execute_forked(self, job: dict, timing: dict):
        """Run the notebook in a kernel forked from a fork server; None if fork servers cannot be used here."""
        from coursetools.forkserver import ForkServerError
        loop = self.loop
        t0 = time.perf_counter()
        slot = await loop.run_in_executor(None, self.acquire_fork_slot, job)
        if slot is None:
            return None
        try:
            for attempt in (1, 2):     # a server the last kernel took down is replaced by live()
                try:
                    server = await loop.run_in_executor(None, slot.live)
                    await loop.run_in_executor(None, server.clear, True)
                    break
                except ForkServerError as error:
                    if attempt == 2:
                        self.fork_failed = str(error)
                        logging.getLogger(__name__).warning(
                            "kernel fork server unavailable, starting kernels instead: %s", error)
                        return None
            _empty(server.conn_root)
            _materialize(job["files"], server.workdir, server.uid)
            job["resources"]["metadata"]["path"] = server.workdir
            timing["setup"] = time.perf_counter() - t0
            ex = _forked_class(job["cls"])(**copy.deepcopy(job["traits"]))
            t1 = time.perf_counter()
            try:
                nb, resources = await ex.grade(job["nb"], job["resources"], slot.live)
            finally:
                timing["execute"] = time.perf_counter() - t1
                timing["kernel_start"] = ex._kernel_start
                timing["kernel_forked"] = True
            return nb, resources, list(ex._timed_out)
        finally:
            self.release_fork_slot(job, slot)

    # -- kernels started ahead of time

    async def _prestart(self, spec: dict) -> _Slot:
        from nbformat import NotebookNode
        from coursetools import sandbox as sbx

        cls = spec["cls"]
        starter = cls(**copy.deepcopy(spec["traits"]))
        stub = NotebookNode(cells=[], metadata=NotebookNode(kernelspec=NotebookNode(name=spec["kernel_name"])),
                            nbformat=4, nbformat_minor=5)
        sandboxed = starter.sandboxed
        if sandboxed:
            await self.loop.run_in_executor(None, sbx.require_sandbox)
        scratch = tempfile.mkdtemp(prefix="nbsbx-", dir=starter.sandbox_tmpdir or None)
        os.chmod(scratch, 0o755)
        try:
            uid = sbx.pick_sandbox_uid() if sandboxed else None
            if sandboxed:
                workdir = os.path.join(scratch, "work")
                inner = f"{sbx.SANDBOX_HOME}/{spec['dirname'] or 'submission'}"
            else:
                workdir = os.path.join(scratch, spec["dirname"] or "submission")
                inner = None
            os.mkdir(workdir, 0o755)
            if uid is not None:
                sbx.chown_tree(workdir, uid)
            starter._reset_run(stub, {"metadata": {"path": workdir}})
            starter._place(sandboxed=sandboxed, scratch=scratch, uid=uid, workdir=workdir, inner_workdir=inner)
            t0 = time.perf_counter()
            await starter._start_kernel()
            return _Slot(km=starter.km, kc=starter.kc, scratch=scratch, workdir=workdir, inner_workdir=inner,
                         uid=uid, sandboxed=sandboxed, n_kernels=starter._n_kernels, started=t0,
                         ready=time.perf_counter(), mtime_ns=os.stat(workdir).st_mtime_ns)
        except BaseException:
            try:
                await starter._stop_kernel(now=True)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
            raise

    def start_spare(self, key, spec):
        task = self.loop.create_task(self._prestart(spec))
        task.add_done_callback(lambda t: t.cancelled() or t.exception())   # no "never retrieved" warnings
        self.spares.setdefault(key, []).append(task)

    async def _take_spare(self, key) -> Optional[_Slot]:
        for other in [k for k in self.spares if k != key]:      # a new run: drop kernels made for an old one
            for task in self.spares.pop(other):
                self.loop.create_task(self._discard(task))
        tasks = self.spares.get(key) or []
        while tasks:
            task = tasks.pop(0)
            try:
                return await task
            except Exception as e:   # could not start ahead of time: the normal path will say why if it fails too
                logging.getLogger(__name__).warning("pre-started kernel failed: %s", e)
        return None

    async def _discard(self, task):
        try:
            slot = await task
        except BaseException:
            return
        await self._stop_slot(slot)

    @staticmethod
    async def _stop_slot(slot: _Slot):
        try:
            if slot.kc is not None:
                slot.kc.stop_channels()
            await slot.km.shutdown_kernel(now=True)
            await slot.km.cleanup_resources()
        except Exception:
            pass
        shutil.rmtree(slot.scratch, ignore_errors=True)

    async def release(self) -> int:
        n = await self.loop.run_in_executor(None, self.close_servers)
        for key in list(self.spares):
            for task in self.spares.pop(key):
                n += 1
                await self._discard(task)
        return n

    # -- one notebook

    async def execute(self, job: dict) -> dict:
        from coursetools.execute import SandboxedExecute

        timing: dict = {}
        t0 = time.perf_counter()
        cls = job["cls"]
        warm = job["prestart"] and isinstance(cls, type) and issubclass(cls, SandboxedExecute)
        key = (job["token"], job["kernel_name"])
        nb, resources = job["nb"], job["resources"]
        original_path = resources.get("metadata", {}).get("path")
        timed_out: list = []
        tmp = None
        forked = None
        sandboxed_execute = isinstance(cls, type) and issubclass(cls, SandboxedExecute)
        if sandboxed_execute and job.get("fork_server") and self.fork_failed is None:
            forked = await self._execute_forked(job, timing)
        if forked is not None:
            nb, resources, timed_out = forked
        elif warm:
            slot = await self._take_spare(key)
            t1 = time.perf_counter()
            if slot is None:          # first notebook on this worker, or prestart failed: start one now
                slot = await self._prestart(job)
            timing["kernel_wait"] = time.perf_counter() - t0
            timing["kernel_start"] = slot.ready - slot.started
            timing["kernel_was_ready"] = slot.ready <= t1
            self.start_spare(key, job)    # the next notebook's kernel starts while this one runs
            t2 = time.perf_counter()
            _materialize(job["files"], slot.workdir, slot.uid)
            if os.stat(slot.workdir).st_mtime_ns == slot.mtime_ns:   # make sure the kernel's import caches see the files
                st = os.stat(slot.workdir)
                os.utime(slot.workdir, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
            resources["metadata"]["path"] = slot.workdir
            timing["setup"] = time.perf_counter() - t2
            ex = _warm_class(cls)(**copy.deepcopy(job["traits"]))
            t3 = time.perf_counter()
            try:
                nb, resources = await ex.grade(nb, resources, slot)
            finally:
                timing["execute"] = time.perf_counter() - t3
                timed_out = list(ex._timed_out)
        else:
            tmp = tempfile.mkdtemp(prefix="nbgrade-")
            try:
                workdir = os.path.join(tmp, job["dirname"] or "submission")
                os.mkdir(workdir)
                _materialize(job["files"], workdir, None)
                resources["metadata"]["path"] = workdir
                ex = cls(**copy.deepcopy(job["traits"]))
                t3 = time.perf_counter()
                timing["setup"] = t3 - t0
                # a cold start: the preprocessor starts (and times) its own kernel
                nb, resources = await self.loop.run_in_executor(None, lambda: ex(nb, resources))
                timing["execute"] = time.perf_counter() - t3
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        if original_path is not None:
            resources["metadata"]["path"] = original_path
        return {"nb": nb, "resources": resources, "timed_out": timed_out, "timing": timing}


_ENGINE: Optional[_Engine] = None
_ENGINE_LOCK = threading.Lock()


def _engine() -> _Engine:
    global _ENGINE
    with _ENGINE_LOCK:
        if _ENGINE is None:
            _ENGINE = _Engine()
        return _ENGINE


def _empty(folder: str) -> None:
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.unlink(path)
            except OSError:
                pass


def _materialize(files: dict, dest: str, uid: Optional[int]) -> None:
    """Write the submission folder's files (shipped with the job) into ``dest`` and hand them to ``uid``."""
    for rel, (kind, data, mode) in files.items():
        path = os.path.join(dest, rel)
        parent = os.path.dirname(path)
        if not os.path.isdir(parent):
            os.makedirs(parent, exist_ok=True)
            if uid is not None:
                p = parent
                while p != dest and p.startswith(dest):
                    os.lchown(p, uid, uid)
                    p = os.path.dirname(p)
        if kind == "dir":
            os.makedirs(path, exist_ok=True)
            os.chmod(path, mode)
        elif kind == "link":
            os.symlink(data, path)
        else:
            with open(path, "wb") as f:
                f.write(data)
            os.chmod(path, mode)
        if uid is not None:
            os.lchown(path, uid, uid)


def _run_job(job: dict) -> dict:
    """Dask task: execute one sanitized notebook on this worker; returns the executed notebook and notes."""
    t0 = time.perf_counter()
    os.environ["NBGRADER_EXECUTION"] = "autograde"    # as nbgrader sets it around execution (seen by the kernel)
    out = _engine().call(_engine().execute(job))
    nb = out["nb"]
    if job["validate"]:
        import nbformat
        nbformat.validate(nb, relax_add_props=True)
    out["notes"] = _attention_notes(nb, out.pop("timed_out"))
    out["timing"]["worker_total"] = time.perf_counter() - t0
    out["timing"]["worker"] = f"{os.uname().nodename}:{os.getpid()}"
    return out


def _cell_label(cell, index: int) -> str:
    gid = (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id")
    return f"cell {gid}" if gid else f"cell {index + 1}"


def _attention_notes(nb, timed_out_cells=()) -> list[str]:
    notes: list[str] = []
    timed = {id(c) for c in timed_out_cells if c is not None}
    for index, cell in enumerate(nb.get("cells", [])):
        seen_timeout = False
        for out in cell.get("outputs", []) or []:
            if out.get("output_type") == "error" and out.get("ename") in ATTENTION_ERRORS:
                kind = ATTENTION_ERRORS[out["ename"]]
                seen_timeout |= kind == "timeout"
                reason = (out.get("evalue") or "").strip().split("\n")[0]
                notes.append(f"{kind} in {_cell_label(cell, index)}" + (f": {reason}" if reason else ""))
        if id(cell) in timed and not seen_timeout:
            notes.append(f"timeout in {_cell_label(cell, index)}: interrupted after the cell time limit")
    return notes


def _prepare_forks(spec: dict) -> int:
    """``client.run`` target: start this worker's fork servers, one per thread, while the first notebooks are
    being sanitized."""
    try:
        from distributed import get_worker
        n = get_worker().state.nthreads
    except (ImportError, ValueError, AttributeError):
        n = 1
    return _engine().prepare_fork_slots(spec, n)


def _release(token=None) -> int:
    """``client.run`` target: stop this worker's pre-started kernels (end of a run)."""
    if _ENGINE is None:
        return 0
    return _ENGINE.call(_ENGINE.release(), timeout=60)


# ============================================================================ calling process


def _worker_fn(name):
    """A worker-side function by reference to this module's import name (not ``__main__``, which cloudpickle
    would ship by value) when run as ``python -m coursetools.parallel``."""
    import importlib
    return getattr(importlib.import_module("coursetools.parallel"), name)


@contextmanager
def _chdir(path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


class _BatchedSession:
    """The shared session as nbgrader's gradebook code sees it: while ``batching`` (the preprocessors after
    execution, which only look up existing grade/comment rows and set their scores), ``commit()`` is a flush and
    the real commit happens when that preprocessor closes its gradebook: one commit (one fsync) per preprocessor
    and notebook instead of one per cell. Elsewhere (students, submissions) every commit is a real commit."""

    def __init__(self, session):
        self._session = session
        self.batching = False
        self.dirty = False

    def commit(self):
        if self.batching:
            self._session.flush()
            self.dirty = True
        else:
            self._session.commit()

    def real_commit(self):
        self.dirty = False
        self._session.commit()

    def __getattr__(self, name):
        return getattr(self._session, name)


class _PooledGradebook:
    """Replaces ``Gradebook`` inside nbgrader during a run: every ``Gradebook(url, ...)`` shares one engine and
    session (one connection) instead of creating an engine, inspecting the schema and closing it again; ``close``
    only ends the session's transaction, as ``Session.close`` does. The course check nbgrader does on each open
    (and its side effect, the row it adds for a new course id) is kept, once per course id."""

    def __init__(self, real_cls):
        self.real_cls = real_cls
        self.shared: dict = {}
        self.sessions: dict = {}
        self.checked: set = set()
        pool = self

        class Gradebook(real_cls):
            def __init__(self, db_url, course_id="default_course", authenticator=None):
                base = pool.shared.get(db_url)
                if base is None:
                    base = pool.shared[db_url] = real_cls(db_url, course_id)
                    pool.sessions[db_url] = _BatchedSession(base.db)
                    pool.checked.add((db_url, course_id))
                self.engine, self.db = base.engine, pool.sessions[db_url]
                if (db_url, course_id) not in pool.checked:
                    self.check_course(course_id=course_id)
                    pool.checked.add((db_url, course_id))
                self.course_id = course_id
                self.authenticator = authenticator

            def close(self):
                if self.db.dirty:
                    self.db.real_commit()
                self.db.close()

        self.cls = Gradebook

    @contextmanager
    def batched_commits(self):
        for s in self.sessions.values():
            s.batching = True
        try:
            yield
            for s in self.sessions.values():
                if s.dirty:
                    s.real_commit()
        finally:
            for s in self.sessions.values():
                s.batching = False

    def dispose(self):
        for gb in self.shared.values():
            try:
                gb.close()
            except Exception:
                pass
        self.shared.clear()
        self.sessions.clear()


_GRADEBOOK_USERS = ("nbgrader.converters.autograde", "nbgrader.preprocessors.overwritecells",
                    "nbgrader.preprocessors.saveautogrades", "nbgrader.preprocessors.overwritekernelspec",
                    "nbgrader.preprocessors.latesubmissions", "nbgrader.preprocessors.getgrades")


class _CachedJsonschema:
    """``jsonschema`` as nbgrader's cell-metadata validator uses it, with ``validate`` compiled once per schema.

    ``jsonschema.validate(instance, schema)`` checks the schema and builds a validator on every call: nbgrader
    calls it for every cell, twice per notebook, which was the largest CPU cost of the grading process. This does
    what ``jsonschema.validate`` does (same validator class, same ``best_match`` error) with the checked
    validator kept."""

    def __init__(self, module):
        self._module = module
        self._validators: dict = {}

    def validate(self, instance, schema, cls=None, *args, **kwargs):
        import json
        from jsonschema import exceptions, validators
        key = (json.dumps(schema, sort_keys=True), cls, args, tuple(sorted(kwargs.items())))
        validator = self._validators.get(key)
        if validator is None:
            vcls = cls or validators.validator_for(schema)
            vcls.check_schema(schema)
            validator = self._validators[key] = vcls(schema, *args, **kwargs)
        error = exceptions.best_match(validator.iter_errors(instance))
        if error is not None:
            raise error

    def __getattr__(self, name):
        return getattr(self._module, name)


@contextmanager
def _fast_nbgrader():
    """One gradebook connection with batched commits, and cached metadata validation (see above), for a run."""
    import importlib
    from nbgrader import api
    from nbgrader.nbgraderformat import common
    pool = _PooledGradebook(api.Gradebook)
    patched = []
    for name in _GRADEBOOK_USERS:
        mod = importlib.import_module(name)
        if getattr(mod, "Gradebook", None) is api.Gradebook:
            patched.append(mod)
            mod.Gradebook = pool.cls
    real_jsonschema = common.jsonschema
    common.jsonschema = _CachedJsonschema(real_jsonschema)
    try:
        yield pool
    finally:
        common.jsonschema = real_jsonschema
        for mod in patched:
            mod.Gradebook = api.Gradebook
        pool.dispose()


class _NoteCollector(logging.Handler):
    """Turns nbgrader's warnings about a submission into notes for the student being processed."""

    QUIET = (re.compile(r"^(Removing|Updating) existing (assignment|notebook)"),
             re.compile(r"^Late submission penalty: None"),
             # expected for every test cell with hidden tests: the release's checksum is not the source's
             re.compile(r"^Attribute 'checksum' for cell .* has changed"))

    def __init__(self):
        super().__init__(logging.WARNING)
        self.student: Optional[str] = None
        self.notes: dict = {}
        self.loose: list = []

    def emit(self, record):
        try:
            msg = record.getMessage()
        except Exception:
            return
        if any(p.search(msg) for p in self.QUIET):
            return
        if record.levelno >= logging.ERROR and self.student is not None:
            return     # errors are reported from the exception itself
        m = re.match(r"No submitted file: (.*)", msg)
        if m:
            msg = f"missing notebook {os.path.basename(m.group(1))}: scored 0"
        m = re.match(r"Missing grade cell (\S+) encountered", msg)
        if m:
            msg = f"repaired: test cell {m.group(1)} was missing and has been put back"
        m = re.match(r"Attribute '(.*)' for cell (.*) has changed! \(should be: (.*), got: (.*)\)$", msg, re.S)
        if m:
            msg = f"repaired: {m.group(1)} of cell {m.group(2)} had been changed and is restored"
        m = re.match(r"Cell with id '(.*)' exists multiple times", msg)
        if m:
            msg = f"repaired: duplicate cell id {m.group(1)}"
        if self.student is None:
            self.loose.append(msg)
        else:
            lst = self.notes.setdefault(self.student, [])
            if msg not in lst:
                lst.append(msg)


@dataclass
class _Student:
    student: str
    assignment: str
    notebooks: list
    jobs: list = field(default_factory=list)       # per notebook: (filename, nbc, resc)
    results: dict = field(default_factory=dict)    # index -> result or exception
    failed: bool = False


def _default_workers() -> int:
    """One notebook per core, plus one to use the cores while another notebook's kernel starts."""
    try:
        return max(1, len(os.sched_getaffinity(0))) + 1
    except AttributeError:
        return max(1, os.cpu_count() or 1) + 1


def _snapshot(folder: str) -> dict:
    """The files of an autograded/<student>/<assignment> folder, to ship with the job (relpath -> kind, data, mode)."""
    files: dict = {}
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(dirs) + sorted(names):
            path = os.path.join(root, name)
            rel = os.path.relpath(path, folder)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                files[rel] = ("link", os.readlink(path), 0)
            elif stat.S_ISDIR(st.st_mode):
                files[rel] = ("dir", None, stat.S_IMODE(st.st_mode))
            elif stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    files[rel] = ("file", f.read(), stat.S_IMODE(st.st_mode))
    return files


class _Run:
    """One parallel autograde run (calling-process side)."""

    def __init__(self, course_root, assignment, db_url, submitted_dir, students, scheduler, workers,
                 progress, notes, prestart, log_stream, options=(), fork_server=None):
        self.options = list(options)
        self.course_root = os.path.abspath(course_root)
        self.assignment = assignment
        self.db_url = db_url
        self.submitted_dir = submitted_dir
        self.students = set(students) if students is not None else None
        self.scheduler_arg = scheduler
        self.workers_arg = workers
        self.progress_on = progress
        self.extra_notes = {k: list(v) for k, v in (notes or {}).items()}
        self.prestart_arg = prestart
        self.fork_server_arg = fork_server
        self.exec_spec = None
        self.spec_ready = threading.Event()     # exec_spec is known: fork servers can start
        self.stream = log_stream or sys.stderr
        self.report = GradingReport()
        self.token = uuid.uuid4().hex
        self.main_timing: dict = {}

    # -- set-up

    def load_app(self):
        """nbgrader's AutogradeApp, initialised as `nbgrader autograde <a> --force [--db=URL]` is in the course."""
        from nbgrader.apps import AutogradeApp
        from nbgrader.converters import Autograde

        argv = [self.assignment, "--force", *self.options]
        if self.db_url:
            argv.append(f"--db={self.db_url}")
        app = AutogradeApp()
        app.initialize(argv)
        if len(app.extra_args) == 1 and app.coursedir.assignment_id != "":
            raise ValueError("The assignment cannot both be specified in config and as an argument")
        app.coursedir.assignment_id = app.extra_args[0]
        if self.submitted_dir:
            app.coursedir.submitted_directory = os.path.relpath(os.path.abspath(self.submitted_dir),
                                                                app.coursedir.root)
        self.collector = _NoteCollector()
        self._log_state = (app.log.level, [(h, h.level) for h in app.log.handlers])
        for h in list(app.log.handlers):
            h.setLevel(logging.CRITICAL)   # nbgrader's INFO/WARNING chatter: notes and status lines instead
        app.log.addHandler(self.collector)
        app.log.setLevel(logging.WARNING)
        self.app = app
        self.settings = ParallelGrading(config=app.config)
        self.converter = Autograde(coursedir=app.coursedir, parent=app)
        return app

    def start_cluster(self):
        from distributed import Client, LocalCluster
        scheduler = self.scheduler_arg if self.scheduler_arg is not None else (self.settings.scheduler or None)
        self.cluster = None
        if scheduler:
            self.client = Client(scheduler, timeout="30s", set_as_default=False)
        else:
            n = self.workers_arg or self.settings.workers or _default_workers()
            # Threads of this process: the work is in the kernels (processes of their own); a worker only
            # passes messages, so worker processes would cost their start-up and imports, nothing more.
            self.cluster = LocalCluster(n_workers=1, threads_per_worker=n, processes=False,
                                        dashboard_address=None, silence_logs=logging.ERROR)
            self.client = Client(self.cluster, set_as_default=False)
        workers = self.client.scheduler_info().get("workers", {}).values()
        self.report.workers = sum(int(w.get("nthreads", 1)) for w in workers)

    def close_cluster(self):
        client = getattr(self, "client", None)
        if client is None:
            return
        try:
            client.run(_worker_fn("_release"), self.token)
        except Exception:
            pass
        try:
            client.close()
        finally:
            if self.cluster is not None:
                self.cluster.close()

    # -- the run

    def run(self) -> GradingReport:
        from nbconvert.writers import FilesWriter
        from nbgrader.converters.base import NbGraderException

        t_run = time.perf_counter()
        cpu_run = time.process_time()
        with _chdir(self.course_root):
            self.load_app()
            t_app = time.perf_counter()
            self.main_timing["nbgrader_startup"] = t_app - t_run
            conv = self.converter
            conv.init_notebooks()
            conv.writer = FilesWriter(parent=conv, config=conv.config)
            conv.exporter = conv.exporter_class(parent=conv, config=conv.config)
            for pp in conv.preprocessors:
                conv.exporter.register_preprocessor(pp)

        regexp = conv._format_source("(?P<assignment_id>.*)", "(?P<student_id>.*)", escape=True)
        todo = []
        for path in sorted(conv.assignments.keys()):
            m = re.match(regexp, path)
            if m is None:
                raise NbGraderException(f"Could not match '{path}' with regexp '{regexp}'")
            gd = m.groupdict()
            if self.students is None or gd["student_id"] in self.students:
                todo.append((path, gd))
        self.progress = Progress(len(todo), stream=self.stream, enabled=self.progress_on)

        cluster_err: list = []

        def start():
            try:
                t = time.perf_counter()
                self.start_cluster()
                self.main_timing["cluster_start"] = time.perf_counter() - t
            except BaseException as e:   # reported below
                cluster_err.append(e)
                return
            if self.spec_ready.wait(60) and self.exec_spec is not None:
                try:
                    self.client.run(_worker_fn("_prepare_forks"), self.exec_spec)
                except Exception as e:   # the first notebooks start their servers themselves
                    self.app.log.debug("could not start fork servers ahead: %s", e)
        execution_env = os.environ.get("NBGRADER_EXECUTION")    # in-process workers set it
        cluster_thread = threading.Thread(target=start, daemon=True)
        cluster_thread.start()      # the cluster starts while the first submissions are sanitized

        try:
            with _chdir(self.course_root), _fast_nbgrader() as self.pool, warnings.catch_warnings():
                # nbgrader's own "object not in session" SAWarnings when it creates submissions (harmless)
                warnings.filterwarnings("ignore", module="nbgrader.api")
                self._grade_all(todo, cluster_thread, cluster_err)
        finally:
            self.spec_ready.set()
            cluster_thread.join()
            self.close_cluster()
            if execution_env is None:
                os.environ.pop("NBGRADER_EXECUTION", None)
            else:
                os.environ["NBGRADER_EXECUTION"] = execution_env
            self.progress.close()
            self.app.log.removeHandler(self.collector)
            level, handlers = self._log_state
            self.app.log.setLevel(level)
            for h, lvl in handlers:
                h.setLevel(lvl)
        self.report.wall = time.perf_counter() - t_run
        self.main_timing["main_process_cpu"] = time.process_time() - cpu_run
        self.report.main_timing = self.main_timing
        return self.report

    def _preprocessors(self):
        conv = self.converter
        conv._sanitizing = True
        conv._init_preprocessors()
        sanitize = list(conv.exporter._preprocessors)
        conv._sanitizing = False
        conv._init_preprocessors()
        graders = list(conv.exporter._preprocessors)
        conv._sanitizing = True
        from nbclient.client import NotebookClient
        idx = next((i for i, pp in enumerate(graders) if isinstance(pp, NotebookClient) and pp.enabled), None)
        return sanitize, graders, idx

    def _grade_all(self, todo, cluster_thread, cluster_err):
        import sqlalchemy
        from nbgrader.nbgraderformat import SchemaTooNewError, SchemaTooOldError

        conv = self.converter
        self.sanitize_pps, self.grade_pps, self.exec_idx = self._preprocessors()
        self.executor = self.grade_pps[self.exec_idx] if self.exec_idx is not None else None
        self.exec_spec = None
        if self.executor is not None:
            traits = {}
            for name in self.executor.trait_names(config=True):
                traits[name] = copy.deepcopy(getattr(self.executor, name))
            self.exec_spec = {"cls": type(self.executor), "traits": traits, "token": self.token,
                              "prestart": self.prestart_arg if self.prestart_arg is not None
                              else self.settings.prestart_kernels,
                              "fork_server": self.fork_server_arg if self.fork_server_arg is not None
                              else self.settings.fork_server, "preload": list(self.settings.preload),
                              "dirname": self.assignment, "kernel_name": None,
                              "validate": not conv.exporter.optimistic_validation}
        self.spec_ready.set()
        self.ac = None          # distributed.as_completed, made once the cluster is up
        self.pending: dict = {}
        backlog: list = []      # sanitized submissions waiting for the cluster to come up
        fatal = (sqlalchemy.exc.OperationalError, SchemaTooOldError, SchemaTooNewError, KeyboardInterrupt)

        def cluster_ready(wait=False):
            if wait:
                cluster_thread.join()
            if cluster_thread.is_alive():
                return False
            if cluster_err:
                raise cluster_err[0]
            return True

        for path, gd in todo:
            ctx = _Student(gd["student_id"], gd["assignment_id"], sorted(conv.assignments[path]))
            self.collector.student = ctx.student
            try:
                self._prepare(ctx)
            except fatal:
                self._handle_failure(ctx)
                raise
            except Exception as e:
                self._fail(ctx, e)
                continue
            finally:
                self.collector.student = None
            if ctx.jobs is None:          # skipped (nbgrader would skip it too)
                self.progress.advance()
                continue
            if not ctx.jobs:               # nothing to execute
                self._finish(ctx)
                continue
            backlog.append(ctx)
            if cluster_ready():
                for c in backlog:
                    self._submit(c)
                backlog.clear()
            while self.ac is not None and self.ac.has_ready():
                self._collect(next(self.ac), fatal)
        if backlog:
            cluster_ready(wait=True)
            for c in backlog:
                self._submit(c)
        if self.ac is not None:
            for fut in self.ac:
                self._collect(fut, fatal)

    def _submit(self, ctx: _Student):
        if self.ac is None:
            from distributed import as_completed
            self.ac = as_completed(loop=self.client.loop)
        for i, job in enumerate(ctx.jobs):
            fut = self.client.submit(_worker_fn("_run_job"), job, pure=False, key=f"grade-{ctx.student}-{i}-{self.token[:8]}")
            self.pending[fut] = (ctx, i)
            self.ac.add(fut)

    def _prepare(self, ctx: _Student):
        """nbgrader's per-student steps up to execution: destination, gradebook rows, files, sanitizing."""
        import nbformat
        from nbgrader import utils
        from nbgrader.converters.base import BaseConverter
        conv = self.converter
        conv.notebooks = list(ctx.notebooks)
        t0 = time.perf_counter()
        if not conv.init_destination(ctx.assignment, ctx.student):
            ctx.jobs = None
            return
        conv.run_pre_convert_hook()
        conv.init_assignment(ctx.assignment, ctx.student)
        ctx.notebooks = list(conv.notebooks)
        t1 = time.perf_counter()
        self._add_time("init_assignment", t1 - t0)
        for filename in ctx.notebooks:
            t2 = time.perf_counter()
            conv._sanitizing = True
            conv.exporter._preprocessors = self.sanitize_pps
            try:
                conv.log.info("Sanitizing %s", filename)
                BaseConverter.convert_single_notebook(conv, filename)
            except Exception as e:
                try:            # is it the submission itself that cannot be read?
                    nbformat.read(filename, as_version=4)
                except Exception as load_error:
                    raise _Unreadable(filename, load_error) from e
                raise
            out_file = os.path.join(conv.writer.build_directory, os.path.basename(filename))
            t3 = time.perf_counter()
            self._add_time("sanitize", t3 - t2)
            conv._sanitizing = False
            try:
                with utils.setenv(NBGRADER_EXECUTION="autograde"):
                    nbc, resc = self._stage2_begin(out_file)
                    job = None
                    if self.exec_idx is not None:
                        job = dict(self.exec_spec)
                        job.update(nb=nbc, resources=resc, files=_snapshot(os.path.dirname(out_file)),
                                   kernel_name=(nbc.metadata.get("kernelspec") or {}).get("name", ""),
                                   filename=out_file)
                    ctx.jobs.append(job or {"nb": nbc, "resources": resc, "filename": out_file, "local": True})
            finally:
                conv._sanitizing = True
            self._add_time("prepare", time.perf_counter() - t3)
        # notebooks without an execute preprocessor are finished locally
        if all(j.get("local") for j in ctx.jobs):
            for i, j in enumerate(ctx.jobs):
                ctx.results[i] = {"nb": j["nb"], "resources": j["resources"], "notes": [], "timing": {}}
            ctx.jobs = []

    def _stage2_begin(self, filename):
        """Exporter.from_filename up to the execute preprocessor (what nbgrader does for the autograde pass)."""
        import datetime
        import nbformat
        from nbformat import validator
        from nbconvert.exporters.exporter import ResourcesDict
        conv = self.converter
        exporter = conv.exporter
        exporter._preprocessors = self.grade_pps
        resources = conv.init_single_notebook_resources(filename)
        if "metadata" not in resources or resources["metadata"] == "":
            resources["metadata"] = ResourcesDict()
        path, basename = os.path.split(filename)
        resources["metadata"]["name"] = os.path.splitext(basename)[0]
        resources["metadata"]["path"] = path
        modified = datetime.datetime.fromtimestamp(os.path.getmtime(filename), tz=datetime.timezone.utc)
        resources["metadata"]["modified_date"] = modified.strftime("%B %-d, %Y")
        with open(filename, encoding="utf-8") as f:
            nb = nbformat.read(f, as_version=4)
        resources = exporter._init_resources(resources)
        if "language" in nb["metadata"]:
            resources["language"] = nb["metadata"]["language"].lower()
        nbc, resc = nb, resources    # (nbconvert deep-copies here; these are fresh objects already)
        if hasattr(validator, "normalize"):
            _, nbc = validator.normalize(nbc)
        upto = self.exec_idx if self.exec_idx is not None else len(self.grade_pps)
        for pp in self.grade_pps[:upto]:
            nbc, resc = pp(nbc, resc)
            if not exporter.optimistic_validation:
                exporter._validate_preprocessor(nbc, pp)
        return nbc, resc

    def _stage2_end(self, nbc, resc):
        """The preprocessors after execution (gradebook writes among them), then the write to autograded/."""
        import nbformat
        from nbgrader import utils
        conv = self.converter
        exporter = conv.exporter
        exporter._preprocessors = self.grade_pps
        rest = self.grade_pps[self.exec_idx + 1:] if self.exec_idx is not None else []
        last = self.grade_pps[-1] if self.grade_pps else None
        with utils.setenv(NBGRADER_EXECUTION="autograde"), self.pool.batched_commits():
            for pp in rest:
                t = time.perf_counter()
                nbc, resc = pp(nbc, resc)
                if not exporter.optimistic_validation:
                    exporter._validate_preprocessor(nbc, pp)
                self._add_time(f"pp:{type(pp).__name__}", time.perf_counter() - t)
            if exporter.optimistic_validation and last is not None:
                exporter._validate_preprocessor(nbc, last)
        name = resc.get("metadata", {}).get("name", "")
        exporter._nb_metadata[os.path.join(resc.get("metadata", {}).get("path", ""), name)] = nbc.metadata
        t = time.perf_counter()
        if exporter.nbformat_version != nbc.nbformat:
            resc["output_suffix"] = ".v%i" % exporter.nbformat_version
        else:
            resc["output_suffix"] = ".nbconvert"
        output = nbformat.writes(nbc, version=exporter.nbformat_version)
        if not output.endswith("\n"):
            output += "\n"
        conv.write_single_notebook(output, resc)
        self._add_time("write", time.perf_counter() - t)

    def _collect(self, fut, fatal):
        ctx, i = self.pending.pop(fut)
        try:
            ctx.results[i] = fut.result()
        except Exception as e:
            ctx.results[i] = e
        finally:
            fut.release()
        if len(ctx.results) == len(ctx.jobs):
            self._finish(ctx, fatal)

    def _finish(self, ctx: _Student, fatal=()):
        conv = self.converter
        self.collector.student = ctx.student
        try:
            conv.notebooks = list(ctx.notebooks)
            for i in range(len(ctx.results)):
                res = ctx.results[i]
                if isinstance(res, BaseException):
                    raise res
                self.report.timings.append(dict(res.get("timing", {}), student=ctx.student))
                for note in res.get("notes", []):
                    self._note(ctx.student, note)
                t = time.perf_counter()
                self._stage2_end(res["nb"], res["resources"])
                self._add_time("finish", time.perf_counter() - t)
            conv.set_permissions(ctx.assignment, ctx.student)
            conv.run_post_convert_hook()
            self.report.graded.append(ctx.student)
        except fatal:
            self._handle_failure(ctx)
            raise
        except Exception as e:
            self._fail(ctx, e, advance=False)
        finally:
            self.collector.student = None
        self._status(ctx.student)
        self.progress.advance()

    # -- notes and failures

    def _note(self, student, note):
        lst = self.report.setdefault(student, [])
        if note not in lst:
            lst.append(note)

    def _status(self, student):
        for note in self.extra_notes.pop(student, []):
            self._note(student, note)
        for note in self.collector.notes.pop(student, []):
            self._note(student, note)
        notes = self.report.get(student)
        if notes:
            self.progress.status(f"{student}: " + "; ".join(notes))

    def _handle_failure(self, ctx: _Student):
        """As nbgrader's convert_notebooks: remove what was written for this submission."""
        from nbgrader.utils import remove, rmtree
        conv = self.converter
        dest = os.path.normpath(conv._format_dest(ctx.assignment, ctx.student))
        if conv.coursedir.notebook_id == "*":
            if os.path.exists(dest):
                rmtree(dest)
        else:
            for notebook in ctx.notebooks:
                filename = os.path.splitext(os.path.basename(notebook))[0] + conv.exporter.file_extension
                path = os.path.join(dest, filename)
                if os.path.exists(path):
                    remove(path)

    def _fail(self, ctx: _Student, exc: BaseException, advance: bool = True):
        ctx.failed = True
        self._handle_failure(ctx)
        if isinstance(exc, _Unreadable):
            note = f"not a notebook / unreadable: {os.path.basename(exc.filename)}: {exc.reason}"
        else:
            note = f"not graded: {type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
        self._note(ctx.student, note)
        self.report.failed.append(ctx.student)
        self.report.errors[ctx.student] = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        if advance:
            self._status(ctx.student)
            self.progress.advance()

    def _add_time(self, key, seconds):
        self.main_timing[key] = self.main_timing.get(key, 0.0) + seconds


class _Unreadable(Exception):
    def __init__(self, filename, exc):
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        super().__init__(f"{filename}: {reason}")
        self.filename, self.reason = filename, f"{type(exc).__name__}: {reason}"[:300]


def autograde(course_root, assignment, *, db_url=None, submitted_dir=None, students=None, scheduler=None,
              workers=None, progress=True, notes=None, prestart=None, log_stream=None, options=(),
              fork_server=None) -> GradingReport:
    """Autograde every submission of ``assignment`` like ``nbgrader autograde <assignment> --force``, with the
    notebooks executed in parallel on Dask.

    ``db_url``: gradebook URL (default: the course config's); ``submitted_dir``: a folder to read submissions
    from instead of <course>/submitted (e.g. a repaired staging copy); ``students``: only these ids;
    ``scheduler``: address of an existing Dask scheduler (default ``c.ParallelGrading.scheduler``, else a
    LocalCluster running ``workers`` notebooks at once, default ``c.ParallelGrading.workers`` or cores + 1);
    ``progress``: show a progress bar on stderr; ``notes``: {student: [notes]} known beforehand (e.g. "repaired
    notebook"), reported on that student's status line; ``fork_server``: fork kernels from warm fork servers
    (default ``c.ParallelGrading.fork_server``); ``prestart``: otherwise start kernels ahead of time
    (default ``c.ParallelGrading.prestart_kernels``); ``options``: extra nbgrader settings such as
    ``--SandboxedExecute.timeout=30``, as on nbgrader's command line.

    Returns a :class:`GradingReport`: ``{student: [notes]}`` for each student needing attention (timeout,
    kernel death, unreadable notebook, missing notebook, restored test cells, ...); ``report.failed`` lists
    students that could not be graded at all (nbgrader itself would exit 1 for them).
    """
    return _Run(course_root, assignment, db_url, submitted_dir, students, scheduler, workers, progress,
                notes, prestart, log_stream, options, fork_server).run()


def _course_root() -> pathlib.Path:
    return pathlib.Path(os.environ.get("COURSE_ROOT", pathlib.Path(__file__).resolve().parent.parent)).resolve()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coursetools.parallel",
                                     description="nbgrader autograde --force, notebooks executed in parallel on Dask.")
    parser.add_argument("assignment")
    parser.add_argument("--scheduler", help="address of an existing Dask scheduler, e.g. tcp://host:8786 "
                                            "(default: c.ParallelGrading.scheduler, else a LocalCluster)")
    parser.add_argument("--workers", type=int, help="notebooks at once on the LocalCluster (default: cores + 1)")
    parser.add_argument("--db", help="gradebook URL (default: the course's gradebook.db)")
    parser.add_argument("--submitted", help="read submissions from this folder instead of <course>/submitted")
    parser.add_argument("--student", action="append", help="grade only this student (repeatable)")
    parser.add_argument("--course", default=None, help="course folder (default: $COURSE_ROOT or this checkout)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (status lines only)")
    parser.add_argument("--no-prestart", action="store_true",
                        help="without fork servers: start each kernel only when its notebook runs")
    parser.add_argument("--no-fork-server", action="store_true",
                        help="start a new kernel for each notebook instead of forking it from a fork server")
    parser.add_argument("--json", metavar="FILE", help="write the report (notes, failures, timings) to FILE as JSON")
    args = parser.parse_args(argv)
    env = os.environ
    env["PATH"] = os.path.join(sys.prefix, "bin") + os.pathsep + env.get("PATH", "")
    report = autograde(args.course or _course_root(), args.assignment, db_url=args.db,
                       submitted_dir=args.submitted, students=args.student, scheduler=args.scheduler,
                       workers=args.workers, progress=not args.no_progress,
                       prestart=False if args.no_prestart else None,
                       fork_server=False if args.no_fork_server else None)
    n = len(report.graded)
    print(f"autograded {n} submission(s) of {args.assignment} in {report.wall:.1f} s on {report.workers} "
          f"worker(s); {len(report)} need attention, {len(report.failed)} could not be graded", file=sys.stderr)
    for student in report.failed:
        print(f"--- {student}:\n{report.errors.get(student, '')}", file=sys.stderr)
    if args.json:
        import json
        with open(args.json, "w") as f:
            json.dump({"notes": dict(report), "failed": report.failed, "graded": report.graded, "wall": report.wall,
                       "workers": report.workers, "main_timing": report.main_timing, "timings": report.timings},
                      f, indent=1, default=str)
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
