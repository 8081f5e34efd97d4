"""Counts the grader accepts only with evidence (coursetools.checks.evidence): the trace of the search, replayed
against the rules of alpha-beta and of memoisation. Honest searches in styles the workbook's convention does not
spell out are accepted; counts forged by rewriting the grader's helper in the kernel earn nothing, graded through
`make grade` (grader_tests/evidence/). The same class has a notebook whose written question was deleted."""
import math

import nbformat
import pytest

from conftest import ROOT, copy_course, needs_sandbox, run_grade
from coursetools.checks import calls, evidence
from coursetools.checks.calls import Outcome
from coursetools.checks.positions import unfinished_sample
from coursetools.game import analysis, oracle
from coursetools.instructor import democlass, marks
from test_alpha_beta import reference_functions
from test_fairness import submission

INF = math.inf
HERE = ROOT / 'grader_tests' / 'evidence'
ASSIGNMENT = 'alpha_beta'
STUDENTS = sorted(path.stem for path in HERE.glob('*.py'))
KAY = ROOT / 'grader_tests' / 'fairness' / ASSIGNMENT / 'kay.py'
TASK_2 = ('alphabeta-values', 'alphabeta-moves', 'alphabeta-prunes', 'alphabeta-count')
TASK_3 = ('score_memo-values', 'score_memo-table')
# student: the cells of tasks 2 and 3 it loses (its header comment says why)
LOSES = {
    'fail_hard': set(),
    'stops_on_win': {'alphabeta-count'},
    'forged_count': {'alphabeta-prunes', 'alphabeta-count'},
    'forged_trace': {'alphabeta-prunes', 'alphabeta-count'},
    'forged_memo': {'score_memo-table'},
    'deleted_question': set(),
}
DELETED = {'deleted_question': ('written-question', 'perfect_opponent')}    # cells taken out of the notebook


@pytest.fixture(scope='module')
def ref():
    return reference_functions()


def traced(function, name, *arguments):
    (_, outcome), = calls.outcomes(function, name, [arguments], count=True)
    return outcome


def test_the_workbooks_searches_are_accepted_with_their_exact_counts(ref):
    for board in [oracle.EMPTY_BOARD] + unfinished_sample()[::40]:
        player = oracle.to_move(board)
        outcome = traced(ref['alphabeta'], 'alphabeta', board, player, -INF, INF)
        assert evidence.alphabeta_count(outcome, board, player) == analysis.alphabeta_visits(board, player)[1]
    outcome = traced(ref['score_memo'], 'score_memo', oracle.EMPTY_BOARD, 'x', {})
    assert evidence.memo_count(outcome, oracle.EMPTY_BOARD, 'x') == 16168


def test_a_count_without_its_trace_earns_nothing_and_one_too_large_to_trace_only_costs():
    with pytest.raises(AssertionError, match='without the trace'):
        evidence.alphabeta_count(_claimed(18297), oracle.EMPTY_BOARD, 'x')
    huge = evidence.TRACE_LIMIT + 1
    assert evidence.alphabeta_count(_claimed(huge), oracle.EMPTY_BOARD, 'x') == huge


def _claimed(count, trace=None):
    outcome = Outcome()
    outcome.count, outcome.trace = count, trace
    return outcome


@pytest.mark.parametrize('forgery, found', [
    (lambda rows: rows[:100], 'still open'),                                   # a real trace cut short
    (lambda rows: [rows[0]], 'still open'),                                    # the first call alone
    (lambda rows: rows[:1] + [rows[1].replace(';o;', ';x;', 1)] + rows[2:], 'moves next'),
    (lambda rows: [row.rsplit(';', 1)[0] + ';1' for row in rows], 'its value is'),
    (lambda rows: rows[:1] + ['0;' + rows[1].split(';', 1)[1]] * 2 + rows[3:], 'twice'),
    (lambda rows: ['-1;x        ;o;-inf;inf;0'] + rows[1:], 'not the one the grader made'),
    (lambda rows: rows[:5] + ['garbage'] + rows[6:], 'cannot be read'),
])
def test_a_forged_trace_is_refused_with_the_rule_it_breaks(ref, forgery, found):
    rows = traced(ref['alphabeta'], 'alphabeta', oracle.EMPTY_BOARD, 'x', -INF, INF).trace
    forged = forgery(list(rows))
    with pytest.raises(AssertionError, match=found):
        evidence.alphabeta_count(_claimed(len(forged), forged), oracle.EMPTY_BOARD, 'x')


def without_calls_below(rows, top):
    """The trace with every call made (directly or not) from call `top` left out, the callers renumbered."""
    parents = [int(row.split(';', 1)[0]) for row in rows]
    dropped = set()
    for number, parent in enumerate(parents):
        if parent == top or parent in dropped:
            dropped.add(number)
    kept = [number for number in range(len(rows)) if number not in dropped]
    new = {old: position for position, old in enumerate(kept)}
    return [f'{new.get(parents[old], -1)};{rows[old].split(";", 1)[1]}' for old in kept]


def test_a_memo_count_that_leaves_out_a_search_is_refused(ref):
    board = (('x', 'o', ' '), (' ', 'x', ' '), (' ', ' ', 'o'))       # x to move; paths cross below
    outcome = traced(ref['score_memo'], 'score_memo', board, 'x', {})
    assert evidence.memo_count(outcome, board, 'x') == outcome.count < oracle.search_tree_size(board, 'x') == 238
    first_child = next(number for number, row in enumerate(outcome.trace) if row.startswith('0;'))
    forged = without_calls_below(outcome.trace, first_child)
    with pytest.raises(AssertionError, match='had not met the board before'):
        evidence.memo_count(_claimed(len(forged), forged), board, 'x')


def test_a_plain_search_shows_its_true_count_and_no_more(ref):
    namespace = dict(ref)
    exec('def score_memo(state, player, known):\n'
         '    end = score_end(state)\n'
         '    if end is not None:\n'
         '        return end, None\n'
         '    values = [score_memo(play(state, r, c, player), other(player), known)[0] for r, c in moves(state)]\n'
         '    return (max(values) if player == "x" else min(values)), None\n', namespace)
    board = (('x', 'o', ' '), (' ', 'x', ' '), (' ', ' ', 'o'))
    outcome = traced(namespace['score_memo'], 'score_memo', board, 'x', {})
    assert evidence.memo_count(outcome, board, 'x') == 238


@pytest.fixture(scope='module')
def lost(tmp_path_factory):
    """{student: {grade_id of tasks 2 and 3: marks lost}} after `make grade`."""
    course = copy_course(tmp_path_factory.mktemp('evidence') / 'course', students=[])
    preamble, kay = democlass.read_answers(KAY)
    release = nbformat.read(ROOT / 'release' / ASSIGNMENT / f'{ASSIGNMENT}.ipynb', as_version=4)
    for student in STUDENTS:
        _, own = democlass.read_answers(HERE / f'{student}.py')
        folder = submission(course / 'submitted' / student / ASSIGNMENT, ASSIGNMENT, 'kay')
        notebook = democlass.fill(release, preamble, {**kay, **own})
        notebook.cells = [cell for cell in notebook.cells if cell.get('id') not in DELETED.get(student, ())]
        nbformat.write(notebook, folder / f'{ASSIGNMENT}.ipynb')
        (folder / 'timestamp.txt').write_text(democlass.TIMESTAMP + '\n')
    result = run_grade(course, ASSIGNMENT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    _, maxima, scores, _ = marks.scores_by_cell('sqlite:///' + str(course / 'gradebook.db'), ASSIGNMENT)
    return {student: {cell for cell in TASK_2 + TASK_3 if (scores[student].get(cell) or 0) < maxima[cell]}
            for student in STUDENTS}


@needs_sandbox
@pytest.mark.parametrize('student', sorted(LOSES))
def test_counts_earn_marks_only_with_a_search_that_shows_them(lost, student):
    assert lost[student] == LOSES[student]
