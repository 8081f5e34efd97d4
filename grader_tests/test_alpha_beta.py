"""The second workbook, alpha_beta: the reference notebook runs clean and fast, the counts it teaches are true,
and the demo class in demo_class/alpha_beta/ is graded, through `make grade`'s own code path, to exactly the marks
each student's header comment reasons out."""
import math

import nbformat
import pytest

from conftest import ROOT, run_all
from coursetools.game import analysis
from coursetools.instructor import marks
from coursetools.game import oracle

ASSIGNMENT = 'alpha_beta'
SOURCE = ROOT / 'source' / ASSIGNMENT
TASKS = ('score_counted', 'hand_trace', 'alphabeta', 'score_memo', 'evaluate', 'score_depth', 'perfect_opponent',
         'count_games', 'reachable', 'canonical')
WRITTEN = TASKS.index('perfect_opponent')     # marked by hand in formgrader: 0 for everyone until then
WAITING = ('ada', 'ben', 'cat', 'dan')        # wrote an answer for a grader; the others left it blank (0, by nbgrader)
MAXIMA = (2, 1, 4, 2, 1, 2, 2, 1, 1, 1)
# student: autograded marks per task, in TASKS order without the written one; the reasons are the header comments
# in demo_class/alpha_beta/<student>.py
AUTOGRADED = {
    'ada': (2, 1, 4, 2, 1, 2, 1, 1, 1),   # correct
    'ben': (2, 1, 4, 2, 1, 2, 1, 1, 1),   # correct but slow (deep copies, reachable visits every path)
    'cat': (1, 1, 4, 2, 1, 2, 1, 1, 1),   # finished boards counted as 0 positions
    'dan': (2, 1, 3, 2, 1, 2, 1, 1, 1),   # cuts at alpha > beta: prunes, but not by the convention
    'eve': (2, 1, 3, 1, 1, 2, 1, 1, 1),   # >= keeps a later, possibly worse move; memo in a global dict
    'fay': (2, 1, 2, 2, 0, 2, 1, 1, 1),   # alphabeta never prunes; evaluate guesses finished boards too
    'gus': (2, 1, 4, 2, 1, 1, 0, 1, 1),   # no heuristic at the horizon; count_games returns a dict
    'hal': (2, 1, 4, 2, 1, 2, 1, 0, 0),   # reachable returns a list; canonical forgets mirror images
    'ivy': (1, 0, 4, 2, 1, 2, 0, 1, 1),   # counts only finished boards; draws counted as o wins (hand trace too)
    'jon': (1, 1, 4, 1, 1, 2, 1, 1, 1),   # global running counter; memo stores unfinished boards only
    'max': (0, 0, 0, 0, 0, 0, 0, 0, 0),   # submitted the release untouched
}
EXPECTED = {student: row[:WRITTEN] + (0,) + row[WRITTEN:] for student, row in AUTOGRADED.items()}


def reference_functions():
    """The given cell and the solution cells of the source notebook (no measurements, no widget)."""
    nb = nbformat.read(SOURCE / f'{ASSIGNMENT}.ipynb', as_version=4)
    namespace = {'__name__': '__reference__'}
    for cell in nb.cells:
        meta = cell.metadata.get('nbgrader', {})
        if cell.cell_type == 'code' and (meta.get('solution') or cell.id in ('given', 'count-calls', 'symmetry-helpers')):
            exec(compile(cell.source, f'<{cell.id}>', 'exec'), namespace)
    return namespace


@pytest.fixture(scope='module')
def ref():
    return reference_functions()


# ---- the numbers the workbook teaches ------------------------------------------------------------------

def test_published_counts_are_true():
    assert oracle.search_tree_size(oracle.EMPTY_BOARD, 'x') == 549946
    assert analysis.alphabeta_visits(oracle.EMPTY_BOARD, 'x') == (0, 18297)
    assert analysis.alphabeta_visits(oracle.EMPTY_BOARD, 'x', -2, 2) == (0, 18297)
    assert len(oracle.reachable_positions()) == 5478
    assert oracle.count_games() == {'x': 131184, 'o': 77904, 'draw': 46080}
    assert sum(oracle.count_games().values()) == 255168
    assert analysis.symmetry_classes() == 765


def test_the_hand_trace_counts_are_true():
    """The hand-trace section's board, its values and the counts its prose gives, from the oracle."""
    from coursetools.checks.alpha_beta import TRACE_BOARD, reference_hand_trace
    nb = nbformat.read(SOURCE / f'{ASSIGNMENT}.ipynb', as_version=4)
    cells = {cell.get('id'): cell.source for cell in nb.cells}
    assert repr(TRACE_BOARD) in cells['trace-board'] and oracle.to_move(TRACE_BOARD) == 'x'
    moves = oracle.empty_cells(TRACE_BOARD)
    assert moves == [(0, 0), (0, 1), (1, 1)] and f'TRACE_MOVES = {moves}' in cells['trace-board']
    assert reference_hand_trace() == (1, 0, 0) and 'return (1, 0, 0)' in cells['hand_trace']
    assert oracle.search_tree_size(TRACE_BOARD, 'x') == 16 and analysis.alphabeta_visits(TRACE_BOARD, 'x') == (1, 12)
    assert 'visits 16 positions here; the alpha-beta you are about to write visits 12' in ' '.join(
        cells['hand-trace-reveal'].split())


def test_reference_alphabeta_follows_the_stated_convention(ref):
    assert ref['count_calls'](ref['alphabeta'], oracle.EMPTY_BOARD, 'x', -math.inf, math.inf) == ((0, (0, 0)), 18297)
    for board in oracle.reachable_positions()[::37]:
        player = oracle.to_move(board)
        (value, move), calls = ref['count_calls'](ref['alphabeta'], board, player, -math.inf, math.inf)
        assert (value, calls) == analysis.alphabeta_visits(board, player)
        assert value == oracle.value(board, player)


def test_reference_memo_and_analysis(ref):
    known = {}
    assert ref['count_calls'](ref['score_memo'], oracle.EMPTY_BOARD, 'x', known)[1] == 16168
    assert len(known) == 5478
    assert len(ref['reachable'](oracle.EMPTY_BOARD, 'x')) == 5478
    assert len({ref['canonical'](b) for b in oracle.reachable_positions()}) == 765
    for board in oracle.reachable_positions()[::53]:
        assert math.isclose(ref['evaluate'](board), analysis.evaluation(board))
        for depth in (1, 2):
            player = oracle.to_move(board)
            assert math.isclose(ref['score_depth'](board, player, depth)[0], analysis.depth_value(board, player, depth))


# ---- the reference notebook ----------------------------------------------------------------------------

def test_restart_and_run_all_passes_every_test(tmp_path):
    nb, errors = run_all(SOURCE, f'{ASSIGNMENT}.ipynb', tmp_path / 'nb')
    assert not errors
    tests = [cell for cell in nb.cells if cell.metadata.get('nbgrader', {}).get('grade')]
    assert sum(cell.metadata.nbgrader.points for cell in tests) == 17
    assert [cell.cell_type for cell in tests if cell.id == 'perfect_opponent'] == ['markdown']
    assert {cell.id.split('-', 1)[0] for cell in tests} == set(TASKS)
    table = ''.join(o.text for o in next(c for c in nb.cells if c.id == 'comparison-table').outputs if 'text' in o)
    for row in ('plain minimax', '549,946', 'alpha-beta', '18,297', 'memoized minimax', '16,168', 'depth 2'):
        assert row in table, table


# ---- the demo class ------------------------------------------------------------------------------------

@pytest.fixture(scope='module')
def graded(graded_class):
    """The demo class graded once by `make grade` (both assignments), shared with test_demo_class."""
    course, result = graded_class
    assert {p.parent.name for p in (course / 'submitted').glob(f'*/{ASSIGNMENT}')} == set(EXPECTED)
    return course, result


def test_demo_class_is_large_and_covers_every_task():
    assert len(EXPECTED) >= 8
    full = EXPECTED['ada']
    assert full == MAXIMA[:WRITTEN] + (0,) + MAXIMA[WRITTEN + 1:] and EXPECTED['ben'] == full
    for task in range(len(TASKS)):
        if task != WRITTEN:
            assert any(row[task] < full[task] for student, row in EXPECTED.items() if student != 'max'), TASKS[task]


def test_every_student_gets_the_marks_they_deserve(graded):
    course, _ = graded
    table, maxima = marks.marks_by_task('sqlite:///' + str(course / 'gradebook.db'), ASSIGNMENT)
    assert tuple(maxima) == TASKS and tuple(maxima.values()) == MAXIMA
    got = {student: tuple(int(row[task]) for task in TASKS) for student, row in table.items()}
    assert got == EXPECTED


def test_one_mistake_costs_the_right_cell(graded):
    course, _ = graded
    db = 'sqlite:///' + str(course / 'gradebook.db')
    dan = marks.marks_by_cell(db, ASSIGNMENT, 'dan')
    assert dan['alphabeta-count'] == 0 and dan['alphabeta-prunes'] == 1 and dan['alphabeta-moves'] == 1
    eve = marks.marks_by_cell(db, ASSIGNMENT, 'eve')
    assert eve['alphabeta-moves'] == 0 and eve['alphabeta-count'] == 1 and eve['score_memo-table'] == 0
    fay = marks.marks_by_cell(db, ASSIGNMENT, 'fay')
    assert fay['alphabeta-values'] == 1 and fay['alphabeta-prunes'] == 0
    gus = marks.marks_by_cell(db, ASSIGNMENT, 'gus')
    assert gus['score_depth-values'] == 0 and gus['score_depth-wins-and-blocks'] == 1
    assert marks.marks_by_cell(db, ASSIGNMENT, 'cat')['score_counted-values'] == 1


def test_grading_prints_the_table(graded):
    _, result = graded
    assert 'alpha_beta' in result.stdout and '/17' in result.stdout
    table = result.stdout.split('\nalpha_beta\n', 1)[1]
    shown = {line.split()[0]: line.split()[WRITTEN + 1] for line in table.splitlines()[2:2 + len(EXPECTED)]}
    assert shown == {student: '?' if student in WAITING else '0' for student in EXPECTED}, table
    assert f'not counted in the total until it is: {len(WAITING)} students ({", ".join(WAITING)}).' in table
    totals = {line.split()[0]: line.split(None, len(TASKS) + 1)[-1] for line in table.splitlines()[2:2 + len(EXPECTED)]}
    assert totals == {s: f'{sum(EXPECTED[s])} + 2 waiting' if s in WAITING else f'{sum(EXPECTED[s])}' for s in EXPECTED}
