"""Hidden checks for the `alpha_beta` assignment (the second workbook: counting, alpha-beta, memoization,
depth limits and game analysis).

Same rules as coursetools.checks.noughts_and_crosses, whose references and warm-up this module reuses:

* `isolate` makes one mistake cost one task: while one function is tested, the functions it may use are correct
  versions (`KERNEL_CONTEXT`: last week's given functions, and `evaluate` for `score_depth`), and any other
  function the test cell calls is the checker's own reference.
* Searches whose answers depend only on their arguments (`score_counted`, `score_depth`, `count_games`) are
  memoized while tested, so slow but correct code is searched once per position. Because `score_counted`
  *returns* its count, memoizing it keeps the counts exact.
* `alphabeta` is never memoized: its pruning is measured by counting its calls through its global name, for
  one top-level call; a count is believed only with the search's trace (`evidence`). Its checks share one
  counted search per position (`_searched`; the checker remembers each, `remember_counted`).
Every check raises AssertionError with a message naming the board it failed on.
"""
import math

from coursetools.game import analysis
from coursetools.game import oracle
from coursetools.judge import answers
from coursetools.judge import checker
from coursetools.checks import calls
from coursetools.checks import evidence
from coursetools.checks import noughts_and_crosses as base
from coursetools.checks.boards import as_board, as_move, each, picture
from coursetools.checks.isolation import MISSING, clear_student_cache, memoized, replace_until_cell_ends
from coursetools.checks.noughts_and_crosses import warm_up      # the checker's: the same tables serve both
from coursetools.checks.positions import finished_positions, unfinished_sample
from coursetools.checks.references import (every_board, every_position, reachable_from, reference_alphabeta,
                                           reference_canonical, reference_count_games, reference_lines,
                                           reference_reachable, reference_score_counted, reference_score_depth,
                                           reference_score_memo)

GIVEN = ('print_state', 'score_end', 'play', 'moves', 'score', 'other')
FUNCTIONS = ('score_counted', 'hand_trace', 'alphabeta', 'score_memo', 'evaluate', 'score_depth', 'count_games',
             'reachable', 'canonical')
MEMOIZED = ('score_counted', 'score_depth', 'count_games')
INF = math.inf


# --- reference versions, used while another function is under test -------------------------------------

TRACE_BOARD = ((' ', ' ', 'x'), ('x', ' ', 'o'), ('o', 'o', 'x'))     # the small tree traced by hand, x to move


def reference_hand_trace():
    """The minimax value of each of x's moves on TRACE_BOARD, in the order moves() lists them."""
    return tuple(oracle.value(oracle.place(TRACE_BOARD, row, col, 'x'), 'o')
                 for row, col in oracle.empty_cells(TRACE_BOARD))


REFERENCE = dict(base.REFERENCE, other=oracle.other, score_counted=reference_score_counted,
                 alphabeta=reference_alphabeta, score_memo=reference_score_memo, evaluate=analysis.evaluation,
                 score_depth=reference_score_depth, count_games=reference_count_games,
                 reachable=reference_reachable, canonical=reference_canonical, hand_trace=reference_hand_trace)

KERNEL_ANSWERS = dict(base.KERNEL_ANSWERS, other=(oracle.other, lambda: [('x',), ('o',)]),
                      lines=(reference_lines, every_position), evaluate=(analysis.evaluation, every_board))
_SEARCH = ('score_end', 'moves', 'play', 'other')
KERNEL_CONTEXT = {
    'score_counted': {'replace': _SEARCH, 'memoize': {'score_counted': 'isolated'}},
    'alphabeta': {'replace': _SEARCH, 'remember_counted': True},
    'score_memo': {'replace': _SEARCH},
    'evaluate': {'replace': ('score_end', 'lines')},
    'score_depth': {'replace': _SEARCH + ('lines', 'evaluate'), 'memoize': {'score_depth': 'isolated'}},
    'count_games': {'replace': _SEARCH, 'memoize': {'count_games': 'isolated'}},
    'reachable': {'replace': _SEARCH},
    'canonical': {},
    'hand_trace': {},
}


# --- isolation --------------------------------------------------------------------------------------------

def isolate(namespace, testing):
    """Prepare the test cell's globals for testing one function, until the cell ends.

    In the checker: see KERNEL_CONTEXT, and `count_calls` counts in the kernel. In the instructor's own kernel:
    every function but `testing` becomes its reference version, and the function under test is memoized if its
    answers depend on its arguments only. Returns a function that undoes the change (in IPython it also runs
    by itself when the cell ends, even if the cell fails)."""
    session = checker.session_in(namespace)
    if session is not None:
        session.override({'count_calls': notebook_count_calls})
        return session.isolate(testing, KERNEL_CONTEXT.get(testing, {}), KERNEL_ANSWERS, REFERENCE)
    replacements = {name: REFERENCE[name] for name in GIVEN + FUNCTIONS if name != testing}
    own = namespace.get(testing, MISSING)
    if testing in MEMOIZED and callable(own):
        clear_student_cache(own)
        replacements[testing] = memoized(own, 'alpha_beta')
    return replace_until_cell_ends(namespace, replacements)


def notebook_count_calls(function, *args):
    """The notebook's `count_calls(function, *args)` for the checker, where the function is a kernel's proxy."""
    return calls.count_calls(function, function.__name__, picture, *args)


# --- helpers of the checks -------------------------------------------------------------------------------

def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _pair(got, call):
    assert isinstance(got, (tuple, list)) and len(got) == 2, f'{call} returned {got!r}; it must return (value, move)'
    return tuple(got)


def _check_move(move, board, player, call, best):
    cell = as_move(move)
    where = f'{call} chose the move {move!r} for\n{picture(board)}\n'
    assert cell is not None, f'{where}but a move must be a (row, col) pair of two integers'
    assert cell in oracle.empty_cells(board), f'{where}but that is not an empty cell'
    assert cell in best, f'{where}but the best moves for {player} are {best}'


def _to_move(boards, *extra):
    return [(board, oracle.to_move(board), *extra) for board in boards]


def _searched(alphabeta, boards):
    """(board, player, value, outcome) of alphabeta(board, player to move, -INF, INF) for each board, counted
    and traced: the checks of task 2 ask for the same searches, which the checker makes once per notebook."""
    for (board, player, *_), outcome in calls.outcomes(alphabeta, 'alphabeta', _to_move(boards, -INF, INF),
                                                       count=True):
        yield board, player, calls.value(outcome, 'alphabeta', (board, player, -INF, INF), picture), outcome


# --- task 1: score_counted --------------------------------------------------------------------------------

def _triple(got, call):
    assert isinstance(got, (tuple, list)) and len(got) == 3, (
        f'{call} returned {got!r}; it must return (value, move, positions)')
    return tuple(got)


def score_counted_values(score_counted):
    finished = [(board, player) for board in finished_positions()[::5] for player in 'xo']
    for (board, player), got in each(score_counted, 'score_counted', finished, first=calls.QUICK):
        call = f'score_counted(board, {player!r})'
        value, move, _ = _triple(got, call)
        expected = oracle.outcome(board)
        assert move is None and _is_number(value) and value == expected, (
            f'The game is over, so {call} should return ({expected}, None, 1), not ({value!r}, {move!r}, ...) '
            f'for\n{picture(board)}')
    for (board, player), got in each(score_counted, 'score_counted',
                                      _to_move(unfinished_sample() + [oracle.EMPTY_BOARD])):
        call = f'score_counted(board, {player!r})'
        value, move, _ = _triple(got, call)
        expected = oracle.value(board, player)
        assert _is_number(value) and value == expected, (
            f'{call} gave the value {value!r}, but the minimax value is {expected} for\n{picture(board)}')
        _check_move(move, board, player, call, oracle.optimal_moves(board, player))


def score_counted_positions(score_counted):
    for (board, player), got in each(score_counted, 'score_counted', _to_move(finished_positions()[::5]),
                                      first=calls.QUICK):
        *_, count = _triple(got, 'score_counted')
        assert count == 1, (f'score_counted counted {count!r} positions on a finished board; it visits just that '
                            f'one board, so the count is 1:\n{picture(board)}')
    for (board, player), got in each(score_counted, 'score_counted',
                                      _to_move(unfinished_sample() + [oracle.EMPTY_BOARD])):
        call = f'score_counted(board, {player!r})'
        *_, count = _triple(got, call)
        expected = oracle.search_tree_size(board, player)
        assert count == expected, (
            f'{call} gave {count!r} as its count of positions, but a plain minimax visits {expected} (the board '
            f'itself and every position below it, finished ones included) from\n{picture(board)}')


# --- task 2: alphabeta ------------------------------------------------------------------------------------

def _alphabeta_sample():
    return [oracle.EMPTY_BOARD] + unfinished_sample()[::3]


def alphabeta_values(alphabeta):
    for (board, player, *_), got in each(alphabeta, 'alphabeta', _to_move(finished_positions()[::5], -INF, INF),
                                          first=calls.QUICK):
        call = f'alphabeta(board, {player!r}, -INF, INF)'
        value, move = _pair(got, call)
        expected = oracle.outcome(board)
        assert move is None and _is_number(value) and value == expected, (
            f'The game is over, so {call} should return ({expected}, None), not ({value!r}, {move!r}), for\n'
            f'{picture(board)}')
    for board, player, got, _ in _searched(alphabeta, _alphabeta_sample()):
        call = f'alphabeta(board, {player!r}, -INF, INF)'
        value, _ = _pair(got, call)
        expected = oracle.value(board, player)
        assert _is_number(value) and value == expected, (
            f'{call} gave the value {value!r}, but minimax gives {expected} for\n{picture(board)}')


def alphabeta_moves(alphabeta):
    for board, player, got, _ in _searched(alphabeta, _alphabeta_sample()):
        call = f'alphabeta(board, {player!r}, -INF, INF)'
        _, move = _pair(got, call)
        _check_move(move, board, player, call, oracle.optimal_moves(board, player))


def alphabeta_prunes(alphabeta):
    plain = oracle.search_tree_size(oracle.EMPTY_BOARD, 'x')
    (*_, searched), = _searched(alphabeta, [oracle.EMPTY_BOARD])
    from_empty = evidence.claimed(searched, 'alphabeta')
    assert from_empty < plain / 2, (
        f'From the empty board alphabeta visited {from_empty} positions, but a plain minimax visits {plain}: it '
        f'should prune most of them. Does it stop trying moves once alpha >= beta, and pass the narrowed window '
        f'(alpha, beta) to its recursive calls? (Recursive calls must be alphabeta(...) by name to be counted.)')
    # A count as claimed costs marks; it earns them only with its evidence, checked last. A stub (one call)
    # passed above and fails here; a search that never prunes failed before the sample was searched.
    searches = calls.outcomes(alphabeta, 'alphabeta', _to_move(unfinished_sample()[::3], -INF, INF), count=True)
    shown = [(oracle.EMPTY_BOARD, 'x', searched)]
    for (board, player, *rest), outcome in calls.require_not_a_stub('alphabeta', searches):
        calls.value(outcome, 'alphabeta', (board, player, *rest), picture)
        calls_made, most = evidence.claimed(outcome, 'alphabeta'), oracle.search_tree_size(board, player)
        assert calls_made <= most, (f'alphabeta(board, {player!r}, -INF, INF) visited {calls_made} positions, more '
                                    f'than the {most} a plain minimax visits from\n{picture(board)}')
        shown.append((board, player, outcome))
    assert from_empty > 1, 'alphabeta was called once: its recursion must call alphabeta(...) by name to be counted'
    for board, player, outcome in shown:
        evidence.alphabeta_count(outcome, board, player)


def alphabeta_count(alphabeta):
    for board, player, _, outcome in _searched(alphabeta, _alphabeta_sample()):
        calls_made = evidence.claimed(outcome, 'alphabeta')
        _, expected = analysis.alphabeta_visits(board, player)
        assert calls_made == expected, (
            f'alphabeta(board, {player!r}, -INF, INF) visited {calls_made} positions; with moves tried in the order '
            f'moves(state) gives them and a cut as soon as alpha >= beta it visits {expected}, from\n'
            f'{picture(board)}')
        evidence.alphabeta_count(outcome, board, player)


# --- task 3: score_memo -----------------------------------------------------------------------------------

def score_memo_values(score_memo):
    boards = [oracle.EMPTY_BOARD] + unfinished_sample() + finished_positions()[::5]
    known = answers.Shared('known')
    for (board, player, _), got in each(score_memo, 'score_memo', _to_move(boards, known)):
        call = f'score_memo(board, {player!r}, known)'
        value, move = _pair(got, call)
        expected = oracle.value(board, player)
        assert _is_number(value) and value == expected, (
            f'{call} gave the value {value!r}, but the minimax value is {expected} for\n{picture(board)}')
        if oracle.outcome(board) is None:
            _check_move(move, board, player, call, oracle.optimal_moves(board, player))
        else:
            assert move is None, f'The game is over, so {call} should give the move None, not {move!r}, for\n{picture(board)}'


def score_memo_table(score_memo):
    known = {}
    searched = calls.counted_call(score_memo, 'score_memo', picture, oracle.EMPTY_BOARD, 'x', known)
    calls_made = evidence.claimed(searched, 'score_memo')
    assert isinstance(known, dict) and len(known) == len(oracle.reachable_positions()), (
        f'After score_memo(EMPTY_BOARD, "x", known) the dictionary known holds {len(known)} entries; it should '
        f'hold one for each of the {len(oracle.reachable_positions())} positions the search reaches (finished '
        f'ones included). Store every answer in the dictionary you are given, not in a global one.')
    assert calls_made > 1, 'score_memo was called once: its recursion must call score_memo(...) by name to be counted'
    assert calls_made <= 16168, (
        f'score_memo was called {calls_made} times from the empty board; looking each position up in known before '
        f'searching it needs at most 16,168 calls (one per move between the 5,478 positions, plus the first).')
    evidence.memo_count(searched, oracle.EMPTY_BOARD, 'x')


# --- task 4: evaluate and score_depth ---------------------------------------------------------------------

def evaluate_open_lines(evaluate):
    for (board,), got in each(evaluate, 'evaluate', [(board,) for board in oracle.reachable_positions()],
                               first=calls.QUICK):
        expected = analysis.evaluation(board)
        assert _is_number(got) and math.isclose(got, expected, abs_tol=1e-9), (
            f'evaluate returned {got!r} but should return {expected:g} '
            f'(x has {analysis.open_lines(board, "x")} open lines, o has {analysis.open_lines(board, "o")}; '
            f'a finished board scores as score_end does) for\n{picture(board)}')


def score_depth_values(score_depth):
    boards = unfinished_sample()[::6] + finished_positions()[::25] + [oracle.EMPTY_BOARD]
    searches = [(board, oracle.to_move(board), depth) for board in boards for depth in (0, 1, 2, 3)]
    for (board, player, depth), got in each(score_depth, 'score_depth', searches):
        call = f'score_depth(board, {player!r}, {depth})'
        value, move = _pair(got, call)
        expected = analysis.depth_value(board, player, depth)
        assert _is_number(value) and math.isclose(value, expected, abs_tol=1e-9), (
            f'{call} gave the value {value!r}, but a search {depth} moves deep that scores unfinished boards '
            f'with evaluate gives {expected:g} for\n{picture(board)}')
        if depth == 0 or oracle.outcome(board) is not None:
            assert move is None, f'{call} should give the move None (nothing is searched), not {move!r}, for\n{picture(board)}'


def _winning_cells(board, mark):
    return [(r, c) for r, c in oracle.empty_cells(board) if oracle.outcome(oracle.place(board, r, c, mark)) is not None
            and oracle.outcome(oracle.place(board, r, c, mark)) != 0]


def score_depth_wins_and_blocks(score_depth):
    searches, wanted = [], []
    for board in oracle.reachable_positions():
        if oracle.outcome(board) is not None:
            continue
        player = oracle.to_move(board)
        wins = _winning_cells(board, player)
        threats = _winning_cells(board, oracle.other(player))
        for depth in (1, 2):
            if wins:
                searches.append((board, player, depth))
                wanted.append(('win', wins))
            elif len(threats) == 1 and depth == 2:
                searches.append((board, player, depth))
                wanted.append(('block', threats))
    for ((board, player, depth), got), (kind, cells) in zip(each(score_depth, 'score_depth', searches), wanted):
        call = f'score_depth(board, {player!r}, {depth})'
        _, move = _pair(got, call)
        if kind == 'win':
            assert as_move(move) in cells, (
                f'{call} chose {move!r}, but {player} wins at once with {cells} on\n{picture(board)}')
        else:
            assert as_move(move) == cells[0], (
                f'{call} chose {move!r}, but {oracle.other(player)} threatens to win at {cells[0]}: a search '
                f'two moves deep should see it and block, on\n{picture(board)}')


# --- before task 2: a small search traced by hand -------------------------------------------------------

def hand_trace_values(hand_trace):
    """The three values predicted for x's moves on TRACE_BOARD are minimax's."""
    moves = oracle.empty_cells(TRACE_BOARD)
    got = hand_trace()
    assert isinstance(got, (tuple, list)) and len(got) == len(moves), (
        f'hand_trace() returned {got!r}; it must return {len(moves)} values, one for each of x\'s moves '
        f'{", ".join(map(str, moves))}, in that order')
    for move, value, truth in zip(moves, got, reference_hand_trace()):
        assert value == truth, (
            f'Your value for x playing {move} is {value!r}, but minimax gives {truth}: trace o\'s replies to '
            f'that move again (o takes the lowest value), from\n{picture(TRACE_BOARD)}')


# --- task 5: count_games, reachable, canonical -------------------------------------------------------------

def count_games_totals(count_games):
    boards = [oracle.EMPTY_BOARD] + unfinished_sample()[::4] + finished_positions()[::50]
    for (board, player), got in each(count_games, 'count_games', _to_move(boards)):
        call = f'count_games(board, {player!r})'
        games = oracle.count_games(board, player)
        expected = (games['x'], games['o'], games['draw'])
        try:
            as_tuple = tuple(got)
        except TypeError:
            as_tuple = got
        assert as_tuple == expected, (
            f'{call} returned {got!r}, but the games that can follow are {expected} (x wins, o wins, draws; '
            f'{sum(expected)} in all) from\n{picture(board)}')


def _boards(got, call):
    try:
        boards = {tuple(tuple(row) for row in board) for board in got}
    except TypeError:
        raise AssertionError(f'{call} returned {got!r}; it must return a set of boards') from None
    return boards


def reachable_positions(reachable):
    starts = [oracle.EMPTY_BOARD] + list(oracle.reachable_positions()[::400])
    for (board, player), got in each(reachable, 'reachable', _to_move(starts)):
        call = f'reachable(board, {player!r})'
        assert isinstance(got, (set, frozenset)), f'{call} returned a {type(got).__name__}; it must return a set'
        boards = _boards(got, call)
        expected = reachable_from(board, player)
        missing, extra = sorted(expected - boards), sorted(boards - expected)
        assert not missing and not extra, (
            f'{call} returned {len(boards)} positions; {len(expected)} can be reached (the board itself and '
            f'finished boards included, nothing after a game ends). '
            + (f'Missing, e.g.:\n{picture(missing[0])}\n' if missing else '')
            + (f'Not reachable, e.g.:\n{picture(extra[0])}\n' if extra else '') + f'Starting from\n{picture(board)}')


def canonical_symmetry(canonical):
    positions = oracle.reachable_positions()
    classes, checked = set(), []
    for number, ((board,), got) in enumerate(each(canonical, 'canonical', [(board,) for board in positions],
                                                   first=calls.QUICK)):
        got = as_board(got)
        assert got in analysis.images(board), (
            f'canonical returned\n{picture(got)}\nwhich is not a rotation or reflection of\n{picture(board)}')
        classes.add(got)
        if number % 7 == 0:
            checked.extend((board, got, image) for image in analysis.images(board))
    for (board, got, image), (_, other) in zip(checked, each(canonical, 'canonical', [(c[2],) for c in checked],
                                                              first=calls.QUICK)):
        other = as_board(other)
        assert other == got, (
            f'canonical gives different boards for two rotations or reflections of the same position:\n'
            f'{picture(board)}\ngives\n{picture(got)}\nbut\n{picture(image)}\ngives\n{picture(other)}')
    assert len(classes) == analysis.symmetry_classes(), f'{len(classes)} classes instead of 765'
