"""The classes the benchmarks grade: the demo class, or the varied class of benchmarks/varied_class/, scaled to
any number of submissions. Used by grading_benchmark.py and floor.py (which import nothing of each other's)."""
import pathlib
import sys

import nbformat

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from coursetools.instructor import democlass  # noqa: E402

ASSIGNMENT = 'noughts_and_crosses'
# How many of each kind a varied class of 40 has (scaled to --students): blank notebooks are the release untouched.
VARIED = {'blank': 6, 'halfdone': 5, 'recursion': 2, 'slowpoke': 3, 'memo': 6, 'flipsign': 5, 'firstmove': 5,
          'nocolumns': 8}


def students_of(kind, n):
    """[(student id, notebook)] for a class of n submissions."""
    release = nbformat.read(ROOT / 'release' / ASSIGNMENT / f'{ASSIGNMENT}.ipynb', as_version=4)
    if kind == 'demo':
        files = sorted((ROOT / 'demo_class' / ASSIGNMENT).glob('*.py'))
        pool = [(f.stem, democlass.fill(release, *democlass.read_answers(f))) for f in files]
    else:
        folder = ROOT / 'benchmarks' / 'varied_class' / ASSIGNMENT
        pool = []
        for name, count in VARIED.items():
            notebook = release if name == 'blank' else democlass.fill(
                release, *democlass.read_answers(folder / f'{name}.py'))
            pool += [(name, notebook)] * count
    picked = [pool[(i * len(pool)) // n if n <= len(pool) else i % len(pool)] for i in range(n)]
    return [(f'{name}_{i + 1:02d}', notebook) for i, (name, notebook) in enumerate(picked)]
