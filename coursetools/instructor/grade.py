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
import contextlib
import json
import os
import re
import resource
import shutil
import signal
import sys
import time

from coursetools.instructor import commands, democlass, late, marks, preflight, repair, roster, unchanged
from coursetools.grading import cluster
from coursetools.sandbox.host import bubblewrap as sandbox
from coursetools.sandbox.host.files import remove_tree
from coursetools.grading.course import STUDENT_ID_RULE, Course
from coursetools.grading.run import NoWorkerCanGrade, RunReport
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


def start_workers(course, assignment, db=None, options=(), sequential=False, students=None, **settings):
    """The autograde run of `assignment`, its workers starting now (`grading.start`), or None with
    `sequential`. `settings`: those of `grading.start`."""
    if sequential:
        return None
    from coursetools.grading import run as grading
    notebooks = len(students if students is not None else course.students(assignment))
    return grading.start(assignment, db_url=db, submitted_dir=course.staging, options=options, students=students,
                         notebooks=notebooks, **settings)


def autograde(course, assignment, db=None, options=(), sequential=False, started=None, on_tail=None, students=None):
    """Stage repaired copies of the submissions (only `students`', if given), then autograde them (in `started`,
    the run from `start_workers`, unless `sequential`); returns ({student: notes}, run report)."""
    notes = repair.stage(course.root, assignment, course.staging, students)
    for student, student_notes in notes.items():
        for note in student_notes:
            print(printable(f'   {student}: {note}'), flush=True)
    if sequential:
        only = [] if students is None else ['--CourseDirectory.student_id_exclude=' + ','.join(
            s for s in course.students(assignment) if s not in students)]
        run = RunReport(grader_faults=sequential_autograde(course, assignment, notes, db, list(options) + only))
        for student, found in static_notes(course, assignment, db).items():
            notes[student] = list(dict.fromkeys(notes.get(student, []) + found))
            print(printable(f'   {student}: {"; ".join(found)}'), flush=True)
    else:
        run = started.run(notes=notes, on_tail=on_tail)
        for student, student_notes in run.notes.items():
            notes[student] = list(dict.fromkeys(notes.get(student, []) + student_notes))
    ungraded = [s for s in notes if not list((course.staging / s / assignment).glob('*.ipynb'))]
    marks.record_zero(db or course.db_url, assignment, ungraded, course.staging)
    for student in ungraded:        # a 0 now: nothing of an earlier grading stays beside it
        shutil.rmtree(course.autograded / student / assignment, ignore_errors=True)
    return notes, run


def sequential_autograde(course, assignment, notes, db, options):
    staging = os.path.relpath(course.staging, course.root)
    try:
        result = commands.run_separately(course, 'autograde', assignment, '--force',
                                         f'--CourseDirectory.submitted_directory={staging}', *options, db=db,
                                         check=False)
    except KeyboardInterrupt:
        forget_unwritten(course, assignment, db)
        raise
    if result.returncode != 0:
        # nbgrader carries on past a student it cannot grade and fails at the end: say who, and carry on too.
        failed = sorted(set(re.findall(r"for student '([^']+)'", result.stdout + result.stderr)))
        for student in failed:
            notes.setdefault(student, []).append('nbgrader could not grade this submission (see autograde.log)')
            print(printable(f'   {student}: nbgrader could not grade this submission'), flush=True)
        (course.root / 'autograde.log').write_text(result.stdout + result.stderr)
        if not failed:
            sys.stderr.write(result.stdout + result.stderr)
            raise SystemExit(f'nbgrader autograde {assignment} failed; its log is above.')
        return failed           # the grader's fault: they were staged as gradable
    return []


def forget_unwritten(course, assignment, db):
    """After an interrupted `nbgrader autograde`: it removed the autograded notebook of the student under way, not
    the marks it had saved; remove those too, so that no mark stays without its notebook."""
    from nbgrader.api import Gradebook, MissingEntry
    with Gradebook(db or course.db_url) as gradebook:
        for folder in course.staging.glob(f'*/{assignment}'):
            student = folder.parent.name
            if not list((course.root / 'autograded' / student / assignment).glob('*.ipynb')):
                with contextlib.suppress(MissingEntry):
                    gradebook.remove_submission(assignment, student)


def static_notes(course, assignment, db=None):
    """{student: notes} after `--sequential` (plain nbgrader, in its own process): the locked cells each staged
    submission changed or deleted, and what the student's code in the autograded notebook does to the grader
    (`coursetools.judge.tampering`, as the parallel run's pipeline decides them)."""
    import nbformat

    from coursetools.judge import tampering
    from coursetools.grading.pipeline import CourseCells
    found, cells = {}, {}
    for graded in sorted(course.root.glob(f'autograded/*/{assignment}/*.ipynb')):
        student, name = graded.parent.parent.name, graded.stem
        if not (course.staging / student / assignment).is_dir():      # not graded in this run
            continue
        try:
            if name not in cells:
                cells[name] = CourseCells.from_gradebook(db or course.db_url, assignment, name)
            staged = course.staging / student / assignment / graded.name
            notes = tampering.locked_cell_notes(nbformat.read(staged, as_version=4), cells[name].expected) \
                if staged.exists() else []
            notes += tampering.notes(nbformat.read(graded, as_version=4), cells[name].sources)
        except Exception as error:      # a report for the instructor: never a reason not to grade
            notes = [f'the grader could not read this notebook for the report ({type(error).__name__})']
        if notes:
            found.setdefault(student, []).extend(notes)
    return found


def write_status(course, assignment, notes):
    """reports/<assignment>-status.json: the repair and autograde notes per student, shown by the report."""
    path = course.reports / f'{assignment}-status.json'
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({s: n for s, n in sorted(notes.items()) if n}, indent=1) + '\n')


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
    """How many feedback helpers the largest class of these assignments can use: one per share beyond the
    first (`commands.share_count`), at most one per core beyond the first."""
    largest = max((len(course.students(a)) for a in assignments), default=0)
    return commands.share_count(largest, os.cpu_count() or 1) - 1


def compare_submissions(course, assignment):
    """reports/<assignment>-similarity.html (`similarity`), before the report that links to it; the line that
    `make grade` prints about it. It reads the notebooks, runs nothing, and never stops the grading."""
    try:
        from coursetools.instructor import similarity       # copydetect imports pyplot: only when it is needed
        path, flagged = similarity.write_similarity(course.root, assignment)
    except Exception as error:
        return f'Similarity: not compared ({type(error).__name__}: {error})'
    return f'Similarity: {path}: {similarity.summary(flagged)}'


def grade_each(course, selection, phases, helpers, reports, db, options, sequential, settings):
    """Release, autograde and feedback of each assignment of `selection` ({assignment: its students to grade, or
    None for all}); {assignment: autograde run report}. `helpers`: the forked helpers (`commands.ForkedHelpers`),
    or None; `reports` receives each assignment's `commands.Report`, begun beside its feedback, and the similarity
    line (`compare_submissions`), as (report, line)."""
    runs = {}
    for assignment, students in selection.items():
        # autograde's workers (slots, checkers) start on the core that release leaves idle
        started = start_workers(course, assignment, db=db, options=options, sequential=sequential,
                                students=students, **settings)
        try:
            unchanged.forget(course, assignment, students)
            with phases.start(f'{assignment}: release'):
                print(f'== {assignment}: release', flush=True)
                course.copy_widget_beside_notebooks()
                commands.run(course, 'generate_assignment', assignment, '--force', db=db)
                # names, the due date and extensions (nbgrader_config.py's c.Term), before autograde dates them
                roster.apply(course.root, assignment, db or course.db_url,
                             [s for s in course.students(assignment) if students is None or s in students])
            with commands.Feedback(course, assignment, len(course.students(assignment)), db=db,
                                   forked=helpers) as feedback:

                def on_tail():
                    """The last notebooks run: the spare forked helper imports the report's modules."""
                    if helpers is not None:
                        helpers.get_ready()

                with phases.start(f'{assignment}: autograde'):
                    print(f'== {assignment}: autograde', flush=True)
                    notes, runs[assignment] = autograde(course, assignment, db=db, options=options,
                                                        sequential=sequential, started=started, on_tail=on_tail,
                                                        students=students)
                    write_status(course, assignment, notes)
                with phases.start(f'{assignment}: similarity'):
                    compared = compare_submissions(course, assignment)
                reports[assignment] = (commands.Report(course, assignment, db or course.db_url, helpers), compared)
                with phases.start(f'{assignment}: feedback'):
                    print(f'== {assignment}: feedback', flush=True)
                    feedback.run([s for s in course.graded_students(assignment)
                                  if students is None or s in students])
                    commands.explain_ungraded(course, assignment, notes, students)
                unchanged.remember(course, assignment, [s for s in course.graded_students(assignment)
                                                        if students is None or s in students], options, db)
        finally:
            if started is not None:
                started.close()
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
    parser.add_argument('--workers', type=int, help='notebooks at once on the LocalCluster (default: cores + 1)')
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
    args, options = parser.parse_known_args(argv)
    unknown = [o for o in options if not o.startswith('--') or '=' not in o]
    if unknown:
        parser.error(f'unrecognised arguments: {" ".join(unknown)} (nbgrader settings look like --Class.trait=value)')
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
    main()
