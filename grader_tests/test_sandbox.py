"""The bubblewrap sandbox: what a hostile submission can see and touch.

Real kernels under real bwrap; no mocks.  One notebook does all the probing (kernel start-up
is the slow part) and reports what it found as JSON; the host side checks the fake course.
"""
import hashlib
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from nbformat.v4 import new_code_cell, new_notebook

from coursetools.sandbox.host import bubblewrap as sandbox
from coursetools.grading.execute import SandboxedExecute, SandboxUnavailable

from conftest import needs_sandbox  # noqa: E402

pytestmark = needs_sandbox

COURSE_ROOT = Path(__file__).resolve().parents[1]     # the checkout, with the course package in it


def snapshot(root: Path) -> dict:
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        out[rel] = "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.fixture
def course(tmp_path):
    """A fake course folder: source/, submitted/<students>/, gradebook.db, config."""
    c = tmp_path / "course"
    (c / "source" / "ps1").mkdir(parents=True)
    (c / "source" / "ps1" / "ps1.ipynb").write_text('{"hidden": "tests"}')
    (c / "submitted" / "bob" / "ps1").mkdir(parents=True)
    (c / "submitted" / "bob" / "ps1" / "ps1.ipynb").write_text('{"bob": "answers"}')
    alice = c / "submitted" / "alice" / "ps1"
    alice.mkdir(parents=True)
    (alice / "ps1.ipynb").write_text('{"alice": "answers"}')
    (alice / "data.txt").write_text("alice's data\n")
    (c / "gradebook.db").write_bytes(b"SQLite format 3\x00" + b"\x01" * 100)
    (c / "nbgrader_config.py").write_text("c = get_config()\n")
    return c


PROBE = r'''
import json, os, socket, subprocess, sys
found = {"cwd": os.getcwd(), "uid": os.getuid(), "parent": sorted(os.listdir("..")),
         "root": sorted(os.listdir("/")), "course_root": None, "course_path": None,
         "wrote": [], "proc_cwd": {}, "ro_ok": {}, "secret_paths": {}}
try:
    found["course_root"] = sorted(os.listdir(COURSE_ROOT))
except OSError as e:
    found["course_root"] = repr(e)
found["course_path"] = os.path.exists(COURSE)
for p in ["/proc/1/cwd", "/proc/%d/cwd" % os.getppid(), "/proc/1/root/" + COURSE]:
    try:
        found["proc_cwd"][p] = sorted(os.listdir(p))
    except OSError as e:
        found["proc_cwd"][p] = "error"
for p in [COURSE_ROOT + "/source", COURSE_ROOT + "/gradebook.db", COURSE_ROOT + "/nbgrader_config.py",
          COURSE + "/gradebook.db", COURSE + "/submitted/bob/ps1/ps1.ipynb", "/root/.ssh", "/etc/shadow"]:
    try:
        open(p).read(10); found["secret_paths"][p] = "READ"
    except OSError as e:
        found["secret_paths"][p] = type(e).__name__
# walk upwards from cwd and try to write a file into every directory we can
d = os.getcwd()
for _ in range(12):
    for name in [os.path.join(d, "pwned.txt")] + [os.path.join(d, x, "pwned.txt") for x in
                                                  (os.listdir(d) if os.path.isdir(d) else [])]:
        try:
            with open(name, "w") as f:
                f.write("pwned")
            found["wrote"].append(name)
        except OSError:
            pass
    d = os.path.dirname(d)
for p in [COURSE_ROOT + "/coursetools/pwned.py", sys.prefix + "/pwned", sys.base_prefix + "/pwned",
          "/usr/pwned", "../../pwned", COURSE + "/pwned"]:
    try:
        open(p, "w").write("x"); found["ro_ok"][p] = "WROTE"
    except OSError as e:
        found["ro_ok"][p] = type(e).__name__
with open("data.txt", "a") as f:
    f.write("modified by the student\n")
print(json.dumps(found))
'''


def run_probe(course, cells, **traits):
    sub = course / "submitted" / "alice" / "ps1"
    prelude = f"COURSE = {str(course)!r}\nCOURSE_ROOT = {str(COURSE_ROOT)!r}\n"
    nb = new_notebook(cells=[new_code_cell(prelude)] + [new_code_cell(c) for c in cells])
    SandboxedExecute(**traits).preprocess(nb, {"metadata": {"path": str(sub)}})
    return nb


def stdout(cell):
    errs = [o for o in cell.outputs if o.output_type == "error"]
    assert not errs, errs
    return "".join(o.text for o in cell.outputs if o.output_type == "stream")


def test_probe_ok():
    assert sandbox.probe() is None


def test_unavailable_reason(monkeypatch):
    monkeypatch.setenv("COURSE_BWRAP", "/nonexistent/bwrap")
    reason = sandbox.probe()
    assert reason and "bubblewrap" in reason and "COURSE_GRADE_UNSANDBOXED" in reason
    with pytest.raises(SandboxUnavailable):
        sandbox.require_sandbox()


def test_filesystem_isolation(course):
    before = snapshot(course)
    nb = run_probe(course, [PROBE, "try:\n    import coursetools.game.oracle\n    print('oracle importable')\n"
                                   "except ImportError:\n    print('oracle hidden')"])
    found = json.loads(stdout(nb.cells[1]))
    # the course, other students and the gradebook are untouched, byte for byte
    assert snapshot(course) == before
    assert not list(COURSE_ROOT.glob("pwned*")) and not list(COURSE_ROOT.glob("*/pwned*"))
    # the kernel works in a private copy of its own folder
    assert found["cwd"].endswith("/ps1") and found["parent"] == sorted(found["parent"])
    assert "alice" not in found["parent"] and "bob" not in json.dumps(found["parent"])
    assert found["course_path"] is False
    # a reserved throw-away uid when grading as root; the grader's own, in a user namespace, otherwise
    assert 200_000 <= found["uid"] < 1_200_000 if os.geteuid() == 0 else found["uid"] == os.getuid()
    # of the course repo only the ro-bound venv is visible: not the hidden checks, not the oracle
    assert found["course_root"] == [".venv"]
    assert stdout(nb.cells[2]) == "oracle hidden\n"
    for p, res in found["proc_cwd"].items():
        assert res == "error" or "source" not in res and "submitted" not in res, (p, res)
    assert all(v != "READ" for v in found["secret_paths"].values()), found["secret_paths"]
    assert all(v != "WROTE" for v in found["ro_ok"].values()), found["ro_ok"]
    # writes landed only in the private copy / private tmpfs dirs
    assert all(w.startswith(("/home/student", "/tmp/")) for w in found["wrote"]), found["wrote"]
    assert not (course / "submitted" / "alice" / "ps1" / "pwned.txt").exists()


def test_network_tmp_and_processes(course, tmp_path):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    marker = f"sbxmark{uuid.uuid4().hex[:10]}"
    tmpname = f"/tmp/{marker}.txt"
    try:
        nb = run_probe(course, [
            f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
            "    print('connected')\nexcept OSError as e:\n    print('refused', type(e).__name__)",
            "try:\n    socket.create_connection(('1.1.1.1', 80), timeout=3)\n    print('internet')\n"
            "except OSError as e:\n    print('no internet')",
            f"open({tmpname!r}, 'w').write('x')\nimport os\nprint(os.path.exists({tmpname!r}))",
            f"import subprocess, os\np = subprocess.Popen(['sh', '-c', 'sleep 1000 # {marker}'])\n"
            f"if os.fork() == 0:\n    os.setsid()\n    os.execv('/bin/sh', ['sh', '-c', 'sleep 1000 # {marker}fork'])\n"
            "print('started')",
            "import os, signal\nos.kill(1, signal.SIGKILL) if False else None\nprint(sorted(int(p) for p in os.listdir('/proc') if p.isdigit())[:3])",
        ])
    finally:
        srv.close()
    assert stdout(nb.cells[1]).startswith("refused")
    assert stdout(nb.cells[2]) == "no internet\n"
    assert stdout(nb.cells[3]) == "True\n"
    assert not os.path.exists(tmpname)                  # /tmp is private
    assert stdout(nb.cells[4]) == "started\n"
    assert stdout(nb.cells[5]).startswith("[1, ")       # its own PID namespace

    def leftovers():
        hits = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    hits.append(pid)
            except OSError:
                pass
        return hits

    deadline = time.monotonic() + 5
    while leftovers() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert leftovers() == []                            # nothing outlives the notebook


def test_rlimits_inside(course):
    nb = run_probe(course, [
        "import resource\nprint(resource.getrlimit(resource.RLIMIT_AS)[0], "
        "resource.getrlimit(resource.RLIMIT_FSIZE)[0], resource.getrlimit(resource.RLIMIT_CPU)[0])",
        "try:\n    open('big.bin', 'wb').write(b'x' * (3 * 1024**2))\n    print('wrote')\n"
        "except OSError as e:\n    print('EFBIG', e.errno)",
    ], memory_limit=700 * 1024**2, file_size_limit=1024**2, cpu_time_limit=60)
    assert stdout(nb.cells[1]) == f"{700 * 1024**2} {1024**2} 60\n"
    assert stdout(nb.cells[2]).startswith("EFBIG")


def layout_in(tmp_path, **more):
    """A layout as the grader makes one: the submission's copy, a connection file and a sockets folder."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sockets").mkdir()
    (tmp_path / "kernel.json").write_text("{}")
    return sandbox.SandboxLayout(str(tmp_path / "sub"), str(tmp_path / "kernel.json"), str(tmp_path / "sockets"),
                                 "/home/student/sub", **more)


def test_build_command_binds_only_what_is_needed(tmp_path):
    layout = layout_in(tmp_path)
    cmd = sandbox.build_command(["python"], layout)
    binds = [cmd[i + 1] for i, a in enumerate(cmd) if a in ("--bind", "--ro-bind")]
    assert str(COURSE_ROOT) not in binds                # never the course folder itself
    # nor the course package: of it only the launcher, the sandbox's first program (sandbox/inside/launcher.py)
    assert sys.prefix in binds and [b for b in binds if "coursetools" in b] == [sandbox._launcher.__file__]
    for flag in ("--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session",
                 "--clearenv"):
        assert flag in cmd
    writable = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--bind"]
    assert writable == [layout.sockets]                 # the one host folder a kernel can write
    assert cmd[cmd.index(layout.connection_file) - 1] == "--ro-bind"
    assert cmd[cmd.index(layout.submission) - 1] == "--ro-bind"
    for tmpfs in ("/tmp", "/dev/shm", "/home/student"):   # sized: a notebook cannot fill the machine's memory
        at = cmd.index(tmpfs)
        assert cmd[at - 1] == "--tmpfs" and cmd[at - 3] == "--size" and int(cmd[at - 2]) == 256 * 1024**2


def test_a_package_installed_in_the_venv_is_hidden(tmp_path, monkeypatch):
    # With a non-editable install the package would lie inside the read-only venv: it is covered with a tmpfs.
    installed = Path(sys.prefix) / "lib" / "course-package-stand-in"
    monkeypatch.setattr(sandbox, "hidden_paths", lambda: [str(installed)])
    cmd = sandbox.build_command(["python"], layout_in(tmp_path))
    assert cmd[cmd.index(str(installed)) - 1] == "--tmpfs"
    assert cmd.index(str(installed)) > max(i for i, a in enumerate(cmd) if cmd[i - 1] == "--ro-bind" and
                                           a == sys.prefix)


def test_read_only_binds_under_tmp_stay_visible(tmp_path):
    # A course checked out under /tmp (a CI clone) must be visible above the sandbox's private /tmp.
    shared = tmp_path / 'course-under-tmp'
    shared.mkdir()
    (shared / 'visible.txt').write_text('seen')
    layout = layout_in(tmp_path, extra_ro_binds=[str(shared)])
    command = sandbox.build_command(
        [sys.executable, '-c', f'print(open({str(shared / "visible.txt")!r}).read())'], layout)
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == 'seen', result.stderr


KERNEL_FILES = r'''
import json, os
from ipykernel.connect import get_connection_file
connection = get_connection_file()
info = json.load(open(connection))
sockets = os.path.dirname(info["ip"])
tried = {}
for name, act in [("connection file", lambda: open(connection, "w")),
                  ("new file in sockets", lambda: open(os.path.join(sockets, "kernel.log"), "w")),
                  ("link in sockets", lambda: os.symlink("/etc/passwd", os.path.join(sockets, "k-9"))),
                  ("socket removed", lambda: os.unlink(f"{info['ip']}-{info['shell_port']}")),
                  ("sockets listed", lambda: os.listdir(sockets)),
                  ("sockets made writable", lambda: os.chmod(sockets, 0o777))]:
    try:
        act()
        tried[name] = "done"
    except OSError as error:
        tried[name] = type(error).__name__
log_folder = os.path.dirname(os.readlink("/proc/self/fd/2"))
print(json.dumps({"tried": tried, "log folder visible": os.path.exists(log_folder),
                  "kernel folder": sorted(os.listdir(os.path.dirname(sockets))),
                  "shm": open("/proc/sysvipc/shm").read().count("\n") - 1}))
'''

SHM = r'''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
made = [libc.shmget(0, 64 * 1024**2, 0o1000 | 0o600) for _ in range(2)]   # IPC_PRIVATE, IPC_CREAT
print(all(m >= 0 for m in made), open("/proc/sysvipc/shm").read().count("\n") - 1)
'''


def test_the_kernel_reaches_its_files_only_as_the_grader_allows(course):
    """Once the kernel is ready, its connection file is read-only and its sockets folder root's: nothing in it can be
    added, removed, replaced or reopened to the kernel; the kernel's folder shows only these two, its log lies out
    of sight (the kernel has a descriptor), and a new kernel starts with no System V memory of the last one's."""
    nb = run_probe(course, [KERNEL_FILES, SHM, "import os; os._exit(3)",
                            "print(open('/proc/sysvipc/shm').read().count(chr(10)) - 1)"])
    found = json.loads(stdout(nb.cells[1]))
    assert set(found["tried"].values()) <= {"PermissionError", "OSError"} and \
        all(found["tried"][k] != "done" for k in found["tried"]), found["tried"]
    assert found["log folder visible"] is False
    assert found["kernel folder"] == ["kernel.json", "sockets"]
    assert found["shm"] == 0
    assert stdout(nb.cells[2]) == "True 2\n"                 # two segments made; the kernel then dies, and the
    assert stdout(nb.cells[4]) == "2\n"                      # new one has the two of the replayed cell, not four


FILLER = r'''
import os
got = {}
for folder in ("/tmp", os.path.expanduser("~"), "."):
    written = 0
    try:
        for i in range(100):
            with open(os.path.join(folder, f"fill{i}"), "wb") as f:
                for _ in range(40):
                    f.write(b"x" * 1024**2)
                    written += 1024**2
    except OSError as error:
        got[folder] = (written // 1024**2, error.errno)
print(got)
'''


def test_a_notebook_fills_no_more_than_its_scratch_limit(course):
    """HOME (with the working folder), /tmp and /dev/shm are tmpfs of `scratch_limit` bytes each."""
    nb = run_probe(course, [FILLER], scratch_limit=64 * 1024**2, file_size_limit=None)
    got = eval(stdout(nb.cells[1]))
    assert set(got) == {"/tmp", "/home/student", "."}, got
    for folder, (megabytes, errno_) in got.items():
        assert errno_ == 28 and megabytes <= 64, (folder, megabytes, errno_)      # ENOSPC at the limit
