"""The positions both assignments' checks test on: a sample of unfinished positions at every depth, and every
finished one. Each is worked out once per process (the checker's `warm_up` does it before its first notebook)."""
import functools
import random

from coursetools.game import analysis
from coursetools.game import oracle


def unfinished_sample():
    """Unfinished reachable positions for `score`, at every depth: with 1 to 4 marks, one position of each kind
    (each class of positions equal up to rotation and reflection, in an orientation drawn at random, always the
    same), and every position with 5 marks or more: 3,591 positions, whose plain unmemoized searches visit 395,432
    positions in all, 72% of one search from the empty board (docs/checks.md has the figures)."""
    return list(_unfinished_sample())


@functools.lru_cache(maxsize=None)
def _unfinished_sample():
    chooser = random.Random(20261123)
    classes = {}
    sample = []
    for board in oracle.reachable_positions():
        if oracle.outcome(board) is not None or board == oracle.EMPTY_BOARD:
            continue
        if len(oracle.empty_cells(board)) >= 5:          # 1 to 4 marks
            classes.setdefault(min(analysis.images(board)), []).append(board)
        else:
            sample.append(board)
    early = [chooser.choice(sorted(members)) for _, members in sorted(classes.items())]
    return tuple(sorted(early, key=lambda board: -len(oracle.empty_cells(board))) + sample)


def finished_positions():
    return list(_finished_positions())


@functools.lru_cache(maxsize=None)
def _finished_positions():
    return tuple(board for board in oracle.reachable_positions() if oracle.outcome(board) is not None)
