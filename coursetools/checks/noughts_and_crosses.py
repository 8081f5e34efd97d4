"""Hidden checks for the `noughts_and_crosses` assignment.

The hidden-test blocks of the workbook call these functions. They live in the course package, which is never
visible to a student's kernel: while grading, the test cells run in the trusted checker (`coursetools.judge.checker`)
and the student's functions are proxies there. In the instructor's own Jupyter they run in the kernel with the
real functions (`calls` hides the difference). Every check raises AssertionError with a message naming the board
it failed on.

Two ideas keep marks fair:

* `isolate` makes a mistake cost marks in its own task only: while one function is tested, the functions it may
  use are correct versions (`KERNEL_CONTEXT`: `score` may use correct `score_end`, `moves` and `play`;
  `score_end` may use `moves`), sent to the kernel as tables of answers (`KERNEL_ANSWERS`, values only, never
  code) and only once their own tests have run (the checker orders the test cells so), and any other function
  the test cell itself calls is the checker's own reference. The perfect game is the integration task: everything is the
  student's own.
* The student's `score` is memoized while tested, so a slow but correct search is run at most once per
  position; only the perfect game searches the whole tree from the empty board.

Shared with alpha_beta: `isolation` (binding until the cell ends, memoizing), `references` (correct versions),
`positions` (the samples) and `boards` (pictures in messages, reading answers).
"""
import contextlib
import functools
import re

from coursetools.game import oracle
from coursetools.judge import checker
from coursetools.checks import calls
from coursetools.checks.boards import as_board, as_move, each, picture, shown, side_by_side
from coursetools.checks.isolation import MISSING, clear_student_cache, memoized, replace_until_cell_ends
from coursetools.checks.positions import finished_positions, unfinished_sample
from coursetools.checks.references import every_board, every_move, reference_print_state, reference_score

FUNCTIONS = ('print_state', 'score_end', 'play', 'moves', 'score', 'perfect_game')
_as_board = as_board            # the name grader_tests/test_stubs.py uses


# --- reference versions, used while another function is under test -------------------------------------

REFERENCE = {
    'print_state': reference_print_state,
    'score_end': oracle.outcome,
    'play': oracle.place,
    'moves': oracle.empty_cells,
    'score': reference_score,
}

# Correct functions the kernel may use while another function is tested, given as answers only (name ->
# (reference, the argument tuples answered)): the checker sends the kernel a table of values, never code.
KERNEL_ANSWERS = {
    'score_end': (oracle.outcome, every_board),
    'moves': (oracle.empty_cells, every_board),
    'play': (oracle.place, every_move),
}

# What the kernel may use while each function is tested: correct versions of the functions it needs, names
# whose answers are remembered, calls that are recorded.
KERNEL_CONTEXT = {
    'print_state': {},
    'score_end': {'replace': ('moves',)},
    'play': {},
    'moves': {},
    'score': {'replace': ('score_end', 'moves', 'play'), 'memoize': {'score': 'isolated'}},
    'perfect_game': {'memoize': {'score': 'own'}, 'record': ('print_state',)},
}


# --- isolation --------------------------------------------------------------------------------------------

def isolate(namespace, testing):
    """Prepare the test cell's globals for testing one function, until the cell ends.

    In the checker: see KERNEL_CONTEXT. In the instructor's own kernel: for tasks 1-5 the notebook's other
    functions become reference versions; for the perfect game everything stays the student's own and the calls
    of `print_state` are recorded; the student's `score` is memoized in both cases. Returns a function that
    undoes the change; inside IPython it also runs by itself when the cell ends, even if the cell fails.
    """
    session = checker.session_in(namespace)
    if session is not None:
        # The notebook's `correct_helpers` (locked cell score-helpers) would give the visible score tests correct
        # helpers from score_helpers.txt; here the kernel already has the grader's, so it does nothing.
        session.override({'correct_helpers': contextlib.nullcontext})
        own = testing == 'perfect_game'       # the integration task: every function is the student's own
        return session.isolate(testing, KERNEL_CONTEXT.get(testing, {}), KERNEL_ANSWERS, {} if own else REFERENCE)
    own_score = namespace.get('score', MISSING)
    replacements = {} if testing == 'perfect_game' else {
        name: function for name, function in REFERENCE.items() if name != testing}
    if testing in ('score', 'perfect_game') and callable(own_score):
        clear_student_cache(own_score)
        replacements['score'] = memoized(own_score, 'own' if testing == 'perfect_game' else 'isolated')
    if testing == 'perfect_game' and callable(namespace.get('print_state')) and callable(
            namespace.get('perfect_game')):
        replacements['print_state'], replacements['perfect_game'] = calls.recording(
            'print_state', namespace['print_state'], during=namespace['perfect_game'])
    return replace_until_cell_ends(namespace, replacements, then=lambda: clear_student_cache(own_score))


def warm_up():
    """Compute the oracle's tables and the samples now. The trusted checker calls this once per process
    (`coursetools.judge.checker_server.warm_up`), before its first notebook, so that no notebook pays for them."""
    oracle.value(oracle.EMPTY_BOARD, 'x')
    unfinished_sample()
    finished_positions()
    for kind in ('rows and columns', 'diagonals', 'no line'):
        _positions_won_by(kind)


# --- task 1: print_state ----------------------------------------------------------------------------------

def _lines(text):
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def printed_lines(print_state, board):
    """What print_state prints for `board`, without blank lines and trailing spaces."""
    (args, outcome), = calls.outcomes(print_state, 'print_state', [(board,)])
    calls.value(outcome, 'print_state', args, picture)
    return _lines(outcome.printed)


def print_state_format(print_state):
    boards = list(oracle.reachable_positions()[::40]) + [
        (('x', 'x', 'x'), ('x', 'x', 'x'), ('x', 'x', 'x')),
        (('o', 'o', 'o'), ('o', 'o', 'o'), ('o', 'o', 'o')),
    ]
    for (board,), outcome in calls.outcomes(print_state, 'print_state', [(board,) for board in boards],
                                            first=calls.QUICK):
        calls.value(outcome, 'print_state', (board,), picture)
        expected = ['|'.join(row).rstrip() for row in board]
        got = _lines(outcome.printed)
        assert got == expected, (
            f'print_state should print three rows like this for\n{picture(board)}\n{side_by_side(expected, got)}')


# --- task 2: score_end ------------------------------------------------------------------------------------

def _line_kinds(board):
    lines = oracle.winning_lines(board)
    if any(line in oracle.ROWS or line in oracle.COLUMNS for line in lines):
        return 'rows and columns'
    if lines:
        return 'diagonals'
    return 'no line'


@functools.lru_cache(maxsize=None)
def _positions_won_by(kind):
    """The reachable positions whose winning lines are of this kind (`_line_kinds`), worked out once."""
    return tuple(board for board in oracle.reachable_positions() if _line_kinds(board) == kind)


def _check_score_end(score_end, boards):
    for (board,), got in each(score_end, 'score_end', [(board,) for board in boards], first=calls.QUICK):
        expected = oracle.outcome(board)
        correct = got is None if expected is None else (
            got is not None and not isinstance(got, str) and got == expected)
        assert correct, f'score_end returned {shown(got)} but should return {shown(expected)} for\n{picture(board)}'


def score_end_rows_and_columns(score_end):
    _check_score_end(score_end, _positions_won_by('rows and columns'))


def score_end_diagonals(score_end):
    _check_score_end(score_end, _positions_won_by('diagonals'))


def score_end_draws_and_unfinished(score_end):
    _check_score_end(score_end, _positions_won_by('no line'))


# --- task 3: play -----------------------------------------------------------------------------------------

def play_move(play):
    moves = [(board, row, col, mark) for board in oracle.reachable_positions()[::7]
             for row, col in oracle.empty_cells(board) for mark in 'xo']
    for (board, row, col, mark), got in each(play, 'play', moves, first=calls.QUICK):
        got = as_board(got)
        expected = oracle.place(board, row, col, mark)
        assert got == expected, (
            f'play(board, {row}, {col}, {mark!r}) returned\n{picture(got)}\nbut should return\n'
            f'{picture(expected)}\nfor the board\n{picture(board)}')
    # Two moves from the same board must not leak into each other.
    board = (('x', ' ', ' '), (' ', 'o', ' '), (' ', ' ', ' '))
    (_, first), (_, second) = each(play, 'play', [(board, 0, 1, 'x'), (board, 2, 2, 'x')])
    first, second = as_board(first), as_board(second)
    assert first == oracle.place(board, 0, 1, 'x') and second == oracle.place(board, 2, 2, 'x'), (
        'play must start from the board it is given each time: playing (0, 1) and then (2, 2) on the same '
        f'board gave\n{picture(first)}\nand\n{picture(second)}\nstarting from\n{picture(board)}')


def play_types(play):
    moves = [(board, row, col, 'x') for board in oracle.reachable_positions()[::97]
             for row, col in oracle.empty_cells(board)[:2]]
    # The types alone would pass a stub that returns the board it is given, or one same board.
    outcomes = calls.require_not_a_stub('play', calls.outcomes(play, 'play', moves, first=calls.QUICK),
                                        normal=_as_board)
    for (board, row, col, _), outcome in outcomes:
        got = calls.value(outcome, 'play', (board, row, col, 'x'), picture)
        where = f'play(board, {row}, {col}, \'x\') on\n{picture(board)}\n'
        assert type(got) is tuple, f'{where}returned a {type(got).__name__}; it must return a tuple of tuples'
        assert len(got) == 3, f'{where}returned {len(got)} rows; a board has 3'
        for row_value in got:
            assert type(row_value) is tuple, (
                f'{where}returned a row that is a {type(row_value).__name__}; each row must be a tuple')
            assert len(row_value) == 3, f'{where}returned a row with {len(row_value)} cells; rows have 3'
            for cell in row_value:
                assert isinstance(cell, str) and len(cell) == 1, (
                    f'{where}returned a cell {cell!r}; cells are one-character strings')


# --- task 4: moves ----------------------------------------------------------------------------------------

def moves_empty_cells(moves):
    extra = [
        (('x', 'o', 'x'), ('x', 'o', 'o'), ('o', 'x', 'x')),
        (('x', ' ', 'x'), ('o', 'o', 'o'), (' ', 'x', ' ')),
    ]
    boards = list(oracle.reachable_positions()) + extra
    for (board,), got in each(moves, 'moves', [(board,) for board in boards], first=calls.QUICK):
        expected = oracle.empty_cells(board)
        assert isinstance(got, list), f'moves returned a {type(got).__name__}; it must return a list, for\n{picture(board)}'
        as_pairs = [as_move(move) for move in got]
        assert None not in as_pairs, (
            f'moves returned {got!r}; every move must be a (row, col) pair of two integers, for\n{picture(board)}')
        if not got and expected and oracle.outcome(board) is not None:
            raise AssertionError(
                f'moves returned [] because someone has already won on this board, but moves must still list the '
                f'empty squares, as the task says: {expected}. (It is score and perfect_game that check whether '
                f'the game is over.)\n{picture(board)}')
        duplicates = sorted({move for move in as_pairs if as_pairs.count(move) > 1})
        assert not duplicates, f'moves listed {duplicates} more than once for\n{picture(board)}'
        assert sorted(as_pairs) == sorted(expected), (
            f'moves returned {sorted(as_pairs)} but the empty cells are {expected} (any order is fine) for\n'
            f'{picture(board)}')


# --- task 5: score ----------------------------------------------------------------------------------------

def _unpack_score(got, board, player):
    where = f'score(board, {player!r}) for\n{picture(board)}\n'
    assert isinstance(got, (tuple, list)) and len(got) == 2, f'{where}returned {got!r}; it must return (value, move)'
    return tuple(got)


def score_finished(score):
    positions = [(board, player) for board in finished_positions() for player in 'xo']
    for (board, player), got in each(score, 'score', positions, first=calls.QUICK):     # the game is over
        value, move = _unpack_score(got, board, player)
        expected = oracle.outcome(board)
        assert move is None and not isinstance(value, str) and value == expected, (
            f'The game is over on this board, so score(board, {player!r}) should return ({expected}, None), '
            f'not ({value!r}, {move!r}):\n{picture(board)}')


def _sample_to_move():
    return [(board, oracle.to_move(board)) for board in unfinished_sample()]


def score_values(score):
    for (board, player), got in each(score, 'score', _sample_to_move()):
        value, _ = _unpack_score(got, board, player)
        expected = oracle.value(board, player)
        hint = ''
        if expected and value == -expected:
            hint = (" The sign is the wrong way round: a value is always from x's point of view (+1: x wins), "
                    'whoever is to move.')
        elif isinstance(value, (int, float)) and player == 'o' and value > expected:
            hint = ' Does o choose the smallest value? o wants the result to be as bad as possible for x.'
        elif isinstance(value, (int, float)) and player == 'x' and value < expected:
            hint = ' Does x choose the largest value, and does the search look at every move?'
        assert not isinstance(value, str) and value == expected, (
            f'score(board, {player!r}) gave the value {value!r}, but with best play by both sides the value is '
            f'{expected} (from x\'s point of view) for\n{picture(board)}{hint}')


def score_moves(score):
    for (board, player), got in each(score, 'score', _sample_to_move()):
        _, move = _unpack_score(got, board, player)
        cell = as_move(move)
        where = f'score(board, {player!r}) chose the move {move!r} for\n{picture(board)}\n'
        if move is None:
            loses = {1: 'o', -1: 'x'}.get(oracle.value(board, player)) == player
            raise AssertionError(
                f'{where}but the game is not over, so score must return a move. '
                + (f'Every move loses for {player} here ({player} cannot stop the other player), and score must '
                   f'still return one of them (any of {oracle.empty_cells(board)}): check how your search picks a '
                   'move when no move is good.' if loses else
                   f'The best moves here are {oracle.optimal_moves(board, player)}.'))
        assert cell is not None, f'{where}but a move must be a (row, col) pair of two integers'
        assert cell in oracle.empty_cells(board), f'{where}but that is not an empty cell'
        best = oracle.optimal_moves(board, player)
        after = oracle.value(oracle.place(board, *cell, player), oracle.other(player))
        assert cell in best, (
            f'{where}which lets the game end at {after} (from x\'s point of view); the best moves for {player} '
            f'are {best}, ending at {oracle.value(board, player)}')


# --- task 6: perfect_game ---------------------------------------------------------------------------------

_ROW = re.compile(r'[xo ]\|[xo ]\|[xo ]')


def read_game(text):
    """The boards printed in `text` (three consecutive board rows each) and the other non-blank lines."""
    boards, others, rows = [], [], []
    for line in text.splitlines():
        normal = line.rstrip().ljust(5)
        if _ROW.fullmatch(normal):
            rows.append(tuple(normal[0::2]))
            if len(rows) == 3:
                boards.append(tuple(rows))
                rows = []
        else:
            if rows:
                others.extend('|'.join(row) for row in rows)
                rows = []
            if line.strip():
                others.append(line.strip())
    others.extend('|'.join(row) for row in rows)
    return boards, others


def perfect_game_boards(text):
    """The game perfect_game played: the boards it passed to print_state (so that a print_state with its own
    format costs task 1 only), or, if it never called print_state or passed it objects that cannot be read as
    boards, the boards read from what it printed."""
    recorded = [_recorded_board(arguments) for arguments in calls.recorded('print_state') or ()]
    if recorded and None not in recorded:
        boards, source = recorded, 'passed to print_state'
    else:
        boards, _ = read_game(text or '')
        source = 'printed'
    assert boards, ('perfect_game printed no boards. Print every position with print_state, from the empty '
                    'board to the last one.')
    assert boards[0] == oracle.EMPTY_BOARD, f'The first board {source} should be the empty board, not\n{picture(boards[0])}'
    game = [boards[0]] + [b for previous, b in zip(boards, boards[1:]) if b != previous]
    player = 'x'
    for before, after in zip(game, game[1:]):
        assert oracle.outcome(before) is None, f'A board was {source} after the game had already ended:\n{picture(after)}'
        changed = [(r, c) for r in range(3) for c in range(3) if before[r][c] != after[r][c]]
        assert len(changed) == 1 and before[changed[0][0]][changed[0][1]] == ' ', (
            f'Each board {source} should add one mark to the one before; this step does not:\n{picture(before)}\n'
            f'then\n{picture(after)}')
        row, col = changed[0]
        assert after[row][col] == player, (
            f'It was {player}\'s turn (x starts, then they alternate), but {after[row][col]} played at '
            f'{(row, col)}:\n{picture(after)}')
        assert (row, col) in oracle.optimal_moves(before, player), (
            f'{player} played {(row, col)}, which is not a minimax-best move; the best moves were '
            f'{oracle.optimal_moves(before, player)} on\n{picture(before)}')
        player = oracle.other(player)
    assert oracle.outcome(game[-1]) is not None, (
        f'The last board {source} is not a finished game; print every position up to the end:\n{picture(game[-1])}')


def _recorded_board(arguments):
    """The board of one recorded print_state call, as nested tuples of strings; None if it is not one."""
    board = arguments[0] if isinstance(arguments, (list, tuple)) and len(arguments) == 1 else None
    normal = as_board(board)
    if isinstance(normal, tuple) and len(normal) == 3 and all(
            isinstance(row, tuple) and len(row) == 3 and all(isinstance(cell, str) for cell in row) for row in normal):
        return tuple(tuple(str(cell) for cell in row) for row in normal)
    return None


_ANNOUNCEMENT = re.compile(r'\b(draw|drawn|tie|tied)\b', re.IGNORECASE)


def perfect_game_result(text, result):
    assert text is not None, 'perfect_game() did not finish: see the error in the cell above.'
    assert result is not None and not isinstance(result, str) and result == 0, (
        f'perfect_game() returned {result!r}; a perfect game is a draw, so it should return 0')
    _, others = read_game(text)
    assert any(_ANNOUNCEMENT.search(line) for line in others), (
        'perfect_game() should announce the result in words, e.g. print("It\'s a draw!"); it printed no line '
        'saying draw or tie.')
