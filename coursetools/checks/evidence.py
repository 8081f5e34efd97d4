"""Counts of calls the grader accepts only with evidence it can check: the search's trace.

A count of calls is measured in the student's kernel, which the student's code can rewrite; so a count earns
nothing on the kernel's word. With each counted call the kernel sends the trace of the search: for every call
through the function's global name, the call it was made from, its arguments (a board as its nine squares) and
the value it returned. The trace is replayed here against the rules of the search, with the oracle's values:

* the first call is the one asked for; every other call is on a board one legal move (by the player to move)
  below the call it was made from, with the other player to move;
* a finished board is not searched further and gives its result;
* alpha-beta (`alphabeta_count`): each call's value is what alpha-beta owes its window (the exact minimax value
  when that value lies inside, a bound on the right side of the window otherwise), and a position stops trying
  moves before its last only once its window has closed or it has found the best value there is;
* a memoized search (`memo_count`): each call's value is the exact minimax value, and a position is either
  searched through all its moves or answered at once because it was met before.

So a trace that passes is a search with the count claimed, and forging one takes writing that search. A count
without its trace is believed only where it costs marks: one too large for a trace to be kept
(`call_trace.TRACE_LIMIT`) is more than any check accepts.
"""
import math

from coursetools.game import oracle
from coursetools.sandbox.inside.call_trace import TRACE_LIMIT

BEST = {'x': 1, 'o': -1}
TABLE = '*'             # how a trace shows an argument that is a table (score_memo's `known`)


class Unverified(AssertionError):
    """A count whose evidence does not hold."""

    def __init__(self, name, problem):
        super().__init__(f'The count of calls of {name} cannot be accepted: {problem}. (A count is accepted with '
                         f'the trace of the search, which the grader checks against the rules of the search.)')


def claimed(outcome, name):
    """The count as the kernel claims it: believed where it costs marks, never enough to earn them."""
    if not isinstance(outcome.count, int) or outcome.count < 1:
        raise Unverified(name, 'the grader could not count them')
    return outcome.count


def alphabeta_count(outcome, board, player, alpha=-math.inf, beta=math.inf):
    """The number of calls of one alphabeta search, if its trace is that of a correct alpha-beta search."""
    return _verified(outcome, 'alphabeta', (oracle.flat(board), player, alpha, beta), _alphabeta_node)


def memo_count(outcome, board, player):
    """The number of calls of one memoized search (score_memo), if its trace is that of one."""
    return _verified(outcome, 'score_memo', (oracle.flat(board), player, TABLE), _memo_node)


def _verified(outcome, name, root, rule):
    count = claimed(outcome, name)
    trace = getattr(outcome, 'trace', None)
    if trace is None:
        if count > TRACE_LIMIT:
            return count            # believed: no check accepts so many calls
        raise Unverified(name, f'they ({count}) came without the trace that shows them')
    if len(trace) != count:
        raise Unverified(name, f'{count} were counted but the trace shows {len(trace)}')
    calls = [_parsed(row, name, len(root), number) for number, row in enumerate(trace, 1)]
    if calls[0][0] != -1 or calls[0][1:-1] != root:
        raise Unverified(name, 'the first call in the trace is not the one the grader made')
    children = [[] for _ in calls]
    for number, (parent, *_) in enumerate(calls[1:], 1):
        if not 0 <= parent < number:
            raise Unverified(name, f'call {number + 1} in the trace comes from no earlier call')
        children[parent].append(number)
    seen = set()
    for number, call in enumerate(calls):
        cells, mover = call[1], call[2]
        below = [calls[child] for child in children[number]]
        problem = _move_problem(cells, mover, below) or rule(call, below, seen)
        if problem:
            raise Unverified(name, f'call {number + 1} in the trace, on the board {cells!r} with {mover} to '
                                   f'move: {problem}')
        seen.add((cells, mover))
    return count


def _parsed(row, name, arguments, number):
    """(parent, cells, player, *other arguments, value) of one row `parent;cells;player;...;value`; an argument
    that is neither a board, a player nor a number (a memo table) is `TABLE`; arguments past those the task
    names (a depth of the student's own) are left out."""
    parts = row.split(';') if isinstance(row, str) else []
    try:
        if len(parts) < arguments + 2:
            raise ValueError
        cells, player = parts[1], parts[2]
        if len(cells) != 9 or set(cells) - {' ', 'x', 'o'} or player not in BEST:
            raise ValueError
        others = tuple(part if part == TABLE else float(part) for part in parts[3:arguments + 1])
        value = float(parts[-1]) if parts[-1] not in ('!', '?') else None
        return (int(parts[0]), cells, player) + others + (value,)
    except ValueError:
        raise Unverified(name, f'call {number} in the trace cannot be read: {str(row)[:80]!r}') from None


def _move_problem(cells, mover, below):
    """Why the calls made from this one are not one move each by `mover`, or None."""
    finished = oracle.outcome_of_cells(cells) is not None
    if finished and below:
        return 'the game is over there, yet the search went on'
    squares = set()
    for child in below:
        changed = [i for i in range(9) if child[1][i] != cells[i]]
        if len(changed) != 1 or cells[changed[0]] != ' ' or child[1][changed[0]] != mover:
            return f'it called on {child[1]!r}, which is not one move by {mover} from it'
        if child[2] != oracle.other(mover):
            return f'the call on {child[1]!r} has {child[2]} to move, but {oracle.other(mover)} moves next'
        if changed[0] in squares:
            return f'it searched the same move twice ({child[1]!r})'
        squares.add(changed[0])
    return None


def _alphabeta_node(call, below, seen):
    _, cells, mover, alpha, beta, value = call
    if value is None:
        return 'it returned no number'
    truth = oracle.value_of_cells(cells, mover)
    if alpha < truth < beta and value != truth:
        return f'it returned {value:g}, but its value is {truth} and the window ({alpha:g}, {beta:g}) holds it'
    if truth <= alpha < beta and value > alpha:
        return f'it returned {value:g}, more than alpha = {alpha:g}, but its value is only {truth}'
    if alpha < beta <= truth and value < beta:
        return f'it returned {value:g}, less than beta = {beta:g}, but its value is {truth}'
    if oracle.outcome_of_cells(cells) is not None or len(below) == cells.count(' '):
        return None
    best = -math.inf if mover == 'x' else math.inf
    for child in below:
        if child[-1] is None:
            return None             # reported at that call
        best = max(best, child[-1]) if mover == 'x' else min(best, child[-1])
        alpha, beta = (max(alpha, best), beta) if mover == 'x' else (alpha, min(beta, best))
    if alpha >= beta or best == BEST[mover]:
        return None
    return (f'it stopped after {len(below)} of its {cells.count(" ")} moves although its window '
            f'({alpha:g}, {beta:g}) was still open')


def _memo_node(call, below, seen):
    _, cells, mover, _, value = call
    truth = oracle.value_of_cells(cells, mover)
    if value != truth:
        return f'it returned {value!r}, but its value is {truth}'
    if oracle.outcome_of_cells(cells) is not None or len(below) == cells.count(' '):
        return None
    if not below and (cells, mover) in seen:
        return None                 # answered from the table
    if below and any(child[-1] == BEST[mover] for child in below):
        return None                 # a win found: no need to look further
    return f'it searched {len(below)} of its {cells.count(" ")} moves, and had not met the board before'
