"""`make grade`: release, autograde, feedback, export and a per-task table, for every assignment in source/.

The course folder is the checkout this package lives in, or $COURSE_ROOT (the tests grade a copy).

Each step is the plain nbgrader command an instructor would type, run from the course folder so that
nbgrader_config.py applies.
"""
import argparse
import os
import pathlib
import subprocess
import sys

from coursetools import marks, sandbox

ROOT = pathlib.Path(os.environ.get('COURSE_ROOT', pathlib.Path(__file__).resolve().parent.parent)).resolve()


def nbgrader(*args, db=None):
    """Run one nbgrader command in the course folder; stop with its log if it fails."""
    if db:
        args = (*args, f'--db={db}')
    env = dict(os.environ)
    # nbgrader runs alembic as a subprocess: the venv's bin/ must be on PATH.
    env['PATH'] = os.path.join(sys.prefix, 'bin') + os.pathsep + env.get('PATH', '')
    command = [sys.executable, '-m', 'nbgrader', *args]
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    if result.returncode != 0:
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


def grade(assignment_ids, db=None):
    """Grade every submission of each assignment; `db` is a gradebook URL (default: gradebook.db here)."""
    check_sandbox()
    for assignment in assignment_ids:
        print(f'== {assignment}: release', flush=True)
        nbgrader('generate_assignment', assignment, '--force', db=db)
        print(f'== {assignment}: autograde', flush=True)
        nbgrader('autograde', assignment, '--force', db=db)
        print(f'== {assignment}: feedback', flush=True)
        nbgrader('generate_feedback', assignment, '--force', db=db)
    nbgrader('export', '--to', str(ROOT / 'grades.csv'), db=db)
    for assignment in assignment_ids:
        print(f'\n{assignment}')
        print(marks.format_table(*marks.marks_by_task(db or default_db_url(), assignment)))
    print(f'\nGrades: {ROOT / "grades.csv"}; feedback: {ROOT / "feedback"}')


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('assignment', nargs='*', help='assignment ids (default: every assignment in source/)')
    parser.add_argument('--db', help='gradebook URL, e.g. postgresql://user@host/course (default: gradebook.db)')
    args = parser.parse_args(argv)
    grade(args.assignment or assignments(), db=args.db)


if __name__ == '__main__':
    main()
