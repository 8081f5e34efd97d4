"""Plain `nbgrader autograde` against `coursetools.parallel` on the same 40-submission class, in one run.

The class is the demo class (14 realistic submissions: correct, slow, buggy, untouched, noisy) replicated with
distinct ids (ada_01, ben_02, ...) up to --students submissions, in two identical temporary copies of the course
(one per method, each with its own gradebook). Both are timed as an instructor runs them, from a fresh process:

    plain:    python -m nbgrader autograde <a> --force
    parallel: python -m coursetools.parallel <a> [--workers N]

and the script prints both wall times, their ratio (target <= 0.33), whether the marks agree, and where the time
went per notebook (from nbgrader's timestamped log for the plain run, from the parallel report otherwise).

    .venv/bin/python benchmarks/grading_benchmark.py [--students 40] [--workers N] [--repeat 1] [--keep]
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'grader_tests'))
from conftest import copy_course  # noqa: E402

ASSIGNMENT = 'noughts_and_crosses'


def env():
    e = dict(os.environ)
    e['PATH'] = os.path.join(sys.prefix, 'bin') + os.pathsep + e.get('PATH', '')
    e.pop('COURSE_ROOT', None)
    return e


def build_class(dest, n):
    """A course copy whose submitted/ holds n submissions: the demo students, replicated with distinct ids."""
    course = copy_course(dest)
    demo = sorted(p.name for p in (course / 'submitted').iterdir())
    staging = course / 'submitted.demo'
    (course / 'submitted').rename(staging)
    (course / 'submitted').mkdir()
    for i in range(n):
        src = demo[i % len(demo)]
        shutil.copytree(staging / src, course / 'submitted' / f'{src}_{i + 1:02d}')
    shutil.rmtree(staging)
    subprocess.run([sys.executable, '-m', 'nbgrader', 'generate_assignment', ASSIGNMENT, '--force'],
                   cwd=course, env=env(), check=True, capture_output=True)
    return course


LOG_FORMAT = '%(asctime)s.%(msecs)03d [%(levelname)s] %(message)s'


def busy_cpu():
    """CPU seconds the whole machine has spent busy so far (all processes, kernels in their sandboxes
    included), from /proc/stat: sandboxed kernels are not always reaped by their parent, so rusage misses them."""
    with open('/proc/stat') as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf('SC_CLK_TCK')


def run_plain(course):
    """Wall time of plain nbgrader autograde, and a per-notebook breakdown from its timestamped log."""
    start = time.time()
    cpu0 = busy_cpu()
    t0 = time.perf_counter()
    result = subprocess.run([sys.executable, '-m', 'nbgrader', 'autograde', ASSIGNMENT, '--force',
                             f'--Application.log_format={LOG_FORMAT}',
                             '--Application.log_datefmt=%Y-%m-%d %H:%M:%S'],
                            cwd=course, env=env(), capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if result.returncode != 0:
        sys.stderr.write(result.stderr[-3000:])
        raise SystemExit('plain nbgrader autograde failed')
    breakdown = plain_breakdown(result.stderr, start)
    breakdown['cpu'] = busy_cpu() - cpu0
    return wall, breakdown


def plain_breakdown(log, start):
    """Per notebook: sanitize (Sanitizing -> Autograding), execute + save grades (Autograding -> Writing the
    autograded notebook), and per-student bookkeeping (the rest); start-up = launch -> first student."""
    events = []
    for line in log.splitlines():
        m = re.match(r'(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) \[\w+\] (.*)', line)
        if m:
            t = datetime.strptime(m.group(1), '%Y-%m-%d %H:%M:%S.%f').timestamp()
            events.append((t, m.group(2)))
    if not events:
        return {}
    first = next((t for t, msg in events if msg.startswith(('Removing existing', 'Copying', 'Creating/updating'))),
                 events[0][0])
    sanitize, autograde = [], []
    t_san = t_auto = None
    for t, msg in events:
        if msg.startswith('Sanitizing'):
            t_san = t
        elif msg.startswith('Autograding') and t_san is not None:
            sanitize.append(t - t_san)
            t_auto = t
        elif msg.startswith('Writing') and t_auto is not None:
            autograde.append(t - t_auto)
            t_auto = None
    end = events[-1][0]
    n = max(1, len(autograde))
    per_nb = (end - first) / n
    return {'startup': first - start, 'per_notebook': per_nb, 'sanitize': statistics.mean(sanitize or [0]),
            'execute_and_save': statistics.mean(autograde or [0]),
            'other': per_nb - statistics.mean(sanitize or [0]) - statistics.mean(autograde or [0]), 'n': n}


def run_parallel(course, workers):
    out = course / 'parallel_report.json'
    args = [sys.executable, '-m', 'coursetools.parallel', ASSIGNMENT, '--course', str(course), '--no-progress',
            '--json', str(out)]
    if workers:
        args += ['--workers', str(workers)]
    cpu0 = busy_cpu()
    t0 = time.perf_counter()
    result = subprocess.run(args, cwd=course, env=env(), capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if result.returncode != 0:
        sys.stderr.write(result.stderr[-3000:])
        raise SystemExit('parallel autograde failed')
    report = json.loads(out.read_text())
    report['cpu'] = busy_cpu() - cpu0
    return wall, report


def marks(course):
    from nbgrader.api import Gradebook
    got = {}
    with Gradebook('sqlite:///' + str(course / 'gradebook.db')) as gb:
        for sub in gb.find_assignment(ASSIGNMENT).submissions:
            for nb in sub.notebooks:
                for g in nb.grades:
                    got[(sub.student_id, nb.name, g.name)] = (g.auto_score, g.manual_score, g.needs_manual_grade)
    return got


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--students', type=int, default=40)
    parser.add_argument('--workers', type=int, default=0, help='notebooks at once (default: cores + 1)')
    parser.add_argument('--repeat', type=int, default=1, help='alternate plain/parallel this many times')
    parser.add_argument('--keep', action='store_true', help='keep the temporary courses')
    args = parser.parse_args()

    tmp = pathlib.Path(tempfile.mkdtemp(prefix='grading-bench-'))
    try:
        print(f'building a {args.students}-submission class (two copies) in {tmp} ...', flush=True)
        plain_course = build_class(tmp / 'plain', args.students)
        par_course = build_class(tmp / 'parallel', args.students)
        plains, pars, reports, breakdowns = [], [], [], []
        for r in range(args.repeat):
            w, b = run_plain(plain_course)
            plains.append(w)
            breakdowns.append(b)
            print(f'run {r + 1}: plain nbgrader autograde: {w:6.1f} s', flush=True)
            w, rep = run_parallel(par_course, args.workers)
            pars.append(w)
            reports.append(rep)
            print(f'run {r + 1}: coursetools.parallel:     {w:6.1f} s  ({rep["workers"]} workers)  '
                  f'ratio {w / plains[-1]:.2f}', flush=True)

        same = marks(plain_course) == marks(par_course)
        n = args.students
        print()
        print(f'{n} submissions, {os.cpu_count()} cores, load average now {os.getloadavg()[0]:.1f}')
        print(f'plain nbgrader autograde: {min(plains):6.1f} s (range {min(plains):.1f}-{max(plains):.1f}), '
              f'{min(plains) / n:.2f} s per notebook')
        print(f'coursetools.parallel:     {min(pars):6.1f} s (range {min(pars):.1f}-{max(pars):.1f}), '
              f'{min(pars) / n:.2f} s per notebook')
        ratios = [p / q for p, q in zip(pars, plains)]
        print(f'ratio parallel/plain:     {statistics.median(ratios):.3f} '
              f'(per run: {", ".join(f"{x:.3f}" for x in ratios)}; target <= 0.333)')
        print(f'marks identical, cell for cell: {same}')
        print(f'busy CPU seconds, whole machine (kernels included): plain {breakdowns[-1]["cpu"]:.1f} '
              f'({breakdowns[-1]["cpu"] / plains[-1] / os.cpu_count():.0%} of {os.cpu_count()} cores), '
              f'parallel {reports[-1]["cpu"]:.1f} ({reports[-1]["cpu"] / pars[-1] / os.cpu_count():.0%})')

        b = breakdowns[-1]
        print('\nwhere the time goes, plain (per notebook, from nbgrader\'s log):')
        print(f'  start-up (interpreter, imports, config, gradebook) once: {b.get("startup", 0):.2f} s')
        print(f'  sanitize (read, 5 preprocessors, gradebook reads, write):  {b.get("sanitize", 0):.2f} s')
        print(f'  execute (kernel start + cells + shutdown) and save grades: {b.get("execute_and_save", 0):.2f} s')
        print(f'  per-student bookkeeping (student/submission rows, files):  {b.get("other", 0):.2f} s')
        print(f'  total per notebook:                                       {b.get("per_notebook", 0):.2f} s')

        rep = reports[-1]
        mt, tm = rep['main_timing'], rep['timings']

        def mean(key):
            vals = [t[key] for t in tm if isinstance(t.get(key), (int, float))]
            return statistics.mean(vals) if vals else 0.0
        gb_write = mt.get('pp:SaveAutoGradesIgnoringStderr', 0) + mt.get('pp:AssignLatePenalties', 0)
        ready = sum(1 for t in tm if t.get('kernel_was_ready'))
        forked = sum(1 for t in tm if t.get('kernel_forked'))
        print('\nwhere the time goes, parallel (per notebook unless said otherwise):')
        print(f'  interpreter start + imports (process wall - report wall) once: {pars[-1] - rep["wall"]:.2f} s')
        print(f'  nbgrader config/app start-up once:                {mt.get("nbgrader_startup", 0):.2f} s')
        print(f'  Dask LocalCluster start (overlaps sanitizing) once: {mt.get("cluster_start", 0):.2f} s')
        print('  calling process (one after another):')
        print(f'    student/submission rows + files (init_assignment): {mt.get("init_assignment", 0) / n:.3f} s')
        print(f'    sanitize:                                         {mt.get("sanitize", 0) / n:.3f} s')
        print(f'    gradebook write (SaveAutoGrades + late penalty):  {gb_write / n:.3f} s')
        print(f'    other post-execution preprocessors + write:      '
              f'{(mt.get("finish", 0) - gb_write) / n:.3f} s')
        print(f'    CPU of the grading process (this and the worker threads, not kernels), whole run: '
              f'{mt.get("main_process_cpu", 0):.1f} s')
        print(f'  workers ({rep["workers"]} notebooks at once):')
        if forked:
            print(f'    kernel start (forked from a warm fork server):    {mean("kernel_start"):.2f} s '
                  f'({forked}/{len(tm)} kernels forked)')
        else:
            print(f'    kernel start (started ahead, overlapped):         {mean("kernel_start"):.2f} s '
                  f'({ready}/{len(tm)} kernels were ready when their notebook arrived)')
        print(f'    waiting for a kernel:                             {mean("kernel_wait"):.2f} s')
        print(f'    execution of the cells:                           {mean("execute"):.2f} s')
        print(f'    whole task on the worker:                         {mean("worker_total"):.2f} s')
        if not same:
            raise SystemExit('MARKS DIFFER between the plain and the parallel run')
    finally:
        if args.keep:
            print(f'\nkept {tmp}')
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
