"""One mark per student, the same in every output (issue 43): a small class graded by `make grade` under a
percentage late policy, then again after a written answer is marked by hand, and every output read back: the
table `make grade` prints, the report, the feedback pages, grades.csv, grades-canvas.csv and grades-moodle.csv.
A late notebook graded by plain `nbgrader autograde` takes the same penalty.

The expected marks are worked here by hand from the policy (10% of the marks per started day late, at most 25%,
nothing within 30 minutes) and the demo students' autograded marks (test_demo_class, test_alpha_beta)."""
import csv
import html
import re
import subprocess
import sys

import pytest
from nbgrader.api import Gradebook

from conftest import copy_course, grade_env, needs_sandbox, run_grade

A, B = 'noughts_and_crosses', 'alpha_beta'
POLICY = f"""
c.Term.duedates = {{'{A}': '2026-11-20 17:00:00 UTC', '{B}': '2026-11-27 17:00:00 UTC'}}
c.LateSubmissionPlugin.penalty_method = 'percentage'
c.LatePenalty.percent = 10
c.LatePenalty.unit = 'day'
c.LatePenalty.cap = 25
c.LatePenalty.grace_minutes = 30
"""
SUBMITTED = {(A, 'ada'): '2026-11-20 16:00:00',    # on time
             (A, 'cat'): '2026-11-22 18:00:00',    # 49 hours late: 3 started days, 30%, capped at 25%
             (A, 'lee'): '2026-11-22 16:00:00',    # 47 hours late, with the roster's 48-hour extension: on time
             (A, 'max'): '2026-11-20 16:00:00',    # on time, nothing answered
             (B, 'ada'): '2026-11-27 17:20:00',    # 20 minutes late: within the grace period
             (B, 'cat'): '2026-11-28 09:00:00',    # 16 hours late: 1 started day, 10%
             (B, 'max'): '2026-11-28 09:00:00'}    # the same, with nothing answered: 10% of 0 is all of 0
# (raw, penalty, marks waiting) by hand: noughts_and_crosses out of 12, alpha_beta out of 17
EXPECTED = {A: {'ada': (12, 0, 0), 'cat': (11, 0.25 * 12, 0), 'lee': (11, 0, 0), 'max': (0, 0, 0)},
            B: {'ada': (15, 0, 2),                  # 15 autograded, her written answer (2) still waits
                'cat': (14 + 1, 0.10 * 17, 0),      # 14 autograded, 1 given by hand after the first run
                'max': (0 + 2, 0.10 * 17, 0)}}      # 2 given by hand: the penalty is taken again, now 1.7
SHOWN = {A: {'ada': '12', 'cat': '8 (11 - 3 late)', 'lee': '11', 'max': '0'},
         B: {'ada': '15 + 2 waiting', 'cat': '13.3 (15 - 1.7 late)', 'max': '0.3 (2 - 1.7 late)'}}


def final(raw, penalty, waiting):
    return max(0, raw - penalty)


@pytest.fixture(scope='module')
def graded(tmp_path_factory):
    course = copy_course(tmp_path_factory.mktemp('one-mark') / 'course', students=['ada', 'cat', 'lee', 'max'])
    with open(course / 'nbgrader_config.py', 'a') as config:
        config.write(POLICY)
    for (assignment, student), when in SUBMITTED.items():
        (course / 'submitted' / student / assignment / 'timestamp.txt').write_text(f'{when}.000000 UTC\n')
    first = run_grade(course)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    with Gradebook('sqlite:///' + str(course / 'gradebook.db')) as gradebook:     # as formgrader saves a mark
        for student, given in (('cat', 1), ('max', 2)):
            grade = gradebook.find_grade('perfect_opponent', B, B, student)
            grade.manual_score, grade.needs_manual_grade = given, False
        gradebook.db.commit()
    second = run_grade(course)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    return course, second.stdout


def section(stdout, assignment):
    """The lines of `assignment`'s table in make grade's output."""
    return stdout.split(f'\n{assignment}\n', 1)[1].split('\n\n', 1)[0].splitlines()


@needs_sandbox
def test_the_table_make_grade_prints(graded):
    _, stdout = graded
    for assignment, shown in SHOWN.items():
        lines = section(stdout, assignment)
        for student, text in shown.items():
            row = next(line for line in lines if line.startswith(student + ' '))
            assert row.endswith(' ' + text), row
        assert [line.split()[-1] for line in lines if line.startswith('ada ')] == (['12'] if assignment == A else
                                                                                   ['waiting'])
    assert any(line.startswith('? ') and line.endswith('(ada).') for line in section(stdout, B))


def report(course, assignment):
    return (course / 'reports' / f'{assignment}.html').read_text(encoding='utf-8')


def marks_row(page, student):
    row = re.search(rf'<tr data-student="{student}"><td>{student}</td>(.*?)</tr>', page.split('class="marks"')[1])
    return [html.unescape(re.sub(r'<[^>]+>', '', cell)) for cell in re.findall(r'<td[^>]*>.*?</td>', row.group(1))]


@needs_sandbox
def test_the_report(graded):
    course, _ = graded
    for assignment, expected in EXPECTED.items():
        page = report(course, assignment)
        finals = [final(*parts) for parts in expected.values()]
        assert f'mean {sum(finals) / len(finals):.1f} / {12 if assignment == A else 17}' in page
        for student, text in SHOWN[assignment].items():
            assert marks_row(page, student)[-1] == text
        total_chart = page.split('<figure class="total-histogram">')[1]
        bars = {float(m): int(n) for m, n in re.findall(r'data-mark="([^"]+)" data-count="(\d+)"', total_chart)}
        assert {m: n for m, n in bars.items() if n} == {  # a bar per final mark (halves when one is fractional)
            round(f * 2) / 2 if assignment == B else f: 1 for f in finals}
    ab = report(course, B)
    assert marks_row(ab, 'ada')[6] == 'waiting' and marks_row(ab, 'cat')[6] == '1'   # perfect_opponent
    assert re.search(r'class="waiting-students">ada</span>', ab)
    assert 'late by 2 days, 1:00:00: 8 (11 - 3 late)' in report(course, A)


@needs_sandbox
def test_the_feedback_pages(graded):
    from bs4 import BeautifulSoup
    course, _ = graded
    for assignment, shown in SHOWN.items():
        for student, text in shown.items():
            page = BeautifulSoup((course / 'feedback' / student / assignment / f'{assignment}.html').read_text(),
                                 'html.parser')
            raw, penalty, waiting = EXPECTED[assignment][student]
            assert f'(Score: {final(raw, penalty, waiting):g} / {12 if assignment == A else 17})' in page.h1.text
            assert page.find(id='feedback-mark').get_text(' ', strip=True) == \
                f'Your mark: {text} of {12 if assignment == A else 17}'


@needs_sandbox
def test_grades_csv(graded):
    course, _ = graded
    with open(course / 'grades.csv', newline='') as handle:
        rows = {(row['assignment'], row['student_id']): row for row in csv.DictReader(handle)}
    for assignment, expected in EXPECTED.items():
        for student, (raw, penalty, waiting) in expected.items():
            row = rows[assignment, student]
            assert (float(row['raw_score']), float(row['late_submission_penalty']), float(row['score'])) == \
                pytest.approx((raw, penalty, final(raw, penalty, waiting)))


def lms_column(course, filename, key, roster_key, assignment):
    with open(course / 'roster.csv', newline='') as handle:
        student_of = {row[roster_key]: row['student_id'] for row in csv.DictReader(handle)}
    with open(course / filename, newline='') as handle:
        return {student_of[row[key]]: row[assignment] for row in csv.DictReader(handle) if row[key] in student_of}


@needs_sandbox
def test_the_canvas_and_moodle_files(graded):
    course, stdout = graded
    for assignment, expected in EXPECTED.items():
        canvas = lms_column(course, 'grades-canvas.csv', 'ID', 'lms_user_id', assignment)
        moodle = lms_column(course, 'grades-moodle.csv', 'Email address', 'email', assignment)
        for student, (raw, penalty, waiting) in expected.items():
            wanted = '' if waiting else f'{final(raw, penalty, waiting):g}'
            assert canvas[student] == moodle[student] == wanted, (assignment, student)
    assert 'left empty until their written answers are marked by hand (formgrader, Manual Grading; then ' \
           '`make grade` again): ada' in stdout


@needs_sandbox
def test_plain_nbgrader_autograde_takes_the_same_penalty(tmp_path):
    course = copy_course(tmp_path / 'course', students=['cat'])
    with open(course / 'nbgrader_config.py', 'a') as config:
        config.write(POLICY)
    (course / 'submitted' / 'cat' / A / 'timestamp.txt').write_text(f'{SUBMITTED[A, "cat"]}.000000 UTC\n')
    for command in (['nbgrader', 'generate_assignment', A, '--force'], ['coursetools.instructor.roster', '--apply', A],
                    ['nbgrader', 'autograde', A]):
        done = subprocess.run([sys.executable, '-m', *command], cwd=course, env=grade_env(course),
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    with Gradebook('sqlite:///' + str(course / 'gradebook.db')) as gradebook:
        submission = gradebook.find_submission(A, 'cat')
        assert (submission.score, submission.late_submission_penalty) == pytest.approx(EXPECTED[A]['cat'][:2])
