"""The report after grading (coursetools/instructor/report.py): reports/<assignment>.html for the graded demo class."""
import html
import json
import re
import shutil
import subprocess
import sys

import nbformat
import pytest

from conftest import ROOT
from coursetools.instructor import report
from test_demo_class import EXPECTED, TASKS
from test_varied_class import FULL

A = 'noughts_and_crosses'


def sqlite(course):
    return 'sqlite:///' + str(course / 'gradebook.db')


@pytest.fixture(scope='module')
def page(graded_class):
    course, _ = graded_class
    path = report.write_report(course, A, sqlite(course))
    assert path == course / 'reports' / f'{A}.html'
    return path.read_text(encoding='utf-8')


def rows(page, table_class, key):
    """{data-key: row text (tags removed, entities decoded)} of one table of the page."""
    table = re.search(rf'<table class="{table_class}">(.*?)</table>', page, re.S).group(1)
    found = re.findall(rf'<tr data-{key}="([^"]+)">(.*?)</tr>', table, re.S)
    return {html.unescape(k): html.unescape(re.sub(r'<[^>]+>', ' ', row)) for k, row in found}


def test_one_histogram_per_task_and_one_of_the_totals(page):
    assert re.findall(r'<figure class="task-histogram" data-task="([^"]+)">', page) == list(TASKS)
    assert page.count('<figure class="total-histogram">') == 1


def test_checks_that_failed_most_often(page):
    failed = rows(page, 'failed-checks', 'grade-id')
    assert 'dan' in failed['score_end-diagonals'] and 'score_end returned None' in failed['score_end-diagonals']
    assert 'fay' in failed['play-types'] and 'should return a tuple of rows, not a list' in failed['play-types']
    assert 'hal' in failed['moves-empty-cells']
    # Only checks somebody failed, most failed first; a check that everybody passed is not listed.
    counts = [int(re.search(rf'(\d+) / {len(EXPECTED)}', row).group(1)) for row in failed.values()]
    assert counts == sorted(counts, reverse=True) and min(counts) >= 1
    assert 'ada' not in ' '.join(failed.values())


def test_students_with_problems(page):
    problems = rows(page, 'problems', 'student')
    assert '0 marks in total' in problems['max']
    assert 'ada' not in problems and 'nia' not in problems  # nia's warnings on stderr are not a problem


def test_marks_table_and_summary(page, graded_class):
    marks_table = re.search(r'<table class="marks">(.*?)</table>', page, re.S).group(1)
    for student, expected in EXPECTED.items():
        cells = re.search(rf'<tr data-student="{student}"><td>{student}</td>(.*?)</tr>', marks_table).group(1)
        assert [int(v) for v in re.findall(r'>(\d+)</td>', cells)] == [*expected, sum(expected)]
    assert f'{len(EXPECTED)} students graded' in page


def test_page_is_self_contained(page):
    assert '<link' not in page and '<script' not in page and '@import' not in page
    assert not re.search(r'src="(?!data:)', page), 'the page must not load anything'
    assert re.findall(r'href="([^"]*)"', page) == [f'{A}-similarity.html']     # a link to its sibling, no more
    assert '<img' not in page and page.count('<svg ') == len(TASKS) + 1      # the charts are drawn in the page


def test_each_chart_counts_the_students_at_each_mark(page):
    charts = re.findall(r'<figure class="(task|total)-histogram"(?: data-task="([^"]+)")?>(.*?)</figure>', page)
    assert [task for kind, task, _ in charts] == [*TASKS, '']
    for number, (kind, task, chart) in enumerate(charts):
        marks_of = [expected[number] if kind == 'task' else sum(expected) for expected in EXPECTED.values()]
        bars = {float(mark): int(count) for mark, count in
                re.findall(r'<rect class="bar" data-mark="([^"]+)" data-count="(\d+)"', chart)}
        assert bars == {mark: marks_of.count(mark) for mark in range(int(max(bars)) + 1)}, task or 'total'
        assert max(bars) == (sum(FULL) if kind == 'total' else FULL[number])        # a bar for every mark


def graded_copy(graded_class, tmp_path):
    """A copy of the graded demo class (submissions, autograded notebooks, source, gradebook) to change freely."""
    source, _ = graded_class
    course = tmp_path / 'course'
    for name in ('submitted', 'autograded', 'source'):
        shutil.copytree(source / name, course / name)
    shutil.copy2(source / 'gradebook.db', course / 'gradebook.db')
    return course


def test_kernel_deaths_timeouts_missing_notebooks_and_status_notes(graded_class, tmp_path):
    course = graded_copy(graded_class, tmp_path)
    autograded = course / 'autograded' / '{}' / A / f'{A}.ipynb'

    def add_error(student, grade_id, ename, evalue):
        nb = nbformat.read(str(autograded).format(student), as_version=4)
        cell = next(c for c in nb.cells if c.metadata.get('nbgrader', {}).get('grade_id') == grade_id)
        cell.outputs.append(nbformat.v4.new_output('error', ename=ename, evalue=evalue, traceback=[]))
        nbformat.write(nb, str(autograded).format(student))
    add_error('ada', 'score-values', 'KernelDied', 'The kernel died while running this cell (killed by SIGKILL)')
    add_error('ben', 'perfect_game-boards', 'CellTimeoutError', 'Cell did not finish within 180 s')
    # cat's notebook went missing (only a differently named file) and was not graded; eve's is broken.
    (course / 'submitted' / 'cat' / A / f'{A}.ipynb').rename(course / 'submitted' / 'cat' / A / 'notes.ipynb')
    (course / 'autograded' / 'cat' / A / f'{A}.ipynb').unlink()
    (course / 'submitted' / 'eve' / A / f'{A}.ipynb').write_text('{"cells": [')
    (course / 'reports').mkdir()
    (course / 'reports' / f'{A}-status.json').write_text(json.dumps(
        {'dan': ["graded 'noughts_and_crosses (1).ipynb' as 'noughts_and_crosses.ipynb'"],
         'zed': ['<script>alert(1)</script> no notebook submitted \u202egnp.kcatta']}))

    page = report.write_report(course, A, sqlite(course)).read_text()
    problems = rows(page, 'problems', 'student')
    assert 'the kernel died in score-values' in problems['ada']
    assert 'a cell timed out in perfect_game-boards' in problems['ben']
    assert 'missing notebook noughts_and_crosses.ipynb (found notes.ipynb)' in problems['cat']
    assert 'unreadable notebook noughts_and_crosses.ipynb' in problems['eve']
    assert "graded 'noughts_and_crosses (1).ipynb'" in problems['dan']
    assert '<script>' not in page and '&lt;script&gt;alert(1)&lt;/script&gt;' in page
    assert '\u202e' not in page and '\\u202egnp.kcatta' in page       # a right-to-left override, as its code


def test_cli(graded_class, tmp_path):
    course = graded_copy(graded_class, tmp_path)
    result = subprocess.run([sys.executable, '-m', 'coursetools.instructor.report', '--assignment', A, '--course', str(course)],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert (course / 'reports' / f'{A}.html').exists() and f'reports/{A}.html' in result.stdout


@pytest.fixture(scope='module')
def troubled_class(tmp_path_factory):
    """Graded by `make grade`'s code path, 6 s a cell: ada changed a locked cell, cat's perfect_game prints in a
    loop that never ends, eve's notebook is truncated JSON and an earlier grading left her an autograded notebook
    and a feedback page. Returns (course, completed process)."""
    from conftest import copy_course, run_grade
    course = copy_course(tmp_path_factory.mktemp('troubled') / 'course', students=['ada', 'cat', 'eve'])
    for student in ('ada', 'cat', 'eve'):
        shutil.rmtree(course / 'submitted' / student / 'alpha_beta')
    path = course / 'submitted' / 'cat' / A / f'{A}.ipynb'
    nb = nbformat.read(path, as_version=4)
    game = next(c for c in nb.cells if c.metadata.get('nbgrader', {}).get('grade_id') == 'perfect_game')
    game.source = 'def perfect_game():\n    turn = 0\n    while True:\n        turn += 1\n        print("turn", turn)\n'
    nbformat.write(nb, path)
    path = course / 'submitted' / 'ada' / A / f'{A}.ipynb'
    nb = nbformat.read(path, as_version=4)
    helpers = next(c for c in nb.cells if c.metadata.get('nbgrader', {}).get('grade_id') == 'helpers')
    helpers.source += '\nEMPTY_BOARD = None  # "fixed" by the student'
    nbformat.write(nb, path)
    (course / 'submitted' / 'eve' / A / f'{A}.ipynb').write_text('{"cells": [')
    for stale in (course / 'autograded' / 'eve' / A / f'{A}.ipynb', course / 'feedback' / 'eve' / A / f'{A}.html'):
        stale.parent.mkdir(parents=True)
        stale.write_text('from an earlier grading')
    return course, run_grade(course, A, '--SandboxedExecute.timeout=6')


def test_a_changed_locked_cell_is_named_in_make_grades_output_and_the_report(troubled_class):
    """nbgrader puts a changed locked cell back (its checksum differs); the instructor still hears of it."""
    from coursetools.instructor import marks
    course, result = troubled_class
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    output = (result.stdout + result.stderr).splitlines()          # the progress lines go to stderr
    assert [line for line in output if line.startswith('   ada: ') and 'changed a locked cell (helpers)' in line]
    problems = rows((course / 'reports' / f'{A}.html').read_text(), 'problems', 'student')
    assert 'changed a locked cell (helpers)' in problems['ada']
    table, _ = marks.marks_by_task(sqlite(course), A)
    assert tuple(int(table['ada'][task]) for task in TASKS) == EXPECTED['ada']    # the cell was put back


def test_a_submission_that_cannot_be_graded_leaves_nothing_stale_and_gets_a_page_saying_why(troubled_class):
    from bs4 import BeautifulSoup
    course, result = troubled_class
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert not (course / 'autograded' / 'eve' / A).exists()
    page = BeautifulSoup((course / 'feedback' / 'eve' / A / f'{A}.html').read_text(), 'html.parser')
    assert 'could not be graded' in page.h1.text
    reasons = [item.text for item in page.find_all('li')]
    assert any(f'{A}.ipynb is not a notebook' in reason for reason in reasons), reasons
    assert 'Restart & Run All' in page.text and 'from an earlier grading' not in page.text
    assert (course / 'feedback' / 'ada' / A / f'{A}.html').read_text().count('could not be graded') == 0


def test_each_note_about_a_student_is_printed_once(troubled_class):
    _, result = troubled_class
    notes = [line.strip() for line in (result.stdout + result.stderr).splitlines()
             if line.startswith(('   ada: ', '   eve: '))]
    assert notes and len(notes) == len(set(notes)), notes
    assert sum('is not a notebook' in note for note in notes) == 1, notes


def test_a_loop_that_never_ends_says_so_with_what_it_printed(troubled_class):
    course, _ = troubled_class
    nb = nbformat.read(course / 'autograded' / 'cat' / A / f'{A}.ipynb', as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get('nbgrader', {}).get('grade_id') == 'perfect_game-boards')
    error, = [o for o in cell.outputs if o.output_type == 'error']
    first, *printed = error.evalue.splitlines()
    assert error.ename == 'CellTimeoutError'
    assert first.startswith('Cell did not finish within 6 s and was interrupted: perfect_game was still running '
                            '(a loop that never ends?). The first lines it printed:'), first
    assert [line.strip() for line in printed] == [f'turn {n}' for n in range(1, 13)]
    assert 'tamper' not in error.evalue.lower()
