"""Predict-then-reveal's 'which move will be pruned?' (issue 44): asked before the first move of a position the α-β
search has just entered, answered by the cut the notebook's search makes there later (or none), revealed as a step
of its own with the window and the value that closed it, before the next question. The answers are worked out by
hand on a prepared position and taken from test_stepping's reference α-β from the empty board."""
import re

from coursetools.game import oracle
from test_lecture_steps import panel_widget  # noqa: F401  (a fixture)
from test_stepping import Reference, press, stepped

C = 'xoxoo x  '


def prune_questions(board, depth, pruning=True):
    """{path: question} of every 'which move will be pruned?' asked stepping α-β from ``board``."""
    from coursetools.widget.outline import Outline
    from coursetools.widget.questions import question
    player = oracle.to_move(board)
    steps = stepped(board, player, pruning, 'listed', depth)
    outline, asked = Outline(player, pruning), {}
    for index, step in enumerate(steps):
        found = question('prune', step, outline, lambda index=index: iter(steps[index:]))
        if found is not None:
            assert found.path not in asked, 'asked once per position'
            asked[found.path] = found
        outline.apply(step)
    return asked


def test_pruned_moves_on_a_prepared_position_worked_by_hand():
    from coursetools.widget.panels import POSITIONS
    assert dict(POSITIONS)['C: x to move, 3 empty'] == C
    # x o x / o o . / x . . with x to move; moves row by row: 1,2 2,1 2,2.
    # Start (−∞, +∞): x cuts only at a value ≥ +∞: none pruned.
    # 1,2 (o to move, (−∞, +∞)): o 2,1 makes a column of o (−1), but −1 ≤ −∞ is false: 2,2 is searched too: none.
    # Then α = −1. 2,1 (o to move, (−1, +∞)): o 1,2 makes the middle row (−1 ≤ α −1): 2,2 pruned.
    # 2,2 (o to move, (−1, +∞)): o 1,2 again wins at once: 2,1 pruned. 1,2 then 2,2 has one move: nothing to ask.
    by_hand = {(): (), ((1, 2),): (), ((2, 1),): ((2, 2),), ((2, 2),): ((2, 1),)}
    asked = prune_questions(oracle.nested(C), 3)
    assert {path: each.value for path, each in asked.items()} == by_hand
    at = asked[(2, 1),]
    assert at.kind == 'prune' and at.player == 'o' and at.searched_with == (-1, float('inf'))
    assert at.text == ('Predict: the board drawn (after 2,1), o to move, searched with α −1, β +∞: which of its '
                       'moves (1,2, 2,2) will be pruned?')
    assert at.options == [('none', ()), ('2,2', ((2, 2),))]
    assert at.reveal(()) == ('You said none: no: 2,2. After 2,1, o to move, was searched with α −1, β +∞; 1,2 backed '
                             'up −1 and closed the window. Cut after 2,1: β ≤ α (−1 ≤ −1): x already has −1 '
                             'elsewhere, so o\'s −1 here cannot matter. 1 moves pruned (2,2).')
    assert asked[()].options == [('none', ()), ('2,2', ((2, 2),)), ('2,1 · 2,2', ((2, 1), (2, 2)))]
    assert asked[()].reveal(()).startswith('You said none: right. none: at the start, x to move, was searched with '
                                           'α −∞, β +∞ and no move backed up a value ≥ β (+∞), so x tried all 3.')


def test_pruned_moves_match_a_reference_search_from_the_empty_board():
    reference = Reference(True, 'listed', 3)
    reference.search(oracle.EMPTY_BOARD, 'x')
    cuts = dict(reference.cuts)
    entered = [path for path, _ in reference.entered]
    asked = prune_questions(oracle.EMPTY_BOARD, 3)
    # every position the reference enters with two moves or more is asked about: its cut, or none
    expected = {path: cuts.get(path, ()) for path in entered if len(oracle.empty_cells(
        _reached(path))) >= 2}
    assert {path: each.value for path, each in asked.items()} == expected
    assert sum(1 for value in expected.values() if value) > 5 and () in expected.values()
    assert [label for label, _ in asked[()].options] == ['none', '2,2', '2,1 · 2,2'] + [
        f'{r},{c} … 2,2 ({9 - 3 * r - c})' for r, c in ((2, 0), (1, 2), (1, 1), (1, 0), (0, 2), (0, 1))]
    assert prune_questions(oracle.EMPTY_BOARD, 2, pruning=False) == {}, 'no such question in minimax'


def _reached(path):
    board, player = oracle.EMPTY_BOARD, 'x'
    for move in path:
        board, player = oracle.place(board, *move, player), oracle.other(player)
    return board


def test_a_prune_question_asked_and_revealed_in_the_panel_then_the_next(panel_widget):  # noqa: F811
    widget = panel_widget(state=oracle.nested(C))
    panel = widget.steps
    panel.ui.kind.value = 'alphabeta'
    panel.ui.live_depth.value = 3
    panel.ui.predict.value = True
    panel.ui.ask.value = 'prune'
    assert widget.wait(30)
    seen = []
    for _ in range(30):
        asking = panel._asking()
        if asking is not None and asking.value:
            break
        if asking is not None:          # none pruned here: say so, and see the reveal
            seen.append(asking.path)
            panel.ui.choices.children[0].click()
            assert widget.wait(30)
            press(widget, 'step')
        else:
            press(widget, 'step')
    assert seen == [(), ((1, 2),)], 'the start and 1,2 asked first, in the order searched'
    assert asking.path == ((2, 1),) and 'pruned: ?' in panel.ui.position.value
    assert 'nac-board-window' in panel.ui.position.value, 'the window is shown: it is what decides'
    assert 'which of its moves (1,2, 2,2) will be pruned?' in panel.ui.said.value
    assert [button.description for button in panel.ui.choices.children] == ['none', '2,2']
    held = panel.index
    panel.ui.choices.children[0].click()
    assert widget.wait(30)
    said = re.sub('<[^>]+>', ' ', panel.ui.said.value)
    assert 'You said none: no: 2,2.' in said and 'closed the window' in said and '(−1 ≤ −1)' in said
    assert 'Predict' not in said and panel._asking() is None, 'the reveal is a step of its own'
    assert panel.index == held + 1 and panel.ui.tally.value.endswith('predicted right')
    texts = []
    while panel._asking() is None and len(texts) < 5:
        press(widget, 'step')
        texts.append(panel.ui.said.value)
    assert texts[0].startswith('Cut after 2,1: β ≤ α (−1 ≤ −1)'), 'the cut itself comes as its own step'
    asking = panel._asking()
    # the cut, 2,1's value backing up, 2,2 entered: then the question before its first move
    assert asking is not None and asking.path == ((2, 2),) and panel.index == held + 4, 'then the next question'
    assert panel.ui.said.value.startswith('Predict: the board drawn (after 2,2)')
