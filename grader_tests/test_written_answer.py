"""The written answer of alpha_beta (`perfect_opponent`, 2 marks), which a person marks in formgrader: until then
every page says it is waiting (not lost), the LMS files leave the student's grade empty instead of a partial one, and
after the marks are given `make grade` writes the new feedback and totals without autograding anyone again. Works in
a copy of the demo class graded once (conftest.graded_class); formgrader's own Manual Grading page is clicked
through in test_formgrader."""
import csv
import pathlib
import re
import shutil

import pytest
from bs4 import BeautifulSoup
from nbgrader.api import Gradebook

from conftest import run_grade
from coursetools.instructor import marks
from test_alpha_beta import EXPECTED, TASKS, WAITING

A = 'alpha_beta'
WRITTEN = 'perfect_opponent'


def db(course):
    return 'sqlite:///' + str(course / 'gradebook.db')


def feedback(course, student):
    return BeautifulSoup((course / 'feedback' / student / A / f'{A}.html').read_text(), 'html.parser')


def lms_column(course, filename, key, roster_key):
    """{student: the alpha_beta grade} from one of the LMS files, whose `key` column holds the roster's `roster_key`."""
    with open(course / 'roster.csv', newline='') as handle:
        student_of = {row[roster_key]: row['student_id'] for row in csv.DictReader(handle)}
    with open(course / filename, newline='') as handle:
        return {student_of[row[key]]: row[A] for row in csv.DictReader(handle) if row[key] in student_of}


@pytest.fixture(scope='module')
def course(graded_class, tmp_path_factory):
    return shutil.copytree(graded_class[0], tmp_path_factory.mktemp('written') / 'course')


def test_an_unmarked_answer_is_waiting_everywhere_and_costs_nothing_yet(course):
    assert set(marks.written_answers(db(course), A)) == set(WAITING)
    page = feedback(course, 'ada')
    summary = page.find(id='feedback-summary').get_text(' ', strip=True)
    assert WRITTEN not in summary and 'Every check passed.' in summary
    assert 'Still to be marked by hand: 2 marks' in page.find(id='feedback-waiting').get_text(' ', strip=True)
    contents = page.find(id='toc').get_text(' ', strip=True)
    assert re.search(r'your answer\s*: waiting for a grader \(Score: 0 / 2\)', contents), contents
    assert 'Not marked yet' in page.get_text()           # under the answer itself, where a grader's comment goes
    cat = feedback(course, 'cat').find(id='feedback-summary').get_text(' ', strip=True)
    assert 'score_counted' in cat and WRITTEN not in cat     # her real mistake is still the first thing to fix
    eve = feedback(course, 'eve').find(id='feedback-summary').get_text(' ', strip=True)
    assert re.search(r'perfect_opponent.*lost 2 of 2 marks.*No answer', eve, re.S), eve      # left as released
    report = BeautifulSoup((course / 'reports' / f'{A}.html').read_text(), 'html.parser')
    assert f'{len(WAITING)} students with a written answer still to be marked by hand' in report.get_text(' ')
    written = next(row for row in report.find('table', class_='failed-checks').find_all('tr') if WRITTEN in row.text)
    assert 'no answer (a written answer handed in as released)' in written.text       # not a failed test
    assert not any(student in written.text for student in WAITING), written.text      # nor waiting ones
    canvas = lms_column(course, 'grades-canvas.csv', 'ID', 'lms_user_id')
    moodle = lms_column(course, 'grades-moodle.csv', 'Email address', 'email')
    assert {canvas[s] for s in WAITING} == {moodle[s] for s in WAITING} == {''}       # not a partial mark
    assert canvas['eve'] == moodle['eve'] == '13' and canvas['kim'] == '0'          # a blank answer; no submission


def test_marks_given_by_hand_reach_the_feedback_and_the_totals_without_autograding_again(course):
    with Gradebook(db(course)) as gradebook:         # what formgrader's Manual Grading page does with its inputs
        for student, score in (('ada', 2), ('cat', 1)):
            grade = gradebook.find_grade(WRITTEN, A, A, student)
            grade.manual_score, grade.needs_manual_grade = score, False
        gradebook.find_comment(WRITTEN, A, A, 'cat').manual_comment = 'The guarantee, yes; what does it cost?'
        gradebook.db.commit()
    page = course / 'feedback' / '{}' / A / f'{A}.html'
    untouched = {s: pathlib.Path(str(page).format(s)).stat().st_mtime_ns for s in EXPECTED if s not in ('ada', 'cat')}
    graded = {s: (course / 'autograded' / s / A / f'{A}.ipynb').stat().st_mtime_ns for s in EXPECTED}

    result = run_grade(course, A)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f'{A}: marks given by hand changed for 2 submissions since their feedback was written' in result.stdout
    assert f'== {A}: autograde' not in result.stdout
    assert {s: (course / 'autograded' / s / A / f'{A}.ipynb').stat().st_mtime_ns for s in EXPECTED} == graded
    assert {s: pathlib.Path(str(page).format(s)).stat().st_mtime_ns for s in untouched} == untouched

    table, _ = marks.marks_by_task(db(course), A)
    assert (table['ada'][WRITTEN], sum(table['ada'].values())) == (2, 17)
    assert (table['cat'][WRITTEN], sum(table['cat'].values())) == (1, 15)
    assert re.search(r'^ada( +\d+){%d} +17$' % len(TASKS), result.stdout, re.M), result.stdout
    assert f'until it is: {len(WAITING) - 2} students ({", ".join(sorted(set(WAITING) - {"ada", "cat"}))}).' \
        in result.stdout

    ada = feedback(course, 'ada')
    assert '(Score: 17 / 17)' in ada.find('h1').get_text() and ada.find(id='feedback-waiting') is None
    cat = feedback(course, 'cat')
    assert re.search(r'perfect_opponent.*lost 1 of 2 marks.*Marked by hand',
                     cat.find(id='feedback-summary').get_text(' ', strip=True), re.S)
    assert 'The guarantee, yes; what does it cost?' in cat.get_text()

    with open(course / 'grades.csv', newline='') as handle:
        scores = {row['student_id']: float(row['score']) for row in csv.DictReader(handle) if row['assignment'] == A}
    assert (scores['ada'], scores['cat']) == (17, 15)
    canvas = lms_column(course, 'grades-canvas.csv', 'ID', 'lms_user_id')
    assert (canvas['ada'], canvas['cat'], canvas['ben']) == ('17', '15', '')      # ben's answer still waits
    assert 'left empty until their written answers are marked by hand' in result.stdout

    again = run_grade(course, A)
    assert again.returncode == 0 and 'marks given by hand changed' not in again.stdout


def test_a_written_answer_over_the_text_limit_is_not_graded_and_prose_over_it_is_left_out(tmp_path):
    """A written answer is graded text, so one over `notebook_limits.MAX_TEXT_CHARS` is not cut: the notebook is not
    graded, with the reason. The same text in a cell of the student's own is left out of the graded copy instead."""
    import nbformat
    from conftest import ROOT
    from coursetools.instructor import notebook_limits, repair
    release = nbformat.read(ROOT / 'release' / A / f'{A}.ipynb', as_version=4)
    long = 'Minimax assumes the best reply. ' * (notebook_limits.MAX_TEXT_CHARS // 32 + 1)
    answered = next(cell for cell in release.cells if cell.metadata.get('nbgrader', {}).get('grade_id') == WRITTEN)
    answered.source = long
    nbformat.write(release, tmp_path / 'answer.ipynb')
    nb, notes = repair.read_notebook(tmp_path / 'answer.ipynb')
    text = sum(len(cell.source) for cell in release.cells if cell.cell_type in ('markdown', 'raw'))
    assert nb is None and notes == [f'answer.ipynb has {text:,} characters of text in graded cells, more than the '
                                    '10,000,000 a notebook may have: not graded']
    answered.source = 'Minimax assumes the best reply.'
    release.cells.append(nbformat.v4.new_markdown_cell(long))
    nbformat.write(release, tmp_path / 'prose.ipynb')
    nb, notes = repair.read_notebook(tmp_path / 'prose.ipynb')
    assert notes == [f'left out 1 cell(s) of text, {len(long):,} characters (the notebook has more than '
                     '10,000,000): the graded copy shows a note in their place']
    assert nb.cells[-1].source == f'*({len(long):,} characters of text left out of the graded copy)*'
    assert next(cell.source for cell in nb.cells if cell.metadata.get('nbgrader', {}).get('grade_id') == WRITTEN) == \
        'Minimax assumes the best reply.'
