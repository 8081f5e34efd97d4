"""The widget's step-through search (coursetools/widget/stepping.py) against a reference search written here.

The steps retell the notebook's own search: the alpha_beta workbook's score (given, self-memoizing) or alphabeta
(its solution cell), run by the widget with their recursive calls recorded, over the workbook's score_end, moves
and play. The reference below works on coursetools.game.oracle's boards alone. For every position, both move
orders and both searches they must agree step by step: which positions are entered and with which window, which
value backs up where, where the cuts fall and what they prune, and the totals of positions visited and subtrees
pruned (checked also against the workbook's published 549,946 and 18,297). And the steps follow the student's
code, right or wrong: a score where o maximises too, an alphabeta that cuts with > instead of >=, show what that
code does, and no step shows a value the student's function did not return.
"""
import functools
import math
import random
import time

import pytest

from coursetools.game import oracle
from test_alpha_beta import reference_functions as workbook_functions

INF = math.inf


def namespace_with(**replaced):
    """The workbook's functions in one namespace, some replaced (a student's own versions): the notebook's
    functions call each other by these names."""
    namespace = workbook_functions()
    for name, fn in replaced.items():
        if isinstance(fn, str):
            exec(compile(fn, name, 'exec'), namespace)
        else:
            namespace[name] = fn
    return namespace


def caller(namespace=None, **replaced):
    """The widget's FunctionCaller over a namespace's score_end, moves, play, score and alphabeta."""
    from coursetools.widget.calls import FunctionCaller
    namespace = namespace if namespace is not None else namespace_with(**replaced)
    return FunctionCaller({name: namespace[name] for name in ('score_end', 'moves', 'play', 'score', 'alphabeta')})


def ordered(board, player, order):
    """Empty squares row by row, or sorted by the oracle's value of the board after them (stable)."""
    options = oracle.empty_cells(board)
    if order == 'listed':
        return options
    after = {move: oracle.value(oracle.place(board, *move, player), oracle.other(player)) for move in options}
    best_first = sorted(options, key=lambda move: after[move], reverse=(player == 'x'))
    if order == 'best':
        return best_first
    return sorted(options, key=lambda move: after[move], reverse=(player == 'o'))


class Reference:
    """Plain minimax or alpha-beta (the workbook's convention), recording what the stepping search must show."""

    def __init__(self, pruning, order, depth, o_maximises=False, strict=False):
        self.rules = (pruning, order, o_maximises, strict)      # o_maximises, strict: two mistakes a student makes
        self.depth = depth
        self.visited = self.pruned = 0
        self.entered, self.backed, self.cuts = [], [], []

    def search(self, board, player):
        value, self.visited, self.pruned = _search(self.rules, board, player, -INF, INF, (), self)
        return value


def _search(rules, board, player, alpha, beta, path, shown):
    """(value, positions visited, subtrees pruned) of the search from `board`; what happens within `shown.depth`
    moves is recorded in `shown`, below that the search is remembered per position and window (a pure function
    of them), so that the empty board's 549,946 positions are searched once per rule set, not once per test."""
    if shown is None or len(path) >= shown.depth:
        return _unseen(rules, board, player, alpha, beta)
    return _node(rules, board, player, alpha, beta, path, shown)


@functools.lru_cache(maxsize=None)
def _unseen(rules, board, player, alpha, beta):
    return _node(rules, board, player, alpha, beta, (), None)


def _node(rules, board, player, alpha, beta, path, shown):
    pruning, order, o_maximises, strict = rules
    end = oracle.outcome(board)
    if end is not None:
        return end, 1, 0
    if shown:
        shown.entered.append((path, (alpha, beta) if pruning else None))
    options = ordered(board, player, order)
    maximising = player == 'x' or o_maximises
    best, visited, pruned = -INF if maximising else INF, 1, 0
    for number, move in enumerate(options):
        value, below, cut = _search(rules, oracle.place(board, *move, player), oracle.other(player), alpha, beta,
                                    path + (move,), shown)
        visited, pruned = visited + below, pruned + cut
        if shown:
            shown.backed.append((path + (move,), value))
        if (maximising and value > best) or (not maximising and value < best):
            best = value
        if pruning:
            if player == 'x' and best > alpha:
                alpha = best
            if player == 'o' and best < beta:
                beta = best
            if alpha > beta if strict else alpha >= beta:
                skipped = options[number + 1:]
                pruned += len(skipped)
                if shown and skipped:
                    shown.cuts.append((path, tuple(skipped)))
                break
    return best, visited, pruned


def stepped(board, player, pruning, order, depth, call=None):
    from coursetools.widget.stepping import Search
    search = Search(call or caller(), alphabeta=pruning, order=order)
    return list(search.steps(board, player, depth))


def compare(board, pruning, order, depth):
    player = oracle.to_move(board)
    steps = stepped(board, player, pruning, order, depth)
    reference = Reference(pruning, order, depth)
    value = reference.search(board, player)
    done = steps[-1]
    assert done.kind == 'done' and done.value == value == oracle.value(board, player)
    assert (done.visited, done.pruned) == (reference.visited, reference.pruned), (board, order)
    assert [(s.path, s.window) for s in steps if s.kind == 'enter'] == reference.entered
    assert [(s.path, s.value) for s in steps if s.kind in ('leaf', 'deep', 'backup')] == reference.backed
    assert [(s.path, tuple(s.pruned_moves)) for s in steps if s.kind == 'cutoff'] == reference.cuts
    counts = [(s.visited, s.pruned) for s in steps]
    assert counts == sorted(counts), 'the running counts never go down'
    return steps


def positions(k=12, seed=5):
    boards = [b for b in oracle.reachable_positions() if oracle.outcome(b) is None and flat_empties(b) <= 6]
    return random.Random(seed).sample(sorted(boards), k)


def flat_empties(board):
    return oracle.flat(board).count(' ')


@pytest.mark.parametrize('order', ['listed', 'best', 'worst'])
@pytest.mark.parametrize('pruning', [False, True])
def test_every_step_of_a_full_search_matches_the_reference(pruning, order):
    for board in positions():
        compare(board, pruning, order, depth=9)


@pytest.mark.parametrize('depth', [1, 2, 3])
@pytest.mark.parametrize('order', ['listed', 'best', 'worst'])
def test_a_live_depth_keeps_the_counts_exact(depth, order):
    for board in [oracle.EMPTY_BOARD, oracle.nested('x   o    '), oracle.nested('xo  x    ')]:
        compare(board, True, order, depth)
        compare(board, False, order, depth)


def test_the_published_counts_from_the_empty_board():
    plain = stepped(oracle.EMPTY_BOARD, 'x', False, 'listed', 2)[-1]
    pruned = stepped(oracle.EMPTY_BOARD, 'x', True, 'listed', 2)[-1]
    assert plain.visited == 549946 and pruned.visited == 18297
    best = stepped(oracle.EMPTY_BOARD, 'x', True, 'best', 2)[-1]
    worst = stepped(oracle.EMPTY_BOARD, 'x', True, 'worst', 2)[-1]
    assert best.visited < pruned.visited < worst.visited < plain.visited


def test_the_published_counts_with_the_first_workbooks_plain_score():
    from test_widget import notebook_functions
    functions = notebook_functions()          # noughts_and_crosses: its solution cells, score a plain minimax
    from coursetools.widget.calls import FunctionCaller
    call = FunctionCaller({name: functions[name] for name in ('score_end', 'moves', 'play', 'score')})
    steps = stepped(oracle.EMPTY_BOARD, 'x', False, 'listed', 3, call=call)
    assert steps[-1].kind == 'done' and steps[-1].visited == 549946 and steps[-1].value == 0


# ---- the steps follow the student's code, right or wrong ------------------------------------------------------

O_MAXIMISES_TOO = """
def score(state, player):
    end = score_end(state)
    if end is not None:
        return end, None
    options = [(score(play(state, r, c, player), other(player))[0], (r, c)) for r, c in moves(state)]
    return max(options, key=lambda option: option[0])
"""
CUTS_WITH_GREATER_THAN = """
def alphabeta(state, player, alpha, beta):
    end = score_end(state)
    if end is not None:
        return end, None
    best_value, best_move = (-INF if player == 'x' else INF), None
    for row, col in moves(state):
        value, _ = alphabeta(play(state, row, col, player), other(player), alpha, beta)
        if player == 'x':
            if value > best_value:
                best_value, best_move = value, (row, col)
            alpha = max(alpha, best_value)
        else:
            if value < best_value:
                best_value, best_move = value, (row, col)
            beta = min(beta, best_value)
        if alpha > beta:
            break
    return best_value, best_move
"""


def backed(steps):
    return [(s.path, s.value) for s in steps if s.kind in ('leaf', 'deep', 'backup')]


@pytest.mark.parametrize('depth', [2, 3])
def test_the_steps_show_a_score_where_o_maximises_too(depth):
    said = []
    for board in [oracle.nested('x   o    '), oracle.nested('xx oo    '), oracle.EMPTY_BOARD]:
        player = oracle.to_move(board)
        steps = stepped(board, player, False, 'listed', depth, call=caller(score=O_MAXIMISES_TOO))
        wrong, right = Reference(False, 'listed', depth, o_maximises=True), Reference(False, 'listed', depth)
        value = wrong.search(board, player)
        right.search(board, player)
        assert steps[-1].kind == 'done' and steps[-1].value == value and steps[-1].visited == wrong.visited
        assert backed(steps) == wrong.backed != right.backed
        said += [s for s in steps if s.kind == 'backup' and s.player == 'o' and 'not the min' in s.text]
    assert said and all(f'the code returned {format_value(s.value)} from (' in s.text for s in said)
    assert not any('min(' in s.text for s in said)


def test_the_steps_show_the_pruning_of_an_alphabeta_that_cuts_with_greater_than():
    for board in [oracle.EMPTY_BOARD, oracle.nested('x   o    ')]:
        player = oracle.to_move(board)
        steps = stepped(board, player, True, 'listed', 2, call=caller(alphabeta=CUTS_WITH_GREATER_THAN))
        strict, usual = Reference(True, 'listed', 2, strict=True), Reference(True, 'listed', 2)
        value = strict.search(board, player)
        usual.search(board, player)
        done = steps[-1]
        assert done.kind == 'done' and done.value == value
        assert (done.visited, done.pruned) == (strict.visited, strict.pruned)
        assert strict.pruned != usual.pruned and strict.visited > usual.visited, "> prunes less: more calls"
        assert [(s.path, tuple(s.pruned_moves)) for s in steps if s.kind == 'cutoff'] == strict.cuts
        assert backed(steps) == strict.backed


@pytest.mark.parametrize('name, wrong', [('score', O_MAXIMISES_TOO), ('alphabeta', CUTS_WITH_GREATER_THAN),
                                         ('score', None), ('alphabeta', None)])
def test_no_step_shows_a_value_the_function_did_not_return(name, wrong):
    """Every value shown (leaf, subtree, backup, the best so far, the end) is one the notebook's function returned
    for that position: the function is wrapped here to log what it returns, in every call the widget makes."""
    from collections import defaultdict
    namespace = namespace_with(**({name: wrong} if wrong else {}))
    returned, inner = defaultdict(set), namespace[name]

    @functools.wraps(inner)     # a decorated function: the widget finds the notebook's namespace through it
    def logged(*args):
        result = inner(*args)
        returned[args[0], args[1]].add(result[0])
        return result
    namespace[name] = logged
    board = oracle.nested('x   o    ')
    steps = stepped(board, 'x', name == 'alphabeta', 'listed', 3, call=caller(namespace))
    assert steps[-1].kind == 'done'
    where = {s.path: (s.state, s.player) for s in steps if s.kind == 'enter'}
    shown = 0
    for step in steps:
        if step.kind in ('leaf', 'deep', 'backup', 'done'):
            assert step.value in returned[step.state, step.player], step
            shown += 1
        if step.kind in ('leaf', 'deep', 'backup'):
            assert step.best in returned[where[step.path[:-1]]], step
    assert shown > 20


def test_the_text_says_who_chooses_what_and_why_a_cut_happens():
    board = oracle.nested('x   o    ')
    steps = stepped(board, 'x', True, 'listed', 3)
    backups = [s for s in steps if s.kind == 'backup']
    chooser = {'x': 'max', 'o': 'min'}
    for step in backups:
        values = ', '.join({1: '+1', 0: '0', -1: '−1'}[v] for v in step.seen)
        assert f'{step.player} to move after' in step.text and f'{chooser[step.player]}({values})' in step.text
        assert step.text.split(', so ')[1].startswith({1: '+1', 0: '0', -1: '−1'}[step.value] + ' backs up')
    cut = next(s for s in steps if s.kind == 'cutoff')
    assert ('α ≥ β' if cut.player == 'x' else 'β ≤ α') in cut.text and 'cannot matter' in cut.text
    assert f'{len(cut.pruned_moves)} moves pruned' in cut.text


def test_a_function_that_raises_stops_the_search_at_that_position():
    namespace = workbook_functions()

    def play(state, row, col, mark):
        if (row, col) == (2, 2) and oracle.flat(state).count(' ') == 5:
            raise ValueError('no corner today')
        return namespace['play'](state, row, col, mark)
    board = oracle.nested('x   o    ')
    steps = stepped(board, 'x', False, 'listed', 2, call=caller(play=play))
    error = steps[-1]
    assert error.kind == 'error' and 'done' not in [s.kind for s in steps]
    assert error.error == 'play raised ValueError: no corner today'
    assert error.path == ((0, 1), (0, 2)) and 'after 0,1 then 0,2' in error.text   # x's moves there are played
    assert [s.path for s in steps if s.kind == 'enter'] == [(), ((0, 1),)]


def test_nonsense_from_score_end_is_an_error_at_the_start():
    steps = stepped(oracle.EMPTY_BOARD, 'x', True, 'listed', 2, call=caller(score_end=lambda state: 'nonsense'))
    assert [s.kind for s in steps] == ['error'] and steps[0].path == ()
    assert "score_end returned 'nonsense'" in steps[0].error


def test_a_finished_position_is_done_at_once():
    board = oracle.nested('xxxoo    ')
    steps = stepped(board, 'o', True, 'listed', 2)
    assert [s.kind for s in steps] == ['done'] and steps[0].value == 1 and steps[0].visited == 1


# ---- the step panel of the widget (no browser) -----------------------------------------------------------------

MID_GAME = oracle.nested('x   o    ')


@pytest.fixture
def panel_widget(monkeypatch):
    """make(**options): a GameTreeWidget over the alpha_beta workbook's functions (score a plain minimax), without
    the tree drawn; ``functions`` replaces some of them in the notebook's namespace."""
    from coursetools.widget import GameTreeWidget
    from test_widget_alpha_beta import NAMES, reference_functions
    monkeypatch.delenv('NBGRADER_EXECUTION', raising=False)
    made = []

    def make(**options):
        namespace = reference_functions()
        namespace.update(options.pop('functions', {}))   # a student's own version: the others call it by name
        functions = {name: namespace[name] for name in NAMES}
        if 'alphabeta' in options:
            functions['alphabeta'] = options.pop('alphabeta')
        widget = GameTreeWidget(**functions, tree=False, state=options.pop('state', MID_GAME), **options)
        made.append(widget)
        assert widget.wait(60)
        return widget
    yield make
    for widget in made:
        widget.stop()
        widget.close()


def outline_lines(widget):
    """The outline's lines as text, as the page shows them."""
    import re
    return [re.sub('<[^>]+>', '', line) for line in re.findall(r'<div class="nac-step-line[^>]*>.*?</div>',
                                                                  widget.steps.ui.outline.value)]


def press(widget, action, *args, times=1):
    for _ in range(times):
        getattr(widget.steps, action)(*args)
        assert widget.wait(30)


def test_step_back_and_step_again_show_the_same_texts(panel_widget):
    widget = panel_widget()
    seen = []
    for _ in range(12):
        press(widget, 'step')
        seen.append((widget.steps.ui.said.value, widget.steps.ui.outline.value, widget.steps.ui.counts.value))
    press(widget, 'back', times=5)
    assert (widget.steps.ui.said.value, widget.steps.ui.outline.value, widget.steps.ui.counts.value) == seen[6]
    assert widget.steps.index == 7
    press(widget, 'step', times=5)
    assert (widget.steps.ui.said.value, widget.steps.ui.outline.value, widget.steps.ui.counts.value) == seen[11]
    press(widget, 'back', times=20)
    assert widget.steps.index == 0 and widget.steps.ui.back.disabled


@pytest.mark.parametrize('order', ['listed', 'best', 'worst'])
def test_run_to_end_shows_the_reference_values_cuts_and_counts(panel_widget, order):
    widget = panel_widget()
    widget.steps.ui.order.value = order
    assert widget.wait(30)
    press(widget, 'run_to_end')
    reference = Reference(True, order, 2)
    value = reference.search(MID_GAME, 'x')
    lines = outline_lines(widget)
    assert lines[0] == f'start · x to move = {format_value(value)} (the value here)'
    pruned = {moves for path, moves in reference.cuts if path == ()}
    for (path, backed) in reference.backed:
        if len(path) == 1:
            assert any(line.startswith(f'{path[0][0]},{path[0][1]} · o to move = {format_value(backed)} ')
                       for line in lines)
    for moves in pruned:
        for row, col in moves:
            assert f'{row},{col} · o to move · pruned' in lines
    counts = widget.steps.ui.counts.value
    assert f'<b>{reference.visited:,}</b> positions visited so far' in counts
    assert f'<b>{reference.pruned:,}</b> subtrees pruned' in counts
    plain = Reference(False, 'listed', 9)
    plain.search(MID_GAME, 'x')
    assert f'Plain minimax visits {plain.visited:,} positions here' in counts
    for each, label in (('listed', 'as listed'), ('best', 'best first'), ('worst', 'worst first')):
        other = Reference(True, each, 9)
        other.search(MID_GAME, 'x')
        assert f'{label} {other.visited:,} (saves' in counts
    assert widget.steps.ui.step.disabled and widget.steps.ui.end.disabled


def format_value(value):
    return {1: '+1', 0: '0', -1: '−1'}[value]


def test_play_moves_on_by_itself_and_pause_stops_it(panel_widget):
    widget = panel_widget(pace=0.1)
    widget.steps.play()
    time.sleep(1.0)
    assert widget.steps.playing and 3 <= widget.steps.index
    widget.steps.pause()
    assert widget.wait(10)
    stopped = widget.steps.index
    time.sleep(0.5)
    assert widget.steps.index == stopped and not widget.steps.playing
    assert widget.steps.ui.pause.disabled and not widget.steps.ui.play.disabled


def test_predict_then_reveal_keeps_a_tally(panel_widget):
    widget = panel_widget()
    widget.steps.ui.predict.value = True
    press(widget, 'step', times=8)
    asking = widget.steps._asking()
    assert asking is not None and widget.steps.ui.said.value.startswith('Predict: the board drawn')
    held = widget.steps.index
    press(widget, 'step')
    assert widget.steps.index == held, 'Step waits for the prediction'
    assert any(line.endswith('= ?  (predict: −1, 0 or +1)') for line in outline_lines(widget))
    right = asking.value
    press(widget, 'guess', right)
    assert widget.steps.ui.said.value.startswith(f'<div class="nac-step-reveal">You said {format_value(right)}: right.')
    assert widget.steps.ui.tally.value == '1 of 1 predicted right'
    while widget.steps._asking() is None:
        press(widget, 'step')
    wrong = 1 if widget.steps._asking().value != 1 else -1
    press(widget, 'guess', wrong)
    assert widget.steps.ui.tally.value == '1 of 2 predicted right'
    assert f'it is {format_value(widget.steps.steps[widget.steps.index - 1].value)}' in widget.steps.ui.said.value


def test_a_move_played_restarts_the_search_from_the_new_position(panel_widget):
    widget = panel_widget()
    press(widget, 'step', times=3)
    widget.click(0, 2)
    assert widget.wait(30)
    assert widget.steps.key is None or widget.steps.key[0] == widget.state
    press(widget, 'step')
    assert widget.steps.key[0] == widget.state and widget.steps.index == 1


def test_a_broken_function_stops_the_steps_at_that_position(panel_widget):
    from test_widget_alpha_beta import reference_functions
    score_end = reference_functions()['score_end']

    def broken(state):
        if oracle.flat(state).count(' ') == 5:
            raise KeyError('oops')
        return score_end(state)
    widget = panel_widget(functions={'score_end': broken})
    press(widget, 'run_to_end')
    assert widget.steps.ui.said.value.startswith("Stopped after 0,1 then 0,2: score_end raised KeyError: 'oops'")
    assert "0,2 · x to move · stopped: score_end raised KeyError: 'oops'" in outline_lines(widget)
    assert widget.steps.ui.step.disabled and not widget.steps.ui.back.disabled


def test_keys_drive_the_panel_only_when_enabled(panel_widget):
    widget = panel_widget(keys=True, alphabeta=None)
    assert widget.key_bridge.enabled and widget.steps.ui.order.layout.display == 'none'
    widget.key_bridge._received(widget.key_bridge, {'key': 'step'}, [])
    widget.key_bridge._received(widget.key_bridge, {'key': 'step'}, [])
    assert widget.wait(30) and widget.steps.index == 2
    widget.key_bridge._received(widget.key_bridge, {'key': 'back'}, [])
    assert widget.wait(30) and widget.steps.index == 1
    assert 'window' not in widget.steps.ui.said.value and 'α' not in widget.steps.ui.outline.value
    assert not panel_widget().key_bridge.enabled


def test_a_value_after_a_cut_is_shown_as_a_bound(panel_widget):
    widget = panel_widget(state=oracle.EMPTY_BOARD)
    press(widget, 'run_to_end')
    reference = Reference(True, 'listed', 2)
    reference.search(oracle.EMPTY_BOARD, 'x')
    cut_here = {path[0] for path, _ in reference.cuts if len(path) == 1}
    assert cut_here, 'alpha-beta cuts below some of the first moves'
    for row, col in oracle.empty_cells(oracle.EMPTY_BOARD):
        line = next(line for line in outline_lines(widget) if line.startswith(f'{row},{col} · o to move = '))
        assert line.endswith('(o cut short: at most 0)' if (row, col) in cut_here else '(o chose min)'), line
