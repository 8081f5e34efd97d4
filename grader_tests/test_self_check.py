"""The workbook's self-check cells (no marks): score_end on every reachable position, read from positions.txt,
and score on groups of positions with known values. Their data are checked against the game's oracle, and the
cells are run in a real kernel with right and wrong answers."""
import ast
import shutil
from collections import Counter

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import ROOT
from coursetools.game import oracle

A = 'noughts_and_crosses'
SOURCE = ROOT / 'source' / A


def source_cell(predicate):
    return next(cell for cell in nbformat.read(SOURCE / f'{A}.ipynb', as_version=4).cells if predicate(cell))


def solution(name):
    return source_cell(lambda cell: cell.metadata.get('nbgrader', {}).get('grade_id') == name).source


def self_check(name):
    return source_cell(lambda cell: cell.cell_type == 'code' and cell.source.startswith(f'def {name}')).source


def read_positions(folder):
    lines = [line for line in (folder / 'positions.txt').read_text().splitlines() if not line.startswith('#')]
    return [oracle.nested(tuple(line.replace('.', ' '))) for line in lines]


@pytest.mark.parametrize('folder', [SOURCE, ROOT / 'release' / A], ids=['source', 'release'])
def test_positions_are_every_reachable_position(folder):
    assert read_positions(folder) == list(oracle.reachable_positions())


def assigned(source, name):
    """The literal assigned to `name` in a cell's source."""
    return next(ast.literal_eval(node.value) for node in ast.walk(ast.parse(source))
                if isinstance(node, ast.Assign) and getattr(node.targets[0], 'id', '') == name)


def test_the_counts_the_cell_and_its_prose_give_are_the_oracles():
    counts = Counter(oracle.outcome(board) for board in oracle.reachable_positions())
    assert counts == {1: 626, -1: 316, 0: 16, None: 4520}          # the figures the course states
    assert {value: expected for value, _, expected, _ in assigned(self_check('check_score_end_everywhere'),
                                                                    'kinds')} == counts
    prose = source_cell(lambda cell: cell.cell_type == 'markdown' and 'Check yourself: every position' in cell.source).source
    assert all(f'{count:,}' in prose for count in counts.values())


def test_every_known_value_is_the_oracles():
    groups = assigned(self_check('check_score_groups'), 'groups')
    assert len(groups) == 4
    for group, positions in groups.items():
        for board, player, value, good in positions:
            assert board in set(oracle.reachable_positions()), (group, board)
            assert oracle.value(board, player) == value, (group, board)
            over = oracle.outcome(board) is not None
            assert good == ({None} if over else set(oracle.optimal_moves(board, player))), (group, board)


def run_checks(tmp_path, functions):
    """Run the helpers, `functions` (source text) and both self-check cells in a fresh kernel; their printout."""
    shutil.copy(SOURCE / 'positions.txt', tmp_path / 'positions.txt')
    helpers = source_cell(lambda cell: cell.metadata.get('nbgrader', {}).get('grade_id') == 'helpers').source
    cells = [helpers, functions, self_check('check_score_end_everywhere'), self_check('check_score_groups')]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    NotebookClient(nb, timeout=120, kernel_name='python3', resources={'metadata': {'path': str(tmp_path)}}).execute()
    errors = [o for cell in nb.cells for o in cell.outputs if o.output_type == 'error']
    assert errors == []
    return ''.join(o.text for cell in nb.cells[2:] for o in cell.outputs if o.output_type == 'stream')


def reference_functions():
    return '\n\n'.join(solution(name) for name in ('score_end', 'play', 'moves', 'score'))


def test_the_reference_passes_every_line(tmp_path):
    printed = run_checks(tmp_path, reference_functions())
    assert printed.count('right') == 8 and '<-' not in printed, printed


def test_a_missed_diagonal_and_a_sign_slip_are_pointed_at(tmp_path):
    no_anti_diagonal = '''
def score_end(state):
    lines = [list(row) for row in state] + [[state[r][c] for r in range(3)] for c in range(3)]
    lines.append([state[i][i] for i in range(3)])
    for line in lines:
        if line == ['x'] * 3:
            return 1
        if line == ['o'] * 3:
            return -1
    return 0 if all(' ' not in row for row in state) else None
'''
    printed = run_checks(tmp_path, reference_functions() + '\n' + no_anti_diagonal)
    flagged = [line.split('<-')[0].strip() for line in printed.splitlines() if '<-' in line]
    assert [line.rsplit(' ', 1)[0].strip() for line in flagged[:2]] == ['x has a line', 'o has a line'], printed
    assert 'check every row, column and both diagonals' in printed

    always_max = reference_functions() + '''
def score(state, player):
    end = score_end(state)
    if end is not None:
        return end, None
    other = 'o' if player == 'x' else 'x'
    return max((score(play(state, r, c, player), other)[0], (r, c)) for r, c in moves(state))   # o maximises too
'''
    printed = run_checks(tmp_path, always_max)
    lines = {line.strip()[:22].strip(): line.strip()[22:] for line in printed.splitlines()
             if line.startswith('    ') and ('wins at once' in line or 'block' in line)}
    assert "<- score(board, 'o') gave the value 1, expected -1" in lines['o wins at once'], printed


def test_a_stub_is_told_not_crashed(tmp_path):
    stubs = '\n\n'.join(f'def {name}(*args):\n    raise NotImplementedError()' for name in ('score_end', 'score'))
    printed = run_checks(tmp_path, stubs)
    assert 'score_end raised NotImplementedError' in printed
    assert printed.count('<- score raised NotImplementedError') == 4


def quickest(board, player):
    """Depth-aware minimax written here, apart from the workbook: a win is worth 1 + the empty squares left."""
    end = oracle.outcome(board)
    if end is not None:
        return end * (1 + sum(row.count(' ') for row in board))
    values = [quickest(oracle.place(board, row, col, player), oracle.other(player))
              for row, col in oracle.empty_cells(board)]
    return max(values) if player == 'x' else min(values)


def run_fast_check(tmp_path, functions):
    helpers = source_cell(lambda cell: cell.metadata.get('nbgrader', {}).get('grade_id') == 'helpers').source
    cells = [helpers, reference_functions(), functions, self_check('check_score_fast')]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    NotebookClient(nb, timeout=120, kernel_name='python3', allow_errors=True,
                   resources={'metadata': {'path': str(tmp_path)}}).execute()
    return nb.cells[-1].outputs


def test_the_optional_tasks_boards_are_what_it_says():
    source = self_check('check_score_fast')
    quick_win, slow_loss = assigned(source, 'quick_win'), assigned(source, 'slow_loss')
    assert oracle.value(quick_win, 'x') == 1 and oracle.value(slow_loss, 'o') == 1
    after = {move: quickest(oracle.place(quick_win, *move, 'x'), 'o') for move in oracle.empty_cells(quick_win)}
    assert max(after.values()) == after[(0, 2)] == 5 and list(after.values()).count(5) == 1
    assert min(oracle.optimal_moves(quick_win, 'x')) != (0, 2)     # plain minimax's first best move is another
    after = {move: quickest(oracle.place(slow_loss, *move, 'o'), 'x') for move in oracle.empty_cells(slow_loss)}
    assert min(after.values()) == after[(2, 0)] == 3 and list(after.values()).count(3) == 1


def test_the_optional_check_passes_the_reference_and_tells_a_plain_score_from_it(tmp_path):
    outputs = run_fast_check(tmp_path, solution('score_fast'))
    assert [o.get('text') for o in outputs] == ['score_fast wins as soon as it can and loses as late as it must.\n']
    plain = run_fast_check(tmp_path, 'def score_fast(state, player):\n    return score(state, player)')
    error, = [o for o in plain if o.output_type == 'error']
    assert 'x should win at once at (0, 2), not play (0, 0)' in error.evalue
    stub = run_fast_check(tmp_path, 'def score_fast(state, player):\n    raise NotImplementedError()')
    assert [o.get('text') for o in stub] == ['score_fast is not written yet (the task is optional).\n']


def test_without_positions_txt_the_check_says_so_and_raises_nothing(tmp_path):
    helpers = source_cell(lambda cell: cell.metadata.get('nbgrader', {}).get('grade_id') == 'helpers').source
    cells = [helpers, reference_functions(), self_check('check_score_end_everywhere')]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    NotebookClient(nb, timeout=120, kernel_name='python3', resources={'metadata': {'path': str(tmp_path)}}).execute()
    assert [o.text for o in nb.cells[-1].outputs] == [
        'positions.txt is not beside this notebook, so this check cannot run: keep the file with it.\n']
