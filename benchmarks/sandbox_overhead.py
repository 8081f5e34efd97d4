"""Time notebooks executed in a cold kernel, sandboxed against unsandboxed, in the same process.

    .venv/bin/python benchmarks/sandbox_overhead.py [NOTEBOOK ...] [--repeats N]

Without notebooks it times the demo class's noughts_and_crosses notebooks (built into a scratch folder). Test
cells run in the kernel here (no checker): the figure is the cost of bubblewrap and the limits alone.
"""
import argparse
import os
import pathlib
import shutil
import sys
import tempfile
import time

import nbformat

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from coursetools.instructor import democlass
from coursetools.sandbox.host import bubblewrap as sandbox  # noqa: E402
from coursetools.grading.execute import SandboxedExecute  # noqa: E402


def seconds_to_run(notebook, sandboxed, repeats):
    """Best of `repeats` wall times for executing a throw-away copy of the notebook's folder."""
    notebook = pathlib.Path(notebook)
    best = float('inf')
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix='sandbox-bench-') as tmp:
            work = pathlib.Path(shutil.copytree(notebook.parent, pathlib.Path(tmp) / notebook.parent.name))
            nb = nbformat.read(work / notebook.name, as_version=4)
            start = time.perf_counter()
            SandboxedExecute(sandbox=sandboxed).preprocess(nb, {'metadata': {'path': str(work)}})
            best = min(best, time.perf_counter() - start)
    return best


def demo_notebooks(scratch):
    shutil.copytree(ROOT / 'release', scratch / 'release')
    shutil.copytree(ROOT / 'demo_class', scratch / 'demo_class')
    return [folder / 'noughts_and_crosses.ipynb' for folder in democlass.build_class(scratch)
            if folder.name == 'noughts_and_crosses']


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('notebooks', nargs='*')
    parser.add_argument('--repeats', type=int, default=1)
    args = parser.parse_args()
    os.environ.pop(sandbox.UNSANDBOXED_ENV, None)
    with tempfile.TemporaryDirectory(prefix='sandbox-bench-class-') as scratch:
        notebooks = args.notebooks or demo_notebooks(pathlib.Path(scratch))
        plain = boxed = 0.0
        for notebook in notebooks:
            unsandboxed = seconds_to_run(notebook, False, args.repeats)
            sandboxed = seconds_to_run(notebook, True, args.repeats)
            plain, boxed = plain + unsandboxed, boxed + sandboxed
            print(f'{pathlib.Path(notebook).parent.parent.name:12s} unsandboxed {unsandboxed:5.2f} s  '
                  f'sandboxed {sandboxed:5.2f} s  overhead {sandboxed - unsandboxed:+.2f} s')
    n = len(notebooks)
    print(f'{n} notebooks: unsandboxed {plain:.1f} s, sandboxed {boxed:.1f} s, ratio {boxed / plain:.2f}, '
          f'overhead per notebook {(boxed - plain) / n:+.2f} s')


if __name__ == '__main__':
    main()
