"""The classroom widget (coursetools/widget.py) without a browser.

The functions under test are the reference solutions of the source notebook: the code cells whose
nbgrader metadata says solution: true, executed in order in a fresh namespace. Values are checked
against coursetools.oracle, an independent implementation.
"""
import ast
import json
import random
import time
from pathlib import Path

import pytest

from coursetools import oracle

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / 'source' / 'noughts_and_crosses' / 'noughts_and_crosses.ipynb'
WIDGET_SOURCE = ROOT / 'coursetools' / 'widget.py'
NAMES = ('print_state', 'score_end', 'play', 'moves', 'score')


def load_reference_functions(path=NOTEBOOK):
    """The notebook's reference solutions: its solution cells executed in order in a fresh dict."""
    notebook = json.loads(Path(path).read_text())
    namespace = {'__name__': 'reference_solutions'}
    for cell in notebook['cells']:
        if cell['cell_type'] == 'code' and cell.get('metadata', {}).get('nbgrader', {}).get('solution'):
            source = ''.join(cell['source']) if isinstance(cell['source'], list) else cell['source']
            exec(compile(source, str(path), 'exec'), namespace)
    missing = [name for name in NAMES if not callable(namespace.get(name))]
    assert not missing, f'the source notebook defines no {missing}'
    return {name: namespace[name] for name in NAMES}


@pytest.fixture(scope='module')
def functions():
    if not NOTEBOOK.exists():
        pytest.skip(f'{NOTEBOOK} does not exist yet')
    return load_reference_functions()


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
        w = GameTreeWidget(**kwargs)
        made.append(w)
        assert w.wait(60), 'the widget did not finish its work'
        return w
    yield make
    for w in made:
        w.stop()
        w.close()


def sample_positions(k=400, seed=7):
    positions = list(oracle.reachable_positions())
    return random.Random(seed).sample(positions, k) + [oracle.EMPTY_BOARD]


# ---- values ---------------------------------------------------------------------------------

def test_tree_values_match_oracle_on_every_reachable_position(make_widget):
    w = make_widget()
    for board in oracle.reachable_positions():
        player = oracle.to_move(board)
        tree = w.tree(board, player, depth=1)
        root = tree.root
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
            assert child.player == oracle.other(player)
            assert child.value == oracle.value(child.state, child.player), child.state


def test_deeper_levels_match_oracle_and_are_counted(make_widget):
    w = make_widget()
    mid = oracle.nested('x o  x   ')
    for board, depth in [(oracle.EMPTY_BOARD, 2), (oracle.EMPTY_BOARD, 3), (mid, 3), (mid, 2)]:
        tree = w.tree(board, oracle.to_move(board), depth=depth)
        levels = tree.levels()
        assert len(levels) <= depth + 1
        for level in levels:
            for node in level:
                assert node.value == oracle.value(node.state, node.player)
                assert node.end == oracle.outcome(node.state)
        # The level below the drawn ones is summarised by a count, which must be right.
        last = [n for n in levels[-1] if n.end is None]
        assert sum(n.below for n in last) == sum(len(oracle.empty_cells(n.state)) for n in last)
    empty = w.tree(oracle.EMPTY_BOARD, 'x', depth=3)
    assert [len(level) for level in empty.levels()] == [1, 9, 72, 504]


def test_principal_variation_of_the_empty_board_is_a_perfect_draw(make_widget):
    w = make_widget()
    tree = w.tree(oracle.EMPTY_BOARD, 'x', depth=1)
    assert tree.pv_error is None
    assert tree.pv_end == 0 and oracle.outcome(tree.pv[-1][2]) == 0
    assert len(tree.pv) == 9
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


# ---- playing ---------------------------------------------------------------------------------

def test_ai_answers_with_an_optimal_move_and_perfect_game_draws(make_widget):
    w = make_widget()
    w.click(1, 1)
    assert w.wait(30)
    assert len(w.history) == 3 and w.player == 'x'
    after_x = w.history[1][0]
    assert w.history[2][2] in oracle.optimal_moves(after_x, 'o')
    assert w.cells[1, 1].description == 'x' and 'nac-last' in w.cells[w.history[2][2]]._dom_classes
    w.perfect_game(pace=0)
    assert w.wait(30)
    assert oracle.outcome(w.state) == 0 and len(w.history) == 10
    assert 'draw' in w.status.value.lower()
    # Scrub back through the game with the slider, then undo from there.
    w.history_slider.value = 4
    assert w.wait(30)
    assert w.state == w.history[4][0] and 'viewing move 4 of 9' in w.status.value
    w.undo()
    assert w.wait(30)
    assert w.player == 'x' and len(w.history) == 3
    w.new_game()
    assert w.wait(30)
    assert w.history == [(oracle.EMPTY_BOARD, 'x', None)]


def test_playing_o_makes_the_ai_open_and_ai_moves_for_me(make_widget):
    w = make_widget(human='o')
    assert len(w.history) == 2 and w.player == 'o'
    w.ai_move()
    assert w.wait(30)
    assert len(w.history) == 4 and w.player == 'o'
    for (before, player, _), (_, _, move) in zip(w.history, w.history[1:]):
        assert move in oracle.optimal_moves(before, player)


def test_the_widget_shows_what_the_given_functions_say(make_widget, functions):
    """A wrong score is displayed as it is: the widget computes no values of its own."""
    def optimistic_score(state, player):
        options = functions['moves'](state)
        return (1, options[0] if options else None)
    w = make_widget(score=optimistic_score, tree=True, depth=1)
    tree = w.last_tree
    assert {node.value for node in tree.nodes()} == {1}
    assert tree.root.best == (0, 0)


def test_calls_are_memoized_by_arguments_and_counted(make_widget):
    w = make_widget(memoize=True)
    w.tree(oracle.EMPTY_BOARD, 'x', depth=2)
    again = w.tree(oracle.EMPTY_BOARD, 'x', depth=2)
    assert again.counts['score_calls'] == 0 and again.counts['hits'] > 0
    w.memo.value = False
    assert w.wait(30)
    fresh = w.tree(oracle.EMPTY_BOARD, 'x', depth=2)
    assert fresh.counts['score_calls'] == 1 + 9 + 72 + len(fresh.pv)
    assert fresh.counts['positions'] >= fresh.counts['score_calls']


def test_counting_recursion_counts_a_plain_minimax(functions, make_widget):
    """positions = every call of score, recursive ones included (the name is patched only during our call)."""
    namespace = {name: functions[name] for name in ('score_end', 'play', 'moves')}
    exec('def score(state, player):\n'
         '    end = score_end(state)\n'
         '    if end is not None:\n'
         '        return end, None\n'
         "    nxt = 'o' if player == 'x' else 'x'\n"
         '    results = [(score(play(state, r, c, player), nxt)[0], (r, c)) for r, c in moves(state)]\n'
         "    return (max if player == 'x' else min)(results, key=lambda vm: vm[0])\n", namespace)
    plain_score = namespace['score']
    board = oracle.nested('xo x o   ')
    w = make_widget(score=plain_score, memoize=False)
    before = w.call.positions
    value, move = w.call('score', board, oracle.to_move(board))
    assert value == oracle.value(board, oracle.to_move(board))
    assert w.call.positions - before == oracle.search_tree_size(board, oracle.to_move(board))
    assert namespace['score'] is plain_score    # the original is back in place


# ---- errors ------------------------------------------------------------------------------------

def test_an_exception_in_student_code_is_one_short_line(make_widget):
    def broken_score(state, player):
        raise ValueError('no idea')
    w = make_widget(score=broken_score, tree=True)
    assert w.last_error == 'score raised ValueError: no idea'
    assert 'Traceback' not in w.error.value and '\n' not in w.error.value
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


def test_slow_score_shows_thinking(make_widget, functions):
    def slow_score(state, player):
        time.sleep(1.6)
        return functions['score'](state, player)
    w = make_widget(score=slow_score)
    w.click(1, 1)
    deadline = time.time() + 1.5
    while 'thinking' not in w.status.value and time.time() < deadline:
        time.sleep(0.05)
    assert 'thinking' in w.status.value
    w.stop()


# ---- drawing --------------------------------------------------------------------------------------

def test_figures_render_to_png(make_widget):
    from coursetools.widget import draw_tree, figure_png
    w = make_widget()
    for board in (oracle.EMPTY_BOARD, oracle.nested('xo  x  o '), oracle.nested('xxxoo    ')):
        for depth in (1, 2, 3):
            png = figure_png(draw_tree(w.tree(board, oracle.to_move(board), depth)))
            assert png.startswith(b'\x89PNG\r\n\x1a\n') and len(png) > 5000


def test_the_widget_shows_its_tree_picture_and_child_buttons(make_widget):
    w = make_widget(tree=True)
    assert bytes(w.tree_image.value).startswith(b'\x89PNG')
    assert len(w.children_box.children) == 9
    assert all(f'nac-child-{r}-{c}' in b._dom_classes for b, (r, c) in
               zip(w.children_box.children, [(r, c) for r in range(3) for c in range(3)]))
    before = w.tree_image.value
    w.children_box.children[4].click()      # play the child 1,1
    assert w.wait(30)
    assert w.history[1][2] == (1, 1) and bytes(w.tree_image.value) != bytes(before)


# ---- grading and the module's contents ----------------------------------------------------------------

def test_constructor_does_nothing_while_grading(monkeypatch):
    from coursetools.widget import GameTreeWidget

    def forbidden(*args):
        raise AssertionError('no function may be called while grading')
    monkeypatch.setenv('NBGRADER_EXECUTION', 'autograde')
    # Its cost (0.02 s for the notebook's widget cell) is measured by benchmarks/notebook_benchmark.py.
    w = GameTreeWidget(print_state=forbidden, score_end=forbidden, play=forbidden, moves=forbidden, score=forbidden)
    assert w.disabled_for_grading
    assert len(w.children) == 1 and 'disabled during grading' in w.children[0].value
    assert not hasattr(w, '_worker')


def test_module_imports_only_stdlib_ipywidgets_matplotlib_ipython():
    import sys
    tree = ast.parse(WIDGET_SOURCE.read_text())
    allowed = set(sys.stdlib_module_names) | {'ipywidgets', 'matplotlib', 'IPython'}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, 'no relative imports: the module is copied beside the notebook'
            names = [node.module]
        else:
            continue
        for name in names:
            assert name.split('.')[0] in allowed, f'widget.py imports {name}'


def test_module_contains_no_answers():
    """No line checking, no list of lines, no minimax of its own: those belong to the student."""
    source = WIDGET_SOURCE.read_text()
    tree = ast.parse(source)

    def is_index_triple(node):
        return (isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) == 3
                and all(isinstance(e, (ast.Constant, ast.Tuple, ast.List)) for e in node.elts)
                and all(not isinstance(e, ast.Constant) or isinstance(e.value, int) for e in node.elts))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            triples = [e for e in node.elts if is_index_triple(e)]
            assert len(triples) < 3, f'widget.py line {node.lineno}: a literal list of lines'
        if isinstance(node, ast.Name):
            assert node.id.lower() not in {'lines', 'winning_lines', 'wins'}, f'line {node.lineno}: {node.id}'
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {'max', 'min'}:
            mentioned = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | \
                        {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
            assert not mentioned & {'value', 'values', 'results', 'score'}, \
                f'widget.py line {node.lineno}: max/min over values is minimax: leave it to score'
    # Every winner, move list, value and board comes from the given functions.
    for pattern in ("== 'x' == ", "[0][0] == ", '[1][1] == '):
        assert pattern not in source
