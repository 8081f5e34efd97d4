"""The grading process's peak memory as the class grows: a varied class (benchmarks/varied_class/) of each size
given, graded by `make grade`'s code path; prints the peak resident memory of the grading process itself (its
workers' kernels and checkers are processes of their own) and the wall time.

    .venv/bin/python benchmarks/memory_benchmark.py --students 40 200 2000
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'benchmarks'))
from classes import ASSIGNMENT, students_of  # noqa: E402
from grading_benchmark import build_class, env  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--students', type=int, nargs='+', default=[40, 200])
    args = parser.parse_args()
    for count in args.students:
        with tempfile.TemporaryDirectory() as folder:
            course = build_class(pathlib.Path(folder) / 'course', students_of('varied', count))
            report = pathlib.Path(folder) / 'report.json'
            subprocess.run([sys.executable, '-m', 'coursetools.instructor.grade', ASSIGNMENT, '--no-progress', '--json',
                            str(report)], cwd=course, env=env(), check=True, capture_output=True)
            found = json.loads(report.read_text())
            after = ', '.join(f'{name} {mb:.0f}' for name, mb in found['memory_after_phase_mb'].items())
            print(f'{count} submissions: grading process peak {found["peak_memory_mb"]:.0f} MB, '
                  f'{found["total_wall"]:.0f} s; MB after each phase: {after}', flush=True)


if __name__ == '__main__':
    main()
