"""The grading benchmark's own arithmetic (benchmarks/grading_benchmark.py), on timelines worked out by hand, and its
sorting of processes by kind."""
import os
import subprocess
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / 'benchmarks'))
from grading_benchmark import CpuByProcess, fewer_than_cores  # noqa: E402


def notebooks(*spans):
    return [{'started': start, 'execute': end - start} for start, end in spans]


def test_the_tail_is_the_time_fewer_notebooks_ran_than_there_are_cores():
    # Two cores kept busy until 9 s; from 9 s to 10 s only the long notebook runs.
    assert fewer_than_cores(notebooks((0, 10), (0, 4), (4, 8), (8, 9)), cores=2) == 1.0
    # A gap with nothing running counts too, and one core is never short while a notebook runs.
    assert fewer_than_cores(notebooks((0, 2), (3, 5)), cores=1) == 1.0
    assert fewer_than_cores(notebooks((0, 2), (3, 5)), cores=2) == 5.0
    # Timings without start times (an older report) give no tail rather than a wrong one.
    assert fewer_than_cores([{'execute': 3.0}], cores=2) == 0.0


GRADING_PROCESS_THAT_FORKS = """
import os, time  # stands for coursetools.instructor.grade (its command line says so), which forks feedback helpers
if os.fork() == 0:
    time.sleep(1)
    os._exit(0)
time.sleep(1)
os.wait()
"""


def test_forked_feedback_helpers_are_told_from_the_grading_process():
    assert CpuByProcess.kind_of('python -m coursetools.instructor.grade noughts_and_crosses') == 'grading process'
    assert CpuByProcess.kind_of('python -m coursetools.instructor.grade noughts_and_crosses', 'grading process') == \
        'feedback helpers'
    assert CpuByProcess.kind_of('python -c from coursetools.judge.checker_server import main', 'grading process') == 'checkers'
    with CpuByProcess(sample=True, within=os.getpid()) as cpu:
        subprocess.run([sys.executable, '-c', GRADING_PROCESS_THAT_FORKS], check=True)
    kinds = list(cpu.kinds.values())
    assert kinds.count('grading process') == 1 and kinds.count('feedback helpers') == 1
