"""`make grade` on the shapes a course folder takes: a fresh clone (the demo class built by itself), a course
with real work (never touched), `--sequential` (plain `nbgrader autograde`), and an assignment nobody has handed
in yet beside one that has submissions."""
import csv
import shutil

from conftest import ROOT, copy_course, run_grade
from coursetools.instructor import marks
from test_demo_class import EXPECTED, TASKS


def test_a_fresh_clone_grades_the_demo_class_and_real_submissions_are_never_touched(graded_class, tmp_path):
    fresh, result = graded_class     # graded as on a fresh clone: no submitted/ folder
    assert 'built the demo class' in result.stdout
    assert {p.parent.name for p in (fresh / 'submitted').glob('*/noughts_and_crosses')} == set(EXPECTED)
    assert (fresh / 'roster.csv').read_bytes() == (ROOT / 'demo_class' / 'roster.csv').read_bytes()

    real = copy_course(tmp_path / 'real', students=[])
    folder = real / 'submitted' / 'zoe' / 'noughts_and_crosses'
    folder.mkdir(parents=True)
    shutil.copy(ROOT / 'release/noughts_and_crosses/noughts_and_crosses.ipynb', folder)
    before = {p: p.read_bytes() for p in (real / 'submitted').rglob('*') if p.is_file()}
    result = run_grade(real, 'noughts_and_crosses')
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert 'built the demo class' not in result.stdout
    assert {p: p.read_bytes() for p in (real / 'submitted').rglob('*') if p.is_file()} == before


def test_sequential_grading_gives_the_same_marks(tmp_path):
    course = copy_course(tmp_path / 'course', students=('ada', 'dan', 'max'))
    result = run_grade(course, 'noughts_and_crosses', '--sequential')
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    table, _ = marks.marks_by_task('sqlite:///' + str(course / 'gradebook.db'), 'noughts_and_crosses')
    assert {s: tuple(int(row[t]) for t in TASKS) for s, row in table.items()} == {
        s: EXPECTED[s] for s in ('ada', 'dan', 'max')}


def test_an_assignment_without_submissions_does_not_stop_the_others(tmp_path):
    # max (the release untouched) grades in seconds where a full alpha_beta answer searches for a minute
    course = copy_course(tmp_path / 'first-week', students=['max'])
    shutil.rmtree(course / 'submitted' / 'max' / 'alpha_beta')         # nobody has handed in the second workbook
    result = run_grade(course)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert sum('No submissions yet for alpha_beta' in line for line in result.stdout.splitlines()) == 1
    assert (course / 'grades.csv').exists() and (course / 'reports' / 'noughts_and_crosses.html').exists()
    assert not (course / 'reports' / 'alpha_beta.html').exists()

    course = copy_course(tmp_path / 'second-week', students=['max', 'cat'])
    shutil.rmtree(course / 'submitted' / 'cat' / 'alpha_beta')         # cat handed in one workbook, not the other
    result = run_grade(course)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    with open(course / 'grades.csv') as handle:
        graded = {(row['student_id'], row['assignment']) for row in csv.DictReader(handle) if row['score']}
    assert {('max', 'noughts_and_crosses'), ('max', 'alpha_beta'), ('cat', 'noughts_and_crosses')} <= graded
    table, _ = marks.marks_by_task('sqlite:///' + str(course / 'gradebook.db'), 'noughts_and_crosses')
    assert sum(table['cat'].values()) == sum(EXPECTED['cat'])
