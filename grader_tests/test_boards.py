"""Every board a test or a check names is one a real game reaches (x first, turns alternate, play stops at a line),
as the workbook promises ("You may assume the board came from a real game"), except where a task's statement allows
any board (print_state draws whatever it is given). A solution that relies on the promise, such as one that reads
a full board from the counts of x's and o's, must never meet a board that breaks it."""
import ast
import json

from conftest import ROOT
from coursetools.game import oracle

MARKS = ('x', 'o', ' ')
ANY_BOARD = {'print_state': 'it draws any board it is given, even one no game reaches'}   # task -> its statement


def literal_boards(tree):
    """(line, board, enclosing function) of every 3×3 board written out in the code."""
    found = []

    def visit(node, function):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name
        if isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) == 3 and all(
                isinstance(row, (ast.Tuple, ast.List)) and len(row.elts) == 3
                and all(isinstance(square, ast.Constant) and square.value in MARKS for square in row.elts)
                for row in node.elts):
            found.append((node.lineno, tuple(tuple(s.value for s in row.elts) for row in node.elts), function))
            return
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, None)
    return found


def allowed(name):
    return name is not None and any(name.startswith(task) or name.startswith(f'test_{task}') for task in ANY_BOARD)


def unreachable(found, where):
    reachable = set(oracle.reachable_positions())
    return [f'{where}, line {line}: {board}' for line, board, function in found
            if board not in reachable and not allowed(function)]


def test_every_board_of_the_workbooks_is_one_a_real_game_reaches():
    wrong, seen = [], 0
    for path in sorted((ROOT / 'source').glob('*/*.ipynb')):
        for cell in json.loads(path.read_text())['cells']:
            grade_id = (cell['metadata'].get('nbgrader') or {}).get('grade_id')
            if cell['cell_type'] != 'code' or allowed(grade_id):
                continue
            try:
                found = literal_boards(ast.parse(''.join(cell['source'])))
            except SyntaxError:         # a cell with IPython's own syntax holds no board
                continue
            seen += len(found)
            wrong += unreachable(found, f'{path.name} cell {grade_id}')
    assert seen > 40, seen        # the scan finds the boards the tests write out
    assert wrong == []


def test_every_board_of_the_checks_is_one_a_real_game_reaches():
    wrong, seen = [], 0
    for path in sorted((ROOT / 'coursetools' / 'checks').glob('*.py')):
        found = literal_boards(ast.parse(path.read_text()))
        seen += len(found)
        wrong += unreachable(found, path.name)
    assert seen > 2, seen
    assert wrong == []


def test_the_task_that_allows_any_board_says_so():
    statement = next(''.join(cell['source']) for cell in json.loads(
        (ROOT / 'source/noughts_and_crosses/noughts_and_crosses.ipynb').read_text())['cells']
        if cell['cell_type'] == 'markdown' and '## Task 1: draw the board' in ''.join(cell['source']))
    assert ANY_BOARD['print_state'] in ' '.join(statement.split())


def test_the_scan_sees_an_unreachable_board():
    o_first_draw = "board = (('o', 'x', 'o'), ('x', 'x', 'o'), ('o', 'o', 'x'))\n"
    found = literal_boards(ast.parse(o_first_draw))
    assert unreachable(found, 'here') == ["here, line 1: (('o', 'x', 'o'), ('x', 'x', 'o'), ('o', 'o', 'x'))"]
    assert unreachable(literal_boards(ast.parse(f'def print_state_any():\n    {o_first_draw}')), 'here') == []
