"""Parallel autograding (coursetools.grading.run) gives the same marks as plain `nbgrader autograde`, cell for cell,
with its workers started ahead or not, with or without its speed-ups, on a LocalCluster
(test_cluster.py grades on an existing Dask cluster), and reports a submission it cannot read without stopping."""
import io
import os
import re
import shutil
import subprocess
import sys
import time

import nbformat
import pytest

from conftest import copy_course, descendants
from coursetools.grading import run as grading
from coursetools.grading import pool
from coursetools.grading import progress
from test_demo_class import EXPECTED, TASKS

ASSIGNMENT = 'noughts_and_crosses'


def nbgrader(course, *args):
    env = dict(os.environ, PATH=os.path.join(sys.prefix, 'bin') + os.pathsep + os.environ.get('PATH', ''))
    env.pop('COURSE_ROOT', None)
    result = subprocess.run([sys.executable, '-m', 'nbgrader', *args], cwd=course, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.fixture(scope='module')
def released(tmp_path_factory):
    """A copy of the course with the assignment generated (in its gradebook), not graded yet."""
    course = copy_course(tmp_path_factory.mktemp('released') / 'course')
    nbgrader(course, 'generate_assignment', ASSIGNMENT, '--force')
    return course


def grades(course):
    """{(student, notebook, grade cell): (auto, manual, extra credit, needs manual grade)} and the comments."""
    from nbgrader.api import Gradebook
    out = {}
    with Gradebook('sqlite:///' + str(course / 'gradebook.db')) as gb:
        for sub in gb.find_assignment(ASSIGNMENT).submissions:
            out[(sub.student_id, 'timestamp')] = str(sub.timestamp)
            for nb in sub.notebooks:
                out[(sub.student_id, nb.name, 'late penalty')] = nb.late_submission_penalty
                for g in nb.grades:
                    out[(sub.student_id, nb.name, g.name)] = (g.auto_score, g.manual_score, g.extra_credit,
                                                              g.needs_manual_grade)
                for c in nb.comments:
                    out[(sub.student_id, nb.name, 'comment', c.name)] = c.auto_comment
    return out


def task_marks(course):
    from coursetools.instructor import marks
    table, _ = marks.marks_by_task('sqlite:///' + str(course / 'gradebook.db'), ASSIGNMENT)
    return {student: tuple(int(row[task]) for task in TASKS) for student, row in table.items()}


def outcomes(course, student):
    """Per grade cell of the autograded notebook: the names of its errors."""
    nb = nbformat.read(course / 'autograded' / student / ASSIGNMENT / f'{ASSIGNMENT}.ipynb', as_version=4)
    return {cell.metadata.nbgrader['grade_id']: [o.get('ename') for o in cell.outputs if o.output_type == 'error']
            for cell in nb.cells if cell.cell_type == 'code' and cell.metadata.get('nbgrader', {}).get('grade')}


def autograde(course, monkeypatch, **options):
    monkeypatch.chdir(course)
    return grading.autograde(ASSIGNMENT, **options)


def slot_processes():
    """Pids of the grading workers' checker servers (Pythons)."""
    found, mine = [], descendants()
    for entry in os.listdir('/proc'):
        if not entry.isdigit() or int(entry) not in mine:
            continue
        try:
            argv = open(f'/proc/{entry}/cmdline', 'rb').read().split(b'\0')
        except OSError:
            continue
        if entry.isdigit() and os.path.basename(argv[0]).startswith(b'python') and any(
                b'coursetools.judge.checker_server import main' in arg for arg in argv):
            found.append(int(entry))
    return found


def until(condition, seconds):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.1)
    return condition()


def listening_beyond_this_machine():
    """The addresses this process listens on that another machine could reach."""
    import psutil
    return [c.laddr for c in psutil.Process().net_connections(kind='inet')
            if c.status == psutil.CONN_LISTEN and c.laddr.ip not in ('127.0.0.1', '::1')]


def test_workers_started_ahead_are_warm_before_grading_and_gone_after(released, tmp_path, monkeypatch):
    """`make grade` starts autograde's workers before it releases the assignment (`grading.start`): each slot's
    checker server runs before grading begins, and none is left once the run is closed, whether it
    graded or was given up before (a release that failed)."""
    course = shutil.copytree(released, tmp_path / 'ahead')
    monkeypatch.chdir(course)
    assert slot_processes() == []
    given_up = grading.start(ASSIGNMENT, workers=2, progress=False)
    assert until(lambda: len(slot_processes()) == 1, 60), slot_processes()    # the worker's checker server
    given_up.close()
    assert until(lambda: slot_processes() == [], 10), slot_processes()

    run = grading.start(ASSIGNMENT, workers=2, students=['ada', 'cat'], progress=False)
    assert until(lambda: len(slot_processes()) == 1, 60), slot_processes()
    assert listening_beyond_this_machine() == []        # Dask's HTTP pages (task keys name students) included
    report = run.run()
    run.close()
    assert until(lambda: slot_processes() == [], 10), slot_processes()
    assert report.failed == [] and report.workers == 2
    assert task_marks(course) == {s: EXPECTED[s] for s in ('ada', 'cat')}


def test_unreadable_notebook_is_reported_and_the_others_are_graded(released, tmp_path, monkeypatch):
    course = shutil.copytree(released, tmp_path / 'course')
    for student in set(EXPECTED) - {'ada', 'eve', 'max'}:
        shutil.rmtree(course / 'submitted' / student)
    (course / 'submitted' / 'eve' / ASSIGNMENT / f'{ASSIGNMENT}.ipynb').write_text('{"cells": [')
    with open(course / 'nbgrader_config.py', 'a') as f:     # the worker count comes from the config
        f.write('\nc.Grading.workers = 1\n')
    log = io.StringIO()
    report = autograde(course, monkeypatch, stream=log, notes={'ada': ['repaired notebook: cells re-ordered']})

    assert report.workers == 1
    assert report.failed == ['eve']
    assert any('unreadable' in note and f'{ASSIGNMENT}.ipynb' in note for note in report.notes['eve'])
    assert report.notes['ada'] == ['repaired notebook: cells re-ordered']
    lines = [line.strip() for line in log.getvalue().splitlines()]
    assert any(line.startswith('eve: not a notebook / unreadable') for line in lines), lines
    assert not any('repaired notebook' in line for line in lines), lines     # its finder printed it already
    got = task_marks(course)
    assert got['ada'] == EXPECTED['ada'] and got['max'] == EXPECTED['max']
    assert not (course / 'autograded' / 'eve' / ASSIGNMENT).exists()   # as nbgrader: a failed submission leaves nothing


def test_progress_bar_plain_lines_and_status():
    out = io.StringIO()
    bar = progress.Progress(4, stream=out)
    bar.advance()
    bar.status('bob: timeout in cell score-moves')
    bar.advance(3)
    bar.close()
    text = out.getvalue()
    assert '\r' not in text                                    # not a tty: plain lines
    assert 'bob: timeout in cell score-moves\n' in text
    assert 'grading 4/4 100% ETA 0:00' in text


def test_attention_notes_from_outputs():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell('while True: pass', metadata={'nbgrader': {'grade_id': 'loop'}}, outputs=[
            nbformat.v4.new_output('error', ename='CellTimeoutError', evalue='Cell did not finish within 180 s',
                                   traceback=[])]),
        nbformat.v4.new_code_cell('import os; os._exit(1)', outputs=[
            nbformat.v4.new_output('error', ename='KernelDied', evalue='The kernel died', traceback=[])]),
        nbformat.v4.new_code_cell('1/0', outputs=[
            nbformat.v4.new_output('error', ename='ZeroDivisionError', evalue='', traceback=[])]),
    ])
    assert pool.attention_notes(nb) == ['timeout in cell loop: Cell did not finish within 180 s',
                                        'kernel death in cell 2: The kernel died']


def test_restore_hidden_tests_reads_the_cells_the_gradebook_holds(released):
    """RestoreHiddenTests answers nbgrader's per-cell lookups from one read of the notebook's cells
    (coursetools.grading.autograde.NotebookCells): the same rows, and the same MissingEntry, as the gradebook's queries."""
    from nbgrader.api import Gradebook, MissingEntry
    from coursetools.grading.autograde import NotebookCells
    with Gradebook('sqlite:///' + str(released / 'gradebook.db')) as gb:
        cells = NotebookCells(gb, ASSIGNMENT, ASSIGNMENT)
        notebook = gb.find_notebook(ASSIGNMENT, ASSIGNMENT)
        names = [cell.name for cell in notebook.source_cells]
        assert len(names) > 20
        for name in names + ['no-such-cell']:
            for lookup in ('find_source_cell', 'find_graded_cell'):
                try:
                    expected = getattr(gb, lookup)(name, ASSIGNMENT, ASSIGNMENT)
                except MissingEntry as missing:
                    expected = str(missing)
                try:
                    got = getattr(cells, lookup)(name, ASSIGNMENT, ASSIGNMENT)
                except MissingEntry as missing:
                    got = str(missing)
                assert got is expected or got == expected, (lookup, name)
        assert any(cell.name in cells.graded_cells for cell in notebook.task_cells + notebook.grade_cells)
        assert cells.find_notebook(ASSIGNMENT, ASSIGNMENT) is notebook      # anything else: the gradebook's own


# A mark lost in every task, a stub, full marks with a warning on stderr: the kinds of notebook in the demo
# class, compared cell for cell with plain nbgrader (test_demo_class checks all 16 against their marks).
COMPARED = ('cat', 'dan', 'fay', 'hal', 'ivy', 'max', 'nia')


def test_parallel_marks_are_identical_to_plain_nbgrader(released, graded_class, tmp_path):
    """`make grade`'s parallel run (the shared demo class, graded as on a fresh clone) against plain `nbgrader
    autograde` on the same submissions: every grade cell, comment, timestamp and late penalty, and the errors
    in each test cell. Last in this module: the shared class is graded by then."""
    ours, run = graded_class
    plain = shutil.copytree(released, tmp_path / 'plain')
    for student in set(EXPECTED) - set(COMPARED):
        shutil.rmtree(plain / 'submitted' / student)
    nbgrader(plain, 'autograde', ASSIGNMENT, '--force')
    expected = grades(plain)
    got = {key: value for key, value in grades(ours).items() if key[0] in COMPARED}
    assert len(expected) > len(COMPARED) * 12
    assert got == expected
    assert {s: marks for s, marks in task_marks(ours).items() if s in COMPARED} == {s: EXPECTED[s] for s in COMPARED}
    for student in COMPARED:
        assert outcomes(ours, student) == outcomes(plain, student), student
        folder = lambda c: sorted(p.name for p in (c / 'autograded' / student / ASSIGNMENT).iterdir())  # noqa: E731
        assert folder(ours) == folder(plain)
    output = run.stdout + run.stderr
    assert f'grading {len(EXPECTED)}/{len(EXPECTED)} 100%' in output     # plain progress lines (not a tty)
    assert re.search(rf'noughts_and_crosses: {len(EXPECTED)} notebooks on ([2-9]|\d\d+) workers', output)


def test_the_speed_ups_change_nothing_but_the_time(released, graded_class, tmp_path, monkeypatch):
    """With the speed-ups off (nbgrader's internals left alone, as with an untested nbgrader), two students get
    what the shared class got with them on (the default), cell for cell."""
    students = ['dan', 'max']
    slow = shutil.copytree(released, tmp_path / 'slow')
    autograde(slow, monkeypatch, students=students, progress=False,
              options=['--Grading.pooled_gradebook=False', '--Grading.cached_validation=False'])
    fast, _ = graded_class
    assert grades(slow) == {key: value for key, value in grades(fast).items() if key[0] in students}
    assert task_marks(slow) == {s: EXPECTED[s] for s in students}


# --- how long the run waits for a notebook (no kernel started: a Run's waiting with fake futures) -------------------

def executor_traits(**changed):
    from coursetools.grading.execute import SandboxedExecute
    executor = SandboxedExecute(**changed)
    return {name: getattr(executor, name) for name in executor.trait_names(config=True)}


def job_with(traits, tests=None, code_cells=3):
    from types import SimpleNamespace
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('x = 1') for _ in range(code_cells)] +
                                  [nbformat.v4.new_markdown_cell('text')])
    trusted = None if tests is None else SimpleNamespace(tests={f'task-{n}': 'pass' for n in range(tests)})
    return pool.ExecutionJob(pool.RunSpec('token', object, traits), 'ada', ASSIGNMENT, nb, {}, {}, trusted)


def test_a_notebooks_bound_comes_from_the_executors_limits():
    """The notebook's own limit, a cell's limit (and its grace) for the last own cell and each test cell, each kernel
    start, and 300 s: 4,085 s for noughts_and_crosses (12 test cells) with the defaults; none without limits."""
    defaults = executor_traits()
    assert (defaults['notebook_timeout'], defaults['timeout'], defaults['interrupt_grace_period']) == (1800, 120, 5)
    assert (defaults['startup_timeout'], defaults['max_kernel_restarts']) == (60, 5)
    assert job_with(defaults, tests=12).bound() == 1800 + 125 * 13 + 6 * 60 + 300 == 4085
    assert job_with(executor_traits(timeout=30, notebook_timeout=600), tests=12).bound() == 600 + 35 * 13 + 360 + 300
    assert job_with(defaults, code_cells=3).bound() == 1800 + 125 * 4 + 360 + 300    # no trusted cells: code cells
    assert job_with(executor_traits(notebook_timeout=0), tests=12).bound() is None
    assert job_with(executor_traits(timeout=None), tests=12).bound() is None


class FakeFuture:
    def __init__(self, result=None):
        self.outcome, self.cancelled, self.released = result, False, False

    def result(self):
        return self.outcome

    def cancel(self, **_):
        self.cancelled = True

    def release(self):
        self.released = True


class FakeCompleted:
    """`as_completed`: hands out the futures marked done, once each."""
    def __init__(self):
        self.done = []

    def next_batch(self, block=False):
        batch, self.done = self.done, []
        return batch


def waiting_run(threads=1):
    """A Run as far as `_wait` needs one, on a fake cluster of `threads` slots."""
    from types import SimpleNamespace
    run = object.__new__(grading.Run)
    run.report, run.pending, run.unfinished, run.known_notes, run.on_tail = grading.RunReport(), {}, {}, {}, None
    run.no_worker, run.spec, run.discarded = None, None, []
    run.cluster = SimpleNamespace(threads=threads, withdrawn=set(), prove=lambda spec: {}, can_grade=lambda: True)
    run.progress = SimpleNamespace(status=lambda line: None, advance=lambda: None, total=9, done=0)
    run.pipeline = SimpleNamespace(discard=run.discarded.append, forget=run.discarded.append,
                                   finish=lambda submission, executed: [])
    return run


def send(run, student, future, bound, began=None):
    from types import SimpleNamespace
    from coursetools.grading.pipeline import PreparedNotebook
    submission = SimpleNamespace(student=student)
    notebook = PreparedNotebook(student, ASSIGNMENT, None, {}, '/nowhere')
    run.unfinished[id(submission)] = submission
    run.pending[future] = (submission, [notebook], notebook, {}, None, 0, None, [bound, began])


def test_a_notebook_over_its_bound_is_not_graded_and_the_class_goes_on():
    """ada's job never comes back: once past its bound she is not graded (the grader's fault, named in her notes),
    her future is cancelled and released; bob, back in time, is graded."""
    run = waiting_run()
    hung, back = FakeFuture(), FakeFuture(pool.ExecutionResult(nbformat.v4.new_notebook(), [], {}))
    send(run, 'ada', hung, bound=4085, began=time.monotonic() - 5000)
    send(run, 'bob', back, bound=4085)
    completed = FakeCompleted()
    completed.done = [back]
    run._wait(completed, keep=0)
    assert run.pending == {} and hung.cancelled and hung.released and back.released and not back.cancelled
    assert run.report.notes == {'ada': ['not graded: grading took longer than 4085 s']}
    assert run.report.failed == run.report.grader_faults == ['ada'] and run.report.graded == ['bob']
    assert [submission.student for submission in run.discarded] == ['ada']       # nothing of hers is kept
    later = FakeFuture(pool.ExecutionResult(nbformat.v4.new_notebook(), [], {}))
    send(run, 'dan', later, bound=4085)
    completed.done = [hung, later]      # ada's cancelled future, handed out after all, is not collected again
    run._wait(completed, keep=0)
    assert run.report.graded == ['bob', 'dan'] and run.report.failed == ['ada']


def test_a_notebooks_clock_starts_only_when_a_slot_can_have_begun_it(monkeypatch):
    """Two hung notebooks on one slot: the second one's bound is counted from when the first was given up on (Dask
    starts them in the order sent), not from when it was sent."""
    now = [1000.0]

    def ticking():
        now[0] += 1
        return now[0]
    monkeypatch.setattr(grading.time, 'monotonic', ticking)
    monkeypatch.setattr(grading.time, 'sleep', lambda seconds: None)
    run = waiting_run(threads=1)
    given_up = {}
    collect = run._collect

    def noting(future, overdue=None):
        given_up[run.pending[future][0].student] = now[0]
        collect(future, overdue)
    monkeypatch.setattr(run, '_collect', noting)
    send(run, 'ada', FakeFuture(), bound=50)
    send(run, 'cat', FakeFuture(), bound=50)
    run._wait(FakeCompleted(), keep=0)
    assert run.report.grader_faults == ['ada', 'cat']
    assert given_up['cat'] - given_up['ada'] > 50, given_up
