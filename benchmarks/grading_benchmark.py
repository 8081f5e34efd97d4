"""`make grade` against plain nbgrader, on the same class, in one run, with the same steps on both sides.

The class is a varied one by default (`--class varied`): made-up students of benchmarks/varied_class/ (correct,
slow but correct, a RecursionError, typical mistakes, handed in half way) and blank notebooks (the release
untouched), cycled up to --students submissions with distinct ids. `--class demo` uses the bundled demo class
instead. Two identical copies of the course are graded, each as an instructor would from a fresh process:

    plain: nbgrader generate_assignment, autograde, generate_feedback, export   (in the course folder)
    ours:  python -m coursetools.instructor.grade <assignment>    (the same four steps, autograde in parallel, plus reports)

It prints the wall times (total and per phase) and their ratios (targets: autograde <= 1/3, the whole run
<= 0.4), whether the marks agree cell for cell, the machine's busy CPU (with --cpu-by-process, also by kind of
process: kernels, checkers, the grading process, ...), how busy the workers were, how long fewer notebooks ran
than there are cores (the tail), and what the trusted checker's calls into the kernels cost per notebook.

    .venv/bin/python benchmarks/grading_benchmark.py [--class varied|demo] [--students 40] [--repeat 1]
                                                     [--workers N] [--keep] [--no-floor] [--cpu-by-process]

Last, the floor (benchmarks/floor.py): the CPU the class's own code and the checks need, divided by the cores.
"""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import nbformat

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'grader_tests'))
from conftest import copy_course  # noqa: E402
from coursetools.instructor import democlass  # noqa: E402
import floor  # noqa: E402  (benchmarks/floor.py)
from classes import ASSIGNMENT, VARIED, students_of  # noqa: E402,F401  (benchmarks/classes.py)
from suite_cpu import busy_cpu  # noqa: E402  (benchmarks/suite_cpu.py)

def env():
    e = dict(os.environ)
    e['PATH'] = os.path.join(sys.prefix, 'bin') + os.pathsep + e.get('PATH', '')
    e.pop('COURSE_ROOT', None)
    return e


def build_class(dest, students):
    course = copy_course(dest, students=[])
    for student, notebook in students:
        folder = course / 'submitted' / student / ASSIGNMENT
        shutil.copytree(ROOT / 'release' / ASSIGNMENT, folder, ignore=shutil.ignore_patterns('*.ipynb', '__pycache__'))
        nbformat.write(notebook, folder / f'{ASSIGNMENT}.ipynb')
        (folder / 'timestamp.txt').write_text(democlass.TIMESTAMP + '\n')
    return course


class CpuByProcess:
    """The machine's busy CPU while a run goes on and, with `sample` (--cpu-by-process), the CPU seconds by kind
    of process: every process is read from /proc five times a second (which costs some CPU itself), and the busy
    CPU that no sampled process accounts for (the sampler, the system, the last moments of short processes)
    is 'the rest of the machine'."""

    KINDS = (('ipykernel', 'kernels'), ('coursetools.judge.checker', 'checkers'),
             ('coursetools.instructor.grade', 'grading process'),
             ('-m nbgrader', 'nbgrader processes'))

    def __init__(self, sample=False, within=None):
        """`within`: a pid; only it and its descendants are sampled (a test among others on the machine)."""
        self.sample, self.within = sample, within

    def __enter__(self):
        self.kinds, self.cpu, self.busy = {}, {}, busy_cpu()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        if self.sample:
            self.thread.start()
        return self

    def _sample(self):
        tick = os.sysconf('SC_CLK_TCK')
        live = {}                                       # pid -> kind, of the processes seen in this pass
        family = {str(self.within)}
        while True:
            seen, live, stats = live, {}, {}
            for pid in filter(str.isdigit, os.listdir('/proc')):
                try:
                    with open(f'/proc/{pid}/stat') as f:
                        stat = f.read()
                    stats[pid] = stat[stat.rindex(')') + 2:].split()
                except OSError:
                    continue
            if self.within is not None:
                while True:
                    more = {pid for pid, fields in stats.items() if fields[1] in family} - family
                    if not more:
                        break
                    family |= more
                stats = {pid: fields for pid, fields in stats.items() if pid in family}
            for pid, fields in stats.items():
                key = (pid, fields[19])                 # a pid with its start time: one process
                if self.kinds.get(key) is None:         # not known yet (an ended process has no command line)
                    try:
                        with open(f'/proc/{pid}/cmdline', 'rb') as f:
                            command = f.read().replace(b'\0', b' ').decode(errors='replace')
                    except OSError:
                        continue
                    parent = live.get(fields[1], seen.get(fields[1]))
                    self.kinds[key] = self.kind_of(command, parent)
                live[pid] = self.kinds[key]
                self.cpu[key] = (int(fields[11]) + int(fields[12])) / tick
            if self.done.wait(0.2):
                return

    @classmethod
    def kind_of(cls, command, parent_kind=None):
        """The kind of a process from its command line; `make grade`'s feedback helpers are forked from the
        grading process, so they have its command line and it as their parent."""
        kind = next((name for pattern, name in cls.KINDS if pattern in command), None)
        return 'feedback helpers' if kind == parent_kind == 'grading process' else kind

    def __exit__(self, *exc):
        self.done.set()
        if self.sample:
            self.thread.join()
        self.total = busy_cpu() - self.busy

    def by_kind(self):
        """{kind: CPU-s} of the processes that ran during the run, largest first."""
        found = {}
        for key, kind in self.kinds.items():
            if kind is not None:
                found[kind] = found.get(kind, 0.0) + self.cpu[key]
        found['rest of the machine'] = max(0.0, self.total - sum(found.values()))
        return dict(sorted(found.items(), key=lambda item: -item[1]))


def fewer_than_cores(timings, cores):
    """Seconds of the autograde phase's execution during which fewer notebooks ran than there are cores."""
    spans = sorted((t['started'], t['started'] + t['execute']) for t in timings if 'started' in t)
    if not spans:
        return 0.0
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    seconds, running, last = 0.0, 0, events[0][0]
    for moment, change in events:
        if running < cores:
            seconds += moment - last
        running, last = running + change, moment
    return seconds


def timed(command, course):
    started = time.perf_counter()
    result = subprocess.run(command, cwd=course, env=env(), capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stdout[-2000:] + result.stderr[-3000:])
        raise SystemExit(f'{" ".join(command[2:5])} failed')
    return time.perf_counter() - started


def run_plain(course, sample=False):
    nbgrader = [sys.executable, '-m', 'nbgrader']
    with CpuByProcess(sample) as cpu:
        phases = {'release': timed(nbgrader + ['generate_assignment', ASSIGNMENT, '--force'], course),
                  'autograde': timed(nbgrader + ['autograde', ASSIGNMENT, '--force'], course),
                  'feedback': timed(nbgrader + ['generate_feedback', ASSIGNMENT, '--force'], course),
                  'export': timed(nbgrader + ['export'], course)}
    return sum(phases.values()), phases, cpu


def run_ours(course, workers, sample=False):
    out = course / 'grade_report.json'
    command = [sys.executable, '-m', 'coursetools.instructor.grade', ASSIGNMENT, '--no-progress', '--json', str(out)]
    if workers:
        command += ['--workers', str(workers)]
    with CpuByProcess(sample) as cpu:
        wall = timed(command, course)
    report = json.loads(out.read_text())
    report.setdefault('phases', {})
    return wall, report, cpu


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
    parser.add_argument('--class', dest='kind', choices=('varied', 'demo'), default='varied')
    parser.add_argument('--students', type=int, default=40)
    parser.add_argument('--workers', type=int, default=0, help='notebooks at once (default: cores + 2)')
    parser.add_argument('--repeat', type=int, default=1, help='alternate plain and ours this many times')
    parser.add_argument('--keep', action='store_true', help='keep the temporary courses')
    parser.add_argument('--no-floor', action='store_true', help='skip measuring the floor (benchmarks/floor.py)')
    parser.add_argument('--cpu-by-process', action='store_true',
                        help='also print the CPU of kernels, checkers, the grading process ... (sampling costs CPU)')
    args = parser.parse_args()

    tmp = pathlib.Path(tempfile.mkdtemp(prefix='grading-bench-'))
    try:
        students = students_of(args.kind, args.students)
        print(f'a {args.kind} class of {len(students)} submissions, two copies, in {tmp}', flush=True)
        runs = []
        for r in range(args.repeat):
            plain_course = build_class(tmp / f'plain{r}', students)
            our_course = build_class(tmp / f'ours{r}', students)
            plain = run_plain(plain_course, args.cpu_by_process)
            print(f'run {r + 1}: plain nbgrader {plain[0]:6.1f} s  (autograde {plain[1]["autograde"]:.1f} s)',
                  flush=True)
            ours = run_ours(our_course, args.workers, args.cpu_by_process)
            grading = ours[1][ASSIGNMENT]
            print(f'run {r + 1}: make grade     {ours[0]:6.1f} s  (autograde {grading["wall"]:.1f} s, '
                  f'{grading["workers"]} workers)  ratio {ours[0] / plain[0]:.3f}, autograde '
                  f'{grading["wall"] / plain[1]["autograde"]:.3f}', flush=True)
            runs.append((plain, ours, marks(plain_course) == marks(our_course)))
        report(runs, len(students))
        if not args.no_floor:
            cpu, seconds = floor.floor(students)
            autograde = runs[-1][1][1][ASSIGNMENT]['wall']
            print(f'\nfloor (benchmarks/floor.py): the students\' code and the checks need {cpu:.1f} CPU-s, '
                  f'{seconds:.1f} s on {os.cpu_count()} cores; make grade\'s autograde took {autograde / seconds:.2f} '
                  f'times that, its whole run {runs[-1][1][0] / seconds:.2f} times')
    finally:
        if args.keep:
            print(f'\nkept {tmp}')
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def report(runs, n):
    cores = os.cpu_count()
    totals = [ours[0] / plain[0] for plain, ours, _ in runs]
    autogrades = [ours[1][ASSIGNMENT]['wall'] / plain[1]['autograde'] for plain, ours, _ in runs]
    print(f'\n{n} submissions, {cores} cores, load average now {os.getloadavg()[0]:.1f}')
    print(f'ratio make grade / plain nbgrader, whole run: {statistics.median(totals):.3f} '
          f'(per run: {", ".join(f"{x:.3f}" for x in totals)}; target <= 0.4)')
    print(f'ratio, autograde phase alone:              {statistics.median(autogrades):.3f} '
          f'(per run: {", ".join(f"{x:.3f}" for x in autogrades)}; target <= 0.333)')
    print(f'marks identical, cell for cell: {all(same for *_, same in runs)}')
    (plain_wall, phases, plain_cpu), (our_wall, our_report, our_cpu), _ = runs[-1]
    grading = our_report[ASSIGNMENT]
    print('\nphases of the last run (seconds): plain | ours')
    ours_phases = {name.split(': ')[-1]: seconds for name, seconds in our_report.get('phases', {}).items()}
    for name in ('release', 'autograde', 'feedback', 'export', 'reports'):
        mine = ours_phases.get(name)
        print(f'  {name:10} {phases[name] if name in phases else 0:7.1f} | {"" if mine is None else f"{mine:7.1f}"}')
    print(f'  {"total":10} {plain_wall:7.1f} | {our_wall:7.1f}  (ours also starts up once, stages repaired copies, '
          'prints the table)')
    print(f'busy CPU, whole machine: plain {plain_cpu.total:.1f} s ({plain_cpu.total / plain_wall / cores:.0%} of '
          f'{cores} cores), ours {our_cpu.total:.1f} s ({our_cpu.total / our_wall / cores:.0%})')
    for side, cpu in (('plain', plain_cpu), ('ours', our_cpu)) if our_cpu.sample else ():
        print(f'  {side:5} CPU-s by process: ' + ', '.join(f'{kind} {seconds:.1f}' for kind, seconds in
                                                            cpu.by_kind().items()))
    timings = grading['timings']

    def mean(key):
        values = [t[key] for t in timings if isinstance(t.get(key), (int, float))]
        return statistics.mean(values) if values else 0.0
    executing = sum(t.get('execute', 0) for t in timings)
    print(f'\nautograde, ours: {len(timings)} notebooks on {grading["workers"]} workers, busy '
          f'{executing / (grading["workers"] * grading["wall"]):.0%}; slowest notebook '
          f'{max((t.get("execute", 0) for t in timings), default=0):.1f} s; fewer notebooks running than cores for '
          f'{fewer_than_cores(timings, cores):.1f} s')
    print('  per notebook: kernel start {:.2f} s, student cells {:.2f} s, test cells {:.2f} s (of which waiting '
          'for the kernel\'s answers {:.2f} s), {:.0f} calls into the kernel'.format(
              mean('kernel_start'), mean('kernel_cells'), mean('test_cells'), mean('call_seconds'), mean('calls')))
    main_times = grading['main']
    print('  grading process: prepare {:.2f} s and finish {:.2f} s per notebook, {:.1f} CPU-s in all; cluster start '
          '{:.1f} s'.format(main_times.get('prepare', 0) / n, main_times.get('finish', 0) / n,
                            main_times.get('process_cpu', 0), main_times.get('cluster_start', 0)))


if __name__ == '__main__':
    main()
