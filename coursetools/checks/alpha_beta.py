"""Hidden checks for the `alpha_beta` assignment (the second workbook: counting, alpha-beta, memoization,
depth limits and game analysis).

Same rules as coursetools.checks.noughts_and_crosses, whose helpers this module reuses:

* `isolate` makes one mistake cost one task: while one function is tested, every other function of the notebook
  (last week's given ones and this week's) is a reference version until the test cell ends.
* Searches whose answers depend only on their arguments (`score_counted`, `score_depth`, `count_games`) are
  memoized while tested, so slow but correct code is searched once per position. Because `score_counted`
  *returns* its count, memoizing it keeps the counts exact.
* `alphabeta` is never memoized: its pruning is measured by counting its calls, with the name `alphabeta`
  in the notebook's globals pointed at a counting wrapper for the duration of one top-level call.

Every check raises AssertionError with a message naming the board it failed on.
"""
import contextlib
import inspect
import math

from coursetools import analysis, oracle
from coursetools.checks import noughts_and_crosses as base
from coursetools.checks.noughts_and_crosses import _as_move, _call, _function, picture

GIVEN = ('print_state', 'score_end', 'play', 'moves', 'score', 'other')
FUNCTIONS = ('score_counted', 'alphabeta', 'score_memo', 'evaluate', 'score_depth', 'count_games', 'reachable',
             'canonical')
MEMOIZED = ('score_counted', 'score_depth', 'count_games')
_MISSING = object()
INF = math.inf


# --- reference versions, used while another function is under test -------------------------------------

def _best_move(board, player):
    best = oracle.optimal_moves(board, player)
    return best[0] if best else None


def reference_score_counted(state, player):
    return oracle.value(state, player), _best_move(state, player), oracle.search_tree_size(state, player)


def reference_alphabeta(state, player, alpha, beta):
    return oracle.value(state, player), _best_move(state, player)


def reference_score_memo(state, player, known):
    result = (oracle.value(state, player), _best_move(state, player))
    known[state] = result
    return result


def reference_score_depth(state, player, depth):
    value = analysis.depth_value(state, player, depth)
    if oracle.outcome(state) is not None or depth == 0:
        return value, None
    for row, col in oracle.empty_cells(state):
        if analysis.depth_value(oracle.place(state, row, col, player), oracle.other(player), depth - 1) == value:
            return value, (row, col)


def reference_count_games(state, player):
    games = oracle.count_games(state, player)
    return games['x'], games['o'], games['draw']


def reference_reachable(state, player):
    return _reachable(state, player)


def reference_canonical(state):
    return min(analysis.images(state))


REFERENCE = dict(base.REFERENCE, other=oracle.other, score_counted=reference_score_counted,
                 alphabeta=reference_alphabeta, score_memo=reference_score_memo, evaluate=analysis.evaluation,
                 score_depth=reference_score_depth, count_games=reference_count_games,
                 reachable=reference_reachable, canonical=reference_canonical)


# --- isolation --------------------------------------------------------------------------------------------

def isolate(namespace, testing):
    """Swap every function but `testing` for its reference version until the current cell ends.

    The function under test is memoized if its answers depend on its arguments only. Returns a function that
    undoes the change (it also runs by itself when the IPython cell ends, even if the cell fails)."""
    replacements = {name: REFERENCE[name] for name in GIVEN + FUNCTIONS if name != testing}
    own = namespace.get(testing, _MISSING)
    if testing in MEMOIZED and callable(own):
        base._clear_student_cache(own)
        replacements[testing] = base.memoized(own, 'alpha_beta')
    return base.replace_until_cell_ends(namespace, replacements)


@contextlib.contextmanager
def counting_calls(function, name):
    """Count the calls of `function` made through its global `name` (its recursion) plus the first one."""
    counter = {'calls': 0}
    module_globals = getattr(inspect.unwrap(function), '__globals__', None)

    def counted(*args, **kwargs):
        counter['calls'] += 1
        return function(*args, **kwargs)

    swapped = isinstance(module_globals, dict) and module_globals.get(name) is function
    if swapped:
        module_globals[name] = counted
    try:
        yield counted, counter
    finally:
        if swapped and module_globals.get(name) is counted:
            module_globals[name] = function


def count_calls(function, name, *args):
    """(result, calls) of one top-level call, recursive calls through the global name included."""
    with counting_calls(_function(function, name), name) as (counted, counter):
        result = _call(counted, name, *args)
    return result, counter['calls']


# --- positions used by the checks -------------------------------------------------------------------------

def unfinished_sample():
    return base.unfinished_sample()


def warm_up():
    """See `noughts_and_crosses.warm_up`."""
    base.warm_up()


def finished_positions():
    return base.finished_positions()


def _reachable(state, player):
    seen, stack = set(), [(state, player)]
    while stack:
        board, mark = stack.pop()
        if board in seen:
            continue
        seen.add(board)
        if oracle.outcome(board) is None:
            stack.extend((oracle.place(board, r, c, mark), oracle.other(mark)) for r, c in oracle.empty_cells(board))
    return seen


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _pair(got, call):
    assert isinstance(got, tuple) and len(got) == 2, f'{call} returned {got!r}; it must return (value, move)'
    return got


def _check_move(move, board, player, call, best):
    cell = _as_move(move)
    where = f'{call} chose the move {move!r} for\n{picture(board)}\n'
    assert cell is not None, f'{where}but a move must be a (row, col) tuple of two integers'
    assert cell in oracle.empty_cells(board), f'{where}but that is not an empty cell'
    assert cell in best, f'{where}but the best moves for {player} are {best}'


# --- task 1: score_counted --------------------------------------------------------------------------------

def _triple(got, call):
    assert isinstance(got, tuple) and len(got) == 3, (
        f'{call} returned {got!r}; it must return (value, move, positions)')
    return got


def score_counted_values(score_counted):
    for board in finished_positions()[::5]:
        for player in 'xo':
            call = f'score_counted(board, {player!r})'
            value, move, _ = _triple(_call(score_counted, 'score_counted', board, player), call)
            expected = oracle.outcome(board)
            assert move is None and _is_number(value) and value == expected, (
                f'The game is over, so {call} should return ({expected}, None, 1), not ({value!r}, {move!r}, ...) '
                f'for\n{picture(board)}')
    for board in unfinished_sample() + [oracle.EMPTY_BOARD]:
        player = oracle.to_move(board)
        call = f'score_counted(board, {player!r})'
        value, move, _ = _triple(_call(score_counted, 'score_counted', board, player), call)
        expected = oracle.value(board, player)
        assert _is_number(value) and value == expected, (
            f'{call} gave the value {value!r}, but the minimax value is {expected} for\n{picture(board)}')
        _check_move(move, board, player, call, oracle.optimal_moves(board, player))


def score_counted_positions(score_counted):
    for board in finished_positions()[::5]:
        player = oracle.to_move(board)
        *_, count = _triple(_call(score_counted, 'score_counted', board, player), 'score_counted')
        assert count == 1, (f'score_counted counted {count!r} positions on a finished board; it visits just that '
                            f'one board, so the count is 1:\n{picture(board)}')
    for board in unfinished_sample() + [oracle.EMPTY_BOARD]:
        player = oracle.to_move(board)
        call = f'score_counted(board, {player!r})'
        *_, count = _triple(_call(score_counted, 'score_counted', board, player), call)
        expected = oracle.search_tree_size(board, player)
        assert count == expected, (
            f'{call} counted {count!r} positions, but a plain minimax visits {expected} (the board itself and '
            f'every position below it, finished ones included) from\n{picture(board)}')


# --- task 2: alphabeta ------------------------------------------------------------------------------------

def _alphabeta_sample():
    return [oracle.EMPTY_BOARD] + unfinished_sample()[::3]


def alphabeta_values(alphabeta):
    for board in finished_positions()[::5]:
        player = oracle.to_move(board)
        call = f'alphabeta(board, {player!r}, -INF, INF)'
        value, move = _pair(_call(alphabeta, 'alphabeta', board, player, -INF, INF), call)
        expected = oracle.outcome(board)
        assert move is None and _is_number(value) and value == expected, (
            f'The game is over, so {call} should return ({expected}, None), not ({value!r}, {move!r}), for\n'
            f'{picture(board)}')
    for board in _alphabeta_sample():
        player = oracle.to_move(board)
        call = f'alphabeta(board, {player!r}, -INF, INF)'
        value, _ = _pair(_call(alphabeta, 'alphabeta', board, player, -INF, INF), call)
        expected = oracle.value(board, player)
        assert _is_number(value) and value == expected, (
            f'{call} gave the value {value!r}, but minimax gives {expected} for\n{picture(board)}')


def alphabeta_moves(alphabeta):
    for board in _alphabeta_sample():
        player = oracle.to_move(board)
        call = f'alphabeta(board, {player!r}, -INF, INF)'
        _, move = _pair(_call(alphabeta, 'alphabeta', board, player, -INF, INF), call)
        _check_move(move, board, player, call, oracle.optimal_moves(board, player))


def alphabeta_prunes(alphabeta):
    plain = oracle.search_tree_size(oracle.EMPTY_BOARD, 'x')
    _, calls = count_calls(alphabeta, 'alphabeta', oracle.EMPTY_BOARD, 'x', -INF, INF)
    assert calls < plain / 2, (
        f'From the empty board alphabeta visited {calls} positions, but a plain minimax visits {plain}: it should '
        f'prune most of them. Does it stop trying moves once alpha >= beta, and pass the narrowed window '
        f'(alpha, beta) to its recursive calls? (Recursive calls must be alphabeta(...) by name to be counted.)')
    for board in unfinished_sample()[::3]:
        player = oracle.to_move(board)
        _, calls = count_calls(alphabeta, 'alphabeta', board, player, -INF, INF)
        most = oracle.search_tree_size(board, player)
        assert calls <= most, (
            f'alphabeta(board, {player!r}, -INF, INF) visited {calls} positions, more than the {most} a plain '
            f'minimax visits from\n{picture(board)}')


def alphabeta_count(alphabeta):
    for board in _alphabeta_sample():
        player = oracle.to_move(board)
        _, calls = count_calls(alphabeta, 'alphabeta', board, player, -INF, INF)
        _, expected = analysis.alphabeta_visits(board, player)
        assert calls == expected, (
            f'alphabeta(board, {player!r}, -INF, INF) visited {calls} positions; with moves tried in the order '
            f'moves(state) gives them and a cut as soon as alpha >= beta it visits {expected}, from\n'
            f'{picture(board)}')


# --- task 3: score_memo -----------------------------------------------------------------------------------

def score_memo_values(score_memo):
    known = {}
    boards = [oracle.EMPTY_BOARD] + unfinished_sample() + finished_positions()[::5]
    for board in boards:
        player = oracle.to_move(board)
        call = f'score_memo(board, {player!r}, known)'
        value, move = _pair(_call(score_memo, 'score_memo', board, player, known), call)
        expected = oracle.value(board, player)
        assert _is_number(value) and value == expected, (
            f'{call} gave the value {value!r}, but the minimax value is {expected} for\n{picture(board)}')
        if oracle.outcome(board) is None:
            _check_move(move, board, player, call, oracle.optimal_moves(board, player))
        else:
            assert move is None, f'The game is over, so {call} should give the move None, not {move!r}, for\n{picture(board)}'


def score_memo_table(score_memo):
    known = {}
    _, calls = count_calls(score_memo, 'score_memo', oracle.EMPTY_BOARD, 'x', known)
    assert isinstance(known, dict) and len(known) == len(oracle.reachable_positions()), (
        f'After score_memo(EMPTY_BOARD, "x", known) the dictionary known holds {len(known)} entries; it should '
        f'hold one for each of the {len(oracle.reachable_positions())} positions the search reaches (finished '
        f'ones included). Store every answer in the dictionary you are given, not in a global one.')
    assert calls <= 16168, (
        f'score_memo was called {calls} times from the empty board; looking each position up in known before '
        f'searching it needs at most 16,168 calls (one per move between the 5,478 positions, plus the first).')


# --- task 4: evaluate and score_depth ---------------------------------------------------------------------

def evaluate_open_lines(evaluate):
    for board in oracle.reachable_positions():
        got = _call(evaluate, 'evaluate', board)
        expected = analysis.evaluation(board)
        assert _is_number(got) and math.isclose(got, expected, abs_tol=1e-9), (
            f'evaluate returned {got!r} but should return {expected:g} '
            f'(x has {analysis.open_lines(board, "x")} open lines, o has {analysis.open_lines(board, "o")}; '
            f'a finished board scores as score_end does) for\n{picture(board)}')


def score_depth_values(score_depth):
    for board in unfinished_sample()[::6] + finished_positions()[::25] + [oracle.EMPTY_BOARD]:
        player = oracle.to_move(board)
        for depth in (0, 1, 2, 3):
            call = f'score_depth(board, {player!r}, {depth})'
            value, move = _pair(_call(score_depth, 'score_depth', board, player, depth), call)
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
    for board in oracle.reachable_positions():
        if oracle.outcome(board) is not None:
            continue
        player = oracle.to_move(board)
        wins = _winning_cells(board, player)
        threats = _winning_cells(board, oracle.other(player))
        for depth in (1, 2):
            call = f'score_depth(board, {player!r}, {depth})'
            if wins:
                _, move = _pair(_call(score_depth, 'score_depth', board, player, depth), call)
                assert _as_move(move) in wins, (
                    f'{call} chose {move!r}, but {player} wins at once with {wins} on\n{picture(board)}')
            elif len(threats) == 1 and depth == 2:
                _, move = _pair(_call(score_depth, 'score_depth', board, player, depth), call)
                assert _as_move(move) == threats[0], (
                    f'{call} chose {move!r}, but {oracle.other(player)} threatens to win at {threats[0]}: a search '
                    f'two moves deep should see it and block, on\n{picture(board)}')


# --- task 5: count_games, reachable, canonical -------------------------------------------------------------

def count_games_totals(count_games):
    for board in [oracle.EMPTY_BOARD] + unfinished_sample()[::4] + finished_positions()[::50]:
        player = oracle.to_move(board)
        call = f'count_games(board, {player!r})'
        got = _call(count_games, 'count_games', board, player)
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
    for board in starts:
        player = oracle.to_move(board)
        call = f'reachable(board, {player!r})'
        got = _call(reachable, 'reachable', board, player)
        assert isinstance(got, (set, frozenset)), f'{call} returned a {type(got).__name__}; it must return a set'
        boards = _boards(got, call)
        expected = _reachable(board, player)
        missing, extra = sorted(expected - boards), sorted(boards - expected)
        assert not missing and not extra, (
            f'{call} returned {len(boards)} positions; {len(expected)} can be reached (the board itself and '
            f'finished boards included, nothing after a game ends). '
            + (f'Missing, e.g.:\n{picture(missing[0])}\n' if missing else '')
            + (f'Not reachable, e.g.:\n{picture(extra[0])}\n' if extra else '') + f'Starting from\n{picture(board)}')


def canonical_symmetry(canonical):
    classes = set()
    for number, board in enumerate(oracle.reachable_positions()):
        mirror_images = analysis.images(board)
        got = _call(canonical, 'canonical', board)
        try:
            got = tuple(tuple(row) for row in got)
        except TypeError:
            pass
        assert got in mirror_images, (
            f'canonical returned\n{picture(got)}\nwhich is not a rotation or reflection of\n{picture(board)}')
        for image in (mirror_images if number % 7 == 0 else ()):
            other = _call(canonical, 'canonical', image)
            try:
                other = tuple(tuple(row) for row in other)
            except TypeError:
                pass
            assert other == got, (
                f'canonical gives different boards for two rotations or reflections of the same position:\n'
                f'{picture(board)}\ngives\n{picture(got)}\nbut\n{picture(image)}\ngives\n{picture(other)}')
        classes.add(got)
    assert len(classes) == analysis.symmetry_classes(), f'{len(classes)} classes instead of 765'
