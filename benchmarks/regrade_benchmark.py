"""How long `make grade` takes on a graded class when one student resubmits, against the first grading of the
whole class, in the same process: the demo class (both assignments) graded once from a fresh copy of the course,
then cat's noughts_and_crosses notebook replaced and `make grade` run again (only cat's is graded), then run once
more with nothing changed, then once more after a grader marked ada's written answer of alpha_beta by hand (her
feedback and the exports written again, nobody autograded).

    .venv/bin/python benchmarks/regrade_benchmark.py
"""
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'grader_tests'))
from conftest import copy_course  # noqa: E402


def make_grade(course):
    env = dict(os.environ, PATH=os.path.join(sys.prefix, 'bin') + os.pathsep + os.environ.get('PATH', ''))
    env.pop('COURSE_ROOT', None)
    started = time.perf_counter()
    result = subprocess.run([sys.executable, '-m', 'coursetools.instructor.grade', '--no-progress'], cwd=course,
                            env=env, capture_output=True, text=True)
    if result.returncode:
        raise SystemExit(result.stdout[-3000:] + result.stderr[-3000:])
    return time.perf_counter() - started, result.stdout


def main():
    with tempfile.TemporaryDirectory() as folder:
        course = copy_course(pathlib.Path(folder) / 'course')
        students = len(list((course / 'submitted').iterdir()))
        full, _ = make_grade(course)
        notebook = pathlib.Path('noughts_and_crosses') / 'noughts_and_crosses.ipynb'
        shutil.copy(course / 'submitted' / 'ada' / notebook, course / 'submitted' / 'cat' / notebook)
        one, output = make_grade(course)
        assert 'noughts_and_crosses: 1 notebook on' in output, output
        none, output = make_grade(course)
        assert 'autograde' not in output, output
        from nbgrader.api import Gradebook
        with Gradebook('sqlite:///' + str(course / 'gradebook.db')) as gradebook:   # as formgrader's page does
            grade = gradebook.find_grade('perfect_opponent', 'alpha_beta', 'alpha_beta', 'ada')
            grade.manual_score, grade.needs_manual_grade = 2, False
            gradebook.db.commit()
        marked, output = make_grade(course)
        assert 'marks given by hand changed for 1 submission' in output and 'autograde' not in output, output
    print(f'demo class ({students} students, 2 assignments) graded from scratch: {full:.1f} s')
    print(f'one resubmission graded again:  {one:.1f} s  ({one / full:.2f} of the full run)')
    print(f'nothing changed:                {none:.1f} s  ({none / full:.2f} of the full run)')
    print(f'one written answer marked:      {marked:.1f} s  ({marked / full:.2f} of the full run)')


if __name__ == '__main__':
    main()
