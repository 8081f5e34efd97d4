"""formgrader, nbgrader's own web page for instructors, on a fresh checkout, clicked through in a real browser
(Debian's chromium), with alpha_beta (the workbook with a written answer): generate the student version, Release it
to the course's exchange, a student fetches and submits with nbgrader's commands, Collect, Autograde the submission
(the course's sandbox and checker judge it), mark the written answer on the Manual Grading page, Generate feedback.
The marks and the feedback page are those `make grade` gives the same answers, plus the marks given by hand."""
import time

import nbformat
import pytest

import test_browser
from conftest import ROOT, needs_sandbox
from coursetools.instructor import democlass, marks
from test_browser import ARTIFACTS, Server
from test_nbgrader_tools import checkout, log_of, prefixed_nbgrader

pytestmark = [pytest.mark.alone, needs_sandbox]
browser, open_page = test_browser.browser, test_browser.open_page
STUDENT = 'zoe'
ASSIGNMENT = 'alpha_beta'
NOTEBOOK = f'{ASSIGNMENT}.ipynb'
WRITTEN = 'perfect_opponent'
COMMENT = 'Both halves: the guarantee and what it gives up.'
ACTING = ('\n\n### In short\n\n<script>window.acted = 1</script><img src="x" onerror="window.acted = 2">'
          '<a href="javascript:window.acted = 3">more</a>')


def scores(course):
    """{grade_id: (score, needs manual grade)} of the student's submission, and the grader's comment on the written
    answer."""
    from nbgrader.api import Gradebook
    with Gradebook(f'sqlite:///{course / "gradebook.db"}') as gradebook:
        notebook = gradebook.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, STUDENT)
        return ({grade.name: (grade.score, grade.needs_manual_grade) for grade in notebook.grades},
                gradebook.find_comment(WRITTEN, ASSIGNMENT, ASSIGNMENT, STUDENT).manual_comment)


def wait_for(condition, timeout=30):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, 'formgrader did not save the mark'
        time.sleep(0.2)


@pytest.fixture(scope='module')
def formgrader(tmp_path_factory):
    """A checkout with no gradebook and nothing submitted, and a Jupyter server (with nbgrader's extensions, as
    the venv installs them) started in it."""
    work = tmp_path_factory.mktemp('formgrader')
    course = checkout(work / 'course', students=[])
    server = Server(course, work)
    try:
        yield course, server
    finally:
        server.stop()


def row(page, text, column='name'):
    """The row of formgrader's table whose `column` cell shows `text`."""
    return page.locator('#main-table tr').filter(has=page.locator(f'td.{column}', has_text=text))


def click_and_confirm(page, link, success, timeout=120_000):
    """Click a formgrader action and wait for its dialog; an error dialog fails the test with nbgrader's log."""
    link.click()
    page.wait_for_selector('#success-modal, #error-modal', state='visible', timeout=timeout)
    if page.locator('#error-modal').count():
        raise AssertionError(page.locator('#error-modal').inner_text())
    assert success in page.locator('#success-modal').inner_text()
    page.locator('#success-modal button', has_text='OK').click()
    page.wait_for_selector('#success-modal', state='detached', timeout=10_000)


def test_release_collect_autograde_manual_grading_and_feedback_in_formgrader(formgrader, open_page):
    course, server = formgrader
    page = open_page(1280, 800)
    page.goto(f'{server.base}/formgrader/manage_assignments?token={server.token}', wait_until='domcontentloaded')
    try:
        assignment = row(page, ASSIGNMENT)
        assignment.wait_for(timeout=60_000)
        click_and_confirm(page, assignment.locator('td.assign a'),
                          f"Successfully created the student version of '{ASSIGNMENT}'")
        assert (course / 'release' / ASSIGNMENT / NOTEBOOK).exists() and (course / 'gradebook.db').exists()
        click_and_confirm(page, row(page, ASSIGNMENT).locator('td.release a'), f"Successfully released '{ASSIGNMENT}'")
        assert (course / 'exchange' / 'minimax' / 'outbound' / ASSIGNMENT / NOTEBOOK).exists()

        home = course.parent / STUDENT          # a student on the same machine, with nbgrader's own commands
        home.mkdir()
        student = [f'--Exchange.root={course / "exchange"}', '--CourseDirectory.course_id=minimax']
        fetched = prefixed_nbgrader(home, course, 'fetch_assignment', ASSIGNMENT, *student)
        assert fetched.returncode == 0, log_of(fetched)[-2000:]
        fetched = nbformat.read(home / ASSIGNMENT / NOTEBOOK, as_version=4)    # ada's answers, written answer too
        preamble, answers = democlass.read_answers(ROOT / 'demo_class' / ASSIGNMENT / 'ada.py')
        answers[WRITTEN] += ACTING        # markup meant to act in the instructor's browser: shown, never run
        nbformat.write(democlass.fill(fetched, preamble, answers), home / ASSIGNMENT / NOTEBOOK)
        submitted = prefixed_nbgrader(home, course, 'submit', ASSIGNMENT, *student,
                                      f'--CourseDirectory.student_id={STUDENT}')
        assert submitted.returncode == 0, log_of(submitted)[-2000:]

        page.reload(wait_until='domcontentloaded')
        row(page, ASSIGNMENT).wait_for(timeout=60_000)
        click_and_confirm(page, row(page, ASSIGNMENT).locator('td.collect a'),
                          f"Successfully collected submissions of '{ASSIGNMENT}'")
        assert (course / 'submitted' / STUDENT / ASSIGNMENT / NOTEBOOK).exists()

        page.goto(f'{server.base}/formgrader/manage_submissions/{ASSIGNMENT}?token={server.token}',
                  wait_until='domcontentloaded')
        submission = row(page, STUDENT, column='student-id')
        submission.wait_for(timeout=60_000)
        click_and_confirm(page, submission.locator('td.autograde a'),
                          f"Successfully autograded '{ASSIGNMENT}' for student '{STUDENT}'", timeout=300_000)
        graded, _ = scores(course)
        assert graded.pop(WRITTEN) == (0, True)             # waiting for a grader
        assert sum(score for score, _ in graded.values()) == 15 and not any(needs for _, needs in graded.values())
        page.reload(wait_until='domcontentloaded')
        page.wait_for_function("() => /15 \\/ 17/.test(document.querySelector('#main-table').innerText)",
                               timeout=60_000)

        # Manual Grading: the notebook's submissions, the student's, the written answer's inputs
        page.goto(f'{server.base}/formgrader/gradebook/{ASSIGNMENT}/{ASSIGNMENT}?token={server.token}',
                  wait_until='domcontentloaded')
        listed = page.locator('#main-table tr').filter(has_text=STUDENT)
        listed.locator('td.needs-manual-grade span').wait_for(timeout=60_000)     # flagged as needing a grader
        listed.locator('td.name a').first.click()
        answer = page.locator(f'input.score#{WRITTEN}')
        answer.wait_for(timeout=60_000)
        assert page.evaluate('() => window.acted') is None      # no script of the student's ran
        assert 'Minimax works out the value a player can force' in page.locator('body').inner_text()
        assert page.locator('.nbgrader_cell h3', has_text='In short').count() == 1
        assert '<script>window.acted = 1</script>' in page.locator('body').inner_text()
        # the page binds its inputs once it has fetched the grades and comments (a mark typed before is lost), and
        # fetches them only at window 'load', which waits for MathJax from a CDN: off-machine requests fail at once
        page.wait_for_function('() => formgrader.grades.loaded && formgrader.comments.loaded', timeout=60_000)
        answer.fill('2')
        answer.press('Tab')
        comment = page.locator(f'.nbgrader_cell:has(input#{WRITTEN}) textarea.comment')
        comment.fill(COMMENT)
        comment.press('Tab')
        wait_for(lambda: scores(course) == ({**graded, WRITTEN: (2, False)}, COMMENT))
        assert sum(marks.marks_by_task(f'sqlite:///{course / "gradebook.db"}', ASSIGNMENT)[0][STUDENT].values()) == 17

        page.goto(f'{server.base}/formgrader/manage_assignments?token={server.token}', wait_until='domcontentloaded')
        row(page, ASSIGNMENT).wait_for(timeout=60_000)
        click_and_confirm(page, row(page, ASSIGNMENT).locator('td.generate-feedback a'),
                          f"Successfully generated feedback of '{ASSIGNMENT}'", timeout=300_000)
        feedback = course / 'feedback' / STUDENT / ASSIGNMENT / f'{ASSIGNMENT}.html'
        assert feedback.exists()
        text = feedback.read_text()
        assert 'Score: 17.0 / 17.0' in text and COMMENT in text and 'BEGIN HIDDEN TESTS' not in text
        assert '<script>window.acted' not in text and 'onerror=' not in text and '<h3 id="In-short">In short' in text
    finally:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / 'formgrader-end.png'), full_page=True)
