"""A course copy with its exchange ready for the grading service (`make serve`), and students who hand in through
it with nbgrader's own `submit`, as on the course's machine: for test_service.py and benchmarks/service_benchmark.py."""
import contextlib
import io
import os
import pathlib
import subprocess
import sys
import time

import nbformat

from conftest import ROOT, copy_course, grade_env

ASSIGNMENT = 'noughts_and_crosses'
COURSE_ID = 'minimax'


def exchange_course(folder, config_lines=(), assignments=(ASSIGNMENT,)):
    """A copy of the course with no submissions, `assignments` released to its exchange (nbgrader's
    generate_assignment and release_assignment), and `config_lines` added to its nbgrader_config.py."""
    course = copy_course(pathlib.Path(folder) / 'course', students=[])
    (course / 'roster.csv').unlink(missing_ok=True)
    if config_lines:
        with open(course / 'nbgrader_config.py', 'a') as config:
            config.write('\n' + '\n'.join(config_lines) + '\n')
    for assignment in assignments:
        for step in ('generate_assignment', 'release_assignment'):
            done = subprocess.run([sys.executable, '-m', 'nbgrader', step, assignment, '--force'], cwd=course,
                                  env=grade_env(course), capture_output=True, text=True)
            assert done.returncode == 0, done.stdout + done.stderr
    return course


def answers(student, assignment=ASSIGNMENT):
    """The released notebook filled with demo student `student`'s answers (demo_class/)."""
    from coursetools.instructor import democlass
    release = ROOT / 'release' / assignment / f'{assignment}.ipynb'
    return democlass.fill(nbformat.read(release, as_version=4),
                          *democlass.read_answers(ROOT / 'demo_class' / assignment / f'{student}.py'))


def student_args(course, home, student):
    return [f'--Exchange.root={course / "exchange"}', f'--CourseDirectory.course_id={COURSE_ID}',
            f'--Exchange.cache={home / ".cache"}', f'--CourseDirectory.student_id={student}',
            f'--Exchange.assignment_dir={home}']


def submit(course, home, student, notebook, in_process=True, assignment=ASSIGNMENT):
    """`nbgrader submit` of `notebook` by `student` from their folder `home` (made here): the folder name the
    exchange gave it. In this process through nbgrader's app (cheap: a burst of forty), or as the command."""
    home = pathlib.Path(home)
    (home / assignment).mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, home / assignment / f'{assignment}.ipynb')
    inbound = course / 'exchange' / COURSE_ID / 'inbound'
    before = set(os.listdir(inbound)) if inbound.is_dir() else set()
    args = [assignment, *student_args(course, home, student)]
    if in_process:
        from nbgrader.apps import SubmitApp
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            app = SubmitApp()
            app.initialize(args)
            app.start()
    else:
        done = subprocess.run([sys.executable, '-m', 'nbgrader', 'submit', *args], cwd=home, capture_output=True,
                              text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    new, = set(os.listdir(inbound)) - before
    return new


def fetch_feedback(course, home, student, assignment=ASSIGNMENT):
    """`nbgrader fetch_feedback` as the student: {feedback page's path: its text} found."""
    subprocess.run([sys.executable, '-m', 'nbgrader', 'fetch_feedback', assignment,
                    *student_args(course, home, student)], cwd=home, capture_output=True, text=True)
    return {p: p.read_text() for p in (pathlib.Path(home) / assignment / 'feedback').glob('*/*.html')}


def start_service(course, *args, log=None):
    """`python -m coursetools.service.serve` on the course copy, its log to `log` (a path)."""
    out = open(log or course / 'service.log', 'ab')
    return subprocess.Popen([sys.executable, '-m', 'coursetools.service.serve', *args], cwd=course,
                            env=grade_env(course), stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def stop(process, timeout=30):
    """SIGTERM, then SIGKILL to the whole process group the test started (what a killed service left running)."""
    import signal
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def states(course):
    """{folder: (student, state, reason, gradings, score)} of the service's queue."""
    import sqlalchemy as sa
    engine = sa.create_engine(f'sqlite:///{course / "gradebook.db"}')
    try:
        with engine.connect() as db:
            if not sa.inspect(db).has_table('service_submissions'):
                return {}           # the service has not started yet
            return {r.folder: (r.student, r.state, r.reason, r.gradings, r.score)
                    for r in db.execute(sa.text('select * from service_submissions'))}
    finally:
        engine.dispose()


def wait_for(condition, timeout, step=0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(step)
    return condition()
