"""Bubblewrap (``bwrap``) sandbox for grading kernels.

This module knows how to *build* the command line that starts a process inside the sandbox and how to *probe*
whether the sandbox works on this machine (starting one and seeing it gone: `processes`). The notebook execution
engine that uses it is :mod:`coursetools.grading.execute` (``SandboxedExecute``). See ``docs/sandbox.md``.

Layout seen by a sandboxed kernel::

    /usr, /bin, /lib*, /sbin          read-only (symlinks kept as symlinks)
    /etc/{passwd,group,hosts,...}     read-only, a minimal subset
    <sys.base_prefix>                 read-only (the Python installation)
    <sys.prefix>                      read-only (the course venv, and only it)
    /opt/grader/launcher.py           read-only, the launcher (coursetools/sandbox/inside/launcher.py)
    /opt/grader/submission            read-only, the grader's copy of the submission
    /home/student                     private tmpfs of a fixed size, HOME
    /home/student/<submission>        the launcher's copy of the submission, cwd
    /tmp, /dev/shm                    private tmpfs of a fixed size each
    <kernel folder>/kernel.json       read-only, the connection file (the grader's)
    <kernel folder>/sockets           the ZeroMQ ipc sockets: the kernel's until it is
                                      ready, then root's (the one host folder it writes)
    /proc                             fresh procfs of a private PID namespace
    /dev                              minimal devtmpfs (null, zero, urandom, ...)

Namespaces: mount, PID, network (no interfaces except a downed loopback), IPC, UTS, cgroup; ``--die-with-parent``
and ``--new-session``; the environment is cleared. When the grader runs as root, a tiny launcher inside the sandbox
drops to a throw-away uid/gid (no capabilities, ``no_new_privs`` is set by bwrap) before starting the kernel;
otherwise bwrap's unprivileged user namespace is used. Resource limits (rlimits) are applied by that launcher.
Everything the sandbox started dies with its PID namespace, and its IPC objects with its IPC namespace.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence

from coursetools.sandbox.host import uids
from coursetools.sandbox.host.files import NotebookFolder
from coursetools.sandbox.inside import launcher as _launcher

#: environment variable that disables the sandbox (documented opt-out)
UNSANDBOXED_ENV = "COURSE_GRADE_UNSANDBOXED"

#: where the private copy of the submission is mounted inside the sandbox
SANDBOX_HOME = "/home/student"

#: where the grader's own programs and the submission are, read-only, inside the sandbox
PROGRAMS = "/opt/grader"
LAUNCHER = f"{PROGRAMS}/launcher.py"
SUBMISSION = f"{PROGRAMS}/submission"

#: a sandbox held open for a kernel the zygote forks into it (`coursetools.sandbox.host.zygote`)
HOLD = ("/bin/sh", "-c", "printf ready && exec sleep infinity")

#: /etc files a Python kernel may reasonably need (missing ones are skipped)
ETC_FILES = (
    "passwd", "group", "hosts", "host.conf", "nsswitch.conf", "localtime", "timezone",
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "ssl", "ca-certificates",
    "fonts", "mime.types", "matplotlibrc", "os-release", "debian_version",
)

#: top-level system directories, bound read-only (or re-created as the same symlink)
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


class SandboxUnavailable(RuntimeError):
    """The grading sandbox cannot start on this machine; the message says why and what to do."""


@dataclass
class Limits:
    """Per-kernel resource limits (``None`` = unlimited).  Applied as rlimits by the launcher."""

    memory_bytes: Optional[int] = 2 * 1024**3      # RLIMIT_AS
    cpu_seconds: Optional[int] = 900               # RLIMIT_CPU (soft; SIGKILL 5 s later)
    max_processes: Optional[int] = 64              # RLIMIT_NPROC (only exact with a private uid)
    file_size_bytes: Optional[int] = 50 * 1024**2  # RLIMIT_FSIZE
    open_files: Optional[int] = 1024               # RLIMIT_NOFILE
    scratch_bytes: Optional[int] = 256 * 1024**2   # each of HOME (the working folder), /tmp and /dev/shm: tmpfs size

    def rlimits(self, nproc_offset: int = 0) -> dict:
        """Mapping ``resource.RLIMIT_* name -> (soft, hard)`` for the launcher."""
        out: dict = {"RLIMIT_CORE": (0, 0)}
        if self.memory_bytes:
            out["RLIMIT_AS"] = (int(self.memory_bytes), int(self.memory_bytes))
        if self.cpu_seconds:
            out["RLIMIT_CPU"] = (int(self.cpu_seconds), int(self.cpu_seconds) + 5)
        if self.max_processes:
            n = int(self.max_processes) + int(nproc_offset)
            out["RLIMIT_NPROC"] = (n, n)
        if self.file_size_bytes:
            out["RLIMIT_FSIZE"] = (int(self.file_size_bytes), int(self.file_size_bytes))
        if self.open_files:
            out["RLIMIT_NOFILE"] = (int(self.open_files), int(self.open_files))
        return out


def launcher_settings(rlimits: Mapping, uid: Optional[int] = None, mkdirs: Iterable[str] = (), **placed) -> dict:
    """What the launcher reads; `placed`: `submission` and `workdir` inside a sandbox."""
    return {"rlimits": {k: list(v) for k, v in rlimits.items()}, "uid": uid, "mkdirs": list(mkdirs), **placed}


def launcher_command(cmd: Sequence[str], rlimits: Mapping, uid: Optional[int] = None, mkdirs: Iterable[str] = (),
                     launcher: str = _launcher.__file__, settings: Optional[dict] = None, **placed) -> list[str]:
    """``python -I -S launcher.py <json> -- cmd...`` (`settings`, when given, instead of the other arguments)."""
    settings = settings or launcher_settings(rlimits, uid, mkdirs, **placed)
    return [sys.executable, "-I", "-S", launcher, json.dumps(settings), "--", *cmd]


def find_bwrap() -> Optional[str]:
    """The bwrap binary: ``$COURSE_BWRAP`` if set (an explicit path), else from PATH."""
    explicit = os.environ.get("COURSE_BWRAP")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    return shutil.which("bwrap") or next(
        (p for p in ("/usr/bin/bwrap", "/usr/local/bin/bwrap") if os.access(p, os.X_OK)), None)


def hidden_paths() -> list[str]:
    """Folders of the course package that lie inside a folder the sandbox binds (a non-editable install in the
    venv): they are covered with an empty tmpfs, so the checks and the oracle are never readable by a kernel."""
    import importlib.util
    spec = importlib.util.find_spec("coursetools")
    folders = [os.path.realpath(p) for p in (spec.submodule_search_locations or [])] if spec else []
    bound = _python_paths()
    return [f for f in folders if any(f == b or f.startswith(b.rstrip("/") + "/") for b in bound)]


@dataclass
class SandboxLayout:
    """What to mount where: the grader's copy of the submission (read-only; the launcher copies it to
    `inner_workdir`), the connection file (read-only) and the sockets folder (read-write), both at their host
    paths, which lie in a folder only the grader can write (`coursetools.sandbox.host.files`)."""

    submission: str
    connection_file: str
    sockets: str
    inner_workdir: str
    extra_ro_binds: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)


def _python_paths() -> list[str]:
    paths = []
    for p in (sys.base_prefix, sys.prefix, os.path.realpath(sys.base_prefix),
              os.path.realpath(sys.prefix)):
        if p and p not in paths and os.path.isdir(p):
            paths.append(p)
    return paths


def _system_args() -> list[str]:
    args: list[str] = []
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    args += ["--perms", "0755", "--dir", "/etc", "--perms", "0755", "--dir", "/home"]
    for name in ETC_FILES:
        p = f"/etc/{name}"
        if os.path.lexists(p):
            args += ["--ro-bind-try", p, p]
    return args


def base_env(home: str = SANDBOX_HOME) -> dict[str, str]:
    venv_bin = os.path.join(sys.prefix, "bin")
    env = {
        "HOME": home,
        "USER": "student",
        "LOGNAME": "student",
        "PATH": f"{venv_bin}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "TMPDIR": "/tmp",
        "PYTHONNOUSERSITE": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        # glibc reserves a 64 MB malloc arena per thread, which counts against RLIMIT_AS
        "MALLOC_ARENA_MAX": "2",
    }
    return env


def build_command(cmd: Sequence[str], layout: SandboxLayout, limits: Optional[Limits] = None,
                  uid: Optional[int] = None, bwrap: Optional[str] = None) -> list[str]:
    """The full argv: ``bwrap <isolation> -- python -I -S -c LAUNCHER ... -- cmd``; with no `cmd`, a sandbox that
    only says it is ready and waits (`HOLD`) for a kernel forked into it, which does the launcher's steps itself."""
    bwrap = bwrap or find_bwrap()
    if not bwrap:
        raise SandboxUnavailable(_bwrap_missing_msg())
    limits = limits or Limits()
    args = [bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session",
            "--hostname", "grading-sandbox", "--clearenv"]
    if uid is None:
        args += ["--unshare-user"]
    args += _system_args()
    # The private /tmp comes before the read-only binds: a course checked out under /tmp (a CI clone, say)
    # must stay visible on top of it.
    args += ["--proc", "/proc", "--dev", "/dev", *_sized(limits, "1777", "/tmp"), *_sized(limits, "1777", "/dev/shm")]
    ro = _python_paths() + list(layout.extra_ro_binds)
    seen: set = set()
    made: set = {"/"}
    for p in ro:
        if p in seen:
            continue
        seen.add(p)
        # bwrap would create missing parents of a mount point as 0700 root-owned dirs,
        # which a dropped-privilege kernel could not traverse: create them 0755 first.
        for parent in reversed(Path(p).parents):
            sp = str(parent)
            if sp not in made and not any(sp == d or sp.startswith(d + "/") for d in SYSTEM_DIRS):
                made.add(sp)
                args += ["--perms", "0755", "--dir", sp]
        args += ["--ro-bind", p, p]
    for folder in hidden_paths():
        args += ["--tmpfs", folder]
    args += ["--perms", "0755", "--dir", "/opt", "--perms", "0755", "--dir", PROGRAMS,
             "--ro-bind", _launcher.__file__, LAUNCHER, "--ro-bind", layout.submission, SUBMISSION,
             *_sized(limits, "0777", SANDBOX_HOME),
             *_parent_dirs(layout.sockets, made),
             "--ro-bind", layout.connection_file, layout.connection_file,
             "--bind", layout.sockets, layout.sockets,
             "--chdir", SANDBOX_HOME]
    for k, v in sandbox_env(layout).items():
        args += ["--setenv", k, v]
    if not cmd:
        return args + ["--", *HOLD]
    return args + ["--", *launcher_command(cmd, {}, launcher=LAUNCHER, settings=launcher_config(layout, limits, uid))]


def sandbox_env(layout: SandboxLayout) -> dict[str, str]:
    return {**base_env(), **layout.env}


def launcher_config(layout: SandboxLayout, limits: Limits, uid: Optional[int]) -> dict:
    """What the launcher does in the sandbox (`coursetools.sandbox.inside.launcher`)."""
    # Without a private uid, RLIMIT_NPROC counts every process of our uid on the host:
    # allow for the ones that already exist.
    offset = 0 if uid is not None else _count_own_processes()
    return launcher_settings(limits.rlimits(nproc_offset=offset), uid, [sandbox_env(layout)["HOME"] + "/.cache"],
                             submission=SUBMISSION, workdir=layout.inner_workdir)


def _sized(limits: Limits, mode: str, path: str) -> list[str]:
    """A private tmpfs at `path`, of `limits.scratch_bytes` when set: what a notebook writes there counts."""
    size = ["--size", str(int(limits.scratch_bytes))] if limits.scratch_bytes else []
    return ["--perms", mode, *size, "--tmpfs", path]


def _parent_dirs(path: str, made: set) -> list[str]:
    out: list[str] = []
    for parent in reversed(Path(path).parents):
        sp = str(parent)
        if sp not in made and sp != "/tmp":
            made.add(sp)
            out += ["--perms", "0755", "--dir", sp]
    return out


def _count_own_processes() -> int:
    me, n = os.getuid(), 0
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.stat(f"/proc/{d}").st_uid == me:
                    n += 1
            except OSError:
                pass
    return n


def _bwrap_missing_msg() -> str:
    return ("bubblewrap (bwrap) is not installed. Install it (Debian/Ubuntu: "
            "`sudo apt-get install bubblewrap`, or `make system-packages`), or opt out of the "
            f"grading sandbox with {UNSANDBOXED_ENV}=1 / c.SandboxedExecute.sandbox = False "
            "(only for trusted code: see docs/sandbox.md).")


_PROBE_CACHE: dict = {}


def probe(refresh: bool = False) -> Optional[str]:
    """Try to start a trivial sandboxed Python with the real isolation flags.

    Returns ``None`` if the sandbox works, otherwise a human-readable reason.
    """
    key = (os.geteuid(), sys.prefix, find_bwrap())
    if not refresh and key in _PROBE_CACHE:
        return _PROBE_CACHE[key]
    _PROBE_CACHE[key] = reason = _probe()
    return reason


def _probe() -> Optional[str]:
    if not sys.platform.startswith("linux"):
        return f"the bubblewrap sandbox needs Linux (this is {sys.platform})"
    bwrap = find_bwrap()
    if not bwrap:
        return _bwrap_missing_msg()
    with uids.lease() as lease:
        folder = NotebookFolder(None, uid=lease.uid)
        try:
            return _probe_in(folder, lease.uid, bwrap)
        finally:
            folder.remove()


def _probe_in(folder: NotebookFolder, uid: Optional[int], bwrap: str) -> Optional[str]:
    kernel = folder.kernel()
    with open(kernel.connection_file, "x") as f:
        f.write("{}")
    kernel.share_connection_file()
    code = ("import os, socket\nopen('probe.txt', 'w').write('ok')\n"
            "print(os.getuid(), len(os.listdir('/proc')) < 10, os.path.exists('probe.txt'))\n"
            "try:\n    import coursetools.checks\n    print('course package importable')\n"
            "except ImportError:\n    print('course package hidden')")
    layout = SandboxLayout(folder.submission, kernel.connection_file, kernel.sockets, f"{SANDBOX_HOME}/probe")
    cmd = build_command([sys.executable, "-c", code], layout, Limits(max_processes=None), uid=uid, bwrap=bwrap)
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"could not run bwrap: {e}"
    if res.returncode != 0:
        err = (res.stderr or res.stdout).strip()[-600:]
        hint = ""
        if "namespace" in err.lower() or "operation not permitted" in err.lower():
            hint = (" (user namespaces look disabled: try `sysctl -w "
                    "kernel.unprivileged_userns_clone=1` or "
                    "`kernel.apparmor_restrict_unprivileged_userns=0`, or run the grader "
                    "somewhere they are allowed)")
        return (f"bwrap could not start a sandboxed Python (exit {res.returncode}): {err}{hint}. "
                f"Fix this, or opt out with {UNSANDBOXED_ENV}=1 (see docs/sandbox.md).")
    lines = res.stdout.strip().splitlines()
    if not lines or not lines[0].endswith("True"):
        return "the sandboxed process could not write to its working directory"
    if lines[-1] != "course package hidden":
        return ("the course package (hidden checks, oracle) is importable inside the sandbox; it must not be "
                f"({res.stdout.strip()})")
    return None


def require_sandbox() -> None:
    """Raise :class:`SandboxUnavailable` with the probe's reason if the sandbox cannot start."""
    reason = probe()
    if reason:
        raise SandboxUnavailable(f"The grading sandbox cannot start: {reason}")


def stop_process(process, grace: float = 5) -> None:
    """Close a helper process's stdin (its signal to end), wait `grace` seconds, then kill it."""
    with contextlib.suppress(OSError):
        process.stdin.close()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def unsandboxed_requested() -> bool:
    """The explicit opt-out: COURSE_GRADE_UNSANDBOXED set to 1, true, yes or on (any case). The one place that
    reads it, so that `make grade`'s warning and the executor always agree."""
    return os.environ.get(UNSANDBOXED_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


if __name__ == "__main__":  # python -m coursetools.sandbox.host.bubblewrap  -> report whether it works
    r = probe()
    print("sandbox OK" if r is None else f"sandbox unavailable: {r}")
    sys.exit(0 if r is None else 1)
