"""The visible tests and the hidden ones keep one contract per task (issue 25): every form the visible tests accept,
the hidden ones accept, and the common mistakes the hidden ones mark down, the visible ones show. A small class of
notebooks built from demo student ada's correct answers is graded once through `make grade`'s code path; the
workbook's prose numbers are checked against the oracle."""
import re

import nbformat
import pytest

from conftest import ROOT, copy_course, needs_sandbox, run_grade
from coursetools.game import oracle
from coursetools.instructor import democlass, marks
from test_demo_class import TASKS
from test_hostile import CELL_TIMEOUT, filled, replace, with_answers

ASSIGNMENT = 'noughts_and_crosses'
FULL = {'print_state': 1, 'score_end': 3, 'play': 2, 'moves': 1, 'score': 3, 'perfect_game': 2}

LISTS_EVERYWHERE = with_answers(
    moves='''def moves(state):
    """Every empty square, each as a [row, col] list."""
    return [[row, col] for row in range(3) for col in range(3) if state[row][col] == ' ']
''',
    score='''def score(state, player):
    """Minimax, returning [value, [row, col]] lists."""
    end = score_end(state)
    if end is not None:
        return [end, None]
    results = []
    for row, col in moves(state):
        value, _ = score(play(state, row, col, player), 'o' if player == 'x' else 'x')
        results.append([value, [row, col]])
    return max(results) if player == 'x' else min(results)
''')

# The anti-diagonal read with an off-by-one: (0, 2), (1, 1), (2, 1).
ANTI_DIAGONAL_SLIP = replace('score_end', 'lines.append((state[0][2], state[1][1], state[2][0]))',
                             'lines.append((state[0][2], state[1][1], state[2][1]))')

TIE = replace('perfect_game', "print('The game is a draw')", 'print("It\'s a tie!")')

# student: (answers, marks expected per task; None: not asserted, the task depends on the slip elsewhere)
CLASS = {
    'lists': (LISTS_EVERYWHERE, FULL),
    'tie': (TIE, FULL),
    'antidiagonal': (ANTI_DIAGONAL_SLIP, dict(FULL, score_end=None, perfect_game=None)),
}


@pytest.fixture(scope='module')
def contract_class(tmp_path_factory):
    course = copy_course(tmp_path_factory.mktemp('contract') / 'course', students=())
    for student, (answers, _) in CLASS.items():
        folder = course / 'submitted' / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(filled(*answers), folder / f'{ASSIGNMENT}.ipynb')
        (folder / 'timestamp.txt').write_text(democlass.TIMESTAMP + '\n')
    result = run_grade(course, f'--SandboxedExecute.timeout={CELL_TIMEOUT}')
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return course


def errors_by_cell(course, student):
    nb = nbformat.read(course / 'autograded' / student / ASSIGNMENT / f'{ASSIGNMENT}.ipynb', as_version=4)
    return {cell.metadata['nbgrader']['grade_id']: [o.evalue for o in cell.outputs if o.output_type == 'error']
            for cell in nb.cells if cell.metadata.get('nbgrader', {}).get('grade')}


@needs_sandbox
@pytest.mark.parametrize('student', sorted(CLASS))
def test_a_form_the_visible_tests_accept_gets_the_marks_the_contract_says(contract_class, student):
    table, _ = marks.marks_by_task('sqlite:///' + str(contract_class / 'gradebook.db'), ASSIGNMENT)
    got = {task: int(table[student][task]) for task in TASKS}
    expected = CLASS[student][1]
    assert {t: got[t] for t in expected if expected[t] is not None} == {
        t: m for t, m in expected.items() if m is not None}, got


@needs_sandbox
def test_an_anti_diagonal_slip_is_shown_by_the_visible_diagonals_test(contract_class):
    errors = errors_by_cell(contract_class, 'antidiagonal')
    shown = ' '.join(errors['score_end-diagonals'])
    assert re.search(r'score_end returned \S+, expected -?1 for', shown), errors     # the visible assert's words


def test_the_visible_score_end_tests_cover_every_line_both_ways():
    """Every one of the eight lines is won in some visible score_end test, and each diagonal by x and by o, so
    that a slip in any one line fails a visible test."""
    source = nbformat.read(ROOT / 'source' / ASSIGNMENT / f'{ASSIGNMENT}.ipynb', as_version=4)
    visible = ''.join(re.sub(r'### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS', '', cell.source, flags=re.S)
                      for cell in source.cells if cell.metadata.get('nbgrader', {}).get('grade_id', '').startswith(
                          'score_end-'))
    boards = [eval(match) for match in re.findall(r"\((\(\(.*?\)\)), -?\d\),", visible)]
    won = {tuple(line) for board in boards for line in oracle.winning_lines(board)}
    assert won == set(map(tuple, oracle.LINES)), sorted(set(map(tuple, oracle.LINES)) - won)
    for line in oracle.DIAGONALS:
        winners = {oracle.outcome(board) for board in boards if tuple(line) in map(tuple, oracle.winning_lines(board))}
        assert winners == {1, -1}, (line, winners)


def test_the_prose_numbers_are_the_oracles():
    text = '\n'.join(cell.source for cell in nbformat.read(
        ROOT / 'source' / ASSIGNMENT / f'{ASSIGNMENT}.ipynb', as_version=4).cells if cell.cell_type == 'markdown')
    calls = oracle.search_tree_size(oracle.EMPTY_BOARD, 'x')
    assert f'makes {calls - 1:,} moves' in text and f'called {calls:,} times' in text
    assert f'only {len(oracle.reachable_positions()):,} different positions' in text
    assert f'{len(oracle.reachable_positions()):,} against {calls:,}' in text
