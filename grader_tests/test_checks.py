"""The hidden checks: they pass the reference solution, catch typical mistakes with a clear message, and keep
one mistake in one task. The oracle is checked against the numbers published in the source worksheets."""
import contextlib
import io
import re

import pytest

from coursetools.game import oracle
from coursetools.checks import noughts_and_crosses as hidden
from coursetools.checks.isolation import memoized


def test_oracle_agrees_with_the_published_numbers():
    assert len(oracle.reachable_positions()) == 5478
    assert oracle.search_tree_size(oracle.EMPTY_BOARD, 'x') - 1 == 549945   # moves considered from the start
    assert oracle.count_games() == {'x': 131184, 'o': 77904, 'draw': 46080}  # 255,168 games
    assert oracle.value(oracle.EMPTY_BOARD, 'x') == 0


def test_reference_solution_passes_every_check(reference, monkeypatch):
    # as the grader runs it: the student's score remembers each position (its recursion included)
    monkeypatch.setitem(reference, 'score', memoized(reference['score'], 'own'))
    hidden.print_state_format(reference['print_state'])
    hidden.score_end_rows_and_columns(reference['score_end'])
    hidden.score_end_diagonals(reference['score_end'])
    hidden.score_end_draws_and_unfinished(reference['score_end'])
    hidden.play_move(reference['play'])
    hidden.play_types(reference['play'])
    hidden.moves_empty_cells(reference['moves'])
    hidden.score_finished(reference['score'])
    hidden.score_values(reference['score'])
    hidden.score_moves(reference['score'])
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        result = reference['perfect_game']()
    hidden.perfect_game_boards(output.getvalue())
    hidden.perfect_game_result(output.getvalue(), result)


def test_score_end_checks_cover_every_reachable_position():
    kinds = [hidden._line_kinds(board) for board in oracle.reachable_positions()]
    assert len(kinds) == 5478 and set(kinds) == {'rows and columns', 'diagonals', 'no line'}


def test_a_missed_diagonal_names_the_board(reference):
    def no_anti_diagonal(state):
        if oracle.winning_lines(state) == [(2, 4, 6)]:  # its only line is the anti-diagonal
            return None if any(' ' in row for row in state) else 0
        return reference['score_end'](state)

    hidden.score_end_rows_and_columns(no_anti_diagonal)
    with pytest.raises(AssertionError, match=r'score_end returned (None|0) but should return -?1 for\n'):
        hidden.score_end_diagonals(no_anti_diagonal)


def test_print_state_is_lenient_on_blank_lines_and_trailing_spaces_only():
    def roomy(state):
        print()
        for row in state:
            print('|'.join(row) + '   ')
        print('\n')

    def capitals(state):
        for row in state:
            print('|'.join(row).upper())

    hidden.print_state_format(roomy)
    with pytest.raises(AssertionError, match='should print three rows') as failed:
        hidden.print_state_format(capitals)
    message = str(failed.value).splitlines()
    assert message[-4].split() == ['expected', 'printed']
    pairs = [re.split(r"(?<=')\s{2,}(?=')", line.replace('<- first difference', '').strip()) for line in message[-3:]]
    assert all(right == left.upper() for left, right in pairs), pairs
    differs = [left != right for left, right in pairs]
    assert [line.endswith('<- first difference') for line in message[-3:]] == [
        i == differs.index(True) for i in range(3)]
    assert sum(line.endswith('<- first difference') for line in message) == 1


def test_moves_accepts_numpy_integers_and_any_order_but_not_a_set():
    import numpy
    hidden.moves_empty_cells(lambda s: [tuple(numpy.int64(i) for i in m) for m in reversed(oracle.empty_cells(s))])
    with pytest.raises(AssertionError, match='must return a list'):
        hidden.moves_empty_cells(lambda s: set(oracle.empty_cells(s)))


def test_play_types_wants_tuples(reference):
    as_lists = lambda *args: [list(row) for row in reference['play'](*args)]
    hidden.play_move(as_lists)
    with pytest.raises(AssertionError, match='tuple of tuples'):
        hidden.play_types(as_lists)


def test_play_that_remembers_an_earlier_board_fails():
    remembered = [list(' ' * 3) for _ in range(3)]

    def sticky(state, row, col, mark):
        for r in range(3):
            for c in range(3):
                if state[r][c] != ' ':
                    remembered[r][c] = state[r][c]
        remembered[row][col] = mark
        return tuple(tuple(r) for r in remembered)

    with pytest.raises(AssertionError):
        hidden.play_move(sticky)


def test_score_that_picks_a_losing_move_is_explained():
    def careless(state, player):
        value, move = hidden.reference_score(state, player)
        others = [m for m in oracle.empty_cells(state) if m not in oracle.optimal_moves(state, player)]
        return value, (others[0] if others and move else move)

    hidden.score_values(careless)
    with pytest.raises(AssertionError, match='the best moves for'):
        hidden.score_moves(careless)


def test_isolate_swaps_in_references_and_restores_everything():
    def mine(state):
        return 'mine'

    namespace = {'score_end': mine, 'moves': 42}
    restore = hidden.isolate(namespace, testing='score')
    assert namespace['score_end'] is oracle.outcome and namespace['play'] is oracle.place
    assert namespace['moves'] is oracle.empty_cells
    assert 'score' not in namespace  # the student had no score: nothing to test, nothing to wrap
    restore()
    assert namespace == {'score_end': mine, 'moves': 42}


def test_memoized_score_is_called_once_per_position():
    calls = []

    def counting(state, player):
        calls.append(state)
        return hidden.reference_score(state, player)

    namespace = {'score': counting}
    restore = hidden.isolate(namespace, testing='score')
    board = oracle.reachable_positions()[100]          # x to move, and x wins
    first = namespace['score'](board, 'x')
    second = namespace['score'](board, 'x')
    restore()
    value, move = first
    assert value == oracle.value(board, 'x') == 1 and move in oracle.optimal_moves(board, 'x')    # the right answer
    assert second == first and calls == [board]        # the second from the memo: one call of the function
    assert namespace['score'] is counting


def test_boards_given_as_lists_are_remembered_too_and_never_confused_with_tuples():
    calls = []

    def counting(state, player):
        calls.append(state)
        return len(calls), type(state).__name__

    namespace = {'score': counting}
    restore = hidden.isolate(namespace, testing='perfect_game')
    board = oracle.reachable_positions()[100]
    as_lists = [list(row) for row in board]
    first = namespace['score'](as_lists, 'x')
    assert namespace['score']([list(row) for row in board], 'x') == first     # an equal list board: remembered
    assert namespace['score'](board, 'x') == (2, 'tuple')                    # the tuple board is another key
    assert namespace['score'](as_lists, 'o') == (3, 'list')
    restore()
    assert len(calls) == 3


def test_perfect_game_reading_rejects_o_first_and_needs_an_announcement(reference, monkeypatch):
    monkeypatch.setitem(reference, 'score', memoized(reference['score'], 'own'))      # the same game, sooner
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        reference['perfect_game']()
    text = output.getvalue()
    swapped = text.translate(str.maketrans('xo', 'ox'))
    with pytest.raises(AssertionError, match="It was x's turn"):
        hidden.perfect_game_boards(swapped)
    silent = '\n'.join(line for line in text.splitlines() if 'draw' not in line)
    hidden.perfect_game_boards(silent)
    with pytest.raises(AssertionError, match='announce the result'):
        hidden.perfect_game_result(silent, 0)
    with pytest.raises(AssertionError, match='should return 0'):
        hidden.perfect_game_result(text, None)


def demo_student(name):
    """A demo student's functions, from demo_class/noughts_and_crosses/<name>.py."""
    from coursetools.instructor import democlass
    from conftest import ROOT
    namespace = {'EMPTY_BOARD': oracle.EMPTY_BOARD}
    preamble, answers = democlass.read_answers(ROOT / 'demo_class' / 'noughts_and_crosses' / f'{name}.py')
    exec(preamble, namespace)
    for source in answers.values():
        exec(source, namespace)
    return namespace


def test_the_sample_for_score_has_positions_at_every_depth():
    depths = {9 - len(oracle.empty_cells(board)) for board in hidden.unfinished_sample()}
    assert depths == set(range(1, 9))
    assert all(oracle.outcome(board) is None for board in hidden.unfinished_sample())


def test_a_bug_only_in_the_first_moves_is_caught():
    oli = demo_student('oli')             # an opening book that loses after a corner: wrong only with one mark
    hidden.score_values(oli['score'])     # every position with one mark is a draw: the values are right
    with pytest.raises(AssertionError, match=r"score\(board, 'o'\) chose the move \(2, 2\)"):
        hidden.score_moves(oli['score'])


def test_messages_point_at_the_bug():
    def every_move_loses_gives_none(state, player):
        value = oracle.value(state, player)
        if {1: 'o', -1: 'x'}.get(value) == player:
            return value, None
        return value, (oracle.optimal_moves(state, player) or [None])[0]

    with pytest.raises(AssertionError, match='Every move loses for . here'):
        hidden.score_moves(every_move_loses_gives_none)

    def gives_up_on_won_boards(state):
        return [] if oracle.outcome(state) is not None else oracle.empty_cells(state)

    with pytest.raises(AssertionError, match='someone has already won on this board, but moves must still list'):
        hidden.moves_empty_cells(gives_up_on_won_boards)

    def from_the_player_to_move(state, player):
        value = oracle.value(state, player)
        return (value if player == 'x' else -value), (oracle.optimal_moves(state, player) or [None])[0]

    with pytest.raises(AssertionError, match='The sign is the wrong way round'):
        hidden.score_values(from_the_player_to_move)
