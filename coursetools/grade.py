"""`make grade`: release, autograde, feedback, export and a per-task table, for every assignment in source/.

The course folder is the checkout this package lives in, or $COURSE_ROOT (the tests grade a copy).

Each step is the plain nbgrader command an instructor would type, run from the course folder so that
nbgrader_config.py applies.
"""
import argparse
import json
import os
import re
import pathlib
import subprocess
import sys

from nbgrader.api import Gradebook

from coursetools import marks, parallel, repair, report, sandbox

ROOT = pathlib.Path(os.environ.get('COURSE_ROOT', pathlib.Path(__file__).resolve().parent.parent)).resolve()


def nbgrader(*args, db=None, check=True):
    """Run one nbgrader command in the course folder; stop with its log if it fails (unless check=False)."""
    if db:
        args = (*args, f'--db={db}')
    env = dict(os.environ)
    # nbgrader runs alembic as a subprocess: the venv's bin/ must be on PATH.
    env['PATH'] = os.path.join(sys.prefix, 'bin') + os.pathsep + env.get('PATH', '')
    command = [sys.executable, '-m', 'nbgrader', *args]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    if result.returncode != 0 and check:
        sys.stderr.write(result.stdout + result.stderr)
        raise SystemExit(f'`nbgrader {" ".join(args)}` failed (exit {result.returncode}); its log is above.')
    return result


def assignments():
    return sorted(p.name for p in (ROOT / 'source').iterdir() if (p / f'{p.name}.ipynb').exists())


def default_db_url():
    return 'sqlite:///' + str(ROOT / 'gradebook.db')


def check_sandbox():
    """Refuse to grade unsandboxed by accident: say why the sandbox cannot start and how to proceed."""
    if os.environ.get('COURSE_GRADE_UNSANDBOXED') == '1':
        print('WARNING: grading WITHOUT the sandbox (COURSE_GRADE_UNSANDBOXED=1): student code runs with your rights.')
        return
    reason = sandbox.probe()
    if reason:
        raise SystemExit(
            f'Cannot grade: the grading sandbox does not start on this machine.\n  {reason}\n'
            'Fix that (see docs/sandbox.md), or, only if you trust every submission, grade without the sandbox:\n'
            '  COURSE_GRADE_UNSANDBOXED=1 make grade')


STAGING = '.grading/submitted'  # repaired copies of submitted/, relative to the course folder


def autograde(assignment, db=None, options=(), scheduler=None, workers=None, sequential=False):
    """Stage repaired copies of the submissions, then autograde them; returns {student: notes}.

    Notebooks are executed in parallel on Dask (coursetools.parallel) unless `sequential`, which runs plain
    `nbgrader autograde` instead; grades are written by this process alone either way."""
    staging = ROOT / STAGING
    notes = repair.stage(ROOT, assignment, staging)
    for student, student_notes in notes.items():
        for note in student_notes:
            print(f'   {student}: {note}', flush=True)
    if sequential:
        sequential_autograde(assignment, notes, db, options)
    else:
        report = parallel.autograde(ROOT, assignment, db_url=db, submitted_dir=staging, scheduler=scheduler,
                                    workers=workers, notes=notes, options=options)
        for student, student_notes in report.items():
            notes[student] = list(dict.fromkeys(notes.get(student, []) + list(student_notes)))
        for student in report.failed:
            error = (report.errors.get(student) or '').strip().splitlines()
            notes.setdefault(student, []).append('could not be graded' + (f': {error[-1]}' if error else ''))
    ungraded = [s for s in notes if not list((staging / s / assignment).glob('*.ipynb'))]
    record_zero(db or default_db_url(), assignment, ungraded, staging)
    return notes


def sequential_autograde(assignment, notes, db, options):
    result = nbgrader('autograde', assignment, '--force', f'--CourseDirectory.submitted_directory={STAGING}',
                      *options, db=db, check=False)
    if result.returncode != 0:
        # nbgrader carries on past a student it cannot grade and fails at the end: say who, and carry on too.
        failed = sorted(set(re.findall(r"for student '([^']+)'", result.stdout + result.stderr)))
        for student in failed:
            notes.setdefault(student, []).append('nbgrader could not grade this submission (see autograde log)')
            print(f'   {student}: nbgrader could not grade this submission', flush=True)
        (ROOT / 'autograde.log').write_text(result.stdout + result.stderr)
        if not failed:
            sys.stderr.write(result.stdout + result.stderr)
            raise SystemExit(f'nbgrader autograde {assignment} failed; its log is above.')


def record_zero(db, assignment, students, staging):
    """Give students without a gradable notebook a submission scored 0, as nbgrader does for a missing one."""
    with Gradebook(db) as gradebook:
        for student in students:
            gradebook.update_or_create_student(student)
            timestamp = (staging / student / assignment / 'timestamp.txt')
            kwargs = {'timestamp': timestamp.read_text().strip()} if timestamp.exists() else {}
            submission = gradebook.update_or_create_submission(assignment, student, **kwargs)
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    grade.auto_score = 0
                    grade.needs_manual_grade = False
            gradebook.db.commit()


def write_status(assignment, notes):
    """reports/<assignment>-status.json: the repair and autograde notes per student, shown by the report."""
    path = ROOT / 'reports' / f'{assignment}-status.json'
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({s: n for s, n in sorted(notes.items()) if n}, indent=1) + '\n')


def export(db=None):
    """grades.csv, written whole or not at all."""
    partial = ROOT / 'grades.csv.partial'
    nbgrader('export', '--to', str(partial), db=db)
    os.replace(partial, ROOT / 'grades.csv')


def grade(assignment_ids, db=None, options=(), scheduler=None, workers=None, sequential=False):
    """Grade every submission of each assignment; `db` is a gradebook URL (default: gradebook.db here);
    `options` are extra nbgrader settings for autograde, e.g. --SandboxedExecute.timeout=30."""
    check_sandbox()
    for assignment in assignment_ids:
        print(f'== {assignment}: release', flush=True)
        nbgrader('generate_assignment', assignment, '--force', db=db)
        print(f'== {assignment}: autograde', flush=True)
        write_status(assignment, autograde(assignment, db=db, options=options, scheduler=scheduler,
                                           workers=workers, sequential=sequential))
        print(f'== {assignment}: feedback', flush=True)
        nbgrader('generate_feedback', assignment, '--force', db=db)
    export(db=db)
    for assignment in assignment_ids:
        print(f'\n{assignment}')
        print(marks.format_table(*marks.marks_by_task(db or default_db_url(), assignment)))
        print(f'Report: {report.write_report(ROOT, assignment, db or default_db_url())}')
    print(f'\nGrades: {ROOT / "grades.csv"}; feedback: {ROOT / "feedback"}')


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('assignment', nargs='*', help='assignment ids (default: every assignment in source/)')
    parser.add_argument('--scheduler', help='address of an existing Dask scheduler, e.g. tcp://host:8786 '
                        '(default: c.ParallelGrading.scheduler, else a LocalCluster on this machine)')
    parser.add_argument('--workers', type=int, help='notebooks at once on the LocalCluster (default: cores + 1)')
    parser.add_argument('--sequential', action='store_true',
                        help='grade one notebook at a time with plain `nbgrader autograde` instead of Dask')
    parser.add_argument('--db', help='gradebook URL, e.g. postgresql://user@host/course (default: gradebook.db)')
    args, options = parser.parse_known_args(argv)
    unknown = [o for o in options if not o.startswith('--') or '=' not in o]
    if unknown:
        parser.error(f'unrecognised arguments: {" ".join(unknown)} (nbgrader settings look like --Class.trait=value)')
    grade(args.assignment or assignments(), db=args.db, options=options, scheduler=args.scheduler,
          workers=args.workers, sequential=args.sequential)


if __name__ == '__main__':
    main()
