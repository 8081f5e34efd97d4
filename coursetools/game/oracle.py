"""An independent model of noughts and crosses, used as the oracle by hidden tests, widget tests and benchmarks.

It is written differently from the workbook's reference solution on purpose (flat 9-character strings,
a memoized value table) so that tests compare two implementations rather than one with itself.
Boards coming in and going out use the workbook's representation: three tuples of three one-character
strings, ``' '`` empty, ``'x'`` and ``'o'``.
"""
import itertools
from functools import lru_cache

EMPTY_BOARD = ((' ', ' ', ' '), (' ', ' ', ' '), (' ', ' ', ' '))

# The eight lines as flat indices: rows, columns, then the two diagonals.
ROWS = ((0, 1, 2), (3, 4, 5), (6, 7, 8))
COLUMNS = ((0, 3, 6), (1, 4, 7), (2, 5, 8))
DIAGONALS = ((0, 4, 8), (2, 4, 6))
LINES = ROWS + COLUMNS + DIAGONALS

VALUE_OF_WINNER = {'x': 1, 'o': -1}


_flats = {}


def flat(board):
    """The board as a 9-character string, row by row (remembered for boards that can be hashed: the checks ask
    about the same few thousand boards again and again)."""
    try:
        return _flats[board]
    except KeyError:
        if len(_flats) > 100_000:
            _flats.clear()
        cells = _flats[board] = ''.join(''.join(row) for row in board)
        return cells
    except TypeError:
        return ''.join(''.join(row) for row in board)


def nested(cells):
    """The workbook's nested-tuple board from a 9-character string."""
    return tuple(tuple(cells[r * 3:r * 3 + 3]) for r in range(3))


def winning_lines(board):
    """The lines (as index triples) completed by one mark, in LINES order."""
    cells = flat(board)
    return [line for line in LINES if cells[line[0]] != ' ' and cells[line[0]] == cells[line[1]] == cells[line[2]]]


def outcome(board):
    """+1 if x has a line, -1 if o has, 0 for a full board without one, None while play goes on."""
    return outcome_of_cells(flat(board))


@lru_cache(maxsize=None)
def outcome_of_cells(cells):
    """`outcome` of a board given as its 9-character string."""
    for a, b, c in LINES:
        if cells[a] != ' ' and cells[a] == cells[b] == cells[c]:
            return VALUE_OF_WINNER[cells[a]]
    return None if ' ' in cells else 0


def empty_cells(board):
    """(row, col) of every empty cell, row-major."""
    return list(_empty_cells(flat(board)))


@lru_cache(maxsize=None)
def _empty_cells(cells):
    return tuple(divmod(i, 3) for i, mark in enumerate(cells) if mark == ' ')


def place(board, row, col, mark):
    """A new board with one cell set."""
    return _place(flat(board), row * 3 + col, mark)


@lru_cache(maxsize=100_000)
def _place(cells, i, mark):
    return nested(cells[:i] + mark + cells[i + 1:])


def other(player):
    return 'o' if player == 'x' else 'x'


def to_move(board):
    """Whose turn it is in a position reached by legal play from the empty board (x starts)."""
    cells = flat(board)
    return 'x' if cells.count('x') == cells.count('o') else 'o'


def value(board, player):
    """The minimax value (from x's point of view) of `board` with `player` to move."""
    return value_of_cells(flat(board), player)


@lru_cache(maxsize=None)
def value_of_cells(cells, player):
    """`value` of a board given as its 9-character string."""
    end = outcome_of_cells(cells)
    if end is not None:
        return end
    results = [value_of_cells(cells[:i] + player + cells[i + 1:], other(player))
               for i, m in enumerate(cells) if m == ' ']
    return max(results) if player == 'x' else min(results)


def optimal_moves(board, player):
    """Every (row, col) whose resulting position keeps the minimax value; empty once the game is over."""
    return list(_optimal_moves(flat(board), player))


@lru_cache(maxsize=None)
def _optimal_moves(cells, player):
    if outcome_of_cells(cells) is not None:
        return ()
    target = value_of_cells(cells, player)
    return tuple(divmod(i, 3) for i, mark in enumerate(cells)
                 if mark == ' ' and value_of_cells(cells[:i] + player + cells[i + 1:], other(player)) == target)


@lru_cache(maxsize=None)
def all_boards():
    """Every arrangement of ' ', 'x' and 'o' on the nine squares (3**9 = 19,683), reachable or not."""
    return tuple(nested(''.join(cells)) for cells in itertools.product(' xo', repeat=9))


@lru_cache(maxsize=None)
def reachable_positions():
    """Every position reachable from the empty board with x first, stopping at finished games (5,478)."""
    seen = {}
    frontier = [flat(EMPTY_BOARD)]
    while frontier:
        cells = frontier.pop()
        if cells in seen:
            continue
        seen[cells] = None
        if outcome_of_cells(cells) is None:
            mark = 'x' if cells.count('x') == cells.count('o') else 'o'
            frontier.extend(cells[:i] + mark + cells[i + 1:] for i, m in enumerate(cells) if m == ' ')
    return tuple(nested(cells) for cells in sorted(seen))


def search_tree_size(board, player):
    """How many positions a plain (unpruned, unmemoized) minimax visits from `board`, the root included."""
    return _tree_size(flat(board), player)


@lru_cache(maxsize=None)
def _tree_size(cells, player):
    if outcome_of_cells(cells) is not None:
        return 1
    return 1 + sum(_tree_size(cells[:i] + player + cells[i + 1:], other(player))
                   for i, m in enumerate(cells) if m == ' ')


def count_games(board=EMPTY_BOARD, player='x'):
    """How many complete games can follow `board`, as a dict {'x': wins, 'o': wins, 'draw': draws}."""
    return dict(zip(('x', 'o', 'draw'), _games(flat(board), player)))


@lru_cache(maxsize=None)
def _games(cells, player):
    end = outcome_of_cells(cells)
    if end is not None:
        return (end == 1, end == -1, end == 0)
    totals = [0, 0, 0]
    for i, m in enumerate(cells):
        if m == ' ':
            for k, n in enumerate(_games(cells[:i] + player + cells[i + 1:], other(player))):
                totals[k] += n
    return tuple(totals)
