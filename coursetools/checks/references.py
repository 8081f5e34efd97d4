"""Correct versions of both workbooks' graded functions, built on the oracle (`coursetools.game`): they stand
in for the student's while another function is tested. Also the argument tuples the kernel's answer tables
cover. Each assignment's module says which reference stands for which name (`REFERENCE`, `KERNEL_ANSWERS`)."""
from coursetools.game import analysis
from coursetools.game import oracle


# --- noughts_and_crosses ----------------------------------------------------------------------------------

def reference_print_state(state):
    for row in state:
        print('|'.join(row))


def reference_score(state, player):
    moves = oracle.optimal_moves(state, player)
    return oracle.value(state, player), (moves[0] if moves else None)


def every_board():
    return [(board,) for board in oracle.all_boards()]


def every_move():
    """The calls of `play` a search makes on each reachable position: either mark on each empty square, and a
    space on each taken one (a search that undoes its moves by playing a space back)."""
    return [(board, row, col, mark) for board in oracle.reachable_positions()
            for row in range(3) for col in range(3) for mark in ('xo' if board[row][col] == ' ' else ' ')]


# --- alpha_beta -------------------------------------------------------------------------------------------

def _best_move(board, player):
    best = oracle.optimal_moves(board, player)
    return best[0] if best else None


def reference_score_counted(state, player):
    return oracle.value(state, player), _best_move(state, player), oracle.search_tree_size(state, player)


def reference_alphabeta(state, player, alpha, beta):
    return oracle.value(state, player), _best_move(state, player)


def reference_score_memo(state, player, known):
    result = (oracle.value(state, player), _best_move(state, player))
    known[state] = result
    return result


def reference_score_depth(state, player, depth):
    value = analysis.depth_value(state, player, depth)
    if oracle.outcome(state) is not None or depth == 0:
        return value, None
    for row, col in oracle.empty_cells(state):
        if analysis.depth_value(oracle.place(state, row, col, player), oracle.other(player), depth - 1) == value:
            return value, (row, col)


def reference_count_games(state, player):
    games = oracle.count_games(state, player)
    return games['x'], games['o'], games['draw']


def reference_reachable(state, player):
    return reachable_from(state, player)


def reachable_from(state, player):
    """Every position that can follow `state` with `player` to move, `state` itself and finished ones included."""
    seen, stack = set(), [(state, player)]
    while stack:
        board, mark = stack.pop()
        if board in seen:
            continue
        seen.add(board)
        if oracle.outcome(board) is None:
            stack.extend((oracle.place(board, r, c, mark), oracle.other(mark)) for r, c in oracle.empty_cells(board))
    return seen


def reference_canonical(state):
    return min(analysis.images(state))


def reference_lines(state):
    cells = oracle.flat(state)
    return [tuple(cells[i] for i in line) for line in oracle.LINES]


def every_position():
    return [(board,) for board in oracle.reachable_positions()]
