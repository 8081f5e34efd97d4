"""Stopping `make grade`, and running it twice: Ctrl-C or `kill` stops a run within seconds, keeps the notebooks
graded before it and nothing of the others, and leaves no folder behind; a second run in the same course is
refused while one runs; the next run completes the class with the marks it deserves (also after a power cut)."""
import os
import pathlib
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

from conftest import copy_course, needs_sandbox
from coursetools.instructor import marks
from coursetools.instructor import preflight

pytestmark = needs_sandbox

ASSIGNMENT = 'noughts_and_crosses'


def recorded_students(course):
    """The students with a notebook of ASSIGNMENT whose marks are in the gradebook (none while it is being made)."""
    try:
        with sqlite3.connect(course / 'gradebook.db', timeout=10) as db:
            return {row[0] for row in db.execute(
                'SELECT DISTINCT student_id FROM submitted_assignment JOIN assignment ON assignment.id = '
                'submitted_assignment.assignment_id JOIN submitted_notebook ON submitted_notebook.assignment_id = '
                'submitted_assignment.id JOIN grade ON grade.notebook_id = submitted_notebook.id '
                'WHERE grade.auto_score IS NOT NULL AND assignment.name = ?', (ASSIGNMENT,))}
    except sqlite3.OperationalError:        # no tables yet
        return set()


def autograded_students(course):
    return {path.parts[-3] for path in (course / 'autograded').glob(f'*/{ASSIGNMENT}/*.ipynb')}


def interrupt_grading(course, signum, env, when, *args, meanwhile=None):
    """`make grade`'s command on one slot, sent `signum` (to its process group, as a terminal sends Ctrl-C) once
    `when(course, output lines)` (and `meanwhile()` has run, if given); returns (exit status, output)."""
    run = subprocess.Popen([sys.executable, '-m', 'coursetools.instructor.grade', ASSIGNMENT, '--workers=1', *args],
                           cwd=course, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           start_new_session=True, text=True)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(run.stdout), daemon=True)
    reader.start()
    deadline = time.time() + 120
    while time.time() < deadline and run.poll() is None and not when(course, lines):
        time.sleep(0.05)
    if meanwhile is not None:
        meanwhile()
    assert run.poll() is None, 'the run ended before it could be stopped:\n' + ''.join(lines)[-3000:]
    os.killpg(run.pid, signum)
    run.wait(timeout=60)
    reader.join(10)
    return run.returncode, ''.join(lines)


def test_interrupted_grading_stops_at_once_and_the_next_run_completes_it(tmp_path):
    course = copy_course(tmp_path / 'course', students=('ada', 'cat', 'kim', 'lee', 'max'))
    top = pathlib.Path(tempfile.mkdtemp())        # the grading process's TMPDIR: as long as allowed
    scratch = top / ('t' * (preflight.temporary_folder_room() - len(str(top)) - 1))
    scratch.mkdir()
    env = dict(os.environ, COURSE_ROOT=str(course), TMPDIR=str(scratch))
    env['PATH'] = os.path.join(sys.prefix, 'bin') + os.pathsep + env['PATH']
    before = set()

    def starting(course, lines):
        return list(scratch.glob('*/checker-*'))      # in the run's own folder

    def one_graded(course, lines):
        return any(line.startswith('grading 1/') for line in lines)

    def one_written(course, lines):
        return autograded_students(course) - before

    def a_second_run_is_refused():
        second = subprocess.run([sys.executable, '-m', 'coursetools.instructor.grade', ASSIGNMENT], cwd=course,
                                env=env, capture_output=True, text=True)
        refusals.append((second.returncode, second.stdout, second.stderr))

    refusals = []

    for signum, when, args in ((signal.SIGTERM, starting, ()), (signal.SIGINT, one_graded, ()),  # `kill`; Ctrl-C
                               (signal.SIGINT, one_written, ('--sequential',))):                  # plain nbgrader
        started = time.monotonic()
        status, output = interrupt_grading(course, signum, env, when, *args,
                                           meanwhile=a_second_run_is_refused if when is one_graded else None)
        assert status == 130 and 'Interrupted.' in output and 'Traceback' not in output, output[-3000:]
        assert time.monotonic() - started < 60, output[-3000:]     # the notebook out is stopped, not graded on
        left = [path.name for path in scratch.iterdir() if path.name != 'dask-scratch-space']   # Dask's, reused
        assert left == [], output[-3000:]               # no folder left behind, so no process using one either
        kept = autograded_students(course)       # Ctrl-C on the parallel run came after a notebook was done
        assert recorded_students(course) == kept, output[-3000:]             # only whole notebooks were recorded
        assert kept >= before and len(kept) > len(before) if when is one_graded else kept >= before, output[-3000:]
        before = kept
    assert len(refusals) == 1 and refusals[0][:2] == (1, '') and refusals[0][2].startswith(
        'Cannot grade: `make grade` is already running in this course (process '), refusals
    status, _ = interrupt_grading(course, signal.SIGKILL, env, one_graded)     # a power cut in the middle
    assert status == -signal.SIGKILL
    left = [path.name for path in scratch.iterdir()]        # what the killed run could not remove: its run folder
    assert len(left) == 1 and (scratch / left[0] / preflight.RUN_LOCK).is_file(), left
    with sqlite3.connect(course / 'gradebook.db') as db:
        assert db.execute('PRAGMA integrity_check').fetchone() == ('ok',)
    result = subprocess.run([sys.executable, '-m', 'coursetools.instructor.grade', ASSIGNMENT], cwd=course, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert list(scratch.iterdir()) == []        # the next run removed it, then its own
    shutil.rmtree(top)
    table, _ = marks.marks_by_task('sqlite:///' + str(course / 'gradebook.db'), ASSIGNMENT)
    assert {s: sum(row.values()) for s, row in table.items()} == {'ada': 12, 'cat': 11, 'kim': 11, 'lee': 11,
                                                                  'max': 0}
    assert not (course / 'grades.csv.partial').exists() and (course / 'grades.csv').exists()


def test_marks_plain_nbgrader_saved_for_the_notebook_it_was_stopped_in_are_removed(graded_class, tmp_path):
    """Interrupted, `nbgrader autograde` (`--sequential`) removes the autograded notebook of the student under way
    but not the marks it had saved for it: `make grade` removes those."""
    from coursetools.grading.course import Course
    from coursetools.instructor import grade
    source, _ = graded_class
    course = Course(tmp_path / 'course')
    for name in ('autograded', '.grading'):
        shutil.copytree(source / name, course.root / name)
    shutil.copy2(source / 'gradebook.db', course.root / 'gradebook.db')
    shutil.rmtree(course.root / 'autograded' / 'cat' / ASSIGNMENT)          # the student under way
    before = recorded_students(course.root)
    grade.forget_unwritten(course, ASSIGNMENT, None)
    assert 'cat' in before and recorded_students(course.root) == before - {'cat'} == autograded_students(course.root)


def test_an_interrupt_that_lands_where_python_drops_exceptions_still_stops_the_run():
    """A signal handled inside a garbage collector's callback (Dask installs one) raises KeyboardInterrupt where
    Python drops it; `make grade` raises it again, so the run stops instead of grading on."""
    script = textwrap.dedent('''
        import gc, os, signal, threading, time
        from coursetools.instructor.commands import stop_on_ctrl_c_and_kill
        stop_on_ctrl_c_and_kill()
        gc.callbacks.append(lambda phase, info: time.sleep(1) if phase == 'start' else None)
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGTERM)).start()
        try:
            gc.collect()
            time.sleep(5)
            print('graded on')
        except KeyboardInterrupt:
            print('stopped')
    ''')
    result = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, timeout=60)
    assert result.stdout == 'stopped\n' and result.stderr == '', result.stdout + result.stderr
