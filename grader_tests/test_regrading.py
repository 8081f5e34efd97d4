"""Grading a graded class again: `--force` gives the same marks, `--student ID` regrades one student alone, and
`make grade` regrades only the submissions that changed since they were graded. Each test works in a copy of the
demo class graded once (conftest.graded_class)."""
import csv
import pathlib
import re
import shutil

from conftest import run_grade
from coursetools.instructor import marks
from test_demo_class import EXPECTED


def test_regrading_gives_the_same_marks_and_a_withdrawn_submission_is_not_graded_again(graded_class, tmp_path):
    """`--force` grades every submission in submitted/ again, with the marks of the first run; a submission taken
    out of submitted/ since is not graded again (its last marks stay in the gradebook, as nbgrader keeps them)."""
    course, _ = graded_class
    copy = shutil.copytree(course, tmp_path / 'again')
    before = marks.marks_by_task('sqlite:///' + str(copy / 'gradebook.db'), 'noughts_and_crosses')
    regraded = ('ada', 'cat', 'dan', 'max')           # full marks, a mistake, two mistakes, the release untouched
    graded = copy / 'autograded' / '{}' / 'noughts_and_crosses' / 'noughts_and_crosses.ipynb'
    def written(students):
        return {student: pathlib.Path(str(graded).format(student)).stat().st_mtime_ns for student in students}
    withdrawn, first = written(set(EXPECTED) - set(regraded)), written(regraded)
    for student in withdrawn:
        shutil.rmtree(copy / 'submitted' / student / 'noughts_and_crosses')
    again = run_grade(copy, 'noughts_and_crosses', '--force')
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert 'unchanged' not in again.stdout and f'{len(regraded)} notebooks on' in again.stdout
    assert all(written(regraded)[s] != first[s] for s in regraded) and written(withdrawn) == withdrawn
    assert marks.marks_by_task('sqlite:///' + str(copy / 'gradebook.db'), 'noughts_and_crosses') == before


def test_one_student_is_regraded_alone_and_the_others_keep_their_marks(graded_class, tmp_path):
    """`--student ID`: a resubmission regraded by itself; grades.csv and the report still cover everyone."""
    course, _ = graded_class
    copy = shutil.copytree(course, tmp_path / 'course')
    before = marks.marks_by_task('sqlite:///' + str(copy / 'gradebook.db'), 'noughts_and_crosses')
    def page(student):
        return copy / 'feedback' / student / 'noughts_and_crosses' / 'noughts_and_crosses.html'
    others = {student: page(student).stat().st_mtime_ns for student in EXPECTED if student != 'cat'}
    shutil.copy(copy / 'submitted' / 'ada' / 'noughts_and_crosses' / 'noughts_and_crosses.ipynb',
                copy / 'submitted' / 'cat' / 'noughts_and_crosses' / 'noughts_and_crosses.ipynb')     # cat's fix
    result = run_grade(copy, 'noughts_and_crosses', '--student', 'cat')
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    table, _ = marks.marks_by_task('sqlite:///' + str(copy / 'gradebook.db'), 'noughts_and_crosses')
    assert sum(table['cat'].values()) == 12 and {s: r for s, r in table.items() if s != 'cat'} == {
        s: r for s, r in before[0].items() if s != 'cat'}
    assert 'noughts_and_crosses: grading cat only (--student); the others keep their marks.' in result.stdout
    assert re.search(r'noughts_and_crosses: 1 notebook on (1 worker|\d+ workers),', result.stdout), result.stdout
    assert {student: page(student).stat().st_mtime_ns for student in others} == others
    with open(copy / 'grades.csv') as handle:
        assert {row['student_id'] for row in csv.DictReader(handle)
                if row['assignment'] == 'noughts_and_crosses'} == set(EXPECTED)
    unknown = run_grade(copy, 'noughts_and_crosses', '--student', 'nobody')
    assert unknown.returncode != 0 and 'No submission from nobody' in unknown.stderr


def reports_printed(output):
    """{assignment: the report path printed under its heading} from `make grade`'s output."""
    headings = ('alpha_beta', 'noughts_and_crosses')
    found, heading = {}, None
    for line in output.splitlines():
        heading = line if line in headings else heading
        if line.startswith('Report: '):
            found[heading] = pathlib.Path(line.removeprefix('Report: ')).name
    return found


def test_only_submissions_that_changed_are_graded_again(graded_class, tmp_path):
    """`make grade` on a graded class grades a resubmission alone, naming it, and nothing when nothing changed; a
    mark given by hand in the other assignment meanwhile gets new feedback, each report printed under its own
    assignment (the helper writing them answers in the order asked, not the order printed)."""
    from nbgrader.api import Gradebook
    course, _ = graded_class
    copy = shutil.copytree(course, tmp_path / 'course')
    before, _ = marks.marks_by_task('sqlite:///' + str(copy / 'gradebook.db'), 'noughts_and_crosses')
    graded = copy / 'autograded' / '{}' / 'noughts_and_crosses' / 'noughts_and_crosses.ipynb'
    others = {student: pathlib.Path(str(graded).format(student)).stat().st_mtime_ns
              for student in EXPECTED if student != 'cat'}
    shutil.copy(copy / 'submitted' / 'ada' / 'noughts_and_crosses' / 'noughts_and_crosses.ipynb',
                copy / 'submitted' / 'cat' / 'noughts_and_crosses' / 'noughts_and_crosses.ipynb')     # cat's fix
    with Gradebook('sqlite:///' + str(copy / 'gradebook.db')) as gradebook:    # as formgrader's page does
        grade = gradebook.find_grade('perfect_opponent', 'alpha_beta', 'alpha_beta', 'ada')
        grade.manual_score, grade.needs_manual_grade = 2, False
        gradebook.db.commit()
    result = run_grade(copy)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    count = len(EXPECTED)
    assert (f'noughts_and_crosses: {count - 1} of {count} submissions unchanged since they were graded: not graded '
            'again (--force grades them again); grading the 1 new or changed: cat.') in result.stdout
    assert re.search(r'noughts_and_crosses: 1 notebook on (1 worker|\d+ workers),', result.stdout), result.stdout
    assert 'alpha_beta: marks given by hand changed for 1 submission since' in result.stdout
    assert '== alpha_beta: autograde' not in result.stdout
    assert reports_printed(result.stdout) == {'alpha_beta': 'alpha_beta.html',
                                              'noughts_and_crosses': 'noughts_and_crosses.html'}, result.stdout
    table, _ = marks.marks_by_task('sqlite:///' + str(copy / 'gradebook.db'), 'noughts_and_crosses')
    assert sum(table['cat'].values()) == 12 and {s: r for s, r in table.items() if s != 'cat'} == {
        s: r for s, r in before.items() if s != 'cat'}
    assert {student: pathlib.Path(str(graded).format(student)).stat().st_mtime_ns for student in others} == others

    again = run_grade(copy, 'noughts_and_crosses')
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert (f'noughts_and_crosses: {count} of {count} submissions unchanged since they were graded: not graded '
            'again (--force grades them again).') in again.stdout
    assert '== noughts_and_crosses: autograde' not in again.stdout
    assert re.search(r'^cat +1 +3 +2 +1 +3 +2 +12$', again.stdout, re.M), again.stdout   # the table, as it stands


def test_what_a_submission_is_compared_by_never_follows_a_link_or_reads_a_file_over_the_limit(tmp_path):
    """Deciding whether a submission changed reads what staging would stage: a link is compared by its target's
    name, a file over the size limit (left out unread by staging) by its size, any other file by its bytes."""
    from coursetools.grading.course import Course
    from coursetools.instructor.unchanged import submission_digest
    folder = tmp_path / 'submitted' / 'zoe' / 'a'
    folder.mkdir(parents=True)
    outside = tmp_path / 'outside.txt'
    outside.write_text('one')
    (folder / 'link').symlink_to(outside)
    (folder / 'big.bin').write_bytes(b'x' * 11)
    (folder / 'small.txt').write_text('small')
    def digest():
        return submission_digest(Course(tmp_path), 'a', 'zoe', 'grader', limit=10)
    first = digest()
    outside.write_text('two')
    (folder / 'big.bin').write_bytes(b'y' * 11)
    assert digest() == first
    changes = [lambda: (folder / 'big.bin').write_bytes(b'y' * 12), lambda: (folder / 'small.txt').write_text('SMALL'),
               lambda: ((folder / 'link').unlink(), (folder / 'link').symlink_to(tmp_path))]
    seen = {first}
    for change in changes:
        change()
        assert digest() not in seen
        seen.add(digest())


def test_the_students_graded_again_are_named_up_to_eight_then_counted():
    from coursetools.instructor.unchanged import counted, named
    assert [named(names) for names in ([], ['cat'], ['cat', 'dan'], ['ada', 'cat', 'dan'])] == [
        '', 'cat', 'cat and dan', 'ada, cat and dan']
    assert named([f's{n}' for n in range(1, 61)]) == 's1, s2, s3, s4, s5, s6, s7, s8 and 52 more'
    assert named([f's{n}' for n in range(1, 9)]) == 's1, s2, s3, s4, s5, s6, s7 and s8'
    assert [counted(1, 'notebook'), counted(0, 'worker'), counted(3, 'worker')] == [
        '1 notebook', '0 workers', '3 workers']
