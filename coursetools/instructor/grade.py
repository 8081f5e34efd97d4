"""`make grade`: release, autograde, feedback and export for every assignment that has submissions, then a table
of marks per task, the reports, and how long each phase took.

    python -m coursetools.instructor.grade [ASSIGNMENT ...] [--course DIR] [--sequential] [--scheduler ADDR] [--workers N]
                                [--db URL] [--student ID ...] [--force]
                                [--SomeNbgraderClass.setting=value ...]

The course is the current folder (or --course). Release, feedback and export are nbgrader's own commands, as an
instructor would type them there (run in this process, feedback spread over the cores: `coursetools.instructor.commands`);
autograde runs nbgrader's own steps with the notebooks executed in parallel
(`coursetools.grading.run`), or, with --sequential, plain `nbgrader autograde`. Either way the test cells are judged
by the trusted checker (`coursetools.judge.checker`).
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import signal
import sys
import time

from coursetools.instructor import commands, democlass, late, marks, preflight, roster, unchanged
from coursetools.instructor.engine import forget_unwritten, grade_assignment  # noqa: F401 (forget_unwritten: as before)
from coursetools.grading import cluster
from coursetools.sandbox.host import bubblewrap as sandbox
from coursetools.sandbox.host.files import remove_tree
from coursetools.grading.course import STUDENT_ID_RULE, Course
from coursetools.grading.run import NoWorkerCanGrade
from coursetools.grading.progress import Phases, printable, printable_lines


def check_sandbox():
    """Refuse to grade unsandboxed by accident: say why the sandbox cannot start and how to proceed."""
    if sandbox.unsandboxed_requested():
        print(f'WARNING: grading WITHOUT the sandbox ({sandbox.UNSANDBOXED_ENV} is set): student code runs with '
              'your rights.', flush=True)
        return
    reason = sandbox.probe()
    if reason:
        raise SystemExit(
            f'Cannot grade: the grading sandbox does not start on this machine.\n  {reason}\n'
            'Fix that (see docs/sandbox.md), or, only if you trust every submission, grade without the sandbox:\n'
            f'  {sandbox.UNSANDBOXED_ENV}=1 make grade')


def check_environment(course):
    foreign = course.foreign_package()
    if foreign is not None:
        raise SystemExit(f'This Python environment runs the course package of {foreign}, not of {course.root}. '
                         f'Grade with that folder\'s own environment: run `make grade` in {course.root}.')


def export(course, db=None):
    """grades.csv, written whole or not at all."""
    partial = course.root / 'grades.csv.partial'
    commands.run(course, 'export', '--to', str(partial), db=db)
    os.replace(partial, course.root / 'grades.csv')


def busy(run):
    """How busy the workers were: the share of their time spent executing notebooks."""
    if run is None or not run.timings or not run.workers or not run.wall:
        return None
    return sum(t.get('execute', 0.0) for t in run.timings) / (run.workers * run.wall)


def helper_count(course, assignments):
    """How many feedback helpers the largest class of these assignments can use: one per share
    (`commands.share_count`), at most one per core; this process meanwhile compares the submissions."""
    largest = max((len(course.students(a)) for a in assignments), default=0)
    return commands.share_count(largest, os.cpu_count() or 1) if largest else 0


def grade_each(course, selection, phases, helpers, reports, db, options, sequential, settings):
    """Release, autograde and feedback of each assignment of `selection` ({assignment: its students to grade, or
    None for all}), each by the engine (`engine.grade_assignment`); {assignment: autograde run report}."""
    runs = {}
    for assignment, students in selection.items():
        runs[assignment], _ = grade_assignment(course, assignment, students, phases, helpers=helpers,
                                               reports=reports, db=db, options=options, sequential=sequential,
                                               **settings)
    return runs


def write_remarked(course, remarked, phases, helpers, reports, db):
    """New feedback and reports for the submissions of `remarked` ({assignment: students}, `to_remark`)."""
    for assignment, students in remarked.items():
        with phases.start(f'{assignment}: feedback'):
            print(f'== {assignment}: feedback (marks given by hand)', flush=True)
            late.take_again(course.root, assignment, students, db or course.db_url)
            with commands.Feedback(course, assignment, len(students), db=db, forked=helpers) as feedback:
                feedback.run(students)
            unchanged.remember(course, assignment, students, db=db, files=False)
        if assignment not in reports:       # the submissions did not change: nor did their similarity
            reports[assignment] = (commands.Report(course, assignment, db or course.db_url, helpers), None)


def grade(course, assignment_ids=None, db=None, options=(), sequential=False, students=None, force=False,
          **settings):
    """Grade every submission of each assignment that has any; `db` is a gradebook URL (default: gradebook.db in
    the course); `options` are extra nbgrader settings for autograde, e.g. --SandboxedExecute.timeout=30.
    Returns ({assignment: autograde run report}, {phase: seconds})."""
    check_environment(course)
    check_sandbox()
    if not democlass.has_submissions(course.root) and (course.root / 'demo_class').is_dir():
        built = democlass.build_class(course.root)
        print(f'submitted/ is empty: built the demo class there ({len({f.parent.name for f in built})} made-up '
              'students, from demo_class/), to show what grading does.', flush=True)
    wanted = assignment_ids or course.assignments()
    unknown = [a for a in wanted if a not in course.assignments()]
    if unknown:
        raise SystemExit(f'No such assignment in source/: {", ".join(unknown)} '
                         f'(there are: {", ".join(course.assignments())})')
    if students is not None:
        missing = [s for s in students if not any(s in course.students(a) for a in wanted)]
        if missing:
            raise SystemExit(f'No submission from {", ".join(missing)} in {course.submitted} for '
                             f'{", ".join(wanted)}.')
    shown = [a for a in wanted if any(students is None or s in students for s in course.students(a))]
    selection = unchanged.to_grade(course, shown, students, force, db, options)
    remarked = unchanged.to_remark(course, shown, selection, db)
    graded = list(selection)
    for assignment, folder in ((a, name) for a in wanted for name in course.not_students(a)):
        print(f'submitted/{folder!r}/{assignment} is not graded: {STUDENT_ID_RULE} (they stop nbgrader, or act in '
              'formgrader). Rename the folder to the student\'s id.')
    empty = [a for a in wanted if not course.students(a)]
    if empty:
        print(f'No submissions yet for {", ".join(empty)} in {course.submitted}: not graded.', flush=True)
    phases = Phases()
    # helpers for feedback and the reports, forked now (before any thread starts): no start-up of their own
    spare = bool(graded) and (os.cpu_count() or 1) > 1
    helpers = commands.ForkedHelpers.fork(helper_count(course, graded), spare=spare)
    forked = len(helpers.all) if helpers else 0
    reports = {}
    try:
        runs = grade_each(course, selection, phases, helpers, reports, db, options, sequential, settings)
        write_remarked(course, remarked, phases, helpers, reports, db)
        if graded or remarked:
            with phases.start('export'):
                export(course, db=db)
                lms_line = roster.exported_line(*roster.export(course.root, course.assignments(), db or course.db_url))
        for assignment in shown:
            print(f'\n{assignment}')
            print(marks.marks_table(db or course.db_url, assignment))
            if assignment in reports:
                with phases.start('reports'):
                    print(f'Report: {reports[assignment][0].path()}')
                if reports[assignment][1]:
                    print(printable_lines(reports[assignment][1]))
    finally:
        if helpers is not None:
            helpers.close()
    if graded or remarked:
        print(f'\nGrades: {course.root / "grades.csv"}; feedback: {course.root / "feedback"}')
        print(printable_lines(lms_line))
    print('\nTime taken:')
    print('\n'.join(phases.lines()))
    if forked:
        print(f'  feedback and reports: this process and {forked} helper{"s" * (forked > 1)} forked from it')
    for assignment, run in runs.items():
        share = busy(run)
        if share is not None:
            print(f'  {assignment}: {unchanged.counted(len(run.graded), "notebook")} on '
                  f'{unchanged.counted(run.workers, "worker")}, '
                  f'busy {share:.0%} of the autograde phase')
    return runs, phases


def grader_faults(runs):
    """'assignment: students; ...' not graded because of the grader (its workers, its errors, a notebook over its
    bound), not because of their work (an unreadable notebook: a page says why); '' if none."""
    return '; '.join(f'{a}: {", ".join(sorted(set(r.unfinished + r.grader_faults)))}' for a, r in runs.items()
                     if r and r.unfinished + r.grader_faults)


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m coursetools.instructor.grade', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('assignment', nargs='*', help='assignment ids (default: every assignment in source/)')
    parser.add_argument('--course', help='the course folder (default: the current folder)')
    parser.add_argument('--scheduler', help='address of an existing Dask scheduler, e.g. tcp://host:8786 '
                        '(default: c.Grading.scheduler, else a LocalCluster on this machine)')
    parser.add_argument('--scheduler-timeout', type=float, help='seconds to wait for --scheduler before giving up '
                        '(default: c.Grading.scheduler_timeout, 30)')
    parser.add_argument('--workers', type=int, help='notebooks at once on the LocalCluster (default: cores + 2)')
    parser.add_argument('--sequential', action='store_true',
                        help='grade one notebook at a time with plain `nbgrader autograde` instead of Dask')
    parser.add_argument('--student', action='append', dest='students', metavar='ID',
                        help='grade only this student (again: more students); the others keep their marks, and '
                        'grades.csv and the report cover everyone')
    parser.add_argument('--force', action='store_true', help='grade every submission again, also those unchanged '
                        'since they were last graded')
    parser.add_argument('--db', help='gradebook URL, e.g. postgresql://user@host/course (default: gradebook.db)')
    parser.add_argument('--no-progress', action='store_true', help='status lines only, no progress bar')
    parser.add_argument('--json', metavar='FILE', help='write each run\'s report (notes, timings) to FILE')
    args, options = commands.parse_with_nbgrader_settings(parser, argv)
    course = Course.at(args.course)
    os.chdir(course.root)       # nbgrader reads nbgrader_config.py from the current folder
    started = time.perf_counter()
    settings = {key: value for key, value in (('scheduler', args.scheduler), ('workers', args.workers))
                if value is not None}
    if not args.sequential:
        settings['progress'] = not args.no_progress
    if args.scheduler_timeout is not None:
        options = list(options) + [f'--Grading.scheduler_timeout={args.scheduler_timeout}']
    preflight.check_temporary_folder()
    preflight.hold_the_course(course)
    run_folder = preflight.take_a_run_folder()
    commands.stop_on_ctrl_c_and_kill()                             # `kill`, a job scheduler's stop: as Ctrl-C
    try:
        runs, phases = grade(course, args.assignment, db=args.db, options=options, sequential=args.sequential,
                             students=args.students, force=args.force, **settings)
    except (cluster.SchedulerUnreachable, NoWorkerCanGrade) as error:
        raise SystemExit(f'Cannot grade: {error}') from None
    except KeyboardInterrupt:
        for signum in (signal.SIGINT, signal.SIGTERM):      # a second Ctrl-C or `kill` cannot cut the exit short
            signal.signal(signum, signal.SIG_IGN)
        print('\nInterrupted. The notebooks graded before it are in the gradebook; nothing of the others is. '
              '`make grade` again grades the rest (then feedback, grades.csv and the reports).', file=sys.stderr)
        raise SystemExit(130) from None
    finally:
        remove_tree(run_folder)
    if args.json:       # the peak memory is this process's own, not its workers' or kernels'
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        with open(args.json, 'w') as f:
            json.dump({a: {'notes': r.notes, 'failed': r.failed, 'graded': r.graded, 'wall': r.wall,
                           'workers': r.workers, 'main': r.main, 'timings': r.timings} if r else None
                       for a, r in runs.items()} | {'total_wall': time.perf_counter() - started, 'phases': phases.seconds,
                                                    'peak_memory_mb': peak, 'memory_after_phase_mb': phases.memory_mb},
                      f, indent=1, default=str)
    faults = grader_faults(runs)
    if faults:          # only now: everything the others' grading writes is written
        print(printable(f'Not graded because of the grader, not of their work (their notes say why; `make grade` '
                        f'grades them again): {faults}'), file=sys.stderr)
        raise SystemExit(3)     # not 1 (cannot grade at all): the others are graded


if __name__ == '__main__':
    gc.freeze()         # what the imports made is not garbage: the collector need not look at it again
    try:
        main()
    finally:
        gc.freeze()     # the interpreter's collections at exit skip the heap too: about a second of one core less
