"""The CPU one sandboxed grading kernel costs, from start to end, as built and with each saving undone.

Every process of the run is counted, the kernels in their sandboxes included: the script moves itself into a
cgroup of its own (cgroup v1 `cpuacct` or v2 `cpu.stat`) and reads the cgroup's CPU around each batch, so other
work on the machine does not enter the figures (it still slows them). Each batch runs a two-cell notebook
`--notebooks` times in a new kernel each time; the variants take turns, batch by batch, in one process:

    as built:          the course's kernel command and shutdown
    with debugpy:      ipykernel imports debugpy for its debugger, as a plain kernel does
    graceful shutdown: the kernel is asked to shut down and waited for, instead of killed with its sandbox
    both (as before):  the kernel as it was before issue 42's second round
    forked:            as built, but forked from a warm zygote into its sandbox (`make grade`'s kernels as root)

    .venv/bin/python benchmarks/kernel_start_benchmark.py [--rounds 6] [--notebooks 5]    (as root: bwrap, cgroups)
"""
import argparse
import os
import pathlib
import statistics
import sys
import tempfile

from nbformat.v4 import new_code_cell, new_notebook

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from coursetools.grading import kernels  # noqa: E402
from coursetools.grading.execute import SandboxedExecute  # noqa: E402

AS_BUILT = kernels.kernel_command
SKIP_DEBUGPY = "sys.modules['debugpy'] = None\nimport ipykernel.debugger\ndel sys.modules['debugpy']\n"


def with_debugpy(cmd):
    command = AS_BUILT(cmd)
    assert SKIP_DEBUGPY in command[2], 'the kernel command no longer skips debugpy: update this benchmark'
    return [*command[:2], command[2].replace(SKIP_DEBUGPY, ''), *command[3:]]


VARIANTS = {'as built': (AS_BUILT, {}),
            'with debugpy': (with_debugpy, {}),
            'graceful shutdown': (AS_BUILT, {'shutdown_kernel': 'graceful'}),
            'both (as before)': (with_debugpy, {'shutdown_kernel': 'graceful'}),
            'forked': (AS_BUILT, {'kernel_source': kernels.ForkedKernels()})}


class CgroupCpu:
    """CPU seconds of this process and everything it starts, from a cgroup made for it."""

    def __init__(self):
        name = f'kernel-start-benchmark-{os.getpid()}'
        v1, v2 = pathlib.Path('/sys/fs/cgroup/cpuacct'), pathlib.Path('/sys/fs/cgroup')
        if (v1 / 'cpuacct.usage').exists():
            self.folder, self.read = v1 / name, self._v1
        elif (v2 / 'cgroup.controllers').exists():
            self.folder, self.read = v2 / name, self._v2
        else:
            sys.exit('kernel_start_benchmark: no cgroup cpuacct (v1) or cpu.stat (v2) found')
        self.folder.mkdir()
        (self.folder / 'cgroup.procs').write_text(str(os.getpid()))

    def close(self):
        (self.folder.parent / 'cgroup.procs').write_text(str(os.getpid()))
        self.folder.rmdir()

    def _v1(self):
        return int((self.folder / 'cpuacct.usage').read_text()) / 1e9

    def _v2(self):
        usage = dict(line.split() for line in (self.folder / 'cpu.stat').read_text().splitlines())
        return int(usage['usage_usec']) / 1e6


def run_notebook(folder, traits):
    notebook = new_notebook(cells=[new_code_cell('x = 41'), new_code_cell('print(x + 1)')])
    SandboxedExecute(**traits).preprocess(notebook, {'metadata': {'path': folder}})
    assert notebook.cells[1].outputs[0]['text'] == '42\n', notebook.cells[1].outputs


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--rounds', type=int, default=6)
    parser.add_argument('--notebooks', type=int, default=5, help='notebooks per batch')
    args = parser.parse_args()
    cpu = CgroupCpu()
    VARIANTS['forked'][1]['kernel_source'].warm_up()     # the zygote's start, counted nowhere
    folder = tempfile.mkdtemp(prefix='kernel-start-')
    run_notebook(folder, {})                     # imports and the sandbox's first start, counted nowhere
    per_kernel = {name: [] for name in VARIANTS}
    for _ in range(args.rounds):
        for name, (command, traits) in VARIANTS.items():
            kernels.kernel_command = command
            before = cpu.read()
            for _ in range(args.notebooks):
                run_notebook(folder, traits)
            per_kernel[name].append((cpu.read() - before) / args.notebooks)
    kernels.kernel_command = AS_BUILT
    VARIANTS['forked'][1]['kernel_source'].zygote.close()
    cpu.close()
    base = statistics.median(per_kernel['as built'])
    print(f'CPU-s per sandboxed kernel (median of {args.rounds} batches of {args.notebooks}), '
          f'on {os.cpu_count()} cores:')
    for name, figures in per_kernel.items():
        middle = statistics.median(figures)
        print(f'  {name:18} {middle:.3f}  (x{middle / base:.2f} of as built)  batches: '
              + ' '.join(f'{x:.3f}' for x in figures))


if __name__ == '__main__':
    main()
