"""`make grade` on the shapes a course folder takes: a fresh clone (the demo class built by itself, some of its
students with one workbook of two), a course with real work (never touched) and an assignment nobody has handed
in yet beside one that has submissions. `--sequential` is graded in test_hostile.py, honest and hostile
notebooks together."""
import csv
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import ROOT, copy_course, run_grade
from test_demo_class import EXPECTED
from coursetools.instructor import preflight


def test_a_fresh_clone_grades_the_demo_class_each_student_in_the_workbooks_they_handed_in(graded_class):
    fresh, result = graded_class     # graded as on a fresh clone: no submitted/ folder
    assert 'built the demo class' in result.stdout
    assert {p.parent.name for p in (fresh / 'submitted').glob('*/noughts_and_crosses')} == set(EXPECTED)
    assert (fresh / 'roster.csv').read_bytes() == (ROOT / 'demo_class' / 'roster.csv').read_bytes()
    handed_in = {(p.parent.name, p.name) for p in (fresh / 'submitted').glob('*/*') if p.is_dir()}
    assert {(s, 'alpha_beta') for s in EXPECTED} - handed_in, 'some demo students hand in one workbook only'
    with open(fresh / 'grades.csv') as handle:
        graded = {(row['student_id'], row['assignment']) for row in csv.DictReader(handle) if row['timestamp']}
    assert graded == handed_in          # the marks themselves: test_demo_class.py


FORMULA = '=HYPERLINK(CONCAT(D3,J3),D9)'        # a spreadsheet runs it; it could send other rows away
FORGER = 'eve\nnoughts_and_crosses,,2026-11-20 10:00:00,zoe,,,,12.0,0.0,12.0,12.0'     # a line break: zoe's row
SCRIPTER = '<img src=x onerror=alert(1)>'          # formgrader's pages show a student id as it is


def test_real_work_is_never_touched_and_an_assignment_nobody_handed_in_stops_nothing(tmp_path):
    """And folders named as the exchange lets a student name them: a formula, a comma, a line break (which had
    stopped nbgrader for the whole class, and could forge another student's row in grades.csv), markup (which
    formgrader's pages show as it is)."""
    course = copy_course(tmp_path / 'first-week', students=[])
    for student in ('zoe', FORMULA, 'mal,lory', FORGER, SCRIPTER):   # real students; nobody has the second workbook
        folder = course / 'submitted' / student / 'noughts_and_crosses'
        folder.mkdir(parents=True)
        shutil.copy(ROOT / 'release/noughts_and_crosses/noughts_and_crosses.ipynb', folder)
    before = {p: p.read_bytes() for p in (course / 'submitted').rglob('*') if p.is_file()}
    result = run_grade(course)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert 'built the demo class' not in result.stdout
    assert {p: p.read_bytes() for p in (course / 'submitted').rglob('*') if p.is_file()} == before
    assert sum('No submissions yet for alpha_beta' in line for line in result.stdout.splitlines()) == 1
    assert f'submitted/{FORGER!r}/noughts_and_crosses is not graded' in result.stdout
    assert f'submitted/{SCRIPTER!r}/noughts_and_crosses is not graded' in result.stdout
    assert (course / 'grades.csv').exists() and (course / 'reports' / 'noughts_and_crosses.html').exists()
    assert not (course / 'reports' / 'alpha_beta.html').exists()
    with open(course / 'grades.csv', newline='') as handle:
        rows = [(row['student_id'], row['score']) for row in csv.DictReader(handle)]
    assert {"'" + FORMULA, 'mal,lory', 'zoe'} <= {student for student, _ in rows}
    assert [score for student, score in rows if student == 'zoe'] == ['0.0']     # one row: hers
    assert not any('\n' in student or student.startswith('=') or '<' in student for student, _ in rows)


def test_grades_csv_holds_nbgraders_values_each_in_its_own_column(graded_class, tmp_path):
    """The demo class's grades.csv, against nbgrader's own export of the same gradebook: the same lines, but for
    the one whose roster name holds a comma (`García, Jr`), which nbgrader writes bare (twelve columns under eleven
    headings) and which here reads back as nbgrader's eleven values."""
    from nbgrader.api import Gradebook
    from nbgrader.plugins import CsvExportPlugin
    course, _ = graded_class
    with Gradebook(f'sqlite:///{course / "gradebook.db"}') as gradebook:
        CsvExportPlugin(to=str(tmp_path / 'nbgrader.csv')).export(gradebook)
    theirs = (tmp_path / 'nbgrader.csv').read_text().splitlines()
    ours = (course / 'grades.csv').read_text(encoding='utf-8').splitlines()      # what make grade wrote
    assert len(ours) == len(theirs) > 30
    rows = list(csv.reader(ours))
    assert {len(row) for row in rows} == {11}
    assert [','.join(row) for row in rows] == theirs
    assert [line for line, nbgrader in zip(ours, theirs) if line != nbgrader] == [
        line for line in ours if 'García, Jr' in line] != []


RUN_FOLDER = '''
import os, sys, tempfile
from coursetools.instructor import preflight
folder = preflight.take_a_run_folder()
print(folder, tempfile.gettempdir(), os.environ['TMPDIR'], sorted(os.listdir(folder)))
'''


def test_a_run_removes_the_folders_of_runs_that_are_gone_and_no_other(tmp_path):
    """The run's own temporary folder, and the sweep before it: a killed run's folder (its lock file unlocked)
    goes; a live run's (locked), and a folder of another program's named alike (no lock file), stay."""
    import fcntl
    for name in ('nb-gone1234/nbslot-x/conn', 'nb-live5678', 'nb-theirs90'):
        (tmp_path / name).mkdir(parents=True)
    (tmp_path / 'nb-gone1234/nbslot-x/conn/kernel').write_text('left by a SIGKILL')
    (tmp_path / 'nb-gone1234' / preflight.RUN_LOCK).write_text('')
    with open(tmp_path / 'nb-live5678' / preflight.RUN_LOCK, 'w') as live:
        fcntl.flock(live, fcntl.LOCK_EX)
        run = subprocess.run([sys.executable, '-c', RUN_FOLDER], env=dict(os.environ, TMPDIR=str(tmp_path)),
                             capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    folder, temporary, tmpdir, inside = run.stdout.split(maxsplit=3)
    assert folder == temporary == tmpdir and pathlib.Path(folder).parent == tmp_path
    assert inside.strip() == repr([preflight.RUN_LOCK])
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted(['nb-live5678', 'nb-theirs90', pathlib.Path(folder).name])


@pytest.mark.parametrize('length, args', [(60, ()), (60, ('--sequential',))])
def test_a_temporary_folder_too_long_for_the_kernels_sockets_is_refused_in_one_line(tmp_path, length, args):
    course = copy_course(tmp_path / 'course', students=('ada',))
    folder = pathlib.Path(tempfile.mkdtemp())
    folder = folder / ('t' * (length - len(str(folder)) - 1))     # a path of `length` bytes, under /tmp
    folder.mkdir()
    env = dict(os.environ, COURSE_ROOT=str(course), TMPDIR=str(folder))
    result = subprocess.run([sys.executable, '-m', 'coursetools.instructor.grade', *args], cwd=course, env=env,
                            capture_output=True, text=True)
    shutil.rmtree(folder.parent)
    assert result.returncode == 1 and result.stdout == ''
    assert result.stderr.startswith(f'Cannot grade: the temporary folder {folder} has a path of {length} bytes')
    assert not (course / 'gradebook.db').exists()


def test_a_submission_that_breaks_staging_in_a_way_not_foreseen_stops_no_other(tmp_path, monkeypatch):
    """Whatever a student's file does to the staging (here a reader that fails on cat's), that student is not
    graded, with the reason, and every other student is staged as usual."""
    from coursetools.instructor import repair
    course = copy_course(tmp_path / 'course', students=('ada', 'cat', 'dan'))
    read = repair.read_notebook

    def failing_on_cat(path):
        if 'cat' in path.parts:
            raise RuntimeError('a reader that fails')
        return read(path)
    monkeypatch.setattr(repair, 'read_notebook', failing_on_cat)
    notes = repair.stage(course, 'noughts_and_crosses', tmp_path / 'staging')
    assert notes['cat'] == ['noughts_and_crosses.ipynb could not be staged (RuntimeError: a reader that fails): '
                            'not graded']
    staged = sorted(p.parts[-3] for p in (tmp_path / 'staging').glob('*/noughts_and_crosses/*.ipynb'))
    assert staged == ['ada', 'dan'] and notes['ada'] == notes['dan'] == []


# --- when the grader, not the student, leaves a notebook ungraded --------------------------------------------------

def test_the_students_the_grader_left_ungraded_are_named_and_a_students_own_fault_is_not():
    from coursetools.grading.run import RunReport
    from coursetools.instructor import grade
    runs = {'noughts_and_crosses': RunReport(failed=['eve', 'zed', 'amy'], grader_faults=['zed', 'amy'],
                                             unfinished=['bob']),     # eve's notebook was unreadable: her fault
            'alpha_beta': RunReport(failed=['eve']), 'third': None}
    assert grade.grader_faults(runs) == 'noughts_and_crosses: amy, bob, zed'
    assert grade.grader_faults({'alpha_beta': RunReport(failed=['eve'])}) == ''
    assert grade.grader_faults({'a': RunReport(grader_faults=['cat']), 'b': RunReport(unfinished=['dan'])}) == \
        'a: cat; b: dan'


STUBBED_GRADE = '''
import sys
from coursetools.grading.progress import Phases
from coursetools.grading.run import RunReport
from coursetools.instructor import grade
faults = sys.argv.pop(1).split(',') if len(sys.argv) > 2 else []
runs = {'noughts_and_crosses': RunReport(failed=['eve'] + faults, grader_faults=faults)}
grade.grade = lambda *args, **kwargs: (runs, Phases())
grade.main(sys.argv[1:])
print('not reached when the grader left someone ungraded')
'''


@pytest.mark.parametrize('faults', ['', 'zed,amy'])
def test_make_grade_exits_with_3_when_the_grader_left_someone_ungraded(tmp_path, faults):
    """Everything else is written first (here `grade` is a stub); a student's own fault (eve's) keeps exit 0."""
    course = tmp_path / 'course'
    (course / 'source').mkdir(parents=True)
    (course / 'nbgrader_config.py').write_text('')
    result = subprocess.run([sys.executable, '-c', STUBBED_GRADE, *([faults] if faults else []), str(course)],
                            cwd=course, capture_output=True, text=True, env=dict(os.environ, COURSE_ROOT=str(course)))
    if not faults:
        assert result.returncode == 0 and result.stderr == '', result.stderr
        return
    assert result.returncode == 3, result.stdout + result.stderr
    assert result.stderr.splitlines() == ['Not graded because of the grader, not of their work (their notes say why; '
                                          '`make grade` grades them again): noughts_and_crosses: amy, zed']


# --- the marks table -------------------------------------------------------------------------------------------------

def test_the_table_marks_a_notebook_that_could_not_be_graded_apart_from_a_written_answer_waiting():
    from coursetools.instructor import marks
    maxima = {'score': 3, 'perfect_opponent': 2}
    table = {'ada': {'score': 3.0, 'perfect_opponent': 0.0}, 'bob': {'score': 0.0, 'perfect_opponent': 0.0},
             'cat': {'score': 2.0, 'perfect_opponent': 1.0}}
    waiting = {'ada': {'perfect_opponent': 2}, 'bob': {'perfect_opponent': 2}}     # bob's: his notebook's, unscored
    ungraded = {'bob': {'score-values', 'perfect_opponent'}}
    lines = marks.format_table(table, maxima, waiting, ungraded).splitlines()
    assert lines[2].split() == ['ada', '3', '?', '3', '+', '2', 'waiting']      # a waiting mark is not a 0
    assert lines[3].split() == ['bob', '-', '-', '-']
    assert lines[4].split() == ['cat', '2', '1', '3']
    assert lines[5].startswith('? a written answer still to be marked by hand') and lines[5].endswith(
        ': 1 student (ada).')
    assert lines[6].startswith('- not graded: the notebook could not be graded') and lines[6].endswith(
        ': 1 student (bob).')
    assert len(lines) == 7


def test_with_no_written_answer_an_ungraded_notebook_is_not_said_to_wait_for_a_hand_mark():
    from coursetools.instructor import marks
    text = marks.format_table({'ada': {'score': 3.0}, 'bob': {'score': 0.0}}, {'score': 3}, {},
                              {'bob': {'score-values'}})
    assert 'by hand' not in text and '?' not in text
    assert text.splitlines()[3].split() == ['bob', '-', '-'] and '- not graded' in text


@pytest.mark.filterwarnings('ignore:Object of type')         # nbgrader's own, as it adds a submission
def test_the_gradebook_tells_an_ungraded_notebook_from_a_written_answer_waiting(tmp_path, monkeypatch):
    """As nbgrader leaves them: ada graded (her test cell scored, her written answer waiting for a grader), bob's
    notebook never graded (nothing scored), cat's written answer marked by hand."""
    from nbgrader.api import Gradebook
    from coursetools.instructor import marks
    monkeypatch.setenv('PATH', os.path.join(sys.prefix, 'bin') + os.pathsep + os.environ['PATH'])   # alembic
    db = f'sqlite:///{tmp_path / "gradebook.db"}'
    with Gradebook(db) as gradebook:
        gradebook.add_assignment('a')
        gradebook.add_notebook('n', 'a')
        gradebook.add_grade_cell('score-values', 'n', 'a', max_score=3, cell_type='code')
        gradebook.add_grade_cell('perfect_opponent', 'n', 'a', max_score=2, cell_type='markdown')
        gradebook.add_solution_cell('perfect_opponent', 'n', 'a')
        for student in ('ada', 'bob', 'cat'):
            gradebook.add_student(student)
            gradebook.add_submission('a', student)
        for student, test, written in (('ada', 3, None), ('cat', 2, 1)):
            gradebook.find_grade('score-values', 'n', 'a', student).auto_score = test
            gradebook.find_grade('perfect_opponent', 'n', 'a', student).manual_score = written
        gradebook.db.commit()
    assert marks.not_graded(db, 'a') == {'bob': {'score-values', 'perfect_opponent'}}
    lines = marks.marks_table(db, 'a').splitlines()
    assert [line.split() for line in lines[2:5]] == [['ada', '3', '?', '3', '+', '2', 'waiting'],
                                                     ['bob', '-', '-', '-'], ['cat', '2', '1', '3']]
    assert lines[5].endswith(': 1 student (ada).') and lines[6].startswith('- not graded') and len(lines) == 7
