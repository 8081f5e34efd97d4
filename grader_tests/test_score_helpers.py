"""score_helpers.txt and the locked cell that answers from it (issue 42): the visible score tests give the student's
score correct score_end, moves and play in the student's own kernel, from data checked here against the oracle,
and say which of the student's helpers is wrong."""
import ast
import contextlib
import io
import shutil

import nbformat
import pytest

from conftest import ROOT, solution_functions
from coursetools.checks.references import reachable_from
from coursetools.game import oracle
from coursetools.instructor import score_helpers

A = 'noughts_and_crosses'
SOURCE = ROOT / 'source' / A


def cell(grade_id):
    nb = nbformat.read(SOURCE / f'{A}.ipynb', as_version=4)
    return next(c.source for c in nb.cells if c.metadata.get('nbgrader', {}).get('grade_id') == grade_id)


def read_table(path):
    """The file's lines, read here without the notebook's code: {board: (score_end, moves, {call: board})}."""
    def board(cells):
        assert len(cells) == 9 and set(cells) <= set('.xo'), cells
        return oracle.nested(cells.replace('.', ' '))

    table = {}
    for line in path.read_text().splitlines():
        if not line.startswith('#'):
            cells, end, listed, *plays = line.split(' ')
            moves = [] if listed == '-' else [(int(m[0]), int(m[1])) for m in listed.split(',')]
            calls = {(int(p[0]), int(p[1]), p[2].replace('.', ' ')): board(p.split('=')[1]) for p in plays}
            assert board(cells) not in table and len(calls) == len(plays)
            table[board(cells)] = (ast.literal_eval(end), moves, calls)
    return table


def visible_calls():
    """(board, player) of every call of score the visible score tests make, read from their cells."""
    found = []
    for grade_id in score_helpers.TEST_CELLS:
        source = cell(grade_id).split('### END HIDDEN TESTS')[1]
        for node in ast.walk(ast.parse('def f():\n' + source.split('### BEGIN HIDDEN TESTS')[0])):
            if isinstance(node, ast.Tuple) and len(node.elts) >= 2 and isinstance(node.elts[1], ast.Constant) \
                    and node.elts[1].value in ('x', 'o') and isinstance(node.elts[0], ast.Tuple):
                found.append((ast.literal_eval(node.elts[0]), node.elts[1].value))
    board = ast.literal_eval(source.split('board = ')[1].split('#')[0].strip())
    return found + [(board, 'o')]


@pytest.mark.parametrize('folder', [SOURCE, ROOT / 'release' / A], ids=['source', 'release'])
def test_the_file_is_what_the_generator_writes(folder):
    assert (folder / score_helpers.FILE).read_text() == score_helpers.text(score_helpers.visible_boards(
        SOURCE / f'{A}.ipynb')), 'run python -m coursetools.instructor.score_helpers, then make release'


def test_every_answer_is_the_oracles():
    table = read_table(SOURCE / score_helpers.FILE)
    reachable = set(oracle.reachable_positions())
    for board, (end, moves, calls) in table.items():
        assert board in reachable, board
        assert end == oracle.outcome(board) and type(end) in (int, type(None)), board
        assert sorted(moves) == sorted(oracle.empty_cells(board)), board
        forward = {call for call in calls if call[2] != ' '}
        over = oracle.outcome(board) is not None
        assert forward == (set() if over else {(r, c, oracle.to_move(board)) for r, c in moves}), board
        for (row, col, mark), after in calls.items():
            assert after == oracle.place(board, row, col, mark) and after in table, (board, row, col, mark)


def test_the_file_covers_every_position_the_visible_searches_reach_and_no_other():
    calls = visible_calls()
    assert len(calls) == 10                         # 3 finished, 3 values, 3 moves and one where every move loses
    assert all(player == oracle.to_move(board) for board, player in calls)
    needed = set().union(*(reachable_from(board, player) for board, player in calls))
    assert set(read_table(SOURCE / score_helpers.FILE)) == needed


@pytest.fixture
def notebook(tmp_path, monkeypatch):
    """The workbook's helpers, the reference solutions and the locked cell score-helpers in one namespace, run
    beside a copy of score_helpers.txt."""
    shutil.copy(SOURCE / score_helpers.FILE, tmp_path / score_helpers.FILE)
    monkeypatch.chdir(tmp_path)
    namespace = solution_functions()            # the locked cell among them, its globals the functions' own
    assert callable(namespace['correct_helpers'])
    return namespace


def run(namespace, block):
    """What `with correct_helpers(): block(namespace)` prints, and what it raised."""
    printed, raised = io.StringIO(), None
    with contextlib.redirect_stdout(printed):
        try:
            with namespace['correct_helpers']():
                block(namespace)
        except Exception as error:
            raised = error
    return printed.getvalue(), raised


WORKED = ((' ', ' ', 'o'), ('x', 'x', 'o'), ('x', 'o', ' '))


def test_the_helpers_answer_from_the_file_and_are_put_back_after_a_failure(notebook, tmp_path):
    own = {name: notebook[name] for name in ('score_end', 'moves', 'play')}
    path = tmp_path / score_helpers.FILE
    won = next(line.split()[0] for line in path.read_text().splitlines() if line.split()[1:2] == ['1'])
    path.write_text(path.read_text().replace(f'{won} 1 ', f'{won} 0 '))          # a planted wrong answer

    def block(namespace):
        assert all(namespace[name] is not function for name, function in own.items())
        assert namespace['score_end'](oracle.nested(won.replace('.', ' '))) == 0     # read, not computed
        assert namespace['play'](WORKED, 0, 0, 'x') == oracle.place(WORKED, 0, 0, 'x')
        assert namespace['play'](WORKED, 0, 0) == oracle.place(WORKED, 0, 0, 'x')   # a play whose mark has a default
        assert namespace['moves'](WORKED) == [(0, 0), (0, 1), (2, 2)]
        raise AssertionError('a failed test')

    printed, raised = run(notebook, block)
    assert str(raised) == 'a failed test'
    assert {name: notebook[name] for name in own} == own
    assert 'Note: your score_end(board) gives 1, where the right answer is 0' in printed      # the planted one


def test_a_call_no_game_makes_says_so(notebook):
    printed, raised = run(notebook, lambda namespace: namespace['play'](WORKED, 0, 0, 'o'))
    assert isinstance(raised, LookupError) and 'has the same player moved twice?' in str(raised)
    assert "(0, 0, 'x')" in str(raised)
    _, raised = run(notebook, lambda namespace: namespace['score_end'](oracle.EMPTY_BOARD))
    assert isinstance(raised, LookupError) and 'no real game reaches' in str(raised)
    assert printed == ''                            # the reference helpers agree with the table: no note


def test_a_wrong_helper_gets_a_note_naming_it_and_a_board(notebook):
    notebook['moves'] = lambda state: [(r, c) for r in range(3) for c in range(3) if state[r][c] == ' '][1:]
    notebook['play'] = lambda state, row, col, mark: [list(r) for r in oracle.place(state, row, col, mark)]
    printed, raised = run(notebook, lambda namespace: namespace['score'](WORKED, 'x'))
    assert raised is None and printed.count('Note:') == 1         # a play that gives lists is lenient here
    assert 'Note: your moves(board) gives' in printed and 'fix moves in task 4' in printed
    assert '\n    ((' in printed                     # the board, drawn


def test_without_the_file_the_tests_use_the_students_own_helpers_and_say_so(notebook, tmp_path):
    (tmp_path / score_helpers.FILE).unlink()
    own = notebook['score_end']
    printed, raised = run(notebook, lambda namespace: namespace['score_end'] is own or 1 / 0)
    assert raised is None and 'score_helpers.txt is not beside this notebook' in printed
