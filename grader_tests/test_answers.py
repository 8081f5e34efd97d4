"""What crosses from a student's kernel to the trusted checker: plain data only, read with the checker's own types,
so that no object of the student's can reach a comparison. The kernel's side (coursetools.sandbox.inside.kernel_agent) is run
here as it runs in a kernel, on a namespace of student functions; the checker's side (coursetools.judge.answers) reads
its JSON."""
import json
import math

import numpy
import pytest

from coursetools.game import analysis
from coursetools.judge import answers
from coursetools.judge import checker_plan
from coursetools.sandbox.inside import kernel_agent
from coursetools.game import oracle
from coursetools.checks import alpha_beta, noughts_and_crosses


def ask(namespace, function, calls, **options):
    """One request served by the kernel's agent, read back by the checker: the first call's outcome."""
    request = json.dumps({'function': function, 'calls': answers.encode_calls(calls), **options})
    entry = answers.decode(kernel_agent.answer(namespace, request))['results'][0]
    return entry['!'] if isinstance(entry, dict) and set(entry) == {'!'} else {'value': entry}


def test_plain_values_cross_unchanged():
    values = [None, True, 0, -1, 2 ** 80, 1.5, math.inf, -math.inf, 'x', '', (), ((' ', 'x', 'o'),) * 3,
              [(0, 1), (2, 2)], {(1, 2), (0, 0)}, frozenset({'a'}), {(('x',),): (1, None), 'key': [1.0]}]
    for value in values:
        got = answers.decode(json.dumps(kernel_agent.encode(value, [1000])))
        assert got == value and type(got) is type(value), value
    nan = answers.decode(json.dumps(kernel_agent.encode(math.nan, [10])))
    assert type(nan) is float and math.isnan(nan)


def test_numpy_values_become_their_plain_equivalents():
    namespace = {'moves': lambda state: list(zip(*numpy.where(numpy.array(state) == ' '))),
                 'score': lambda state, player: (numpy.int64(1), (numpy.int64(0), numpy.int32(2)))}
    got = ask(namespace, 'moves', [(oracle.EMPTY_BOARD,)])['value']
    assert got == [(r, c) for r in range(3) for c in range(3)] and all(type(i) is int for move in got for i in move)
    assert ask(namespace, 'score', [(oracle.EMPTY_BOARD, 'x')])['value'] == (1, (0, 2))


def test_an_object_that_equals_everything_is_refused():
    class Anything:
        def __eq__(self, other):
            return True
        __hash__ = object.__hash__

    namespace = {'score': lambda state, player: (Anything(), None), 'score_end': lambda state: Anything()}
    for function, calls in (('score', [(oracle.EMPTY_BOARD, 'x')]), ('score_end', [(oracle.EMPTY_BOARD,)])):
        result = ask(namespace, function, calls)
        assert 'value' not in result and result['refused'] == 'Anything'


def test_a_subclass_arrives_as_what_it_holds_with_honest_comparisons():
    class Verdict(str):
        def __eq__(self, other):
            return True
        __hash__ = str.__hash__

    class Board(tuple):
        def __eq__(self, other):
            return True
        __hash__ = tuple.__hash__

    namespace = {'score_end': lambda state: Verdict('1'), 'play': lambda *args: Board((('?',) * 3,) * 3)}
    verdict = ask(namespace, 'score_end', [(oracle.EMPTY_BOARD,)])['value']
    assert type(verdict).__name__ == 'Verdict' and verdict != 1 and verdict == '1' and isinstance(verdict, str)
    board = ask(namespace, 'play', [(oracle.EMPTY_BOARD, 0, 0, 'x')])['value']
    assert type(board).__name__ == 'Board' and type(board) is not tuple
    assert board != oracle.place(oracle.EMPTY_BOARD, 0, 0, 'x') and board == (('?',) * 3,) * 3


def test_a_lying_iterator_is_read_with_the_base_type():
    class Stuffed(list):
        def __iter__(self):
            return iter([(0, 0)])
        def __len__(self):
            return 1

    value = ask({'moves': lambda state: Stuffed()}, 'moves', [(oracle.EMPTY_BOARD,)])['value']
    assert list.__len__(value) == 0 and value == []


@pytest.mark.parametrize('text', ['', '{', '[1, 2', '{"results": [{"t": 3}]}', '{"results": [{"g": [1]}]}',
                                  '{"results": [{"sub": "1x", "of": "tuple", "v": []}]}',
                                  '{"results": [{"sub": "B", "of": "object", "v": 1}]}',
                                  '{"results": [{"d": [[[1], 2]]}]}', '[' * 100_000])
def test_malformed_answers_are_refused(text):
    with pytest.raises(answers.AnswerError):
        reply = answers.decode(text)
        if isinstance(reply, dict):
            raise answers.AnswerError('decoded')


def test_an_error_arrives_with_the_students_traceback_and_nothing_of_the_grader():
    namespace = {}
    exec(compile('def score_end(state):\n    return state[3]\n', '/tmp/ipykernel_1/cell.py', 'exec'), namespace)
    result = ask(namespace, 'score_end', [(oracle.EMPTY_BOARD,)])
    assert result['error']['type'] == 'IndexError'
    assert 'cell.py' in result['error']['traceback'] and kernel_agent.FILENAME not in result['error']['traceback']
    error = answers.student_error(result['error'])
    assert type(error).__name__ == 'IndexError' and isinstance(error, answers.StudentError)


def given_to_the_kernel(name, own=None):
    """`name` as the kernel gets it while another function is tested: the agent's lookup in the checker's table
    (sent as compressed JSON text, values only); `own`: the student's own function of that name (its parameters'
    names)."""
    reference, arguments = alpha_beta.KERNEL_ANSWERS[name]
    table = kernel_agent.read_table(checker_plan.answer_table(reference, arguments))
    assert all(isinstance(value, str) for value in table.values())
    text = json.dumps(table)
    assert 'def ' not in text and 'lambda' not in text and 'return' not in text
    return kernel_agent._answering(name, table, own or reference)


def test_the_answers_the_kernel_may_use_agree_with_the_oracle_for_every_shape_of_board():
    functions = {name: given_to_the_kernel(name) for name in alpha_beta.KERNEL_ANSWERS}
    for board in oracle.reachable_positions()[::7]:
        for shape in (board, [list(row) for row in board], numpy.array(board)):
            assert functions['score_end'](shape) == oracle.outcome(board)
            assert functions['moves'](shape) == oracle.empty_cells(board)
            if oracle.empty_cells(board):
                row, col = oracle.empty_cells(board)[-1]
                assert functions['play'](shape, numpy.int64(row), col, 'o') == oracle.place(board, row, col, 'o')
            assert math.isclose(functions['evaluate'](shape), analysis.evaluation(board), abs_tol=1e-12)
            (a, b, c), (d, e, f), (g, h, i) = board
            assert functions['lines'](shape) == [(a, b, c), (d, e, f), (g, h, i), (a, d, g), (b, e, h), (c, f, i),
                                                 (a, e, i), (c, e, g)]
    assert functions['other']('x') == 'o' and functions['other']('o') == 'x'
    assert set(noughts_and_crosses.KERNEL_ANSWERS) < set(alpha_beta.KERNEL_ANSWERS)


def test_a_given_function_returns_a_fresh_value_and_refuses_what_it_has_no_answer_for():
    moves = given_to_the_kernel('moves')
    first = moves(oracle.EMPTY_BOARD)
    first.clear()                                           # a caller that changes the list it got
    assert len(moves(oracle.EMPTY_BOARD)) == 9
    play = given_to_the_kernel('play')
    with pytest.raises(LookupError, match='no game reaches this.*moved twice'):
        play((('x', 'x', 'x'), ('x', 'x', 'x'), ('x', 'x', ' ')), 2, 2, 'o')     # a position no game reaches
    with pytest.raises(LookupError):
        moves([[1, 2, 3]])
    board = (('x', 'o', ' '), (' ', 'x', ' '), (' ', ' ', ' '))         # a search that undoes a move
    assert play(board, 1, 1, ' ') == (('x', 'o', ' '), (' ', ' ', ' '), (' ', ' ', ' '))


def test_a_given_function_takes_arguments_by_keyword_as_the_students_own_function_names_them():
    def play(board, r, c, mark='x'):
        raise AssertionError('the given play answers, not this one')

    given = given_to_the_kernel('play', own=play)
    assert given(oracle.EMPTY_BOARD, c=2, r=0) == given(oracle.EMPTY_BOARD, 0, 2, 'x') == oracle.place(
        oracle.EMPTY_BOARD, 0, 2, 'x')
    with pytest.raises(TypeError, match="argument: 'r'"):
        given(oracle.EMPTY_BOARD, row=0, c=2)


def test_only_what_a_task_needs_is_given_to_the_kernel():
    given = {task: set(context.get('replace', ())) for task, context in noughts_and_crosses.KERNEL_CONTEXT.items()}
    assert given == {'print_state': set(), 'score_end': {'moves'}, 'play': set(), 'moves': set(),
                     'score': {'score_end', 'moves', 'play'}, 'perfect_game': set()}
    assert 'score' not in noughts_and_crosses.KERNEL_ANSWERS      # the minimax itself is never given
