# score_memo fills the table it is given but never looks in it, so it searches every path; the grader's counter
# in the kernel is rewritten to claim the 16,168 calls of a memoized search, without a trace. Expected: task 3's
# values mark only.
# %% score_memo
import sys


def score_memo(state, player, known):
    counting = sys.modules.get('_course_grader_call_trace')
    if counting is not None:
        counting.Trace.end = lambda self: {'count': 16168}
    end = score_end(state)
    if end is not None:
        known[state] = (end, None)
        return end, None
    best = None
    for row, col in moves(state):
        value, _ = score_memo(play(state, row, col, player), other(player), known)
        if best is None or (value > best[0] if player == 'x' else value < best[0]):
            best = (value, (row, col))
    known[state] = best
    return best
