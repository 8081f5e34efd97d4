"""Safe notebook execution for autograding: ``SandboxedExecute``.

A drop-in replacement for nbgrader's ``Execute`` preprocessor::

    # nbgrader_config.py
    from coursetools.execute import SandboxedExecute
    c.Autograde.autograde_preprocessors = [... SandboxedExecute ... instead of Execute]
    c.SandboxedExecute.timeout = 120                 # wall time per cell (s)
    c.SandboxedExecute.memory_limit = 2 * 1024**3    # bytes (RLIMIT_AS)

It can also be used directly::

    SandboxedExecute().preprocess(nb, {"metadata": {"path": submission_dir}})

What it adds to ``Execute``:

* every kernel runs under bubblewrap (see :mod:`coursetools.sandbox`) on a private copy of
  the submission folder, talking ZeroMQ over ipc sockets (it has no network);
* rlimits (memory, CPU, processes, file size) and a cap on stored output per notebook;
* a kernel that dies (or ignores the interrupt after a timeout) costs only the current cell:
  the cell gets an error output, a fresh kernel is started, earlier cells are silently
  replayed (except cells that killed/hung the kernel) and execution goes on.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import tempfile
import time
from pathlib import Path
from queue import Empty
from typing import Any, Optional

from jupyter_client.manager import AsyncKernelManager
from jupyter_core.utils import run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.client import NotebookClient
from nbformat.notebooknode import NotebookNode
from traitlets import Bool, Float, Integer, List, Unicode

from nbgrader.preprocessors import Execute

from . import sandbox as sbx
from .sandbox import Limits, SandboxLayout, SandboxUnavailable

__all__ = ["SandboxedExecute", "SandboxedKernelManager", "SandboxUnavailable", "measure_overhead"]


def _mb(n: int) -> str:
    return f"{n / 1024**2:g} MB" if n < 1024**3 else f"{n / 1024**3:g} GB"


def preloading_command(kernel_cmd: list[str], modules) -> list[str]:
    """``python -m ipykernel_launcher ARGS`` as ``python -c BOOT ARGS``, where BOOT imports `modules` before the
    kernel's folder is on sys.path (IPython puts it back, after the standard library, when the shell starts), so
    that a file in a submission cannot stand in for them or for ipykernel's own imports. Other commands are
    returned as they are."""
    if not modules or kernel_cmd[1:3] != ["-m", "ipykernel_launcher"]:
        return list(kernel_cmd)
    for name in modules:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", name):
            raise ValueError(f"not a module name: {name!r}")
    boot = ("import sys\nwhile '' in sys.path: sys.path.remove('')\n"
            + "".join(f"import {name}\n" for name in modules)
            + "from ipykernel import kernelapp\nkernelapp.launch_new_instance()\n")
    return [kernel_cmd[0], "-c", boot, *kernel_cmd[3:]]


class SandboxedKernelManager(AsyncKernelManager):
    """AsyncKernelManager that wraps the kernel command in bwrap + the rlimit launcher.

    Configured by :class:`SandboxedExecute` through plain attributes (not traitlets) so it
    can be created per kernel start.
    """

    def setup_sandbox(self, *, sandboxed: bool, workdir: str, conn_dir: str,
                      limits: Limits, uid: Optional[int], inner_workdir: Optional[str] = None,
                      preload: tuple = ()):
        self._sbx = dict(sandboxed=sandboxed, workdir=workdir, conn_dir=conn_dir,
                         limits=limits, uid=uid, inner_workdir=inner_workdir, preload=tuple(preload))
        if sandboxed:
            # The kernel has no network: ZeroMQ over unix sockets in a dir bound into the sandbox.
            self.transport = "ipc"
            self.ip = os.path.join(conn_dir, "k")
            self.connection_file = os.path.join(conn_dir, "kernel.json")
            # bwrap does not forward SIGINT into the sandbox: interrupt via the control channel.
            self.kernel_spec.interrupt_mode = "message"

    fork_server = None      # a coursetools.forkserver.ForkServer: fork the kernel from it instead of starting one

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
        cfg = getattr(self, "_sbx", None)
        if cfg is None:
            return await super()._async_launch_kernel(kernel_cmd, **kw)
        if self.fork_server is not None and cfg["sandboxed"]:
            return await self._fork_kernel(kernel_cmd, cfg)
        kernel_cmd = preloading_command(kernel_cmd, cfg.get("preload", ()))
        limits: Limits = cfg["limits"]
        if cfg["sandboxed"]:
            uid = cfg["uid"]
            if uid is not None:   # the connection file (0600, root) must be readable by the kernel
                sbx.chown_tree(cfg["conn_dir"], uid)
            layout = SandboxLayout(workdir=cfg["workdir"], conn_dir=cfg["conn_dir"],
                                   sandbox_workdir=cfg["inner_workdir"])
            kernel_cmd = sbx.build_command(kernel_cmd, layout, limits, uid=uid)
            kw["cwd"] = cfg["conn_dir"]
            kw["env"] = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        else:
            rl = limits.rlimits()
            rl.pop("RLIMIT_NPROC", None)   # would count all our processes: skip when unsandboxed
            kernel_cmd = sbx.launcher_command(kernel_cmd, rl)
            kw["cwd"] = cfg["workdir"]
            env = dict(kw.get("env") or os.environ)
            env.setdefault("MPLBACKEND", "Agg")
            env.setdefault("MALLOC_ARENA_MAX", "2")
            if os.environ.get("NBGRADER_EXECUTION"):
                env["NBGRADER_EXECUTION"] = os.environ["NBGRADER_EXECUTION"]
            kw["env"] = env
        # The kernel's own stdout/stderr (not the notebook's outputs, which go over ZeroMQ)
        # go to a log file in the scratch dir, never to the grader's terminal.
        log_path = os.path.join(os.path.dirname(cfg["conn_dir"]), os.path.basename(cfg["conn_dir"]) + ".log")
        self._sbx_log = log_path
        with open(log_path, "ab") as log:
            kw["stdout"] = kw["stderr"] = log
            await super()._async_launch_kernel(kernel_cmd, **kw)

    async def _fork_kernel(self, kernel_cmd: list[str], cfg: dict) -> None:
        """Fork the kernel from the fork server (same sandbox layout and limits); the provisioner gets a
        Popen-like handle, so polling, signals and shutdown work as for a launched kernel."""
        server = self.fork_server
        if "ipykernel_launcher" not in kernel_cmd:
            raise RuntimeError(f"the kernel fork server runs ipykernel kernels only, not {kernel_cmd}")
        argv = kernel_cmd[kernel_cmd.index("ipykernel_launcher") + 1:]
        self._sbx_log = os.path.join(cfg["conn_dir"], "kernel.log")
        if cfg["uid"] is not None:
            sbx.chown_tree(cfg["conn_dir"], cfg["uid"])
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, server.clear, False)    # what an earlier kernel left running
        process = await loop.run_in_executor(None, server.spawn, argv, self._sbx_log)
        provisioner = self.provisioner
        provisioner.process, provisioner.pid, provisioner.pgid = process, process.pid, None
        provisioner.cwd = cfg["workdir"]
        self._reconcile_connection_info(provisioner.connection_info)

    def log_tail(self, n: int = 2000) -> str:
        try:
            with open(self._sbx_log, "rb") as f:
                return f.read()[-n:].decode("utf-8", "replace")
        except (AttributeError, OSError):
            return ""


class _KernelGone(Exception):
    """Internal: the kernel died or had to be killed while running a cell."""

    def __init__(self, ename: str, message: str):
        super().__init__(message)
        self.ename = ename
        self.message = message


class SandboxedExecute(Execute):
    """nbgrader ``Execute`` that runs kernels in a bubblewrap sandbox and survives kernel deaths."""

    timeout = Integer(120, allow_none=True,
                      help="Wall time per cell, in seconds (None/0: no limit).").tag(config=True)

    sandbox = Bool(True, help=(
        "Run kernels under bubblewrap.  Set to False (or set the environment variable "
        "COURSE_GRADE_UNSANDBOXED=1) to run kernels unsandboxed: only for trusted code.")
    ).tag(config=True)

    memory_limit = Integer(2 * 1024**3, allow_none=True,
                           help="Address-space limit of the kernel (RLIMIT_AS), bytes.").tag(config=True)
    cpu_time_limit = Integer(900, allow_none=True,
                             help="CPU seconds per kernel (RLIMIT_CPU).").tag(config=True)
    max_processes = Integer(64, allow_none=True,
                            help="Max processes/threads of the kernel's uid (RLIMIT_NPROC); "
                                 "sandboxed mode only.").tag(config=True)
    file_size_limit = Integer(50 * 1024**2, allow_none=True,
                              help="Largest file the kernel may write (RLIMIT_FSIZE), bytes."
                              ).tag(config=True)
    max_output_bytes = Integer(1024**2, allow_none=True,
                               help="Output kept per notebook (text and data, bytes); the rest is "
                                    "dropped during execution with a note.").tag(config=True)
    max_kernel_restarts = Integer(5, help="Kernel deaths tolerated per notebook before the "
                                          "remaining cells are not run.").tag(config=True)
    interrupt_grace_period = Float(5.0, help="Seconds a timed-out cell gets to react to the "
                                             "interrupt before its kernel is killed and "
                                             "restarted.").tag(config=True)
    sandbox_tmpdir = Unicode("", help="Where per-notebook scratch dirs are made "
                                      "(default: the system temp dir).").tag(config=True)
    preload_modules = List(Unicode(), ["coursetools.checks"], help=(
        "Modules each kernel imports before the submission's folder is on sys.path, so that a student's file "
        "(a fake coursetools/ whose checks pass everything, say) cannot stand in for them.")).tag(config=True)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", SandboxedKernelManager)
        super().__init__(*args, **kwargs)

    # ------------------------------------------------------------------ helpers

    @property
    def sandboxed(self) -> bool:
        return bool(self.sandbox) and not sbx.unsandboxed_requested()

    def limits(self) -> Limits:
        return Limits(memory_bytes=self.memory_limit, cpu_seconds=self.cpu_time_limit,
                      max_processes=self.max_processes, file_size_bytes=self.file_size_limit)

    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        if not isinstance(km, SandboxedKernelManager):
            raise TypeError("SandboxedExecute.kernel_manager_class must be SandboxedKernelManager")
        self._n_kernels += 1
        conn_dir = os.path.join(self._scratch, f"conn{self._n_kernels}")
        os.mkdir(conn_dir, 0o700)
        km.setup_sandbox(sandboxed=self._sandboxed_now, workdir=self._workdir, conn_dir=conn_dir,
                         limits=self.limits(), uid=self._uid, inner_workdir=self._inner_workdir,
                         preload=self.preload_modules)
        return km

    # ------------------------------------------------------------------ entry point

    def preprocess(self, nb: NotebookNode, resources: Any = None, km=None):
        self._reset_run(nb, resources, km)
        run_sync(self._async_preprocess)()
        return self.nb, self.resources

    def _reset_run(self, nb: NotebookNode, resources: Any, km=None) -> None:
        """Start a notebook afresh: nbclient's state and this notebook's output budget."""
        NotebookClient.__init__(self, nb, km)
        self.reset_execution_trackers()
        self._check_assign_resources(resources)
        self._output_used = 0
        self._truncated_cells: set = set()

    def _place(self, *, sandboxed: bool, scratch: str, uid: Optional[int], workdir: str,
               inner_workdir: Optional[str], n_kernels: int = 0) -> None:
        """Where this notebook's kernels run: sandboxed or not, scratch dir (connection folders), uid, folder."""
        self._sandboxed_now, self._scratch, self._uid = sandboxed, scratch, uid
        self._workdir, self._inner_workdir, self._n_kernels = workdir, inner_workdir, n_kernels

    async def _async_preprocess(self) -> None:
        path = (self.resources or {}).get("metadata", {}).get("path") or os.getcwd()
        path = os.path.abspath(path)
        sandboxed = self.sandboxed
        if sandboxed:
            sbx.require_sandbox()
        scratch = tempfile.mkdtemp(prefix="nbsbx-", dir=self.sandbox_tmpdir or None)
        os.chmod(scratch, 0o755)
        uid = sbx.pick_sandbox_uid() if sandboxed else None
        if sandboxed:
            workdir = os.path.join(scratch, "work")
            sbx.copy_submission(path, workdir, uid)
            self._place(sandboxed=True, scratch=scratch, uid=uid, workdir=workdir,
                        inner_workdir=f"{sbx.SANDBOX_HOME}/{Path(path).name or 'submission'}")
        else:
            self._place(sandboxed=False, scratch=scratch, uid=None, workdir=path, inner_workdir=None)
        try:
            await self._run_notebook()
        finally:
            try:
                await self._stop_kernel()
            finally:
                shutil.rmtree(self._scratch, ignore_errors=True)

    # ------------------------------------------------------------------ kernel lifecycle

    async def _start_kernel(self) -> None:
        self.km = self.create_kernel_manager()
        self.kc = None
        km = self.km
        try:
            await self.async_start_new_kernel()
            await self.async_start_new_kernel_client()
        except Exception as e:
            raise RuntimeError(f"The grading kernel could not start: {e}\n"
                               f"kernel log:\n{km.log_tail()}") from e

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
                await km.shutdown_kernel(now=self.shutdown_kernel == "immediate")
        except Exception as e:  # kill as a last resort
            self.log.debug("kernel shutdown: %s", e)
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
            proc = self.km.provisioner.process  # type: ignore[union-attr]
            rc = proc.poll() if proc is not None else None
        except Exception:
            rc = None
        if rc is None:
            return ""
        sig = -rc if rc < 0 else (rc - 128 if rc > 128 else None)
        if sig:
            try:
                return f" (killed by {signal.Signals(sig).name})"
            except ValueError:
                pass
        return f" (exit status {rc})"

    # ------------------------------------------------------------------ main loop

    async def _run_notebook(self) -> None:
        await self._start_kernel()
        msg_id = self.kc.kernel_info()
        info = await self.async_wait_for_reply(msg_id)
        if info is not None and "language_info" in info["content"]:
            self.nb.metadata["language_info"] = info["content"]["language_info"]

        done: list[int] = []          # cells that ran to completion in some kernel, in order
        skip_replay: set = set()      # cells that killed or hung a kernel (or timed out)
        deaths = 0
        base_iopub = self.iopub_timeout
        for index, cell in enumerate(self.nb.cells):
            if cell.cell_type != "code" or not cell.source.strip():
                await self.async_execute_cell(cell, index, execution_count=None)
                continue
            if deaths > self.max_kernel_restarts:
                self._add_error(cell, "KernelDied", "not run: too many kernel deaths "
                                f"({deaths}) in this notebook")
                continue
            self._cell_timed_out = False
            try:
                try:
                    await self.async_execute_cell(
                        cell, index, execution_count=self.code_cells_executed + 1)
                except DeadKernelError:
                    raise _KernelGone("KernelDied", "The kernel died while running this cell"
                                      f"{self._exit_description()}: it crashed, exited, or hit "
                                      f"a resource limit (memory {_mb(self.memory_limit or 0)}, "
                                      f"CPU {self.cpu_time_limit} s). Later cells run in a fresh "
                                      "kernel.")
                except CellTimeoutError:
                    raise _KernelGone("CellTimeoutError",
                                      f"Cell did not finish within {self.timeout} s and did not "
                                      "stop when interrupted; the kernel was restarted.")
                if self._cell_timed_out:
                    skip_replay.add(index)
                else:
                    done.append(index)
            except _KernelGone as gone:
                deaths += 1
                skip_replay.add(index)
                cell.execution_count = self.code_cells_executed
                self._add_error(cell, gone.ename, gone.message)
                if deaths <= self.max_kernel_restarts:
                    deaths = await self._restart_and_replay(done, skip_replay, deaths)
            finally:
                self.iopub_timeout = base_iopub
        self.set_widgets_metadata()

    _cell_timed_out = False

    async def _restart_and_replay(self, done: list[int], skip: set, deaths: int) -> int:
        """Kill the kernel, start a fresh one and silently re-run completed earlier cells.

        Returns the updated death count (replays can kill kernels too)."""
        while deaths <= self.max_kernel_restarts:
            await self._stop_kernel(now=True)
            await self._start_kernel()
            bad = await self._replay([i for i in done if i not in skip])
            if bad is None:
                return deaths
            self.log.warning("cell %d killed the kernel while being replayed", bad)
            skip.add(bad)
            deaths += 1
        return deaths

    async def _replay(self, indices: list[int]) -> Optional[int]:
        """Re-run cells without touching their outputs; returns the index of a cell that
        killed/hung the kernel, or None."""
        kc = self.kc
        assert kc is not None
        stop = asyncio.Event()

        async def drain():  # keep iopub empty: replayed output is discarded
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
                msg_id = kc.execute(self.nb.cells[i].source, store_history=True,
                                    stop_on_error=False, allow_stdin=False)
                deadline = None if not self.timeout else time.monotonic() + self.timeout
                while True:
                    try:
                        msg = await kc.shell_channel.get_msg(timeout=1)
                    except Empty:
                        if not await self.km.is_alive():
                            return i
                        if deadline is not None and time.monotonic() > deadline:
                            return i
                        continue
                    if msg["parent_header"].get("msg_id") == msg_id:
                        break
            return None
        finally:
            stop.set()
            await drainer

    # ------------------------------------------------------------------ timeouts

    async def _async_handle_timeout(self, timeout: int, cell: Optional[NotebookNode] = None):
        self._cell_timed_out = True
        if self.interrupt_on_timeout:
            # Give the interrupted cell only `interrupt_grace_period` seconds to go idle; if it
            # does not, nbclient raises CellTimeoutError and we kill/restart the kernel.
            self.iopub_timeout = max(1, int(round(self.interrupt_grace_period)))
            self.raise_on_iopub_timeout = True
        return await super()._async_handle_timeout(timeout, cell)

    # ------------------------------------------------------------------ outputs

    @staticmethod
    def _add_error(cell: NotebookNode, ename: str, message: str) -> None:
        cell.setdefault("outputs", [])
        cell.outputs.append(NotebookNode(output_type="error", ename=ename, evalue=message,
                                         traceback=[f"\x1b[0;31m{ename}\x1b[0m: {message}"]))

    def _note(self) -> NotebookNode:
        return NotebookNode(output_type="stream", name="stdout",
                            text=f"\n[output truncated by the grader after "
                                 f"{_mb(self.max_output_bytes)}]\n")

    def output(self, outs, msg, display_id, cell_index):
        limit = self.max_output_bytes
        if not limit:
            return super().output(outs, msg, display_id, cell_index)
        msg_type = msg["msg_type"]
        content = msg["content"]
        if msg_type == "error":
            tb = content.get("traceback") or []
            if sum(len(t) for t in tb) > 20_000:   # keep errors, but not megabytes of them
                content["traceback"] = tb[:5] + ["..."] + tb[-5:]
                content["traceback"] = [t[:4000] for t in content["traceback"]]
            return super().output(outs, msg, display_id, cell_index)
        if msg_type == "stream":
            size = len(content.get("text", ""))
        elif msg_type in ("display_data", "execute_result", "update_display_data"):
            size = sum(len(v) if isinstance(v, str) else len(str(v))
                       for v in (content.get("data") or {}).values())
        else:
            return super().output(outs, msg, display_id, cell_index)
        remaining = limit - self._output_used
        if size <= remaining:
            self._output_used += size
            return super().output(outs, msg, display_id, cell_index)
        # over budget: keep what fits of a stream, drop the rest, note it once per cell
        out = None
        if msg_type == "stream" and remaining > 0:
            content["text"] = content["text"][:remaining]
            self._output_used = limit
            out = super().output(outs, msg, display_id, cell_index)
        self._output_used = limit
        if cell_index not in self._truncated_cells or not any(
                o.get("text", "").startswith("\n[output truncated") for o in outs
                if o.get("output_type") == "stream"):
            self._truncated_cells.add(cell_index)
            outs.append(self._note())
        return out


def measure_overhead(notebook_path: str, repeats: int = 3, **traits) -> dict:
    """Time executing ``notebook_path`` sandboxed vs unsandboxed; print and return the figures."""
    import nbformat

    src = os.path.dirname(os.path.abspath(notebook_path))

    def run(sandbox: bool) -> float:
        best = []
        for _ in range(repeats):
            # work on a throw-away copy: the unsandboxed run executes in place
            with tempfile.TemporaryDirectory(prefix="nbsbx-bench-") as tmp:
                work = shutil.copytree(src, os.path.join(tmp, os.path.basename(src)), symlinks=True)
                nb = nbformat.read(os.path.join(work, os.path.basename(notebook_path)), as_version=4)
                t0 = time.perf_counter()
                SandboxedExecute(sandbox=sandbox, **traits).preprocess(nb, {"metadata": {"path": work}})
                best.append(time.perf_counter() - t0)
        return min(best)

    old = os.environ.pop(sbx.UNSANDBOXED_ENV, None)
    try:
        plain = run(False)
        boxed = run(True)
    finally:
        if old is not None:
            os.environ[sbx.UNSANDBOXED_ENV] = old
    res = {"unsandboxed_s": plain, "sandboxed_s": boxed, "ratio": boxed / plain,
           "overhead_s": boxed - plain}
    print(f"unsandboxed: {plain:.2f} s  sandboxed: {boxed:.2f} s  "
          f"ratio: {res['ratio']:.2f}  overhead: {res['overhead_s']:+.2f} s  "
          f"(best of {repeats})")
    return res
