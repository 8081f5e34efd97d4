"""The classroom widget (the package coursetools/widget/) without a browser.

The functions under test are those of a notebook: the source workbook's print_state, score_end, play and moves
(its solution cells) and a plain, unmemoized minimax as score, executed in one namespace so that score's
recursive calls go through the name `score`, as in a notebook. Values, moves and counts are checked against
coursetools.game.oracle, an independent implementation.
"""
import ast
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from coursetools.game import oracle

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / 'source' / 'noughts_and_crosses' / 'noughts_and_crosses.ipynb'
PACKAGE = ROOT / 'coursetools' / 'widget'
NAMES = ('print_state', 'score_end', 'play', 'moves', 'score')
PLAIN_SCORE = '''
def score(state, player):
    end = score_end(state)
    if end is not None:
        return end, None
    opponent = 'o' if player == 'x' else 'x'
    options = [(score(play(state, row, col, player), opponent)[0], (row, col)) for row, col in moves(state)]
    return (max if player == 'x' else min)(options, key=lambda option: option[0])
'''
SELF_MEMOIZING_SCORE = '''
def score(state, player):
    known = score.__dict__.setdefault('known', {})
    if (state, player) not in known:
        end = score_end(state)
        if end is not None:
            known[state, player] = (end, None)
        else:
            opponent = 'o' if player == 'x' else 'x'
            options = [(score(play(state, r, c, player), opponent)[0], (r, c)) for r, c in moves(state)]
            known[state, player] = (max if player == 'x' else min)(options, key=lambda option: option[0])
    return known[state, player]
'''


def notebook_functions(score_source=PLAIN_SCORE, path=NOTEBOOK):
    """The workbook's solution cells with `score_source` as score, executed in order in one fresh namespace."""
    notebook = json.loads(Path(path).read_text())
    namespace = {'__name__': 'notebook'}
    for cell in notebook['cells']:
        if cell['cell_type'] == 'code' and cell.get('metadata', {}).get('nbgrader', {}).get('solution'):
            exec(compile(''.join(cell['source']), str(path), 'exec'), namespace)
    exec(compile(score_source, 'score', 'exec'), namespace)
    missing = [name for name in NAMES if not callable(namespace.get(name))]
    assert not missing, f'the source notebook defines no {missing}'
    return {name: namespace[name] for name in NAMES}


def widget_folder(folder):
    """A folder as `make release` ships the widget: the package copied as minimax_widget/."""
    shutil.copytree(PACKAGE, Path(folder) / 'minimax_widget', ignore=shutil.ignore_patterns('__pycache__'))
    return Path(folder)


def reachable_from(board):
    """Every position reachable from `board` by legal play, the board included (independently of the widget)."""
    seen, pending = set(), [board]
    while pending:
        position = pending.pop()
        if position in seen:
            continue
        seen.add(position)
        if oracle.outcome(position) is None:
            mover = oracle.to_move(position)
            pending.extend(oracle.place(position, row, col, mover) for row, col in oracle.empty_cells(position))
    return seen


@pytest.fixture(scope='module')
def functions():
    return notebook_functions()


@pytest.fixture(autouse=True)
def not_grading(monkeypatch):
    monkeypatch.delenv('NBGRADER_EXECUTION', raising=False)


@pytest.fixture
def make_widget(functions):
    from coursetools.widget import GameTreeWidget
    made = []

    def make(**overrides):
        kwargs = dict(functions, tree=False)
        kwargs.update(overrides)
        widget = GameTreeWidget(**kwargs)
        made.append(widget)
        assert widget.wait(60), 'the widget did not finish its work'
        return widget
    yield make
    for widget in made:
        widget.stop()
        widget.close()


def sample_positions(k=400, seed=7):
    positions = list(oracle.reachable_positions())
    return random.Random(seed).sample(positions, k) + [oracle.EMPTY_BOARD]


def turn_line(widget):
    return widget.status.value.split('<div class="nac-detail">')[0]


# ---- the model: values, moves, counts -------------------------------------------------------------------------

def test_tree_values_match_oracle_on_every_reachable_position(make_widget):
    w = make_widget()
    for board in oracle.reachable_positions():
        player = oracle.to_move(board)
        root = w.tree(board, player, depth=1).root
        assert root.error is None, (board, root.error)
        assert root.end == oracle.outcome(board)
        assert root.value == oracle.value(board, player), board
        if root.end is not None:
            assert root.children == [] and root.best is None
            continue
        assert sorted(child.move for child in root.children) == sorted(oracle.empty_cells(board))
        assert root.best in oracle.optimal_moves(board, player), board
        for child in root.children:
            assert child.state == oracle.place(board, *child.move, player)
            assert child.player == oracle.other(player) and child.path == (child.move,)
            assert child.value == oracle.value(child.state, child.player), child.state


def test_deeper_levels_match_oracle_and_are_counted(make_widget):
    w = make_widget()
    mid = oracle.nested('x o  x   ')
    for board, depth in [(oracle.EMPTY_BOARD, 2), (oracle.EMPTY_BOARD, 3), (mid, 3), (mid, 2)]:
        levels = w.tree(board, oracle.to_move(board), depth=depth).levels()
        assert len(levels) <= depth + 1
        for level in levels:
            for node in level:
                assert node.value == oracle.value(node.state, node.player)
                assert node.end == oracle.outcome(node.state)
        last = [node for node in levels[-1] if node.end is None]
        assert sum(node.below for node in last) == sum(len(oracle.empty_cells(node.state)) for node in last)
    empty = w.tree(oracle.EMPTY_BOARD, 'x', depth=3)
    assert [len(level) for level in empty.levels()] == [1, 9, 72, 504]
    assert empty.find([(1, 1), (0, 0)]).state == oracle.nested('o   x    ')


def test_principal_variation_of_the_empty_board_is_a_perfect_draw(make_widget):
    tree = make_widget().tree(oracle.EMPTY_BOARD, 'x', depth=1)
    assert tree.pv_error is None
    assert tree.pv_end == 0 and oracle.outcome(tree.pv[-1][2]) == 0 and len(tree.pv) == 9
    board = oracle.EMPTY_BOARD
    for move, player, after in tree.pv:
        assert move in oracle.optimal_moves(board, player)
        board = oracle.place(board, *move, player)
        assert after == board


def test_principal_variation_ends_with_the_oracle_value(make_widget):
    w = make_widget()
    for board in sample_positions(200):
        player = oracle.to_move(board)
        tree = w.tree(board, player, depth=1)
        final = tree.pv[-1][2] if tree.pv else board
        assert tree.pv_end == oracle.outcome(final) == oracle.value(board, player), board


def test_search_counts_match_the_oracle_whatever_score_does(make_widget, functions):
    """Plain minimax positions (every path) and distinct positions, from score_end, moves and play alone."""
    w = make_widget()
    assert w.search_counts(oracle.EMPTY_BOARD, 'x') == {'plain': 549946, 'distinct': 5478}
    for board in sample_positions(60, seed=11):
        player = oracle.to_move(board)
        assert w.search_counts(board, player) == {'plain': oracle.search_tree_size(board, player),
                                                  'distinct': len(reachable_from(board))}, board
    memoizing = notebook_functions(SELF_MEMOIZING_SCORE)
    w = make_widget(**memoizing, memoize=False)
    assert w.search_counts(oracle.EMPTY_BOARD, 'x') == {'plain': 549946, 'distinct': 5478}

    def broken_score(state, player):
        raise ValueError('no idea')
    w = make_widget(score=broken_score)
    assert w.search_counts(oracle.EMPTY_BOARD, 'x') == {'plain': 549946, 'distinct': 5478}


def test_memoize_remembers_recursive_calls_and_counts_every_call(functions):
    """With memoize, a plain minimax reaches score once per distinct position; without, once per path."""
    from coursetools.widget.calls import FunctionCaller
    namespace = functions['score'].__globals__
    plain = namespace['score']
    board = oracle.nested('xo x o   ')
    player = oracle.to_move(board)
    for memoize, expected in ((True, len(reachable_from(board))), (False, oracle.search_tree_size(board, player))):
        call = FunctionCaller(functions, memoize=memoize)
        value, move = call('score', board, player)
        assert value == oracle.value(board, player) and move in oracle.optimal_moves(board, player)
        assert call.calls['score'] == expected
        assert namespace['score'] is plain    # the notebook's own score is back in place
    call = FunctionCaller(functions, memoize=True)
    call('score', oracle.EMPTY_BOARD, 'x')
    assert call.calls['score'] == 5478
    call('score', oracle.place(oracle.EMPTY_BOARD, 1, 1, 'x'), 'o')
    assert call.calls['score'] == 5478 and call.hits > 0


def test_a_tree_drawn_twice_asks_nothing_twice(make_widget):
    w = make_widget(memoize=True)
    w.tree(oracle.EMPTY_BOARD, 'x', depth=2)
    again = w.tree(oracle.EMPTY_BOARD, 'x', depth=2)
    assert again.counts['score_calls'] == 0 and again.counts['hits'] > 0
    w.ui.memo.value = False
    assert w.wait(60)
    board = oracle.nested('xo x o   ')
    fresh = w.tree(board, 'x', depth=1)
    line = [(board, 'x')] + [(after, oracle.other(player)) for _, player, after in fresh.pv[:-1]]
    asked = [(board, 'x')] + [(child.state, child.player) for child in fresh.root.children] + line
    assert fresh.counts['score_calls'] == sum(oracle.search_tree_size(*position) for position in asked)


# ---- the drawing ------------------------------------------------------------------------------------------------

def check_drawing(drawing, width):
    """Well-formed SVG; every label at least 16 px, inside the picture and clear of every other label."""
    svg = ElementTree.fromstring(drawing.svg)
    assert float(svg.get('width')) == pytest.approx(max(width, 120), abs=1)
    boxes = [label.box for label in drawing.labels]
    for label, (left, top, right, bottom) in zip(drawing.labels, boxes):
        assert label.size >= 16, label
        assert left >= 0 and right <= drawing.width and top >= 0 and bottom <= drawing.height, (label, width)
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b, width)
    return svg


def test_drawing_rows_follow_the_focus(make_widget):
    from coursetools.widget.drawing import draw_tree
    w = make_widget()
    tree = w.tree(oracle.EMPTY_BOARD, 'x', depth=3)
    drawing = draw_tree(tree, 800)
    assert [len(row) for row in drawing.rows] == [1, 9, 8, 7]
    best = tree.root.best
    assert drawing.focus[0] == best
    assert [p.node.move for p in drawing.rows[2]] == [c.move for c in tree.find([best]).children]
    focused = draw_tree(tree, 800, focus=((1, 1), (0, 2)))
    assert focused.focus[:2] == ((1, 1), (0, 2))
    assert [p.node.path for p in focused.rows[3]] == [c.path for c in tree.find([(1, 1), (0, 2)]).children]
    svg = check_drawing(focused, 800)
    paths = [g.get('data-path') for g in svg.iter('{http://www.w3.org/2000/svg}g') if g.get('data-path')]
    assert '1,1;0,2;0,0' in paths and len(paths) == 9 + 8 + 7
    infos = [g.get('data-info') for g in svg.iter('{http://www.w3.org/2000/svg}g')]
    assert any(info.startswith('x plays 1,1 · score: 0 (draw) · best move for o') for info in infos), infos[:3]
    expand = [t.get('data-focus') for t in svg.iter('{http://www.w3.org/2000/svg}text') if t.get('data-focus')]
    assert '0,0' in expand and '1,1' not in expand    # the focused board shows its moves already


@pytest.mark.parametrize('width', [200, 360, 520, 760, 1100, 1700])
def test_labels_are_readable_at_every_width(make_widget, width):
    from coursetools.widget.drawing import draw_tree
    w = make_widget()
    for cells in ('         ', 'x   o    ', 'xo  x  o ', 'xxo oxo  '):
        board = oracle.nested(cells)
        for depth in (1, 2, 3):
            tree = w.tree(board, oracle.to_move(board), depth)
            for font in (16, 20):
                check_drawing(draw_tree(tree, width, font=font), width)


def test_the_widget_redraws_for_its_width_focus_and_lecture_mode(make_widget):
    w = make_widget(tree=True)
    assert w.last_drawing.width == 760 and len(w.ui.view.svg) > 1000
    w.ui.view.width = 1000
    assert 'width="1000"' in w.ui.view.svg
    w.ui.view._received(w.ui.view, {'action': 'focus', 'path': '2,2'}, [])
    assert w.last_drawing.focus[0] == (2, 2)
    w.ui.lecture.value = True
    assert 'nac-lecture' in w._dom_classes and 'font-size="20"' in w.ui.view.svg
    assert '549,946' in w.ui.counts.value and '5,478' in w.ui.counts.value
    assert 'Best play from here' in w.ui.pv.value and 'draw' in w.ui.pv.value


def test_the_last_width_reported_wins_when_a_background_redraw_races_it(make_widget):
    """The browser reports widths on the kernel's main thread while a background job draws a new tree: whatever
    the interleaving, the picture left shown is drawn for the last width reported (a stale one stayed in
    Notebook 7 once)."""
    import threading
    w = make_widget(tree=True)
    panel = w.tree_panel
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)          # threads take turns often, so that the interleavings really happen
    try:
        for attempt in range(6):
            done = threading.Event()
            racer = threading.Thread(target=lambda: [panel.redraw() for _ in iter(done.is_set, True)])
            racer.start()
            for width in range(500, 520):
                w.ui.view.width = width + 30 * attempt
            done.set()
            racer.join()
            assert f'width="{w.ui.view.width}"' in w.ui.view.svg.split('>', 1)[0], attempt
    finally:
        sys.setswitchinterval(interval)


# ---- playing --------------------------------------------------------------------------------------------------

def test_ai_answers_with_an_optimal_move_and_perfect_game_draws(make_widget):
    w = make_widget()
    w.click(1, 1)
    assert w.wait(30)
    assert len(w.history) == 3 and w.player == 'x'
    assert w.history[2][2] in oracle.optimal_moves(w.history[1][0], 'o')
    assert w.cells[1, 1].description == 'x' and 'nac-last' in w.cells[w.history[2][2]]._dom_classes
    w.perfect_game(pace=0)
    assert w.wait(30)
    assert oracle.outcome(w.state) == 0 and len(w.history) == 10
    assert 'Game over: draw' in w.status.value
    w.ui.history.value = 4
    assert w.wait(30)
    assert w.state == w.history[4][0] and 'viewing move 4 of 9' in w.status.value
    w.undo()
    assert w.wait(30)
    assert w.player == 'x' and len(w.history) == 3
    w.new_game()
    assert w.wait(30)
    assert w.history == [(oracle.EMPTY_BOARD, 'x', None)]


def test_playing_o_makes_the_ai_open_and_ai_move(make_widget):
    w = make_widget(human='o')
    assert len(w.history) == 2 and w.player == 'o'
    w.ai_move()
    assert w.wait(30)
    assert len(w.history) == 4 and w.player == 'o'
    for (before, player, _), (_, _, move) in zip(w.history, w.history[1:]):
        assert move in oracle.optimal_moves(before, player)


def test_a_board_clicked_in_the_tree_is_played_to(make_widget):
    w = make_widget(tree=True)
    w.ui.view._received(w.ui.view, {'action': 'play', 'path': '0,0;1,1'}, [])
    assert w.wait(30)
    assert w.state == oracle.nested('x   o    ') and w.player == 'x' and len(w.history) == 3
    assert 'x to move · your turn' in turn_line(w)
    w.ui.view._received(w.ui.view, {'action': 'play', 'path': '2,2'}, [])   # one ply: the AI answers
    assert w.wait(30)
    assert len(w.history) == 5 and w.history[3][2] == (2, 2) and w.player == 'x'
    assert w.last_tree.root.state == w.state
    stale = w.last_tree.root.state
    w.click(*oracle.empty_cells(stale)[0])
    assert w.wait(30)
    assert w.state != stale
    played = len(w.history)
    w.play_path([oracle.empty_cells(w.state)[0]], root=stale)
    assert w.wait(30)
    assert 'another position' in w.ui.note.value and len(w.history) == played


def test_stop_leaves_a_clear_state_and_the_next_click_plays_the_side_to_move(make_widget):
    w = make_widget()
    turns = []
    w.status.observe(lambda change: turns.append(change['new'].split('<div class="nac-detail">')[0]), 'value')
    w.perfect_game(pace=30)
    deadline = time.time() + 30
    while len(w.history) < 2 and time.time() < deadline:
        time.sleep(0.02)
    w.stop()
    assert w.wait(30)
    assert len(w.history) == 2 and w.player == 'o' and w.human == 'x'
    during = [turn for turn in turns if 'Perfect game' in turn]
    assert during and not any('your turn' in turn or 'thinking' in turn for turn in during), turns
    assert 'o to move · click a square to play o yourself' in turn_line(w)
    assert 'Stopped at move 1: o to move' in w.ui.note.value
    time.sleep(0.5)
    assert len(w.history) == 2, 'the AI moved after Stop'
    empty = next(cell for cell in oracle.empty_cells(w.state))
    w.click(*empty)
    assert w.wait(30)
    assert w.history[2][2] == empty and w.state[empty[0]][empty[1]] == 'o' and w.human == 'o'
    assert len(w.history) == 4 and w.player == 'o' and 'o to move · your turn' in turn_line(w)


def test_the_verdict_stays_when_the_viewer_switches_sides(make_widget):
    w = make_widget(state=oracle.nested('xx ooo x '))        # o has won: the AI, as the viewer plays x
    assert 'Game over: o wins. The AI wins.' in turn_line(w)
    w.ui.side.value = 'o'
    assert w.wait(30)
    assert 'Game over: o wins. The AI wins.' in turn_line(w), turn_line(w)
    w.new_game()
    assert w.wait(30) and 'Game over' not in turn_line(w)


def test_counts_cut_short_by_stop_are_counted_again(make_widget):
    from coursetools.widget.panels import counts_html
    w = make_widget(tree=True)
    w.last_tree.search = None                        # the counting job Stop overtook never ran
    w.ui.counts.value = counts_html(w.last_tree, True)
    assert '…' in w.ui.counts.value
    w.stop()
    assert w.wait(30)
    assert w.last_tree.search == {'plain': 549946, 'distinct': 5478}
    assert '…' not in w.ui.counts.value and '549,946' in w.ui.counts.value
    w.last_tree.search = {'stopped': True}          # a count interrupted half way
    assert 'interrupted' in counts_html(w.last_tree, True)
    w.stop()
    assert w.wait(30) and '549,946' in w.ui.counts.value


def test_illegal_clicks_say_why(make_widget):
    w = make_widget()
    w.click(1, 1)
    assert w.wait(30)
    w.click(1, 1)
    assert w.wait(30)
    assert 'Not a legal move: 1,1 already holds x' in w.ui.note.value and len(w.history) == 3
    w.perfect_game(pace=0)
    assert w.wait(30)
    w.click(*oracle.empty_cells(w.history[2][0])[0])
    assert w.wait(30)
    assert 'The game is over' in w.ui.note.value


@pytest.mark.alone
def test_the_speed_slider_sets_the_pace(make_widget):
    w = make_widget()
    w.ui.pace.value = 0.2
    started = time.perf_counter()
    w.perfect_game()
    time.sleep(0.1)
    assert '0.2 s per move' in w.status.value
    assert w.wait(30)
    assert 8 * 0.2 <= time.perf_counter() - started < 8, 'eight pauses of 0.2 s'


def test_the_widget_shows_what_the_given_functions_say(make_widget, functions):
    """A wrong score is displayed as it is: the widget computes no values of its own."""
    def optimistic_score(state, player):
        options = functions['moves'](state)
        return (1, options[0] if options else None)
    w = make_widget(score=optimistic_score, tree=True, depth=1)
    assert {node.value for node in w.last_tree.nodes()} == {1}
    assert w.last_tree.root.best == (0, 0)


# ---- errors ----------------------------------------------------------------------------------------------------

def test_an_exception_in_student_code_is_one_short_line(make_widget):
    def broken_score(state, player):
        raise ValueError('no idea')
    w = make_widget(score=broken_score, tree=True)
    assert w.last_error == 'score raised ValueError: no idea'
    assert 'Traceback' not in w.ui.error.value and '\n' not in w.ui.error.value
    w.click(0, 0)
    assert w.wait(30)
    assert w.last_error == 'score raised ValueError: no idea'
    assert w.state[0][0] == 'x'    # the user's move was still played


def test_bad_return_values_are_reported(make_widget):
    w = make_widget(moves=lambda state: 'nonsense', tree=True)
    assert w.last_error.startswith('moves returned') and len(w.last_error) < 220
    w = make_widget(score=lambda state, player: 7, tree=True)
    assert w.last_error.startswith('score returned 7; expected a pair')
    w = make_widget(score_end=lambda state: (_ for _ in ()).throw(RecursionError()), tree=True)
    assert 'RecursionError' in w.last_error


def test_slow_score_shows_thinking_and_stop_interrupts_it(make_widget, functions):
    slow = threading.Event()        # slow from the click on: the widget's own start-up is not what is timed

    def slow_score(state, player):
        if slow.is_set():
            time.sleep(1.6)
        return functions['score'](state, player)
    w = make_widget(score=slow_score)
    slow.set()
    w.click(1, 1)
    deadline = time.time() + 1.5
    while 'thinking' not in w.status.value and time.time() < deadline:
        time.sleep(0.05)
    assert 'thinking' in w.status.value and 'the AI is thinking' in turn_line(w)
    w.stop()
    slow.clear()
    assert w.wait(30)
    assert 'thinking' not in w.status.value and len(w.history) == 2 and 'Stopped' in w.ui.note.value


def test_a_button_pressed_while_the_tree_is_counted_is_not_lost(make_widget, functions):
    """Perfect game pressed while a background job (here the tree's search) is inside score: the press is
    handled on the kernel's main thread and must not be cancelled by that job's Stop check."""
    inside, release = threading.Event(), threading.Event()
    release.set()

    def held_score(state, player):
        if not release.is_set():
            inside.set()
            release.wait(30)
        return functions['score'](state, player)
    w = make_widget(state=oracle.nested('x   o    '), tree=True, score=held_score, pace=0.0,
                    memoize=False)                                        # a redraw asks score again
    release.clear()
    inside.clear()
    w.ui.depth.value = 1                   # a redraw: the worker's drawing job enters score and waits there
    assert inside.wait(30), 'the drawing job never called score'
    try:
        w.perfect_game()
    finally:
        release.set()
    assert w.wait(60)
    assert 'Game over: draw' in turn_line(w), turn_line(w)
    assert len(w.history) == 8 and oracle.empty_cells(w.state) == []


# ---- grading, the shipped copy and the package's source --------------------------------------------------------

def test_constructor_does_nothing_while_grading(monkeypatch):
    from coursetools.widget import GameTreeWidget

    def forbidden(*args):
        raise AssertionError('no function may be called while grading')
    monkeypatch.setenv('NBGRADER_EXECUTION', 'autograde')
    w = GameTreeWidget(print_state=forbidden, score_end=forbidden, play=forbidden, moves=forbidden, score=forbidden)
    assert w.disabled_for_grading and repr(w) == 'Game-tree widget disabled during grading.'
    assert not hasattr(w, 'worker')


def test_the_shipped_copy_under_grading_imports_nothing_and_is_fast(tmp_path):
    """The notebook's last cell with minimax_widget/ beside it, as nbgrader runs it: < 0.1 s, no widget library."""
    folder = widget_folder(tmp_path)
    script = ('import sys, time\n'
              'started = time.perf_counter()\n'
              'from minimax_widget import GameTreeWidget\n'
              'widget = GameTreeWidget(print_state=None, score_end=None, play=None, moves=None, score=None)\n'
              'text = repr(widget)\n'
              'print(time.perf_counter() - started, text, "ipywidgets" in sys.modules, "anywidget" in sys.modules)\n')
    env = dict(os.environ, NBGRADER_EXECUTION='autograde', PYTHONPATH='')
    out = subprocess.run([sys.executable, '-c', script], cwd=folder, env=env, capture_output=True, text=True,
                         check=True)
    seconds, text = out.stdout.split(' ', 1)
    assert text.strip() == 'Game-tree widget disabled during grading. False False', out.stdout
    assert float(seconds) < 0.1, f'the widget cell took {float(seconds):.3f} s under grading'


def test_the_shipped_copy_works_on_its_own(tmp_path, functions):
    """minimax_widget/ beside a notebook, nothing of the course on the path: it imports, plays and draws."""
    folder = widget_folder(tmp_path)
    script = ('import json, sys\n'
              'from minimax_widget import GameTreeWidget\n'
              f'namespace = {{}}\n'
              'for cell in json.load(open(sys.argv[1]))["cells"]:\n'
              '    if cell["cell_type"] == "code" and cell["metadata"].get("nbgrader", {}).get("solution"):\n'
              '        exec("".join(cell["source"]), namespace)\n'
              f'exec({PLAIN_SCORE!r}, namespace)\n'
              f'widget = GameTreeWidget(**{{name: namespace[name] for name in {NAMES!r}}})\n'
              'widget.wait(60)\n'
              'widget.click(1, 1)\n'
              'widget.wait(60)\n'
              'print(len(widget.history), widget.last_error, "<svg" in widget.ui.view.svg, sorted(sys.modules)[:0])\n'
              'print(any(name.startswith("coursetools") for name in sys.modules))\n')
    env = dict(os.environ, PYTHONPATH='')
    env.pop('NBGRADER_EXECUTION', None)
    out = subprocess.run([sys.executable, '-c', script, str(NOTEBOOK)], cwd=folder, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split('\n')[:2] == ['3 None True []', 'False'], out.stdout + out.stderr


def package_sources():
    return sorted(PACKAGE.glob('*.py'))


def test_package_layout_and_imports():
    """Relative imports inside the package; outside it only the standard library, ipywidgets (and traitlets, which
    it is built on) and anywidget; no module much over 400 lines; no mention of the course package (release/)."""
    allowed = set(sys.stdlib_module_names) | {'ipywidgets', 'anywidget', 'traitlets'}
    names = {path.stem for path in package_sources()}
    assert {'__init__', 'model', 'drawing', 'controls', 'view'} <= names
    assert not (ROOT / 'coursetools' / 'widget.py').exists()
    for path in package_sources():
        source = path.read_text()
        assert len(source.splitlines()) <= 410, f'{path.name} has {len(source.splitlines())} lines'
        assert 'coursetools' not in source and 'hidden.' not in source, path.name
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    assert (node.module or '').split('.')[0] in names, f'{path.name}: from .{node.module}'
                    continue
                modules = [node.module]
            else:
                continue
            for module in modules:
                assert module.split('.')[0] in allowed, f'{path.name} imports {module}'
                if module.split('.')[0] in names:
                    pytest.fail(f'{path.name}: import {module} must be relative')


CONSTANT_SCORE = '''
def score(state, player):
    end = score_end(state)
    if end is not None:
        return end, None
    for row, col in moves(state):
        score(play(state, row, col, player), 'o' if player == 'x' else 'x')
    return 0, None
'''


@pytest.mark.parametrize('depth', [1, 2, 3])
def test_the_step_panel_has_no_minimax_of_its_own(depth):
    """A score that searches every move but answers 0 for every unfinished board: the steps show 0 wherever it
    answered 0 (never the +1 or −1 a minimax would find), the leaves what score_end says, the counts its calls."""
    from coursetools.widget import stepping
    from coursetools.widget.calls import FunctionCaller
    assert not any(hasattr(stepping.Search, name) for name in ('plain', 'pruning', 'children', 'listed'))
    board = oracle.nested('xx oo    ')            # x wins at once: a minimax says +1 here
    assert oracle.value(board, 'x') == 1
    search = stepping.Search(FunctionCaller(notebook_functions(CONSTANT_SCORE)))
    steps = list(search.steps(board, 'x', depth))
    done = steps[-1]
    assert done.kind == 'done' and done.value == 0 and done.visited == oracle.search_tree_size(board, 'x')
    assert 'the value here is 0' in done.text
    for step in steps:
        if step.kind == 'leaf':
            assert step.value == oracle.outcome(step.state) and step.best == 0
        elif step.kind in ('deep', 'backup'):
            assert step.value == 0 and step.best == 0, step
    wins = [s for s in steps if s.kind == 'leaf' and s.value == 1]
    assert wins and all("x's best so far: 0" in s.text for s in wins)
    assert any('the code returned 0 from (' in s.text for s in steps if s.kind == 'backup') or depth == 1


def test_package_contains_no_answers():
    """No line checking, no list of lines, no minimax of its own: those belong to the student. (The step panel,
    stepping.py and tracing.py, retells a recorded run of the notebook's own score or alphabeta: it compares the
    values that code returned to put them into words, and holds no winner, move or value of its own; see
    test_the_step_panel_has_no_minimax_of_its_own.)"""
    def is_index_triple(node):
        return (isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) == 3
                and all(isinstance(e, (ast.Constant, ast.Tuple, ast.List)) for e in node.elts)
                and all(not isinstance(e, ast.Constant) or isinstance(e.value, int) for e in node.elts))
    for path in package_sources():
        source = path.read_text()
        for node in ast.walk(ast.parse(source)):
            where = f'{path.name} line {getattr(node, "lineno", "?")}'
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                assert len([e for e in node.elts if is_index_triple(e)]) < 3, f'{where}: a literal list of lines'
            if isinstance(node, ast.Name):
                assert node.id.lower() not in {'lines', 'winning_lines', 'wins'}, f'{where}: {node.id}'
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {'max', 'min'}:
                mentioned = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | \
                            {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
                assert not mentioned & {'value', 'values', 'results', 'score', 'options'}, \
                    f'{where}: max/min over values is minimax: leave it to score'
        for pattern in ("== 'x' == ", "[0][0] == ", '[1][1] == ', 'empty_cells', "== ' ']"):
            assert pattern not in source, f'{path.name}: {pattern}'
