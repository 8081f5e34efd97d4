"""A student's marks do not depend on how busy the grading machine is. A small class (alpha_beta's correct answers,
whose checks are the heaviest of the course, and a demo student with mistakes) is graded on a quiet machine,
then again with every core kept busy by another process: the marks are the same, cell for cell. (In the parallel
suite, a 6-s cell limit of test_stubs' own once cost a correct `canonical` its mark; the course's limits are
generous against the reference on a loaded machine: docs/checks.md.)"""
import os
import subprocess
import sys

import pytest

from conftest import copy_course, needs_sandbox, run_grade
from coursetools.instructor import marks

pytestmark = [needs_sandbox, pytest.mark.alone]     # its burners would slow the other modules' tests

STUDENTS = ['ada', 'dan']           # dan: a demo student with mistakes
ASSIGNMENT = 'alpha_beta'
BURN = 'import time\nend = time.monotonic() + 600\nwhile time.monotonic() < end:\n    pass\n'


def cells(course):
    _, _, scores, _ = marks.scores_by_cell('sqlite:///' + str(course / 'gradebook.db'), ASSIGNMENT)
    return {student: scores[student] for student in STUDENTS}


def test_marks_are_the_same_on_a_quiet_and_on_a_loaded_machine(tmp_path):
    course = copy_course(tmp_path / 'course', students=STUDENTS)
    quiet = run_grade(course, ASSIGNMENT)
    assert quiet.returncode == 0, quiet.stdout[-3000:] + quiet.stderr[-3000:]
    before = cells(course)
    burners = [subprocess.Popen([sys.executable, '-c', BURN]) for _ in range(os.cpu_count() or 2)]
    try:
        loaded = run_grade(course, ASSIGNMENT, '--force')
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    assert loaded.returncode == 0, loaded.stdout[-3000:] + loaded.stderr[-3000:]
    assert cells(course) == before
    assert sum(v or 0 for v in before['ada'].values()) == 15      # the heaviest checks passed, both times
