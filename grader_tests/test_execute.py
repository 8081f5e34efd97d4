"""SandboxedExecute: a kernel that dies, hangs or floods costs only its own cell.

Real kernels, real bwrap; no mocks.  Notebooks are built the way a student's would be.
"""
import os
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from coursetools.judge import failures
from coursetools.judge.checker_host import TrustedCells
from coursetools.grading.execute import SandboxedExecute, SandboxUnavailable

FIXTURES = Path(__file__).parent / "fixtures" / "execute"

from conftest import needs_sandbox  # noqa: E402


def run(cells, tmp_path, trusted=None, **traits):
    sub = tmp_path / "submission"
    sub.mkdir(exist_ok=True)
    nb = new_notebook(cells=[new_code_cell(c) if isinstance(c, str) else c for c in cells])
    SandboxedExecute(**traits).preprocess(nb, {"metadata": {"path": str(sub)}, "trusted_cells": trusted})
    return nb


def text(cell):
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def errors(cell):
    return [o for o in cell.outputs if o.output_type == "error"]


@needs_sandbox
def test_kernel_deaths_cost_one_cell(tmp_path):
    nb = run([
        "x = 41\nprint('start')",
        "x += 1",
        "import os\nos._exit(1)",
        "print('after exit', x)",
        "import ctypes\nctypes.string_at(0)",
        "print('after segfault', x)",
        "big = bytearray(3 * 1024**3)",            # over the 512 MB limit
        "print('after memory', x)",
        "assert x == 42\nprint('graded ok')",
    ], tmp_path, memory_limit=512 * 1024**2)
    c = nb.cells
    assert text(c[0]) == "start\n" and not errors(c[0])
    assert [e.ename for e in errors(c[2])] == ["KernelDied"]
    assert "exit status 1" in errors(c[2])[0].evalue
    # earlier cells are replayed silently (x += 1 ran once again, not twice: x == 42),
    # and their stored outputs are unchanged
    assert text(c[3]) == "after exit 42\n"
    assert [e.ename for e in errors(c[4])] == ["KernelDied"]
    assert text(c[5]) == "after segfault 42\n"
    assert errors(c[6]) and errors(c[6])[0].ename in ("MemoryError", "KernelDied")
    assert text(c[7]) == "after memory 42\n"
    assert text(c[8]) == "graded ok\n" and not errors(c[8])
    assert text(c[0]) == "start\n" and len(c[0].outputs) == 1
    assert all(o.output_type == "error" for o in errors(c[2]) + errors(c[4]))


@needs_sandbox
def test_too_many_kernel_deaths(tmp_path):
    nb = run(["import os\nos._exit(3)"] * 3 + ["print('never')"], tmp_path,
             max_kernel_restarts=1)
    assert [e.ename for e in errors(nb.cells[0])] == ["KernelDied"]
    assert [e.ename for e in errors(nb.cells[1])] == ["KernelDied"]
    for c in nb.cells[2:]:
        assert "too many kernel deaths" in errors(c)[0].evalue
    assert text(nb.cells[3]) == ""


@needs_sandbox
def test_timeouts_cost_one_cell(tmp_path):
    nb = run([
        "x = 5",
        "while True:\n    pass",                                  # interrupt works
        "print('after loop', x)",
        "import time\nwhile True:\n    try:\n        time.sleep(1)\n"
        "    except BaseException:\n        pass",                 # swallows KeyboardInterrupt
        "print('after stubborn loop', x)",
    ], tmp_path, timeout=3, interrupt_grace_period=2)
    c = nb.cells
    assert "CellTimeoutError" in [e.ename for e in errors(c[1])]
    assert text(c[2]) == "after loop 5\n"
    assert "CellTimeoutError" in [e.ename for e in errors(c[3])]
    assert text(c[4]) == "after stubborn loop 5\n"


@needs_sandbox
def test_a_notebooks_own_cells_share_one_time_budget(tmp_path):
    """However many cells a notebook adds, its own cells stop once they have run `notebook_timeout` seconds in all,
    the replays after a kernel death included: each later one gets a 'not run' error, and the run goes on."""
    nb = run(["x = 5"] + ["import time\ntime.sleep(1)"] * 20 + ["print('reached', x)"], tmp_path, notebook_timeout=3)
    ran = [not errors(c) for c in nb.cells]
    assert ran[:3] == [True] * 3 and ran[-15:] == [False] * 15 and text(nb.cells[-1]) == ""
    assert ran == sorted(ran, reverse=True)                 # once spent, nothing more runs
    assert all(e.ename == "CellTimeoutError" and "not run" in e.evalue and "3 s in all" in e.evalue
               for c in nb.cells for e in errors(c))
    # 4 s of cells, then a death: replaying them would take 4 s more, past the budget of 6
    nb = run(["x = 5"] + ["import time\ntime.sleep(1)"] * 4 + ["import os\nos._exit(1)", "print('after', x)"],
             tmp_path, notebook_timeout=6)
    assert [e.ename for e in errors(nb.cells[5])] == ["KernelDied"]
    assert text(nb.cells[6]) == "" and "not run" in errors(nb.cells[6])[0].evalue


@needs_sandbox
def test_infinite_recursion_costs_one_cell(tmp_path):
    # IPython formats a RecursionError's traceback in about 2 s (more on a loaded machine): timeout 10 s
    nb = run([
        "x = 5",
        "def f(n):\n    return f(n + 1)\nf(0)",                     # RecursionError
        "import sys\nsys.setrecursionlimit(10**8)\ndef g(n):\n    return g(n + 1)\ng(0)",
        "print('after recursion', x)",
    ], tmp_path, timeout=10, interrupt_grace_period=1)
    c = nb.cells
    assert [e.ename for e in errors(c[1])] == ["RecursionError"]
    # unbounded recursion: MemoryError, a crash (KernelDied) or a hang (CellTimeoutError)
    assert errors(c[2])
    assert text(c[3]) == "after recursion 5\n"


@needs_sandbox
def test_output_flood_is_cut(tmp_path):
    nb = run([
        "print('hello')",
        "print('x' * 30_000_000)",
        "for i in range(200_000):\n    print('y' * 99)",
        "print('z' * 10)\nassert False, 'graded failure is still recorded'",
    ], tmp_path)
    assert text(nb.cells[0]) == "hello\n"
    assert "[output truncated by the grader after 1 MB]" in text(nb.cells[1])
    assert len(text(nb.cells[1])) <= 1024**2 + 200
    assert "[output truncated by the grader" in text(nb.cells[2])
    assert errors(nb.cells[3])[0].ename == "AssertionError"
    assert len(nbformat.writes(nb)) < 1.2 * 1024**2


SEND_ERRORS = ("k = get_ipython().kernel\nfor i in range(500):\n    k.session.send(k.iopub_socket, 'error', {'ename': 'E', "
               "'evalue': 'x' * 3000, 'traceback': ['y' * 3000] * 10}, parent=k.get_parent())")


@needs_sandbox
def test_the_output_budget_holds_whatever_form_the_bytes_take(tmp_path):
    """Many empty displays, a display's metadata, errors sent by hand past a cell's first, widgets' state: each
    alone made the notebook 1.3 to 16 MB. Now all of them together stay near `max_output_bytes` (1 MB), and each
    cell's first error, which says what went wrong there, is kept."""
    nb = run([
        "from IPython.display import display\nfor i in range(10_000):\n    display('')",
        "display('', metadata={'pad': 'm' * 2_000_000})",
        SEND_ERRORS,
        "import ipywidgets\nkept = [ipywidgets.Text(value='w' * 1_000_000) for _ in range(5)]",
        "1 / 0",
    ], tmp_path)
    assert len(nbformat.writes(nb)) < 1.2 * 1024**2
    assert not nb.metadata.get("widgets")
    assert [e.ename for e in errors(nb.cells[2])] == ["E"] and [e.ename for e in errors(nb.cells[4])] == \
        ["ZeroDivisionError"]


@needs_sandbox
def test_nbgrader_execution_reaches_kernel_and_outputs_unchanged(tmp_path, monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    nb = run([new_markdown_cell("# Task"), "import os\nprint(os.environ.get('NBGRADER_EXECUTION'))",
              "1 + 1", "raise ValueError('boom')"], tmp_path)
    assert text(nb.cells[1]) == "autograde\n"
    assert nb.cells[2].outputs[0].output_type == "execute_result"
    assert nb.cells[2].outputs[0].data["text/plain"] == "2"
    assert [(o.output_type, o.ename) for o in errors(nb.cells[3])] == [("error", "ValueError")]
    assert nb.metadata.language_info.name == "python"


@needs_sandbox
def test_the_kernel_starts_without_the_debugger_yet_a_student_may_import_it(tmp_path):
    nb = run(["import sys, ipykernel.debugger\nprint('debugpy' in sys.modules, ipykernel.debugger._is_debugpy_available)",
              "import debugpy\nprint(debugpy.__name__)"], tmp_path)
    assert text(nb.cells[0]) == "False False\n"
    assert text(nb.cells[1]) == "debugpy\n" and not errors(nb.cells[1])


def test_unsandboxed_opt_out_trait(tmp_path):
    nb = run(["import os\nprint(os.getuid() == %d, os.getcwd())" % os.getuid(),
              "x = 1", "os._exit(1)", "print('after', x)"], tmp_path, sandbox=False)
    assert text(nb.cells[0]) == f"True {tmp_path / 'submission'}\n"   # runs in place
    assert errors(nb.cells[2])[0].ename == "KernelDied"
    assert text(nb.cells[3]) == "after 1\n"


def test_unsandboxed_opt_out_env(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_GRADE_UNSANDBOXED", "1")
    monkeypatch.setenv("COURSE_BWRAP", "/nonexistent/bwrap")   # would be unavailable
    nb = run(["import os\nprint(os.getcwd())"], tmp_path)
    assert text(nb.cells[0]) == f"{tmp_path / 'submission'}\n"


def test_sandbox_unavailable_is_clear(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_BWRAP", "/nonexistent/bwrap")
    with pytest.raises(SandboxUnavailable) as e:
        run(["print(1)"], tmp_path)
    assert "bwrap" in str(e.value) and "COURSE_GRADE_UNSANDBOXED" in str(e.value)


@needs_sandbox
def test_fixture_notebook_runs(tmp_path):
    """A plain student notebook from the fixtures folder runs, outputs as expected."""
    nb = nbformat.read(FIXTURES / "student_ok.ipynb", as_version=4)
    SandboxedExecute().preprocess(nb, {"metadata": {"path": str(FIXTURES)}})
    assert text(nb.cells[-1]).strip() == "0"
    assert not any(errors(c) for c in nb.cells if c.cell_type == "code")
    assert not (FIXTURES / "scratch.txt").exists()   # the kernel wrote into a private copy


@pytest.mark.parametrize("sandbox", [pytest.param(True, marks=needs_sandbox), False])
def test_test_cells_run_in_the_checker_and_never_in_the_kernel(tmp_path, sandbox):
    test = new_code_cell("assert double(2) == 4, 'double(2) should be 4'\nprint('checked', double(21))",
                         metadata={"nbgrader": {"grade": True, "grade_id": "doubles", "locked": True, "points": 1,
                                                "solution": False}})
    failing = new_code_cell("assert double(3) == 7, 'double(3) should be 7'",
                            metadata={"nbgrader": {"grade": True, "grade_id": "wrong", "locked": True, "points": 1,
                                                   "solution": False}})
    trusted = TrustedCells("a", {"doubles": test.source, "wrong": failing.source}, [], ["double"])
    nb = run(["def double(x):\n    print('doubling', x)\n    return 2 * x", test, failing,
              "print(sum(('check' + 'ed') in cell or ('double' + '(3)') in cell for cell in In))"], tmp_path, trusted,
             sandbox=sandbox)
    assert text(nb.cells[1]) == "doubling 2\ndoubling 21\nchecked 42\n" and not errors(nb.cells[1])
    assert [e.evalue for e in errors(nb.cells[2])] == ["double(3) should be 7"]
    assert f"{failures.VISIBLE} 1: assert double(3) == 7" in "".join(errors(nb.cells[2])[0].traceback)
    assert text(nb.cells[3]) == "0\n"              # the kernel never saw either test cell
    assert nb.cells[1].execution_count and nb.cells[2].execution_count


@pytest.mark.parametrize("sandbox", [pytest.param(True, marks=needs_sandbox), False])
def test_each_test_cell_starts_from_the_state_the_notebooks_cells_left(tmp_path, sandbox):
    """What a test cell's calls change in the kernel (a global memo, a module attribute) is gone for the next
    test cell and for the notebook's own cells: each test cell's calls run in a process forked for that cell."""
    def test(grade_id):
        return new_code_cell("assert visits('a') == 1, f'visited {visits(\"a\")} times'",
                             metadata={"nbgrader": {"grade": True, "grade_id": grade_id, "locked": True, "points": 1,
                                                    "solution": False}})
    trusted = TrustedCells("a", {"first": test("first").source, "second": test("second").source}, [], ["visits"])
    nb = run(["import math\nseen = {}\ndef visits(x):\n    seen[x] = seen.get(x, 0) + 1\n    math.touched = True\n"
              "    return seen[x]", test("first"), test("second"), "print(seen, hasattr(math, 'touched'))"],
             tmp_path, trusted, sandbox=sandbox)
    assert not errors(nb.cells[1]) and not errors(nb.cells[2]), [errors(c) for c in nb.cells]
    assert text(nb.cells[3]) == "{} False\n"
