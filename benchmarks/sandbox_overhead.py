"""Time one notebook sandboxed vs unsandboxed:  python benchmarks/sandbox_overhead.py NB [REPEATS]"""
import sys

from coursetools.execute import measure_overhead

if __name__ == "__main__":
    nb = sys.argv[1] if len(sys.argv) > 1 else "grader_tests/fixtures/execute/student_ok.ipynb"
    measure_overhead(nb, int(sys.argv[2]) if len(sys.argv) > 2 else 3)
