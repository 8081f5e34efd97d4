"""A stub earns nothing (issue 22).

A function that is still a stub (it raises NotImplementedError, returns its first argument unchanged, returns None,
or returns one constant whatever it is given) must get 0 for its task, while everything else in the notebook keeps
its marks. A small class of stubbed notebooks, built from demo student ada's correct answers, is graded once
through `make grade`'s code path; the helper that the hidden checks use against stubs is tested on its own, fast.
"""

import nbformat
import pytest

from conftest import ROOT, copy_course, needs_sandbox, run_grade
from coursetools.judge import answers
from coursetools.instructor import democlass
from coursetools.instructor import marks
from coursetools.game import oracle
from coursetools.checks import alpha_beta as hidden_alpha_beta
from coursetools.checks import calls
from coursetools.checks import noughts_and_crosses as hidden
from test_hostile import filled, with_answers

KINDS = ('raises', 'input', 'none', 'constant')

# function: (parameters, the constant its constant stub returns: the one that fits most of the visible tests)
SIGNATURES = {
    'noughts_and_crosses': {
        'print_state': ('state', None),      # its constant stub prints the same board for every board
        'score_end': ('state', '0'),
        'play': ('state, row, col, mark', 'EMPTY_BOARD'),
        'moves': ('state', '[(r, c) for r in range(3) for c in range(3)]'),
        'score': ('state, player', '0, None'),
        'perfect_game': ('', '0'),
    },
    'alpha_beta': {
        'score_counted': ('state, player', '0, None, 1'),
        'alphabeta': ('state, player, alpha, beta', '0, None'),
        'score_memo': ('state, player, known', '0, None'),
        'evaluate': ('state', '0'),
        'score_depth': ('state, player, depth', '0, None'),
        'count_games': ('state, player', '0, 0, 0'),
        'reachable': ('state, player', 'set()'),
        'canonical': ('state', 'EMPTY_BOARD'),
        'hand_trace': ('', '0, 0, 0'),
    },
}
MAXIMA = {
    'noughts_and_crosses': {'print_state': 1, 'score_end': 3, 'play': 2, 'moves': 1, 'score': 3, 'perfect_game': 2},
    'alpha_beta': {'score_counted': 2, 'hand_trace': 1, 'alphabeta': 4, 'score_memo': 2, 'evaluate': 1,
                   'score_depth': 2, 'perfect_opponent': 0, 'count_games': 1, 'reachable': 1, 'canonical': 1},
}                   # perfect_opponent: the written answer (2 marks) waits for a grader, so 0 in every total
# The functions stubbed together in one notebook: tasks whose marks do not depend on each other (each is tested
# with correct versions of the others). perfect_game plays with the student's own functions, so it loses its
# marks whenever any of them is a stub; it is stubbed itself only next to functions it does not need to be
# judged (a stub calls nothing).
GROUPS = {
    'noughts_and_crosses': (('print_state', 'play', 'score'), ('score_end', 'moves', 'perfect_game')),
    'alpha_beta': (('score_counted', 'score_memo', 'score_depth', 'reachable'),
                   ('alphabeta', 'evaluate', 'count_games', 'canonical', 'hand_trace')),
}


def stub(assignment, name, kind):
    """The source of `name` as a stub of this kind; None where the kind makes no sense (perfect_game has no
    argument to return)."""
    parameters, constant = SIGNATURES[assignment][name]
    if kind == 'raises':
        body = 'raise NotImplementedError()'
    elif kind == 'input':
        if not parameters:
            return None
        body = f'return {parameters.split(",")[0]}'
    elif kind == 'none':
        body = 'return None'
    elif constant is None:
        body = r"print(' | |\n | |\n | |')"
    else:
        body = f'return {constant}'
    return f'def {name}({parameters}):\n    """A stub ({kind})."""\n    {body}\n'


def alpha_beta_notebook(changes):
    """Demo student ada's alpha_beta notebook with `changes` ({grade_id: source}) in its solution cells."""
    preamble, correct = democlass.read_answers(ROOT / 'demo_class' / 'alpha_beta' / 'ada.py')
    release = nbformat.read(ROOT / 'release' / 'alpha_beta' / 'alpha_beta.ipynb', as_version=4)
    return democlass.fill(release, preamble, {**correct, **changes})


def stubbed_students():
    """{student: (assignment, notebook, {task: expected marks}, the functions stubbed)}."""
    students = {}
    for assignment, groups in GROUPS.items():
        for kind in KINDS:
            for number, group in enumerate(groups, 1):
                changes = {name: stub(assignment, name, kind) for name in group if stub(assignment, name, kind)}
                if assignment == 'noughts_and_crosses':
                    notebook = filled(*with_answers(**changes))
                else:
                    notebook = alpha_beta_notebook(changes)
                expected = {task: 0 if task in changes else full for task, full in MAXIMA[assignment].items()}
                if assignment == 'noughts_and_crosses':
                    expected['perfect_game'] = 0      # it plays with the stubs
                students[f'{assignment}_{kind}_{number}'] = assignment, notebook, expected, sorted(changes)
    return students


STUDENTS = stubbed_students()


def test_the_class_covers_every_function_and_every_kind_of_stub():
    assert 12 <= len(STUDENTS) <= 16
    covered = {(assignment, name, student.split('_')[-2]) for student, (assignment, _, _, names) in STUDENTS.items()
               for name in names}
    for assignment, functions in SIGNATURES.items():
        for name in functions:
            for kind in KINDS:
                assert (assignment, name, kind) in covered or stub(assignment, name, kind) is None, (name, kind)


@pytest.fixture(scope='module')
def stub_class(tmp_path_factory):
    course = copy_course(tmp_path_factory.mktemp('stubs') / 'course', students=())
    for student, (assignment, notebook, _, _) in STUDENTS.items():
        folder = course / 'submitted' / student / assignment
        folder.mkdir(parents=True)
        nbformat.write(notebook, folder / f'{assignment}.ipynb')
        (folder / 'timestamp.txt').write_text(democlass.TIMESTAMP + '\n')
    # the course's own cell limit (nbgrader_config.py): with a 6-s limit of its own this class lost canonical's
    # mark under the parallel suite's load, where checking a correct canonical (11,000 calls) took longer
    result = run_grade(course)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return course


@needs_sandbox
@pytest.mark.parametrize('student', sorted(STUDENTS))
def test_a_stub_earns_nothing_and_costs_nothing_else(stub_class, student):
    assignment, _, expected, stubbed = STUDENTS[student]
    table, _ = marks.marks_by_task('sqlite:///' + str(stub_class / 'gradebook.db'), assignment)
    got = {task: int(score) for task, score in table[student].items()}
    assert got == expected, f'stubbed {stubbed}: ' + ', '.join(
        f'{task} {got[task]} (expected {expected[task]})' for task in expected if got[task] != expected[task])


# --- the helper and the checks that use it, in the instructor's own kernel (fast) -------------------------------

def stub_function(assignment, name, kind):
    namespace = {'EMPTY_BOARD': oracle.EMPTY_BOARD}
    exec(stub(assignment, name, kind), namespace)
    return namespace[name]


MOVES = [(board, row, col, 'x') for board in oracle.reachable_positions()[::500]
         for row, col in oracle.empty_cells(board)[:1]]
MESSAGES = {
    'raises': 'still raises NotImplementedError',
    'input': 'returned its first argument unchanged for every board',
    'none': 'returned None for every board',
    'constant': r'returned the same value, \(\(. ., . ., . .\), .*, for every board',
}


@pytest.mark.parametrize('kind', KINDS)
def test_the_helper_names_the_function_and_the_kind_of_stub(kind):
    play = stub_function('noughts_and_crosses', 'play', kind)
    with pytest.raises(AssertionError, match=r'^`play` looks unfinished: it ' + MESSAGES[kind]):
        calls.require_not_a_stub('play', calls.outcomes(play, 'play', MOVES))


def test_the_helper_passes_a_correct_function_and_gives_its_outcomes_back():
    got = calls.require_not_a_stub('play', calls.outcomes(oracle.place, 'play', MOVES))
    assert [arguments for arguments, _ in got] == MOVES
    assert [outcome.value for _, outcome in got] == [oracle.place(*arguments) for arguments in MOVES]


def test_one_call_that_answers_is_enough_to_pass():
    def mostly_unchanged(state, row, col, mark):
        return oracle.place(state, row, col, mark) if state == MOVES[-1][0] else state

    def mostly_none(state, row, col, mark):
        return oracle.place(state, row, col, mark) if state == MOVES[0][0] else None

    for play in (mostly_unchanged, mostly_none):
        assert len(calls.require_not_a_stub('play', calls.outcomes(play, 'play', MOVES))) == len(MOVES)


def test_other_errors_are_left_to_the_checks_and_a_not_implemented_error_from_the_kernel_counts():
    def unfinished_then_broken(state, row, col, mark):
        if state == MOVES[0][0]:
            raise ValueError('a bug')
        raise NotImplementedError

    got = calls.require_not_a_stub('play', calls.outcomes(unfinished_then_broken, 'play', MOVES))
    assert isinstance(got[0][1].error, ValueError)
    from_kernel = answers.student_error({'type': 'NotImplementedError', 'message': '', 'traceback': ''})
    with pytest.raises(AssertionError, match='still raises NotImplementedError'):
        calls.require_not_a_stub('score', [(arguments, calls.Outcome(error=from_kernel)) for arguments in MOVES])


def test_boards_given_back_as_lists_or_arrays_are_compared_as_boards():
    import numpy
    as_lists = lambda state, row, col, mark: [list(r) for r in state]
    with pytest.raises(AssertionError, match='first argument unchanged'):
        calls.require_not_a_stub('play', calls.outcomes(as_lists, 'play', MOVES), normal=hidden._as_board)
    as_array = lambda state, row, col, mark: numpy.array(oracle.place(state, row, col, mark))
    calls.require_not_a_stub('play', calls.outcomes(as_array, 'play', MOVES))      # compared element-wise: no stub


def test_one_call_or_no_argument_is_never_taken_for_a_constant_or_the_input():
    calls.require_not_a_stub('perfect_game', [((), calls.Outcome(value=0))])
    calls.require_not_a_stub('play', [(MOVES[0], calls.Outcome(value=oracle.place(*MOVES[0])))])
    calls.require_not_a_stub('play', [])


@pytest.mark.parametrize('kind', KINDS)
def test_play_types_and_alphabeta_prunes_now_reject_every_stub(kind):
    with pytest.raises(AssertionError, match='^`play` looks unfinished'):
        hidden.play_types(stub_function('noughts_and_crosses', 'play', kind))
    alphabeta = stub_function('alpha_beta', 'alphabeta', kind)
    # A stub that raises fails at its first call already, with the error it raised.
    expected = 'NotImplementedError' if kind == 'raises' else '^`alphabeta` looks unfinished'
    with pytest.raises(AssertionError, match=expected):
        hidden_alpha_beta.alphabeta_prunes(alphabeta)


def test_play_types_and_alphabeta_prunes_still_pass_correct_answers(reference):
    hidden.play_types(reference['play'])
    with pytest.raises(AssertionError, match='called once'):        # an answer looked up shows no pruning
        hidden_alpha_beta.alphabeta_prunes(hidden_alpha_beta.reference_alphabeta)
    from test_alpha_beta import reference_functions
    workbook = reference_functions()
    before = workbook['alphabeta']
    hidden_alpha_beta.alphabeta_prunes(workbook['alphabeta'])
    assert workbook['alphabeta'] is before
