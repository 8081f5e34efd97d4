"""The roster, due dates, extensions and the LMS grade files (coursetools/instructor/roster.py), through real
nbgrader grading of a small class: names and extensions go into nbgrader's gradebook, a late submission loses
marks by nbgrader's own late penalty, and grades-canvas.csv / grades-moodle.csv follow the column rules of
docs/lms.md (read back with the csv module), leaving out a student missing from the roster."""
import csv
import datetime
import re
import shutil

import pytest
from nbgrader.api import Gradebook

from conftest import ROOT, copy_course, needs_sandbox, run_grade
from coursetools.instructor import roster

A = 'noughts_and_crosses'
CANVAS_NAME = 'Noughts and crosses (4321)'
BEN = ('=1+2', '@SUM(A1)')      # first and last name as a spreadsheet would run them
TERM = f"""
c.Term.duedates = {{'{A}': '2026-11-20 17:00:00 UTC'}}
c.Term.lms_names = {{'{A}': '{CANVAS_NAME}'}}
c.LateSubmissionPlugin.penalty_method = 'zero'
"""


def read(path):
    with open(path, newline='', encoding='utf-8') as handle:
        return list(csv.reader(handle))


@pytest.fixture(scope='module')
def term(tmp_path_factory):
    """ada on time (12/12), cat an hour late (11 marks, lost to the penalty), lee two days late with a 48-hour
    extension (on time: 11), zed (ada's answers) not in the roster; graded by `make grade`'s code path. ben, who
    handed nothing in, gave himself names that are formulas in the LMS the roster came from."""
    course = copy_course(tmp_path_factory.mktemp('term') / 'course', students=['ada', 'cat', 'lee'])
    roster_file = course / 'roster.csv'
    roster_file.write_text(roster_file.read_text().replace('ben,Ben,Okafor,', f'ben,{BEN[0]},{BEN[1]},'))
    with open(course / 'nbgrader_config.py', 'a') as config:
        config.write(TERM)
    (course / 'submitted' / 'cat' / A / 'timestamp.txt').write_text('2026-11-20 18:00:00.000000 UTC\n')
    (course / 'submitted' / 'lee' / A / 'timestamp.txt').write_text('2026-11-22 16:00:00.000000 UTC\n')
    shutil.copytree(course / 'submitted' / 'ada' / A, course / 'submitted' / 'zed' / A)
    result = run_grade(course, A)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return course, result


@needs_sandbox
def test_names_due_date_and_extension_are_nbgraders_own(term):
    course, _ = term
    with Gradebook('sqlite:///' + str(course / 'gradebook.db')) as gradebook:
        ada = gradebook.find_student('ada')
        assert (ada.first_name, ada.last_name, ada.email, ada.lms_user_id) == (
            'Ada', 'Byron', 'ada.byron@example.org', '5101')
        assert gradebook.find_assignment(A).duedate == datetime.datetime(2026, 11, 20, 17, 0)
        lee = gradebook.find_submission(A, 'lee')
        assert lee.extension == datetime.timedelta(hours=48) and lee.total_seconds_late == 0
        assert gradebook.find_submission(A, 'cat').total_seconds_late == 3600
        assert gradebook.find_submission(A, 'ada').extension is None


@needs_sandbox
def test_a_run_with_due_dates_prints_no_sqlalchemy_warning(term):
    """lee's extension adds his submission before autograde, through nbgrader's add_submission, whose SQLAlchemy
    warning (three long lines) nbgrader_config.py leaves out."""
    _, result = term
    assert 'SAWarning' not in result.stdout + result.stderr and '== noughts_and_crosses: release' in result.stdout


@needs_sandbox
def test_grades_csv_takes_the_late_penalty_off(term):
    course, _ = term
    with open(course / 'grades.csv') as handle:
        rows = {row['student_id']: row for row in csv.DictReader(handle) if row['assignment'] == A}
    assert {s: (float(r['raw_score']), float(r['late_submission_penalty']), float(r['score']))
            for s, r in rows.items() if s in ('ada', 'cat', 'lee', 'zed')} == {
        'ada': (12, 0, 12), 'cat': (11, 11, 0), 'lee': (11, 0, 11), 'zed': (12, 0, 12)}
    assert rows['cat']['last_name'] == 'Nguyen' and rows['pam']['score'] == '0.0'     # in the roster, no submission
    assert (rows['ben']['first_name'], rows['ben']['last_name']) == ("'=1+2", "'@SUM(A1)")


@needs_sandbox
def test_canvas_file_follows_the_gradebook_import_rules(term):
    course, result = term
    rows = read(course / 'grades-canvas.csv')
    assert rows[0] == ['Student', 'ID', 'SIS User ID', 'SIS Login ID', 'Section', CANVAS_NAME]
    assert re.fullmatch(r'.+ \(\d+\)', rows[0][5])                     # assignment name (Canvas assignment id)
    assert rows[1] == ['    Points Possible', '', '', '', '', '12']
    students = rows[2:]
    assert len(students) == len(roster.read_roster(ROOT / 'demo_class' / 'roster.csv')) == 16
    assert all(len(row) == 6 and any(row[1:4]) for row in students)     # every row names the user
    assert all(re.fullmatch(r'\d+(\.\d+)?', row[5]) for row in students)
    by_name = {row[0]: row for row in students}
    assert by_name['Byron, Ada'] == ['Byron, Ada', '5101', 'S2026001', 'abyron', 'Monday lab', '12']
    assert by_name['Nguyen, Cat'][5] == '0' and by_name['Fischer, Lee'][5] == '11'
    assert by_name['García, Jr, Oli'][1] == '5115'                      # a comma in a name survives the quoting
    assert by_name["'@SUM(A1), =1+2"][1] == '5102'                     # ben's names, never run as a formula
    assert [row[0] for row in students] == sorted((row[0] for row in students), key=str.lower)
    assert not any('zed' in cell for row in rows for cell in row)
    assert 'not in the roster, so left out of them: zed' in result.stdout


@needs_sandbox
def test_moodle_file_follows_the_grade_import_rules(term):
    course, _ = term
    rows = read(course / 'grades-moodle.csv')
    assert rows[0] == ['First name', 'Last name', 'ID number', 'Email address', CANVAS_NAME]
    students = {row[3]: row for row in rows[1:]}
    assert len(students) == 16 and all(row[2] and row[3] for row in rows[1:])   # keyed by email and idnumber
    assert all(re.fullmatch(r'\d+(\.\d+)?', row[4]) for row in rows[1:])       # a number Moodle reads
    assert students['ada.byron@example.org'] == ['Ada', 'Byron', 'S2026001', 'ada.byron@example.org', '12']
    assert students['cat.nguyen@example.org'][4] == '0' and students['lee.fischer@example.org'][4] == '11'
    assert students['kim.obrien@example.org'][1] == "O'Brien"
    assert students['ben.okafor@example.org'][:2] == ["'=1+2", "'@SUM(A1)"]
    assert not any('zed' in cell for row in rows for cell in row)


def test_a_roster_that_cannot_be_used_says_where(tmp_path):
    path = tmp_path / 'roster.csv'
    for text, message in (('student_id,name\nada,Ada\n', 'only these columns'),
                          ('student_id,email\nada,a@x\nada,b@x\n', 'line 3: ada is listed twice'),
                          ('student_id,extension_hours\nada,two days\n', 'line 2: extension_hours must be'),
                          ('first_name\nAda\n', 'must name student_id')):
        path.write_text(text)
        with pytest.raises(roster.RosterError, match=message):
            roster.read_roster(path)
    path.write_text('student_id,extension_hours\nada,1.5\nben,\n')
    assert {s: e.extension for s, e in roster.read_roster(path).items()} == {
        'ada': datetime.timedelta(hours=1.5), 'ben': None}
    assert roster.read_roster(tmp_path / 'none.csv') == {}
