"""Game analysis beyond coursetools.game.oracle: the eight symmetries of the board, a depth-limited search with the
open-lines evaluation, and the reference alpha-beta search whose call counts define the alpha_beta workbook's
counting convention.

Like the oracle it works on flat 9-character strings internally and is written independently of the workbook's
reference solution, so tests compare two implementations.
"""
import math
from functools import lru_cache

from coursetools.game import oracle

# The eight symmetries of the square as permutations of flat indices: image[i] = cells[perm[i]].
_ROTATE = (6, 3, 0, 7, 4, 1, 8, 5, 2)        # quarter turn clockwise
_MIRROR = (2, 1, 0, 5, 4, 3, 8, 7, 6)        # left-right reflection


def _compose(p, q):
    return tuple(p[q[i]] for i in range(9))


def _symmetry_group():
    identity = tuple(range(9))
    group, turn = [], identity
    for _ in range(4):
        group.append(turn)
        group.append(_compose(turn, _MIRROR))
        turn = _compose(turn, _ROTATE)
    return tuple(dict.fromkeys(group))


SYMMETRIES = _symmetry_group()
assert len(SYMMETRIES) == 8


def images(board):
    """The (up to) eight boards that are rotations or reflections of `board`, as a set of nested boards."""
    cells = oracle.flat(board)
    return {oracle.nested(''.join(cells[p[i]] for i in range(9))) for p in SYMMETRIES}


def _key(board):
    cells = oracle.flat(board)
    return min(''.join(cells[p[i]] for i in range(9)) for p in SYMMETRIES)


def symmetry_classes(boards=None):
    """How many of `boards` (default: every reachable position) differ up to rotation and reflection (765)."""
    boards = oracle.reachable_positions() if boards is None else boards
    return len({_key(board) for board in boards})


# --- depth-limited search with the open-lines evaluation ---------------------------------------------

def open_lines(board, mark):
    """How many of the eight lines hold no mark of `mark`'s opponent."""
    cells = oracle.flat(board)
    enemy = oracle.other(mark)
    return sum(1 for line in oracle.LINES if all(cells[i] != enemy for i in line))


def evaluation(board):
    """score_end for a finished board, otherwise (open lines for x - open lines for o) / 10."""
    end = oracle.outcome(board)
    return end if end is not None else (open_lines(board, 'x') - open_lines(board, 'o')) / 10


def depth_value(board, player, depth):
    """The value of a depth-limited minimax that scores unfinished boards at depth 0 with `evaluation`."""
    return _depth_value(oracle.flat(board), player, depth)


@lru_cache(maxsize=None)
def _depth_value(cells, player, depth):
    board = oracle.nested(cells)
    if oracle.outcome(board) is not None or depth == 0:
        return evaluation(board)
    values = [_depth_value(cells[:i] + player + cells[i + 1:], oracle.other(player), depth - 1)
              for i, m in enumerate(cells) if m == ' ']
    return max(values) if player == 'x' else min(values)


# --- the counting convention of alpha-beta --------------------------------------------------------------

def alphabeta_visits(board, player, alpha=-math.inf, beta=math.inf):
    """(value, positions visited) of the reference alpha-beta: moves row-major, stop trying moves as soon as
    alpha >= beta, every call counted (the root and finished boards included)."""
    visited = 0

    def search(cells, player, alpha, beta):
        nonlocal visited
        visited += 1
        end = oracle.outcome_of_cells(cells)
        if end is not None:
            return end
        best = -math.inf if player == 'x' else math.inf
        for i, m in enumerate(cells):
            if m != ' ':
                continue
            value = search(cells[:i] + player + cells[i + 1:], oracle.other(player), alpha, beta)
            if player == 'x':
                best = value if value > best else best
                alpha = best if best > alpha else alpha
            else:
                best = value if value < best else best
                beta = best if best < beta else beta
            if alpha >= beta:
                break
        return best

    value = search(oracle.flat(board), player, alpha, beta)
    return value, visited
