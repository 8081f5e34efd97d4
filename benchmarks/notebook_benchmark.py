"""Time the workbook: Restart & Run All of the reference notebook (kernel start included), against the same
notebook filled with demo student ada's plain minimax as the baseline, and the cost of autograding
the demo class with plain nbgrader: per submission and for the whole class.

    .venv/bin/python benchmarks/notebook_benchmark.py [--runs 5] [--skip-autograde]
"""
import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import nbformat
from nbclient import NotebookClient

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'grader_tests'))
from conftest import copy_course  # noqa: E402
from coursetools.instructor import democlass  # noqa: E402


def restart_and_run_all(notebook_path):
    """Seconds for a fresh kernel to start and run every cell, as Restart & Run All does."""
    nb = nbformat.read(notebook_path, as_version=4)
    start = time.perf_counter()
    NotebookClient(nb, timeout=600, kernel_name='python3', allow_errors=True,
                   resources={'metadata': {'path': str(notebook_path.parent)}}).execute()
    return time.perf_counter() - start


def widget_cell_under_grading(notebook_path):
    """Seconds the widget cell takes when NBGRADER_EXECUTION is set, as during autograde."""
    os.environ['NBGRADER_EXECUTION'] = 'autograde'
    try:
        nb = nbformat.read(notebook_path, as_version=4)
        client = NotebookClient(nb, timeout=600, kernel_name='python3', allow_errors=True,
                                resources={'metadata': {'path': str(notebook_path.parent)}})
        with client.setup_kernel():
            for index, cell in enumerate(nb.cells):
                if cell.cell_type == 'code':
                    start = time.perf_counter()
                    client.execute_cell(cell, index)
                    if cell.id == 'widget':
                        return time.perf_counter() - start
    finally:
        del os.environ['NBGRADER_EXECUTION']


def nbgrader(course, *args):
    env = dict(os.environ, PATH=os.path.join(sys.prefix, 'bin') + os.pathsep + os.environ['PATH'])
    start = time.perf_counter()
    subprocess.run([sys.executable, '-m', 'nbgrader', *args], cwd=course, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--skip-autograde', action='store_true')
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        scratch = pathlib.Path(scratch)
        reference = scratch / 'reference'
        shutil.copytree(ROOT / 'source' / 'noughts_and_crosses', reference)
        plain = scratch / 'plain'
        shutil.copytree(ROOT / 'release' / 'noughts_and_crosses', plain)
        release = nbformat.read(plain / 'noughts_and_crosses.ipynb', as_version=4)
        nbformat.write(democlass.fill(release, *democlass.read_answers(
            ROOT / 'demo_class' / 'noughts_and_crosses' / 'ada.py')), plain / 'noughts_and_crosses.ipynb')
        ref_times = [restart_and_run_all(reference / 'noughts_and_crosses.ipynb') for _ in range(args.runs)]
        plain_times = [restart_and_run_all(plain / 'noughts_and_crosses.ipynb') for _ in range(args.runs)]
        print('Restart & Run All, kernel start included (seconds)')
        print(f'  reference solution (plain minimax):    median {statistics.median(ref_times):.2f}  '
              f'min {min(ref_times):.2f}  max {max(ref_times):.2f}')
        print(f'  plain minimax student (ada):          median {statistics.median(plain_times):.2f}  '
              f'min {min(plain_times):.2f}  max {max(plain_times):.2f}')
        print(f'  ratio reference / plain: {statistics.median(ref_times) / statistics.median(plain_times):.2f}')
        second = scratch / 'alpha_beta'
        shutil.copytree(ROOT / 'source' / 'alpha_beta', second)
        ab_times = [restart_and_run_all(second / 'alpha_beta.ipynb') for _ in range(args.runs)]
        print(f'  alpha_beta reference:                 median {statistics.median(ab_times):.2f}  '
              f'min {min(ab_times):.2f}  max {max(ab_times):.2f}')
        print(f'  widget cell under nbgrader (NBGRADER_EXECUTION set): '
              f'{widget_cell_under_grading(reference / "noughts_and_crosses.ipynb"):.3f} s')
        if args.skip_autograde:
            return
        course = copy_course(scratch / 'course')
        nbgrader(course, 'generate_assignment', 'noughts_and_crosses', '--force')
        students = sorted(p.name for p in (course / 'submitted').iterdir())
        print('\nnbgrader autograde, one command per submission (nbgrader start-up included, seconds)')
        per_student = {}
        for student in students:
            per_student[student] = nbgrader(course, 'autograde', 'noughts_and_crosses', '--student', student, '--force')
            print(f'  {student:6s} {per_student[student]:6.2f}')
        print(f'  mean {statistics.mean(per_student.values()):.2f}, sum {sum(per_student.values()):.2f}')
        whole = nbgrader(course, 'autograde', 'noughts_and_crosses', '--force')
        print(f'\nnbgrader autograde, whole class of {len(students)} in one command: {whole:.2f} s '
              f'({whole / len(students):.2f} s per submission)')


if __name__ == '__main__':
    main()
