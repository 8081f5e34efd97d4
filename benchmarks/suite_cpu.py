"""The test suite's floor: the CPU each module of `make test`'s parallel part costs, and so the least time that
part can take on this machine's cores, however its modules are spread.

It runs the parallel part's modules one after another in one pytest process and reads the machine's busy CPU
(/proc/stat) around each module: every process a module starts (kernels, servers, browsers) is counted. Run it
on an otherwise idle machine; it takes about twelve minutes on 2 cores.

    .venv/bin/python benchmarks/suite_cpu.py [pytest arguments, e.g. grader_tests/test_trust.py]
"""
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = 'SUITE_CPU_RESULTS'           # the file the plugin appends "cpu wall module" lines to


def busy_cpu():
    """CPU seconds the whole machine has been busy (kernels in their sandboxes included), from /proc/stat: all
    but idle and waiting for the disk. The grading benchmark reads it too."""
    with open('/proc/stat') as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf('SC_CLK_TCK')


class _Module:
    module, cpu, wall = None, 0.0, 0.0


def _close_module():
    if _Module.module is not None:
        with open(os.environ[RESULTS], 'a') as f:
            f.write(f'{busy_cpu() - _Module.cpu:.1f} {time.time() - _Module.wall:.1f} {_Module.module}\n')


def pytest_runtest_protocol(item, nextitem):
    """As pytest loaded this file as a plugin: a new module starts its count (fixtures included)."""
    module = item.nodeid.split('::')[0]
    if module != _Module.module:
        _close_module()
        _Module.module, _Module.cpu, _Module.wall = module, busy_cpu(), time.time()


def pytest_sessionfinish(session):
    _close_module()


def main():
    results = ROOT / '.benchmarks' / 'suite_cpu.txt'
    results.parent.mkdir(exist_ok=True)
    results.write_text('')
    env = dict(os.environ, PYTHONPATH=str(ROOT / 'benchmarks'), **{RESULTS: str(results)})
    started = time.time()
    run = subprocess.run([sys.executable, '-m', 'pytest', '-p', 'suite_cpu', '-p', 'no:cacheprovider', '-q',
                          '-m', 'not serial and not alone', *(sys.argv[1:] or ['grader_tests'])], cwd=ROOT, env=env)
    rows = sorted((line.split(' ', 2) for line in results.read_text().splitlines()), key=lambda r: -float(r[0]))
    total, cores = sum(float(cpu) for cpu, _, _ in rows), os.cpu_count()
    print(f'\n{"CPU-s":>8} {"wall s":>8}  module (one after another)')
    for cpu, wall, module in rows:
        print(f'{float(cpu):8.1f} {float(wall):8.1f}  {module}')
    print(f'{total:8.1f} {time.time() - started:8.1f}  in all; on {cores} cores no spread of these modules '
          f'takes less than {total / cores:.0f} s')
    sys.exit(run.returncode)


if __name__ == '__main__':
    main()
