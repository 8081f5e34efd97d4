"""Boards in the checks' messages and in the student's answers: `picture` draws a board for a message, `each`
calls a student's function with a failed call named by its board, `shown` writes a value, and `as_board` and
`as_move` read an answer given as lists, arrays or other sequences. Shared by both assignments' checks."""
import operator

from coursetools.checks import calls


def picture(board):
    """The board drawn as in print_state, indented, followed by its Python literal."""
    try:
        rows = ['    ' + '|'.join(row) for row in board]
    except TypeError:
        rows = []
    return '\n'.join(rows + ['    ' + repr(board)])


def side_by_side(expected, got, right='printed'):
    """Expected and `got` lines in two columns, written with repr so that spaces show, the first line that
    differs marked."""
    count = max(len(expected), len(got))
    left = [repr(line) for line in expected] + ['(nothing)'] * (count - len(expected))
    right_column = [repr(line) for line in got] + ['(nothing)'] * (count - len(got))
    width = max(map(len, left + ['expected'])) + 3
    first = next((i for i in range(count) if left[i] != right_column[i]), None)
    rows = [f'    {"expected":<{width}}{right}']
    rows += [f'    {e:<{width}}{g}' + ('   <- first difference' if i == first else '')
             for i, (e, g) in enumerate(zip(left, right_column))]
    return '\n'.join(rows)


def each(function, name, arguments, first=8):
    """(arguments, value) for each argument tuple, values fetched as they are needed (`first`: see
    `calls.outcomes`); a call that raised becomes an AssertionError naming the call."""
    for args, outcome in calls.outcomes(function, name, arguments, first=first):
        yield args, calls.value(outcome, name, args, picture)


def shown(value):
    return repr(value)


def as_board(result):
    """`result` as nested tuples when it is a sequence of rows; else unchanged."""
    try:
        return tuple(tuple(row) for row in result)
    except TypeError:
        return result


def as_move(move):
    """`move` as a (row, col) pair of ints when it is a pair (a tuple or a list) of two integers; else None."""
    if not isinstance(move, (tuple, list)) or len(move) != 2:
        return None
    try:
        return operator.index(move[0]), operator.index(move[1])
    except TypeError:
        return None
