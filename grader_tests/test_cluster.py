"""Grading on a real Dask cluster: a `dask scheduler` and `dask worker` processes started here, some of them
broken the ways a real cluster's workers break. Every worker is checked before it grades; a broken one is named
and gets no notebooks; a machine's fault is never a student's zero."""
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT, copy_course, needs_sandbox, run_grade
from coursetools.grading import pool
from coursetools.instructor import marks
from test_demo_class import EXPECTED, TASKS

pytestmark = needs_sandbox
DASK = str(pathlib.Path(sys.executable).parent / 'dask')


class Cluster:
    """A scheduler on a free port and workers started by name, each with its own environment."""

    def __init__(self, folder):
        self.folder = pathlib.Path(folder)
        self.processes = []
        file = self.folder / 'scheduler.json'
        self._start('scheduler', [DASK, 'scheduler', '--port', '0', '--no-dashboard', '--scheduler-file', str(file)])
        deadline = time.time() + 60
        while not file.exists() and time.time() < deadline:
            time.sleep(0.1)
        import json
        time.sleep(0.2)
        self.address = json.loads(file.read_text())['address']

    def _start(self, name, command, env=None):
        log = open(self.folder / f'{name}.log', 'wb')
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env or dict(os.environ),
                                   start_new_session=True, cwd=self.folder)
        self.processes.append(process)
        return process

    def worker(self, name, **env):
        environment = dict(os.environ, **env)
        self._start(name, [DASK, 'worker', self.address, '--name', name, '--nthreads', '2', '--no-dashboard',
                           '--no-nanny'], environment)

    def wait_for(self, count):
        from distributed import Client
        with Client(self.address, timeout='30s') as client:
            client.wait_for_workers(count, timeout=120)

    def close(self):
        """The workers first, while their scheduler still answers their goodbye (else each waits for it), then
        the scheduler."""
        workers, scheduler = self.processes[1:], self.processes[:1]
        for group in (workers, scheduler):
            for process in group:
                try:
                    os.killpg(process.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
            for process in group:
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)


def other_copy_of_the_course_package(folder):
    """A copy of coursetools with one hidden check changed, as on a worker left at an older commit."""
    copy = pathlib.Path(folder) / 'other' / 'coursetools'
    shutil.copytree(ROOT / 'coursetools', copy, ignore=shutil.ignore_patterns('__pycache__'))
    checks = copy / 'checks' / 'noughts_and_crosses.py'
    checks.write_text(checks.read_text() + '\n# an older version of the checks\n')
    return str(copy.parent)


def no_course_package(folder):
    broken = pathlib.Path(folder) / 'broken' / 'coursetools'
    broken.mkdir(parents=True)
    (broken / '__init__.py').write_text("raise ImportError('the course package is not installed here')\n")
    return str(broken.parent)


@pytest.fixture
def cluster(tmp_path):
    started = Cluster(tmp_path)
    yield started
    started.close()


def graded_marks(course):
    table, _ = marks.marks_by_task('sqlite:///' + str(course / 'gradebook.db'), 'noughts_and_crosses')
    return {student: tuple(int(row[task]) for task in TASKS) for student, row in table.items()}


def test_one_healthy_worker_among_broken_ones_grades_the_class_as_a_local_run_does(cluster, tmp_path):
    cluster.worker('healthy')
    cluster.worker('unsandboxed-by-its-environment', COURSE_GRADE_UNSANDBOXED='1')
    cluster.worker('without-bubblewrap', COURSE_BWRAP='/nonexistent/bwrap')
    cluster.worker('other-checks', PYTHONPATH=other_copy_of_the_course_package(tmp_path))
    cluster.worker('no-course-package', PYTHONPATH=no_course_package(tmp_path))
    long_temporary_folder = tmp_path / ('t' * 80)             # every kernel's socket path would be too long
    long_temporary_folder.mkdir()
    cluster.worker('long-temporary-folder', TMPDIR=str(long_temporary_folder))
    cluster.wait_for(6)
    students = ('ada', 'cat', 'dan', 'ivy', 'max')      # full marks, three kinds of mistake, the release untouched
    course = copy_course(tmp_path / 'course', students=students)
    result = run_grade(course, 'noughts_and_crosses', '--scheduler', cluster.address)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert graded_marks(course) == {student: EXPECTED[student] for student in students}
    named = {line.split(' will not grade: ')[1] for line in output.splitlines() if ' will not grade: ' in line}
    assert len(named) == 5, output[-3000:]
    reasons = ' | '.join(named)
    for phrase in ('COURSE_GRADE_UNSANDBOXED', 'sandbox does not start', 'not the grading process',
                   'course package installed', "leaves no room for the kernels' sockets"):
        assert phrase in reasons, reasons
    from distributed import Client
    plugin = pool.SLOTS_PLUGIN          # a name, not the module: a broken worker cannot import the course
    with Client(cluster.address, timeout='30s') as client:     # still up, and nothing left running on it
        left = client.run(lambda dask_worker: len(getattr(dask_worker.plugins.get(plugin), 'all', ())))
    assert len(left) == 6 and set(left.values()) == {0}, left   # no kernel or checker left


def test_a_cluster_whose_only_worker_cannot_grade_records_nobody(cluster, tmp_path):
    cluster.worker('without-bubblewrap', COURSE_BWRAP='/nonexistent/bwrap')
    cluster.wait_for(1)
    course = copy_course(tmp_path / 'course', students=('ada', 'ben'))
    result = run_grade(course, 'noughts_and_crosses', '--scheduler', cluster.address)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert 'No worker can grade' in output and 'sandbox does not start' in output
    assert graded_marks(course) == {} if (course / 'gradebook.db').exists() else True
    assert not list((course / 'autograded').glob('*/noughts_and_crosses/*.ipynb'))
    assert 'Traceback' not in output


def test_an_unreachable_scheduler_is_one_line(tmp_path):
    course = copy_course(tmp_path / 'course', students=('ada',))
    started = time.perf_counter()
    result = run_grade(course, 'noughts_and_crosses', '--scheduler', 'tcp://127.0.0.1:9', '--scheduler-timeout=3')
    assert result.returncode != 0 and time.perf_counter() - started < 60
    assert 'Cannot reach the Dask scheduler at tcp://127.0.0.1:9' in result.stderr
    assert 'Traceback' not in result.stderr


def test_a_worker_lost_mid_run_costs_no_student_a_mark(cluster, tmp_path):
    """A worker killed while it grades (the machine gone): its notebooks are graded by the other worker, and
    every student gets the marks a local run gives."""
    students = ('ada', 'cat', 'dan', 'eve', 'fay', 'ivy')
    cluster.worker('steady')
    killed_leaves = tmp_path / 'tmp'       # what a killed worker cannot remove (its slots' folders) stays in here
    killed_leaves.mkdir()
    doomed = cluster._start('doomed', [DASK, 'worker', cluster.address, '--name', 'doomed', '--nthreads', '2',
                                       '--no-dashboard', '--no-nanny'], dict(os.environ, TMPDIR=str(killed_leaves)))
    cluster.wait_for(2)
    course = copy_course(tmp_path / 'course', students=students)
    env = dict(os.environ, COURSE_ROOT=str(course))
    env['PATH'] = os.path.join(sys.prefix, 'bin') + os.pathsep + env.get('PATH', '')
    grading = subprocess.Popen([sys.executable, '-m', 'coursetools.instructor.grade', 'noughts_and_crosses',
                                '--scheduler', cluster.address], cwd=course, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    output = []
    for line in grading.stdout:
        output.append(line)
        if line.startswith('grading 1/') and doomed.poll() is None:
            os.killpg(doomed.pid, signal.SIGKILL)          # it holds notebooks now: the first one is back
    grading.wait()
    text = ''.join(output)
    assert doomed.poll() is not None, 'the doomed worker was never killed: ' + text[-2000:]
    assert grading.returncode == 0, text[-3000:]
    assert graded_marks(course) == {student: EXPECTED[student] for student in students}, text[-3000:]


def test_the_grading_service_grades_on_the_cluster_as_make_grade_does(cluster, tmp_path):
    """`make serve` with `c.Grading.scheduler`: submissions handed in through the exchange are graded on the
    cluster's worker (it is proven and given its grading slots) with the marks a local run gives."""
    from service_class import answers, exchange_course, start_service, states, stop, submit, wait_for
    cluster.worker('healthy')
    cluster.wait_for(1)
    course = exchange_course(tmp_path)
    students = ('ada', 'dan')
    for student in students:
        submit(course, tmp_path / student, student, answers(student))
    service = start_service(course, '--no-pages', f'--Grading.scheduler={cluster.address}')
    try:
        done = wait_for(lambda: sorted(row[1] for row in states(course).values()) == ['graded'] * 2, 180)
        assert done, (course / 'service.log').read_text()[-3000:]
    finally:
        stop(service)
    assert graded_marks(course) == {student: EXPECTED[student] for student in students}
    from distributed import Client
    plugin = pool.SLOTS_PLUGIN
    with Client(cluster.address, timeout='30s') as client:     # the worker was proven and graded: its slots exist
        installed = client.run(lambda dask_worker: dask_worker.plugins.get(plugin) is not None)
    assert list(installed.values()) == [True], installed
