"""Time notebooks sandboxed vs unsandboxed, each in a fresh kernel.

    python benchmarks/sandbox_overhead.py [NOTEBOOK ...] [--repeats N]

Without notebooks it measures the whole demo class (submitted/*/noughts_and_crosses/*.ipynb) and prints the
per-notebook overhead and the class totals.
"""
import argparse
import glob
import io
import contextlib
import pathlib

from coursetools.execute import measure_overhead

ROOT = pathlib.Path(__file__).resolve().parent.parent

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument('notebooks', nargs='*')
    parser.add_argument('--repeats', type=int, default=1)
    args = parser.parse_args()
    notebooks = args.notebooks or sorted(glob.glob(str(ROOT / 'submitted/*/noughts_and_crosses/*.ipynb')))
    plain = boxed = 0.0
    for notebook in notebooks:
        with contextlib.redirect_stdout(io.StringIO()):
            result = measure_overhead(notebook, args.repeats)
        plain += result['unsandboxed_s']
        boxed += result['sandboxed_s']
        print(f"{pathlib.Path(notebook).parent.parent.name:12s} unsandboxed {result['unsandboxed_s']:5.2f} s  "
              f"sandboxed {result['sandboxed_s']:5.2f} s  overhead {result['overhead_s']:+.2f} s")
    n = len(notebooks)
    print(f'{n} notebooks: unsandboxed {plain:.1f} s, sandboxed {boxed:.1f} s, ratio {boxed / plain:.2f}, '
          f'overhead per notebook {(boxed - plain) / n:+.2f} s')
