"""How much a class of attackers slows grading: the hidden attack catalogue of grader_tests/test_trust.py (channel
breakers, helper keepers, a frame walker, answers built to be expensive, huge errors, each followed by honest
notebooks), graded by `make grade`'s code path, against an honest class of the same size (demo student ada's
notebook every time), in the same process, alternating. Prints each run's autograde time and the ratio.

    .venv/bin/python benchmarks/attack_benchmark.py [--repeat 2]
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'grader_tests'))
from conftest import copy_course  # noqa: E402
from test_hostile import ada, filled, write_student  # noqa: E402
from test_trust import CLASS  # noqa: E402

ASSIGNMENT = 'noughts_and_crosses'


def graded_seconds(students):
    """Seconds the autograde phase of `make grade` took on a class of {student: notebook}."""
    with tempfile.TemporaryDirectory() as folder:
        course = copy_course(pathlib.Path(folder) / 'course', students=[])
        for student, notebook in students.items():
            write_student(course, student, notebook)
        report = pathlib.Path(folder) / 'report.json'
        subprocess.run([sys.executable, '-m', 'coursetools.instructor.grade', ASSIGNMENT, '--no-progress', '--json', str(report),
                        '--SandboxedExecute.timeout=20'], cwd=course, check=True, capture_output=True)
        return json.loads(report.read_text())[ASSIGNMENT]['wall']


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--repeat', type=int, default=2)
    args = parser.parse_args()
    attackers = {student: build() for student, (build, _) in CLASS.items()}
    honest = {f'honest_{i:02d}': filled(*ada()) for i in range(len(attackers))}
    ratios = []
    for run in range(args.repeat):
        hostile_seconds, honest_seconds = graded_seconds(attackers), graded_seconds(honest)
        ratios.append(hostile_seconds / honest_seconds)
        print(f'run {run + 1}: attack catalogue ({len(attackers)} notebooks) {hostile_seconds:.1f} s, honest class '
              f'{honest_seconds:.1f} s, ratio {ratios[-1]:.2f}', flush=True)
    print(f'median ratio {statistics.median(ratios):.2f} (bar: 3)')


if __name__ == '__main__':
    main()
