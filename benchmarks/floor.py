"""The floor of a grading run: the CPU that the students' code and the checks need, with nothing around them.

For each distinct notebook of a class, in this one process: its code cells run in a namespace (the students'
own code), then each test cell runs in a trusted-checker `Session` whose calls are answered by the kernel
agent in the same process (no kernel, no sandbox, no messages, no nbgrader). The CPU time of that, summed over
the class and divided by the cores, is the least time any grader could take for the class on this machine.
Only for the made-up benchmark students: it runs their code unsandboxed.

    .venv/bin/python benchmarks/floor.py [--class varied|demo] [--students 40]
"""
import argparse
import contextlib
import io
import os
import pathlib
import sys
import time

import nbformat

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from coursetools.judge import checker
from coursetools.sandbox.inside import kernel_agent  # noqa: E402
from coursetools.judge.checker_host import TrustedCells  # noqa: E402


class InProcessSession(checker.Session):
    """A checker session whose calls are answered by the kernel agent on a namespace of this process."""

    def __init__(self, notebook, user_ns):
        super().__init__(None, None, notebook)
        self.user_ns = user_ns

    def exchange(self, request):
        with contextlib.redirect_stdout(io.StringIO()):
            text = kernel_agent.answer(self.user_ns, request)
        return {'text': text}


def trusted_cells(assignment):
    source = nbformat.read(ROOT / 'source' / assignment / f'{assignment}.ipynb', as_version=4)
    cells, tests, solutions = [], set(), set()
    for cell in source.cells:
        meta = cell.metadata.get('nbgrader', {})
        if 'grade_id' in meta:
            cells.append((meta['grade_id'], cell.cell_type, meta.get('locked', False), cell.source))
            if meta.get('grade') and cell.cell_type == 'code':
                tests.add(meta['grade_id'])
            if meta.get('solution'):
                solutions.add(meta['grade_id'])
    return TrustedCells.from_cells(assignment, cells, tests, solutions)


def cpu_seconds(notebook, trusted):
    """CPU seconds to run the notebook's own cells and then its test cells as the checker would."""
    started = time.process_time()
    namespace = {'__name__': '__main__'}
    for cell in notebook.cells:
        if cell.cell_type != 'code' or cell.metadata.get('nbgrader', {}).get('grade_id') in trusted.tests:
            continue
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                exec(compile(cell.source, '<cell>', 'exec'), namespace)
        except Exception:
            pass
    session = InProcessSession(trusted.notebook(), namespace)
    for grade_id, source in trusted.tests.items():
        session.run(grade_id, source)
    return time.process_time() - started


def floor(students, assignment='noughts_and_crosses'):
    """(CPU seconds for the class, the same divided by the cores); `students` as [(id, notebook)]."""
    trusted = trusted_cells(assignment)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 3000))
    per_notebook = {}
    total = 0.0
    for _, notebook in students:
        key = nbformat.writes(notebook)
        if key not in per_notebook:
            per_notebook[key] = cpu_seconds(notebook, trusted)
        total += per_notebook[key]
    return total, total / (os.cpu_count() or 1)


def main():
    sys.path.insert(0, str(ROOT / 'benchmarks'))
    from classes import students_of
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--class', dest='kind', choices=('varied', 'demo'), default='varied')
    parser.add_argument('--students', type=int, default=40)
    args = parser.parse_args()
    cpu, seconds = floor(students_of(args.kind, args.students))
    print(f'{args.kind} class of {args.students}: the students\' code and the checks need {cpu:.1f} CPU-s; '
          f'on {os.cpu_count()} cores the floor is {seconds:.1f} s')


if __name__ == '__main__':
    main()
