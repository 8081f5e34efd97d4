"""The widget's alpha-beta view: given an alphabeta, the tree shows the window of each visited position and greys
the pruned ones, matching an independent trace of the reference convention (coursetools.game.analysis), and the windows
are drawn readable: labels of at least 16 px that neither overlap nor leave the picture, at every width.

The functions are the second workbook's given cell and alphabeta solution, with a plain minimax as score."""
import math
import random

import pytest

from coursetools.game import analysis
from coursetools.game import oracle
from test_alpha_beta import reference_functions as workbook_functions
from test_widget import PLAIN_SCORE, check_drawing

NAMES = ('print_state', 'score_end', 'play', 'moves', 'score', 'alphabeta')


def independent_trace(board, player, depth):
    """{path of moves: (alpha, beta, value)} for every call of the reference alpha-beta down to `depth` plies."""
    seen = {}

    def search(board, player, alpha, beta, path):
        value = None
        end = oracle.outcome(board)
        record = [alpha, beta, None]
        if len(path) <= depth:
            seen[path] = record
        if end is not None:
            value = end
        else:
            value = -math.inf if player == 'x' else math.inf
            for row, col in oracle.empty_cells(board):
                v = search(oracle.place(board, row, col, player), oracle.other(player), alpha, beta, path + ((row, col),))
                if player == 'x':
                    value = v if v > value else value
                    alpha = value if value > alpha else alpha
                else:
                    value = v if v < value else value
                    beta = value if value < beta else beta
                if alpha >= beta:
                    break
        record[2] = value
        return value

    search(board, player, -math.inf, math.inf, ())
    return seen


def reference_functions():
    """The workbook's functions in one namespace, score replaced by a plain minimax."""
    namespace = workbook_functions()
    exec(compile(PLAIN_SCORE, 'score', 'exec'), namespace)
    return namespace


@pytest.fixture(autouse=True)
def not_grading(monkeypatch):
    monkeypatch.delenv('NBGRADER_EXECUTION', raising=False)


@pytest.fixture(scope='module')
def widget():
    from coursetools.widget import GameTreeWidget
    ref = reference_functions()
    w = GameTreeWidget(**{name: ref[name] for name in NAMES}, tree=False)
    assert w.wait(60)
    yield w
    w.stop()
    w.close()


def paths(node, path=()):
    yield path, node
    for child in node.children:
        yield from paths(child, path + (child.move,))


def sample():
    boards = [b for b in oracle.reachable_positions() if oracle.outcome(b) is None]
    return [oracle.EMPTY_BOARD] + random.Random(3).sample(boards, 40)


def test_windows_values_and_pruning_match_an_independent_trace(widget):
    for board in sample():
        player = oracle.to_move(board)
        tree = widget.tree(board, player, depth=2)
        assert tree.alphabeta['error'] is None
        assert tree.alphabeta['visited'] == analysis.alphabeta_visits(board, player)[1]
        trace = independent_trace(board, player, 2)
        pruned = 0
        for path, node in paths(tree.root):
            if path in trace:
                alpha, beta, value = trace[path]
                assert not node.pruned and node.window == (alpha, beta) and node.ab_value == value, (board, path)
            else:
                assert node.pruned and node.window is None, (board, path)
                pruned += 1
        assert tree.alphabeta['pruned'] == pruned
    assert any(n.pruned for n in widget.tree(oracle.EMPTY_BOARD, 'x', depth=2).nodes())


def test_without_alphabeta_nothing_is_traced():
    from coursetools.widget import GameTreeWidget
    ref = reference_functions()
    w = GameTreeWidget(**{name: ref[name] for name in NAMES[:5]}, tree=False)
    try:
        tree = w.tree(oracle.EMPTY_BOARD, 'x', depth=1)
        assert tree.alphabeta is None and not any(n.pruned or n.window for n in tree.nodes())
    finally:
        w.close()


def test_an_error_in_alphabeta_is_one_line(widget):
    from coursetools.widget import GameTreeWidget
    ref = reference_functions()

    def alphabeta(state, player, alpha, beta):
        raise ValueError('oops')
    w = GameTreeWidget(**{name: ref[name] for name in NAMES[:5]}, alphabeta=alphabeta, tree=False)
    try:
        tree = w.tree(oracle.EMPTY_BOARD, 'x', depth=1)
        assert tree.alphabeta['error'] == 'alphabeta raised ValueError: oops'
        assert 'alphabeta raised ValueError: oops' in tree.errors
    finally:
        w.close()


@pytest.mark.parametrize('width', [240, 420, 640, 900, 1500])
def test_windows_are_drawn_readable_at_every_width(widget, width):
    from coursetools.widget.drawing import draw_tree
    for board in [oracle.EMPTY_BOARD, oracle.nested('x   o    '), oracle.nested('xo  x    ')]:
        for depth in (1, 2, 3):
            tree = widget.tree(board, oracle.to_move(board), depth)
            drawing = draw_tree(tree, width)
            check_drawing(drawing, width)
            texts = [label.text for label in drawing.labels]
            assert 'α −∞' in texts and 'β +∞' in texts


def test_pruned_boards_are_greyed_and_counted(widget):
    from coursetools.widget.drawing import draw_tree
    from coursetools.widget.panels import counts_html
    board = (('x', ' ', ' '), (' ', 'o', ' '), (' ', ' ', ' '))
    tree = widget.tree(board, 'x', depth=2)
    drawing = draw_tree(tree, 900, focus=((0, 2),))
    pruned = [placed.node for row in drawing.rows for placed in row if placed.node.pruned]
    assert pruned and drawing.svg.count('nac-pruned') == len(pruned)
    assert [label.text for label in drawing.labels].count('pruned') == len(pruned)
    assert f'{tree.alphabeta["pruned"]} of the {len(tree.nodes())} boards built were pruned' in counts_html(tree, True)
