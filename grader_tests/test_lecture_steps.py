"""Stepping through a search in a lecture (issue 44), without a browser: the board of each step is the position its
path reaches, numbered move by move; the tree shows a value or a window only from the step that backs it up, and a
cut from the step that makes it; a prediction is revealed as a step of its own, with a reason, before the next
question. The positions are checked against coursetools.game.oracle, the values against the steps themselves."""
import re

import pytest

from coursetools.game import oracle
from test_stepping import MID_GAME, caller, press, stepped

VALUE = {1: '+1', 0: '0', -1: '−1'}
BOARDS = [oracle.EMPTY_BOARD, MID_GAME, oracle.nested('xo  x  o '), oracle.nested('xoxo  x  ')]


@pytest.fixture
def panel_widget(monkeypatch):
    """make(**options): a GameTreeWidget over the alpha_beta workbook's functions (score a plain minimax), the tree
    off unless asked for."""
    from coursetools.widget import GameTreeWidget
    from test_widget_alpha_beta import NAMES, reference_functions
    monkeypatch.delenv('NBGRADER_EXECUTION', raising=False)
    made = []

    def make(**options):
        namespace = reference_functions()
        options = {'tree': False, 'state': MID_GAME, **options}
        widget = GameTreeWidget(**{name: namespace[name] for name in NAMES}, **options)
        made.append(widget)
        assert widget.wait(60)
        return widget
    yield make
    for widget in made:
        widget.stop()
        widget.close()


def reached(board, player, path):
    for move in path:
        board, player = oracle.place(board, *move, player), oracle.other(player)
    return board, player


def numbers(html_text):
    """{(row, col): number} of the numbered moves drawn on a board."""
    return {tuple(int(part) for part in move.split(',')): int(number) for move, number in
            re.findall(r'class="nac-move-number" data-move="(\d,\d)"[^>]*>(\d+)</text>', html_text)}


@pytest.mark.parametrize('pruning', [False, True])
def test_the_board_of_every_step_is_the_position_its_path_reaches(pruning):
    from coursetools.widget.position import position_html
    checked = 0
    for board in BOARDS:
        player = oracle.to_move(board)
        for step in stepped(board, player, pruning, 'listed', 2):
            if step.kind == 'error':
                continue
            state, to_move = reached(board, player, step.path)
            assert step.state == state and step.player == to_move, step
            drawn = position_html(step, board, player, alphabeta=pruning)
            assert f'data-path="{";".join(f"{r},{c}" for r, c in step.path)}"' in drawn
            assert f'data-player="{to_move}"' in drawn
            assert (f'<b>{to_move} to move</b>' in drawn) == (step.kind != 'leaf'), step
            assert f'data-state="{oracle.flat(state)}"' in drawn
            assert numbers(drawn) == {tuple(move): k for k, move in enumerate(step.path, 1)}, step
            assert ('nac-board-window' in drawn) == (pruning and step.searched_with is not None)
            checked += 1
    assert checked > 100


def test_the_texts_say_who_is_to_move_never_who_moved():
    steps = stepped(MID_GAME, 'x', True, 'listed', 3)
    from coursetools.widget.outline import replay
    outline = replay(steps, 'x', True)
    texts = [step.text for step in steps] + [outline.describe(line) for line, _ in outline.shown()]
    assert not [text for text in texts if re.search(r'\b[xo] (plays|played) \d,\d|^[xo] \d,\d', text)]
    for step in steps:
        if step.kind in ('deep', 'backup'):
            assert f'{step.player} to move after ' in step.text, step


def tree_and_steps(board, pruning, depth=2, live_depth=2):
    from coursetools.widget.model import build_tree
    call = caller()
    player = oracle.to_move(board)
    tree = build_tree(call, board, player, depth)
    return tree, stepped(board, player, pruning, 'listed', live_depth, call=call), player


@pytest.mark.parametrize('pruning', [False, True])
def test_the_tree_shows_no_value_or_window_before_the_step_that_backs_it_up(pruning):
    """At every step (and at every question, the asked board's value hidden), each board drawn shows a value only
    if a step so far backed one up there (and that value), a window only once its position was entered."""
    from coursetools.widget.drawing import PV_COLOUR, draw_tree
    from coursetools.widget.outline import Outline
    from coursetools.widget.stepping import PREDICTED
    from coursetools.widget.stepview import stepping_tree
    for board in (MID_GAME, oracle.EMPTY_BOARD):
        tree, steps, player = tree_and_steps(board, pruning)
        outline = Outline(player, pruning)
        hidden_then_shown = 0
        for index in range(len(steps)):
            asking = steps[index] if steps[index].kind in PREDICTED else None
            for question in ([asking.path] if asking else []) + [None]:
                current = question if question is not None else outline.current
                drawing = draw_tree(stepping_tree(tree, outline, current, question), 900, current)
                backed = {s.path: s.value for s in steps[:index] if s.kind in ('leaf', 'deep', 'backup')}
                entered = {s.path for s in steps[:index] if s.kind == 'enter'} | set(backed)
                for row in drawing.rows:
                    for placed in row:
                        path = placed.node.path
                        value = next(l.text for l in placed.labels if l.kind == 'value').split()[0]
                        if path in backed and path != question:
                            assert value == VALUE[backed[path]], (index, path)
                        else:
                            assert value == '?', (index, path, value)
                        windows = [l for l in placed.labels if l.kind == 'window' and l.text != 'pruned']
                        assert not windows or (pruning and path in entered and path != question), (index, path)
                        if path == current:
                            assert 'nac-current' in drawing.svg
                assert PV_COLOUR not in drawing.svg and 'score:' not in drawing.svg and 'best move' not in drawing.svg
            step = steps[index]
            if step.kind in ('deep', 'backup') and step.path in {p.node.path for r in drawing.rows for p in r}:
                hidden_then_shown += 1
            outline.apply(step)
        assert hidden_then_shown > 3, 'values were seen to appear in the tree at their step'


def test_a_pruned_edge_is_greyed_at_the_step_it_is_cut():
    from coursetools.widget.drawing import draw_tree
    from coursetools.widget.outline import Outline
    from coursetools.widget.stepview import stepping_tree
    tree, steps, player = tree_and_steps(oracle.EMPTY_BOARD, True)
    outline = Outline(player, True)
    cut = next(index for index, step in enumerate(steps) if step.kind == 'cutoff')
    for step in steps[:cut]:
        outline.apply(step)
    path = steps[cut].path
    before = draw_tree(stepping_tree(tree, outline, path), 900, path)
    outline.apply(steps[cut])
    after = draw_tree(stepping_tree(tree, outline, path), 900, path)
    cut_moves = [path + (tuple(move),) for move in steps[cut].pruned_moves]
    drawn = {p.node.path: p.node for row in after.rows for p in row}
    assert cut_moves and all(move in drawn and drawn[move].pruned for move in cut_moves)
    assert before.svg.count('nac-pruned') == 0 < after.svg.count('nac-pruned') == len(cut_moves)
    assert after.svg.count('stroke-dasharray="5 4"') == len(cut_moves)


def test_every_value_asked_has_a_reason_and_a_win_at_once_is_one():
    wins = 0
    for board in BOARDS[1:]:
        for pruning in (False, True):
            steps = stepped(board, oracle.to_move(board), pruning, 'listed', 3)
            for step in steps:
                if step.kind not in ('leaf', 'deep', 'backup'):
                    continue
                assert step.reason.startswith(VALUE[step.value] + ': '), step.reason
                found = re.search(r'(x|o) wins at once with (\d),(\d)', step.reason)
                if found:
                    mover, row, col = found.group(1), int(found.group(2)), int(found.group(3))
                    assert mover == step.player and (row, col) == step.move
                    assert oracle.outcome(oracle.place(step.state, row, col, mover)) == (1 if mover == 'x' else -1)
                    wins += 1
    assert wins > 3


def test_the_reveal_is_a_step_of_its_own_then_the_next_question(panel_widget):
    widget = panel_widget()
    panel = widget.steps
    panel.ui.predict.value = True
    assert widget.wait(30)
    for _ in range(40):
        if panel._asking() is not None:
            break
        press(widget, 'step')
    asking = panel._asking()
    assert asking is not None and panel.ui.said.value.startswith('Predict: the board drawn (')
    assert f'{asking.player} to move: what value backs up' in panel.ui.said.value
    assert 'value = ?' in panel.ui.position.value and VALUE[asking.value] not in re.sub(
        '<[^>]+>', ' ', panel.ui.position.value).split('value')[-1]
    wrong = 1 if asking.value != 1 else -1
    held = panel.index
    press(widget, 'guess', wrong)
    said = re.sub('<[^>]+>', ' ', panel.ui.said.value)
    assert f'You said {VALUE[wrong]}, but it is {asking.reason}.' in said
    assert 'Predict' not in said and panel._asking() is None, 'no question on the reveal step'
    assert panel.index == held + 1 and f'value {VALUE[asking.value]}' in panel.ui.position.value
    press(widget, 'guess', asking.value)           # nothing is asked: a guess now changes nothing
    assert panel.ui.tally.value == '0 of 1 predicted right'
    following = panel.steps[held + 1] if len(panel.steps) > held + 1 else panel._peek()
    press(widget, 'step')
    if following.kind in ('deep', 'backup'):
        assert panel.index == held + 1 and panel.ui.said.value.startswith('Predict:'), 'the next question'
    else:
        assert panel.index == held + 2


def test_the_tree_follows_the_steps_in_the_widget(panel_widget):
    from coursetools.widget.drawing import PV_COLOUR
    widget = panel_widget(tree=True, state=oracle.EMPTY_BOARD)
    assert widget.wait(60) and PV_COLOUR in widget.ui.view.svg, 'before stepping: the whole tree'
    press(widget, 'step', times=3)
    svg = widget.ui.view.svg
    assert PV_COLOUR not in svg and 'nac-current' in svg
    current = widget.steps.outline.current
    assert re.search(r'class="nac-node[^"]*nac-current" [^>]*data-path="%s"' % ';'.join(
        f'{r},{c}' for r, c in current), svg), current
    assert 'Best play from here</b>: shown when the search is over' in widget.ui.pv.value
    press(widget, 'run_to_end')
    assert PV_COLOUR in widget.ui.view.svg and 'nac-current' not in widget.ui.view.svg


def test_prepared_positions_are_mid_game_and_chosen_from_the_page(panel_widget):
    from coursetools.widget.panels import POSITIONS
    widget = panel_widget(state=oracle.EMPTY_BOARD)
    assert len(POSITIONS) >= 3
    for label, cells in POSITIONS:
        board = oracle.nested(cells)
        assert oracle.outcome(board) is None and 3 <= cells.count(' ') <= 5, label
        assert cells.count('x') - cells.count('o') in (0, 1), label
        player = oracle.to_move(board)
        assert f'{player} to move' in label
        widget.ui.start.value = cells
        assert widget.wait(30)
        assert widget.state == board and widget.player == player and len(widget.history) == 1, label
        assert widget.human == player, 'the side to move is the viewer\'s: the AI does not answer'
        assert widget.ui.start.value == '', 'the menu is ready for the next choice'
        press(widget, 'step')
        assert widget.steps.key[:2] == (board, player) and f'data-state="{cells}"' in widget.steps.ui.position.value
    widget.ui.start.value = ' ' * 9
    assert widget.wait(30) and widget.state == oracle.EMPTY_BOARD and widget.player == 'x'


def test_cut_and_move_questions_are_answered_by_the_next_step():
    from coursetools.widget.outline import Outline
    from coursetools.widget.questions import question
    steps = stepped(oracle.EMPTY_BOARD, 'x', True, 'listed', 2)
    outline, answers, moves = Outline('x', True), set(), 0
    for step in steps:
        cut = question('cut', step, outline)
        if cut is not None:
            assert cut.value == ('cut' if step.kind == 'cutoff' else 'no cut'), step
            assert step.kind != 'cutoff' or cut.path == step.path
            answers.add(cut.value)
        move = question('move', step, outline)
        if move is not None:
            assert step.kind == 'backup' and move.value == tuple(step.move) in [v for _, v in move.options]
            assert move.path == step.path and 'which move does' in move.text
            moves += 1
        outline.apply(step)
    assert answers == {'cut', 'no cut'} and moves > 0
    assert question('cut', steps[3], Outline('x', False)) is None, 'no cut questions in minimax'


def test_a_move_question_asked_and_revealed_in_the_panel(panel_widget):
    widget = panel_widget()
    panel = widget.steps
    panel.ui.predict.value = True
    panel.ui.ask.value = 'move'
    assert widget.wait(30)
    for _ in range(60):
        if panel._asking() is not None:
            break
        press(widget, 'step')
    asking = panel._asking()
    assert asking is not None and asking.kind == 'move' and 'move = ?' in panel.ui.position.value
    assert [button.description for button in panel.ui.choices.children] == [label for label, _ in asking.options]
    assert all(button.disabled for button in panel.ui.guesses.values())
    wrong = next(value for _, value in asking.options if value != asking.value)
    index = [value for _, value in asking.options].index(wrong)
    panel.ui.choices.children[index].click()
    assert widget.wait(30)
    said = re.sub('<[^>]+>', ' ', panel.ui.said.value)
    right = f'{asking.value[0]},{asking.value[1]}'
    assert f'You said {wrong[0]},{wrong[1]}: no: {right}. {asking.reason}.' in said
    assert panel.ui.tally.value == '0 of 1 predicted right' and panel._asking() is None


INF = float('inf')


def window_questions(board, depth):
    """{path: (question, step)} of every 'what are α and β here?' asked stepping α-β from ``board``."""
    from coursetools.widget.outline import Outline
    from coursetools.widget.questions import question
    player = oracle.to_move(board)
    outline, asked = Outline(player, True), {}
    for step in stepped(board, player, True, 'listed', depth):
        window = question('window', step, outline)
        if window is not None:
            asked[step.path] = window, step
        outline.apply(step)
    return asked


def test_alpha_beta_questions_on_a_prepared_position_worked_by_hand():
    from coursetools.widget.panels import POSITIONS
    cells = dict(POSITIONS)['C: x to move, 3 empty']
    assert cells == 'xoxoo x  '
    # x o x / o o . / x . . with x to move, moves row by row. 1,2 first, with the root's (−∞, +∞); o answers 2,1
    # (a column of o: −1), so o's β is −1, and o's next move 2,2 is searched with (−∞, −1). 1,2 backs up −1,
    # x's α is −1: 2,1 and 2,2 are searched with (−1, +∞) (o wins at once under both: cuts, α stays −1).
    by_hand = {((1, 2),): (-INF, INF), ((1, 2), (2, 2)): (-INF, -1), ((2, 1),): (-1, INF), ((2, 2),): (-1, INF)}
    asked = window_questions(oracle.nested(cells), 3)
    assert {path: window.value for path, (window, _) in asked.items()} == by_hand
    window, step = asked[(2, 1),]
    assert window.kind == 'window' and window.path == ((2, 1),) and window.player == 'o'
    assert 'what are α and β here?' in window.text and 'α −1, β +∞' in [label for label, _ in window.options]
    assert window.searched_with is None, 'the board drawn with the question does not show the answer'
    assert window.reveal((-INF, INF)) == ('You said α −∞, β +∞: no: α −1, β +∞. α −1, β +∞: the window x to move '
                                          'has at the start when it tries 2,1 (its best so far: −1), passed down as '
                                          'it is.')
    assert window.reveal((-1, INF)).startswith('You said α −1, β +∞: right.')
    assert len(window.options) == 10 and len({value for _, value in window.options}) == 10


def test_alpha_beta_questions_match_a_reference_search_from_the_empty_board():
    from coursetools.widget.outline import Outline
    from coursetools.widget.questions import question
    from test_stepping import Reference
    reference = Reference(True, 'listed', 3)
    reference.search(oracle.EMPTY_BOARD, 'x')
    entered = {path: window for path, window in reference.entered if path}
    asked = window_questions(oracle.EMPTY_BOARD, 3)
    assert {path: window.value for path, (window, _) in asked.items()} == entered and len(entered) > 20
    assert {value for window, _ in asked.values() for value in window.value} >= {-INF, 0, INF}
    step = stepped(oracle.EMPTY_BOARD, 'x', False, 'listed', 2)[1]
    assert question('window', step, Outline('x', False)) is None, 'no windows asked in minimax'


def test_an_alpha_beta_question_asked_and_revealed_in_the_panel(panel_widget):
    widget = panel_widget()
    panel = widget.steps
    panel.ui.predict.value = True
    panel.ui.ask.value = 'window'
    assert widget.wait(30)
    for _ in range(60):
        if panel._asking() is not None:
            break
        press(widget, 'step')
    asking = panel._asking()
    assert asking is not None and asking.kind == 'window' and 'α = ?, β = ?' in panel.ui.position.value
    assert 'nac-board-window' not in panel.ui.position.value
    held = panel.index
    labels = [button.description for button in panel.ui.choices.children]
    panel.ui.choices.children[labels.index('α −∞, β +∞')].click()
    assert widget.wait(30)
    said = re.sub('<[^>]+>', ' ', panel.ui.said.value)
    assert 'You said α −∞, β +∞' in said and asking.reason in said and 'Predict' not in said
    assert panel.index == held + 1 and panel._asking() is None, 'the reveal is a step of its own'
    press(widget, 'step')
    assert panel._asking() is not None or panel.index == held + 2
