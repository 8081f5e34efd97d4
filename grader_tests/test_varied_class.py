"""The benchmark's varied class (benchmarks/varied_class/) graded through `make grade`'s code path, one student of
each kind. The slow but correct students are the fairness claim that matters most here: a search that costs
seconds per call, and that the grader cannot memoize, still gets full marks. The other kinds are checked against
what each answer file's header says is wrong, so that the benchmark grades the class it claims to grade."""
import shutil

import nbformat

from conftest import ROOT, copy_course, run_grade
from coursetools.instructor import democlass
from coursetools.instructor import marks

ASSIGNMENT = 'noughts_and_crosses'
TASKS = ('print_state', 'score_end', 'play', 'moves', 'score', 'perfect_game')
FULL = (1, 3, 2, 1, 3, 2)
KINDS = ('pat', 'slowpoke', 'memo', 'halfdone', 'recursion', 'flipsign', 'firstmove', 'nocolumns')


def graded(tmp_path):
    course = copy_course(tmp_path / 'course', students=[])
    release = nbformat.read(ROOT / 'release' / ASSIGNMENT / f'{ASSIGNMENT}.ipynb', as_version=4)
    for kind in KINDS:
        answers = ROOT / 'benchmarks' / 'varied_class' / ASSIGNMENT / f'{kind}.py'
        folder = course / 'submitted' / kind / ASSIGNMENT
        shutil.copytree(ROOT / 'release' / ASSIGNMENT, folder, ignore=shutil.ignore_patterns('*.ipynb', '__pycache__'))
        nbformat.write(democlass.fill(release, *democlass.read_answers(answers)), folder / f'{ASSIGNMENT}.ipynb')
        (folder / 'timestamp.txt').write_text(democlass.TIMESTAMP + '\n')
    result = run_grade(course, ASSIGNMENT)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    db = 'sqlite:///' + str(course / 'gradebook.db')
    table, _ = marks.marks_by_task(db, ASSIGNMENT)
    by_task = {student: tuple(int(row[task]) for task in TASKS) for student, row in table.items()}
    by_cell = {student: marks.marks_by_cell(db, ASSIGNMENT, student) for student in KINDS}
    return by_task, by_cell


def test_the_varied_class_gets_what_each_student_deserves(tmp_path):
    by_task, by_cell = graded(tmp_path)

    # Correct, however slow: numpy boards and a search through a helper the grader cannot memoize.
    assert by_task['pat'] == FULL
    assert by_task['slowpoke'] == FULL
    assert by_task['memo'] == FULL

    # Tasks 1-4 done; score and perfect_game left as stubs, or failing in every cell.
    assert by_task['halfdone'] == (1, 3, 2, 1, 0, 0)
    assert by_task['recursion'] == (1, 3, 2, 1, 0, 0)

    # Values with the wrong sign when o is to move: the value checks fail, the moves and the game do not.
    flipsign = by_cell['flipsign']
    assert by_task['flipsign'][:4] == FULL[:4] and by_task['flipsign'][5] == 2
    assert flipsign['score-values'] == 0 and flipsign['score-moves'] == 1

    # Spaces around the bars cost task 1; first move tried instead of the best costs score-moves and the game.
    firstmove = by_cell['firstmove']
    assert by_task['firstmove'][0] == 0 and by_task['firstmove'][1:4] == FULL[1:4]
    assert firstmove['score-values'] == 1 and firstmove['score-moves'] == 0
    assert by_task['firstmove'][5] < 2

    # No column wins: only the rows-and-columns check of score_end; score itself is tested with a correct score_end.
    nocolumns = by_cell['nocolumns']
    assert nocolumns['score_end-rows-and-columns'] == 0 and nocolumns['score_end-diagonals'] == 1
    assert by_task['nocolumns'][0] == 1 and by_task['nocolumns'][2:5] == FULL[2:5]
