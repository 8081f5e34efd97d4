"""Where kernels come from: this tree's `make grade` against a baseline revision's, on the same varied class.

Issue 41 asked whether the kernel fork server (a warm sandboxed Python that forked every kernel) paid for its risk;
it was taken out (docs/sandbox.md). This script grades the same class with two copies of the course, each from a
fresh process, one after the other:

    baseline:  `git archive <rev>` of the course (default db6a780, the last revision with the fork server), run with
               --kernels as given (default forked)
    this tree: the working tree's course (every kernel a new sandbox)

and prints each run's wall time, the machine's busy CPU during it, and the ratios this/baseline, and whether the
marks agree cell for cell.

    .venv/bin/python benchmarks/kernels_benchmark.py [--baseline-rev db6a780] [--baseline-kernels forked|cold]
                                                     [--students 40] [--repeat 1]
"""
import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'benchmarks'))
from classes import ASSIGNMENT, students_of  # noqa: E402  (benchmarks/classes.py)
from suite_cpu import busy_cpu  # noqa: E402

COPIED = ('coursetools', 'source', 'release', 'demo_class', 'exchange', 'nbgrader_config.py', 'pyproject.toml')


def course_at(rev, folder):
    """The course's files at `rev` (None: the working tree) in `folder`, with no submissions."""
    folder.mkdir(parents=True)
    if rev is None:
        for name in COPIED:
            source = ROOT / name
            if source.is_dir():
                shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns('__pycache__'))
            elif source.exists():
                shutil.copy2(source, folder / name)
    else:
        found = subprocess.run(['git', '-C', str(ROOT), 'archive', rev, *COPIED], capture_output=True)
        if found.returncode:
            raise SystemExit(f'the baseline revision {rev} is not in this clone\'s history (a shallow clone?): '
                             f'{found.stderr.decode(errors="replace").strip()}')
        archive = found.stdout
        subprocess.run(['tar', '-x', '-C', str(folder)], input=archive, check=True)
    return folder


def add_class(course, students):
    import nbformat
    from coursetools.instructor import democlass
    for student, notebook in students:
        target = course / 'submitted' / student / ASSIGNMENT
        shutil.copytree(course / 'release' / ASSIGNMENT, target,
                        ignore=shutil.ignore_patterns('*.ipynb', '__pycache__'))
        nbformat.write(notebook, target / f'{ASSIGNMENT}.ipynb')
        (target / 'timestamp.txt').write_text(democlass.TIMESTAMP + '\n')


def grade(course, extra=()):
    """Wall seconds and busy CPU seconds of one `make grade` of the course, run with its own package."""
    env = dict(os.environ, PYTHONPATH=str(course), PATH=os.path.join(sys.prefix, 'bin') + ':' + os.environ['PATH'])
    env.pop('COURSE_ROOT', None)
    command = [sys.executable, '-m', 'coursetools.instructor.grade', ASSIGNMENT, '--no-progress', *extra]
    busy, started = busy_cpu(), time.perf_counter()
    result = subprocess.run(command, cwd=course, env=env, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - started, busy_cpu() - busy
    if result.returncode:
        sys.stderr.write(result.stdout[-3000:] + result.stderr[-3000:])
        raise SystemExit(f'make grade failed in {course}')
    return wall, cpu


def marks(course):
    from nbgrader.api import Gradebook
    with Gradebook(f'sqlite:///{course}/gradebook.db') as gradebook:
        return {(s.student_id, g.name): g.auto_score for s in gradebook.find_assignment(ASSIGNMENT).submissions
                for nb in s.notebooks for g in nb.grades}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--baseline-rev', default='db6a780')
    parser.add_argument('--baseline-kernels', default='forked', choices=('forked', 'cold'))
    parser.add_argument('--students', type=int, default=40)
    parser.add_argument('--repeat', type=int, default=1)
    args = parser.parse_args()
    students = students_of('varied', args.students)
    with tempfile.TemporaryDirectory(prefix='kernels-bench-') as tmp:
        tmp = pathlib.Path(tmp)
        runs = {'baseline': [], 'this tree': []}
        for round_ in range(args.repeat):
            for name, rev, extra in (('baseline', args.baseline_rev, ['--kernels', args.baseline_kernels]),
                                     ('this tree', None, [])):
                course = course_at(rev, tmp / f'{name.replace(" ", "-")}-{round_}')
                add_class(course, students)
                runs[name].append((grade(course, extra), marks(course)))
        print(f'varied class of {args.students}, {os.cpu_count()} cores; baseline {args.baseline_rev} '
              f'(--kernels {args.baseline_kernels}) against this tree')
        best = {}
        for name, results in runs.items():
            wall = min(w for (w, _), _ in results)
            cpu = min(c for (_, c), _ in results)
            best[name] = (wall, cpu)
            print(f'  {name:10} wall {wall:6.1f} s   busy CPU {cpu:6.1f} s   (best of {len(results)})')
        print(f'  this tree / baseline: wall {best["this tree"][0] / best["baseline"][0]:.2f}, '
              f'busy CPU {best["this tree"][1] / best["baseline"][1]:.2f}')
        same = all(m == runs['baseline'][0][1] for _, m in runs['baseline'] + runs['this tree'])
        print(f'  marks agree cell for cell: {"yes" if same else "NO"}')
        return 0 if same else 1


if __name__ == '__main__':
    sys.exit(main())
