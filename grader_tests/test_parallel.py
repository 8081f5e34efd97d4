"""Parallel autograding (coursetools.parallel) gives the same marks as plain `nbgrader autograde`, cell for cell,
on a LocalCluster and on an existing Dask cluster, and reports a submission it cannot read without stopping."""
import io
import os
import shutil
import subprocess
import sys

import nbformat
import pytest

from conftest import copy_course
from coursetools import parallel
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


def course_copy(released, dest):
    shutil.copytree(released, dest)
    return dest


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
    from coursetools import marks
    table, _ = marks.marks_by_task('sqlite:///' + str(course / 'gradebook.db'), ASSIGNMENT)
    return {student: tuple(int(row[task]) for task in TASKS) for student, row in table.items()}


def grade_cell_outcomes(course, student):
    """Per grade cell of the autograded notebook: did it end in an error (and which)?"""
    nb = nbformat.read(course / 'autograded' / student / ASSIGNMENT / f'{ASSIGNMENT}.ipynb', as_version=4)
    out = {}
    for cell in nb.cells:
        meta = cell.metadata.get('nbgrader', {})
        if meta.get('grade') and cell.cell_type == 'code':
            out[meta['grade_id']] = [o.get('ename') for o in cell.outputs if o.get('output_type') == 'error']
    return out


def test_parallel_marks_are_identical_to_plain_nbgrader(released, tmp_path):
    plain = course_copy(released, tmp_path / 'plain')
    par = course_copy(released, tmp_path / 'parallel')
    nbgrader(plain, 'autograde', ASSIGNMENT, '--force')
    log = io.StringIO()
    report = parallel.autograde(par, ASSIGNMENT, workers=2, progress=True, log_stream=log)

    assert report.failed == [], report.errors
    assert sorted(report.graded) == sorted(EXPECTED)
    assert report.workers == 2
    expected, got = grades(plain), grades(par)
    assert len(expected) > 14 * 12
    assert got == expected                              # every grade cell, comment, timestamp, late penalty
    assert task_marks(par) == EXPECTED
    for student in EXPECTED:
        assert grade_cell_outcomes(par, student) == grade_cell_outcomes(plain, student), student
        folder = lambda c: sorted(p.name for p in (c / 'autograded' / student / ASSIGNMENT).iterdir())  # noqa: E731
        assert folder(par) == folder(plain)
    assert f'grading {len(EXPECTED)}/{len(EXPECTED)} 100%' in log.getvalue()   # plain progress lines (not a tty)


def test_external_cluster_by_scheduler_address(released, tmp_path):
    from distributed import Client, LocalCluster
    course = course_copy(released, tmp_path / 'course')
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        report = parallel.autograde(course, ASSIGNMENT, scheduler=cluster.scheduler_address,
                                    students=['ada', 'ivy', 'max'], progress=False, log_stream=io.StringIO())
        with Client(cluster.scheduler_address) as client:     # still up, and no kernel left running on it
            assert len(client.scheduler_info()['workers']) == 1
            left = client.run(lambda: sum(len(v) for v in [*getattr(parallel._ENGINE, 'spares', {}).values(),
                                                              *getattr(parallel._ENGINE, 'fork_idle', {}).values()])
                              if parallel._ENGINE else 0)
            assert list(left.values()) == [0]          # no kernel and no fork server left on the worker
    assert report.failed == []
    assert task_marks(course) == {s: EXPECTED[s] for s in ('ada', 'ivy', 'max')}
    assert sorted(p.name for p in (course / 'autograded').iterdir()) == ['ada', 'ivy', 'max']


def test_without_fork_servers_kernels_are_started_and_the_marks_are_the_same(released, tmp_path):
    course = course_copy(released, tmp_path / 'course')
    students = ['ada', 'ben', 'eve', 'max']
    report = parallel.autograde(course, ASSIGNMENT, students=students, fork_server=False, progress=False,
                                log_stream=io.StringIO())
    assert report.failed == []
    assert not any(t.get('kernel_forked') for t in report.timings)
    assert task_marks(course) == {s: EXPECTED[s] for s in students}


def test_unreadable_notebook_is_reported_and_the_others_are_graded(released, tmp_path):
    course = course_copy(released, tmp_path / 'course')
    for student in set(EXPECTED) - {'ada', 'eve', 'max'}:
        shutil.rmtree(course / 'submitted' / student)
    (course / 'submitted' / 'eve' / ASSIGNMENT / f'{ASSIGNMENT}.ipynb').write_text('{"cells": [')
    with open(course / 'nbgrader_config.py', 'a') as f:     # the worker count comes from the config
        f.write('\nc.ParallelGrading.workers = 1\n')
    log = io.StringIO()
    report = parallel.autograde(course, ASSIGNMENT, progress=False, log_stream=log,
                                notes={'ada': ['repaired notebook: cells re-ordered']})

    assert report.workers == 1
    assert report.failed == ['eve']
    assert any('unreadable' in note and f'{ASSIGNMENT}.ipynb' in note for note in report['eve']), report['eve']
    assert report['ada'] == ['repaired notebook: cells re-ordered']
    lines = log.getvalue().splitlines()
    assert any(line.startswith('eve: not a notebook / unreadable') for line in lines), lines
    assert any(line.startswith('ada: repaired notebook') for line in lines), lines
    got = task_marks(course)
    assert got['ada'] == EXPECTED['ada'] and got['max'] == EXPECTED['max']
    assert not (course / 'autograded' / 'eve' / ASSIGNMENT).exists()   # as nbgrader: a failed submission leaves nothing


def test_progress_bar_plain_lines_and_status():
    out = io.StringIO()
    bar = parallel.Progress(4, stream=out)
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
    assert parallel._attention_notes(nb) == ['timeout in cell loop: Cell did not finish within 180 s',
                                             'kernel death in cell 2: The kernel died']
