"""The bundled demo class, graded through `make grade`'s own code path (real nbgrader), gets exactly the marks
each student deserves. The reasons are written next to each student in demo_class/noughts_and_crosses/."""
import csv
import os
import re
import shutil
import subprocess
import sys
import threading

import nbformat

from conftest import ROOT
from coursetools.instructor import commands
from coursetools.instructor import democlass
from coursetools.instructor import marks

TASKS = ('print_state', 'score_end', 'play', 'moves', 'score', 'perfect_game')
# student: marks for tasks 1-6 (print_state, score_end, play, moves, score, perfect_game)
EXPECTED = {
    'ada': (1, 3, 2, 1, 3, 2),   # correct, plain minimax
    'ben': (1, 3, 2, 1, 3, 2),   # correct but slow (numpy boards, deep copies)
    'cat': (0, 3, 2, 1, 3, 2),   # separator lines in print_state (the game is judged by the boards it was given)
    'dan': (1, 2, 2, 1, 3, 1),   # no diagonals; isolated in task 5, but his own game goes wrong
    'eve': (1, 2, 2, 1, 3, 1),   # 0 instead of None; her game stops at once, yet returns 0 and says draw
    'fay': (1, 3, 1, 1, 3, 1),   # play returns lists; her own score_end then misses row wins
    'gus': (1, 3, 1, 1, 3, 0),   # play ignores the mark
    'hal': (1, 3, 2, 0, 3, 2),   # moves returns a set
    'ivy': (1, 3, 2, 1, 1, 0),   # both players maximise
    'jon': (1, 3, 2, 1, 2, 0),   # right values, wrong moves
    'kim': (1, 3, 2, 1, 3, 1),   # game printed, result neither announced nor returned
    'lee': (1, 3, 2, 1, 3, 1),   # o moves first
    'max': (0, 0, 0, 0, 0, 0),   # submitted the release untouched
    'nia': (1, 3, 2, 1, 3, 2),   # correct; warns and writes to stderr
    'oli': (1, 3, 2, 1, 2, 2),   # an opening book that is wrong only in positions with one mark
    'pam': (1, 3, 2, 1, 2, 2),   # oli's answers copied, names and comments changed: oli's marks (test_similarity)
}


def test_class_is_large_and_covers_every_task():
    assert len(EXPECTED) >= 12
    for task in range(6):
        assert any(marks[task] < full[task] for marks in EXPECTED.values()
                   for full in [EXPECTED['ada']] if marks != (0,) * 6), f'no demo mistake in task {task + 1}'


def test_no_student_work_is_committed():
    tracked = subprocess.run(['git', 'ls-files', 'submitted'], cwd=ROOT, capture_output=True, text=True, check=True)
    assert tracked.stdout == ''
    ignored = subprocess.run(['git', 'check-ignore', 'submitted/someone/noughts_and_crosses/x.ipynb'], cwd=ROOT,
                             capture_output=True, text=True)
    assert ignored.returncode == 0, 'submitted/ must be ignored by git'


def test_the_demo_class_is_built_from_its_answer_files(tmp_path):
    shutil.copytree(ROOT / 'release', tmp_path / 'release')
    shutil.copytree(ROOT / 'demo_class', tmp_path / 'demo_class')
    democlass.build_class(tmp_path)
    for answers in (ROOT / 'demo_class').glob('*/*.py'):
        folder = tmp_path / 'submitted' / answers.stem / answers.parent.name
        release = ROOT / 'release' / answers.parent.name
        assert sorted(p.name for p in folder.iterdir()) == sorted(
            [p.name for p in release.iterdir() if p.name != '__pycache__'] + ['timestamp.txt'])
        nb = nbformat.read(folder / f'{answers.parent.name}.ipynb', as_version=4)
        preamble, answered = democlass.read_answers(answers)
        for cell in nb.cells:
            grade_id = cell.metadata.get('nbgrader', {}).get('grade_id')
            if grade_id in answered:
                assert answered[grade_id] in cell.source


def test_untouched_release_is_student_max(tmp_path):
    shutil.copytree(ROOT / 'release', tmp_path / 'release')
    shutil.copytree(ROOT / 'demo_class', tmp_path / 'demo_class')
    democlass.build_class(tmp_path, students=['max'])
    released = nbformat.read(ROOT / 'release/noughts_and_crosses/noughts_and_crosses.ipynb', as_version=4)
    submitted = nbformat.read(tmp_path / 'submitted/max/noughts_and_crosses/noughts_and_crosses.ipynb', as_version=4)
    assert released == submitted
    assert sorted(p.name for p in (tmp_path / 'submitted').iterdir()) == ['max']


def test_every_student_gets_the_marks_they_deserve(graded_class):
    course, _ = graded_class
    table, maxima = marks.marks_by_task('sqlite:///' + str(course / 'gradebook.db'), 'noughts_and_crosses')
    assert tuple(maxima) == TASKS and tuple(maxima.values()) == (1, 3, 2, 1, 3, 2)
    got = {student: tuple(int(row[task]) for task in TASKS) for student, row in table.items()}
    assert got == EXPECTED


def test_one_mistake_costs_the_right_cell(graded_class):
    course, _ = graded_class
    db = 'sqlite:///' + str(course / 'gradebook.db')
    assert marks.marks_by_cell(db, 'noughts_and_crosses', 'dan')['score_end-diagonals'] == 0
    assert marks.marks_by_cell(db, 'noughts_and_crosses', 'dan')['score_end-rows-and-columns'] == 1
    assert marks.marks_by_cell(db, 'noughts_and_crosses', 'eve')['score_end-draws-and-unfinished'] == 0
    assert marks.marks_by_cell(db, 'noughts_and_crosses', 'fay')['play-types'] == 0
    assert marks.marks_by_cell(db, 'noughts_and_crosses', 'jon')['score-moves'] == 0
    assert marks.marks_by_cell(db, 'noughts_and_crosses', 'ivy')['score-finished'] == 1


def test_warnings_and_stderr_do_not_cost_marks(graded_class):
    course, _ = graded_class
    nb = nbformat.read(course / 'autograded/nia/noughts_and_crosses/noughts_and_crosses.ipynb', as_version=4)
    stderr_cells = {cell.id for cell in nb.cells
                    if cell.cell_type == 'code' and cell.metadata.get('nbgrader', {}).get('grade')
                    and any(o.output_type == 'stream' and o.name == 'stderr' for o in cell.outputs)}
    assert {'print_state-format', 'score_end-rows-and-columns'} <= stderr_cells  # the case really happened


def test_outputs_of_grading(graded_class):
    course, result = graded_class
    assert 'ada' in result.stdout and '/12' in result.stdout
    with open(course / 'grades.csv') as handle:
        rows = [row for row in csv.DictReader(handle) if row['assignment'] == 'noughts_and_crosses']
    assert {row['student_id'] for row in rows} == set(EXPECTED)
    assert {row['student_id']: float(row['score']) for row in rows}['cat'] == 11
    for student in EXPECTED:
        assert (course / 'feedback' / student / 'noughts_and_crosses' / 'noughts_and_crosses.html').exists()
    # 16 notebooks of noughts_and_crosses: two feedback shares of 8 (commands.MIN_PER_PROCESS) on the 2 cores, so
    # two feedback helpers, and the spare one that writes the reports (15 students made one share, 2 helpers)
    assert 'feedback and reports: this process and 3 helpers forked from it' in result.stdout
    assert (course / 'reports' / 'noughts_and_crosses.html').exists()


def test_make_grades_feedback_is_the_page_nbconvert_writes(graded_class, tmp_path):
    """`make grade` writes the course's feedback page (coursetools.grading.feedback_page) with its fast exporter
    (c.Grading.fast_feedback_html); `nbgrader generate_feedback` told to use the page's plain exporter writes it
    with nbconvert's. Each page compared (five kinds of notebook) is the same document."""
    from bs4 import BeautifulSoup
    course, _ = graded_class
    copy = shutil.copytree(course, tmp_path / 'course')
    shutil.rmtree(copy / 'feedback')
    compared = ('ada', 'dan', 'ivy', 'max', 'nia')   # full marks, mistakes, the release untouched, warnings
    for student in set(EXPECTED) - set(compared):      # generate_feedback converts what autograded/ holds
        shutil.rmtree(copy / 'autograded' / student)
    env = dict(os.environ, PATH=os.path.join(sys.prefix, 'bin') + os.pathsep + os.environ.get('PATH', ''))
    exporter = '--GenerateFeedback.exporter_class=coursetools.grading.feedback_page.FeedbackPageExporter'
    plain = subprocess.run([sys.executable, '-m', 'nbgrader', 'generate_feedback', 'noughts_and_crosses', '--force',
                            exporter], cwd=copy, env=env, capture_output=True, text=True)
    assert plain.returncode == 0, plain.stdout + plain.stderr
    pages = sorted(page.relative_to(copy / 'feedback')
                   for page in (copy / 'feedback').glob('*/noughts_and_crosses/*.html'))
    assert [page.parts[0] for page in pages] == sorted(compared)
    differ = 0
    for page in pages:
        ours, theirs = (course / 'feedback' / page).read_text(), (copy / 'feedback' / page).read_text()
        assert str(BeautifulSoup(ours, features='html.parser')) == theirs, page
        assert 'id="feedback-summary"' in theirs, page
        differ += ours != theirs
    assert differ == len(pages)      # nbconvert's own serialisation differs in bytes: make grade used its exporter


FORKED_RUN = """
import os, signal, sys
from coursetools.instructor import commands
from coursetools.grading.course import Course
course = Course.at('.')
students = course.graded_students('noughts_and_crosses')
with commands.ForkedHelpers.fork(2, spare=True) as helpers:
    assert len(helpers.feedback) == 2 and helpers.spare is not None
    if sys.argv[1] == 'kill':               # helpers that die: their work is done here instead, nothing lost
        for helper in helpers.all[1:]:
            os.kill(helper.pid, signal.SIGKILL)
    helpers.get_ready()                     # the spare imports the report's modules ahead, and answers nothing
    report = commands.Report(course, 'noughts_and_crosses', course.db_url, helpers)
    feedback = commands.Feedback(course, 'noughts_and_crosses', len(students), min_share=1, forked=helpers)
    assert feedback.processes == 2          # a share for each feedback helper, none for this process
    feedback.run(students)
    print(report.path())
"""


FORK_FAILS = """
import os
from coursetools.instructor import commands
real_fork, forks = os.fork, []
def fork():                                 # the second fork fails, as with a limit on processes
    if forks:
        raise OSError('Resource temporarily unavailable')
    forks.append(real_fork())
    return forks[-1]
os.fork = fork
print(commands.ForkedHelpers.fork(1, spare=True))
try:
    os.waitpid(forks[0], os.WNOHANG)
except ChildProcessError:
    print('gone')                           # the first helper was stopped and waited for
"""


def test_forked_helpers_write_the_feedback_and_report_of_one_process(graded_class, tmp_path):
    """`make grade` forks its feedback and report helpers (coursetools.instructor.commands.ForkedHelpers): the pages are
    those one process writes, and a helper that dies loses nothing (its share is converted by the grading
    process). Forking is refused while threads run, and a fork that fails leaves no helper behind."""
    course, _ = graded_class
    def undated(page):
        return re.sub(r'Generated [0-9-]+ [0-9:]+', 'Generated', page.read_text())
    expected_report = undated(course / 'reports' / 'noughts_and_crosses.html')
    assert expected_report != (course / 'reports' / 'noughts_and_crosses.html').read_text()
    for how in ('live', 'kill'):
        copy = shutil.copytree(course, tmp_path / how)
        shutil.rmtree(copy / 'feedback')
        (copy / 'reports' / 'noughts_and_crosses.html').unlink()
        run = subprocess.run([sys.executable, '-c', FORKED_RUN, how], cwd=copy, capture_output=True, text=True,
                             env=dict(os.environ, PATH=os.path.join(sys.prefix, 'bin') + os.pathsep +
                                      os.environ.get('PATH', '')))
        assert run.returncode == 0, run.stdout + run.stderr
        assert run.stdout.strip() == str(copy / 'reports' / 'noughts_and_crosses.html')
        assert undated(copy / 'reports' / 'noughts_and_crosses.html') == expected_report
        def files(root):
            return sorted(p.relative_to(root) for p in root.glob('*/noughts_and_crosses/**/*') if p.is_file())
        pages = files(course / 'feedback')
        assert pages == files(copy / 'feedback') and sum(p.suffix == '.html' for p in pages) == len(EXPECTED)
        for page in pages:
            assert (copy / 'feedback' / page).read_text() == (course / 'feedback' / page).read_text(), page
    failing_fork = subprocess.run([sys.executable, '-c', FORK_FAILS], capture_output=True, text=True)
    assert failing_fork.returncode == 0 and failing_fork.stdout.split() == ['None', 'gone'], failing_fork.stderr
    waiting = threading.Event()
    thread = threading.Thread(target=waiting.wait)
    thread.start()
    try:
        assert commands.ForkedHelpers.fork(1, spare=True) is None
    finally:
        waiting.set()
        thread.join()


def test_the_demo_class_is_removed_in_one_command_and_real_work_is_kept(graded_class, tmp_path):
    """`make demo-class-remove`: the demo submissions, their outputs and gradebook rows, and the demo roster go;
    real students who share a demo name (cat, with work of her own; dan and eve, whose notebooks cannot be read:
    broken JSON, JSON nested past what Python can follow) and a real student's folder stay."""
    from nbgrader.api import Gradebook
    course, _ = graded_class
    copy = shutil.copytree(course, tmp_path / 'course')
    A = 'noughts_and_crosses'
    shutil.copy(copy / 'submitted' / 'ada' / A / f'{A}.ipynb', copy / 'submitted' / 'cat' / A / f'{A}.ipynb')
    (copy / 'submitted' / 'dan' / A / f'{A}.ipynb').write_text('{"cells": [')
    (copy / 'submitted' / 'eve' / A / f'{A}.ipynb').write_text('{"cells": ' + '[' * 100_000 + ']' * 100_000 + '}')
    shutil.copytree(copy / 'submitted' / 'ada' / A, copy / 'submitted' / 'zoe' / A)
    assert (copy / 'roster.csv').read_bytes() == (ROOT / 'demo_class' / 'roster.csv').read_bytes()
    result = subprocess.run([sys.executable, '-m', 'coursetools.instructor.democlass', '--remove'], cwd=copy,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert 'Kept, as they are not the demo class\'s work: cat/noughts_and_crosses, dan/noughts_and_crosses, ' \
        'eve/noughts_and_crosses' in result.stdout
    assert sorted(p.relative_to(copy / 'submitted').as_posix() for p in (copy / 'submitted').glob('*/*')) == [
        f'cat/{A}', f'dan/{A}', f'eve/{A}', f'zoe/{A}']
    assert sorted(p.name for p in (copy / 'autograded').iterdir() if p.is_dir()) == ['cat', 'dan', 'eve']
    assert sorted(p.name for p in (copy / 'feedback').iterdir()) == ['cat', 'dan', 'eve']
    with Gradebook('sqlite:///' + str(copy / 'gradebook.db')) as gradebook:
        assert sorted((s.id, sorted(x.assignment.name for x in s.submissions)) for s in gradebook.students) == [
            ('cat', [A]), ('dan', [A]), ('eve', [A])]
    assert not (copy / 'roster.csv').exists()
