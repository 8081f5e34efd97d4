"""A corpus of real-code styles (issue 42): implementations of the workbook written by us in the styles real
students and public code use (grader_tests/corpus/), each checked here first on every reachable position against
the oracle, independently of the grader's checks, and then graded by `make grade` and run as a student runs the
notebook. An implementation right on all 5,478 positions deserves 12/12; the grader must give it that."""
import concurrent.futures
import contextlib
import io
import numbers
import re
import shutil

import nbformat
import pytest

from conftest import ROOT, copy_course, failed_test_cells, needs_sandbox, run_grade
from coursetools.game import oracle
from coursetools.instructor import democlass
from coursetools.instructor import marks

ASSIGNMENT = 'noughts_and_crosses'
HERE = ROOT / 'grader_tests' / 'corpus'
CORPUS = HERE / ASSIGNMENT
RELEASE = ROOT / 'release' / ASSIGNMENT / f'{ASSIGNMENT}.ipynb'
STUDENTS = sorted(path.stem for path in CORPUS.glob('*.py'))
FULL_MARKS = {'print_state': 1, 'score_end': 3, 'play': 2, 'moves': 1, 'score': 3, 'perfect_game': 2}
FUNCTIONS = tuple(FULL_MARKS)
DRAW_WORDS = re.compile(r'\b(draw|drawn|tie|tied)\b', re.IGNORECASE)
# Implementations the exhaustive check calls right that the grader does not give 12/12: {student: why}, each an
# expected failure (strict) of the grading test until the grader is fixed.
FINDINGS = {}


def by_student(students):
    return [pytest.param(student, marks=pytest.mark.xfail(strict=True, reason=FINDINGS[student]))
            if student in FINDINGS else student for student in students]


# ------------------------------------------------------------------------------------------ the implementations

def locked_code(release=RELEASE):
    """The release's locked code cells that define names for the answers (EMPTY_BOARD, picture): not the test
    cells, not the widget."""
    nb = nbformat.read(release, as_version=4)
    return [cell.source for cell in nb.cells if cell.cell_type == 'code'
            and cell.metadata.get('nbgrader', {}).get('locked') and not cell.metadata['nbgrader'].get('grade')
            and 'minimax_widget' not in cell.source]


def namespace_of(preamble, answers):
    """The answers run as the notebook runs them: the locked helpers, then each answered solution cell in the
    release's order, the preamble at the top of the first (democlass.fill's layout); the names they define."""
    namespace = {'__name__': '__corpus__'}
    for source in locked_code():
        exec(compile(source, '<locked>', 'exec'), namespace)
    nb = democlass.fill(nbformat.read(RELEASE, as_version=4), preamble, answers)
    for cell in nb.cells:
        meta = cell.metadata.get('nbgrader', {})
        if cell.cell_type == 'code' and meta.get('solution') and meta.get('grade_id') in answers:
            exec(compile(cell.source, f'<{meta["grade_id"]}>', 'exec'), namespace)
    return namespace


def implementation(student):
    return namespace_of(*democlass.read_answers(CORPUS / f'{student}.py'))


def submission(folder, student):
    """The student's notebook filled in from their answer file, in a copy of the release folder (as
    test_fairness.submission, from the corpus)."""
    shutil.copytree(RELEASE.parent, folder, ignore=shutil.ignore_patterns('*.ipynb', '__pycache__'))
    nb = democlass.fill(nbformat.read(RELEASE, as_version=4), *democlass.read_answers(CORPUS / f'{student}.py'))
    nbformat.write(nb, folder / f'{ASSIGNMENT}.ipynb')
    return folder


# ------------------------------------------------------------------------------------- the exhaustive check

def to_move(board):
    flat = [square for row in board for square in row]
    return 'x' if flat.count('x') == flat.count('o') else 'o'


def printed(function, *arguments):
    """(what the call printed, what it returned)."""
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        returned = function(*arguments)
    return output.getvalue(), returned


def drawn_lines(text):
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def pair(value):
    """`value` as a (row, col) tuple of ints when it is a pair (a tuple, a namedtuple, a list) of two integers; else
    None."""
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(
            isinstance(n, numbers.Integral) and not isinstance(n, bool) for n in value):
        return int(value[0]), int(value[1])
    return None


def is_board(value):
    return (type(value) is tuple and len(value) == 3 and all(type(row) is tuple and len(row) == 3 for row in value)
            and all(type(square) is str and square in ' xo' for row in value for square in row))


def is_number(value, expected):
    return isinstance(value, numbers.Number) and not isinstance(value, bool) and value == expected


def remembered(function):
    """`function` with its answers remembered (hashable arguments only): a pure function gives the same ones. A
    search that recurses through the global `score` then costs one search from the empty board in all, as the
    grader remembers the student's score while it tests it."""
    memo = {}

    def remembering(*arguments, **keywords):
        key = (arguments, tuple(sorted(keywords.items())))
        try:
            return memo[key]
        except TypeError:
            return function(*arguments, **keywords)
        except KeyError:
            memo[key] = function(*arguments, **keywords)
            return memo[key]

    return remembering


def exhaustive_problems(namespace, limit=3):
    """What the implementation in `namespace` gets wrong, compared with the oracle on every position a game
    reaches (5,478): up to `limit` problems per function, each naming the function and its board; [] when it is
    right everywhere and its perfect game is one. A function is called with the implementation's own others, as in
    the notebook, with `score` remembered (`remembered`) and, for the perfect game, `print_state` recorded."""
    missing = [name for name in FUNCTIONS if not callable(namespace.get(name))]
    if missing:
        return [f'{name}: not defined' for name in missing]
    namespace['score'] = remembered(namespace['score'])
    found = {name: [] for name in FUNCTIONS}

    def call(function, board, *arguments):
        """(printed, returned), or None after noting the error."""
        try:
            return printed(namespace[function], board, *arguments)
        except Exception as error:  # noqa: BLE001 - any error is the implementation's mistake
            wrong(function, board, f'raised {type(error).__name__}: {error}')
            return None

    def wrong(function, board, text):
        if len(found[function]) < limit:
            found[function].append(f'{function}: {text} for {board!r}')

    for board in oracle.reachable_positions():
        player, empty, end = to_move(board), oracle.empty_cells(board), oracle.outcome(board)
        if (got := call('print_state', board)) and drawn_lines(got[0]) != ['|'.join(row).rstrip() for row in board]:
            wrong('print_state', board, f'printed {got[0]!r}')
        if (got := call('score_end', board)) and (
                got[1] is not None if end is None else not is_number(got[1], end)):
            wrong('score_end', board, f'returned {got[1]!r}, expected {end!r}')
        if got := call('moves', board):
            cells = [pair(move) for move in got[1]] if type(got[1]) is list else [None]
            if None in cells or sorted(cells) != sorted(empty):
                wrong('moves', board, f'returned {got[1]!r}, expected the empty squares {empty}')
        for row, col, mark in [(row, col, mark) for row, col in empty for mark in 'xo'] if end is None else ():
            if (got := call('play', board, row, col, mark)) and not (
                    is_board(got[1]) and got[1] == oracle.place(board, row, col, mark)):
                wrong('play', board, f'({row}, {col}, {mark!r}) returned {got[1]!r}')
        if not (got := call('score', board, player)):
            continue
        if not isinstance(got[1], (tuple, list)) or len(got[1]) != 2:
            wrong('score', board, f'({player!r}) returned {got[1]!r}, not a (value, move) pair')
            continue
        (value, move), best = got[1], oracle.optimal_moves(board, player)
        if not is_number(value, oracle.value(board, player)):
            wrong('score', board, f'({player!r}) gave the value {value!r}, expected {oracle.value(board, player)}')
        elif (move is not None) if end is not None else pair(move) not in best:
            wrong('score', board, f'({player!r}) chose the move {move!r}; the optimal ones: {best or None}')
    return [problem for name in FUNCTIONS for problem in found[name]] + perfect_game_problems(namespace)


def perfect_game_problems(namespace):
    """perfect_game() prints, with print_state, every board of a game from the empty board in which each move is
    an optimal one for the player to move, to a full board where nobody has a line; says draw or tie; returns 0."""
    boards, print_state = [], namespace['print_state']

    def recording(board, *rest, **keywords):
        boards.append(tuple(tuple(row) for row in board))
        return print_state(board, *rest, **keywords)

    namespace['print_state'] = recording
    try:
        text, returned = printed(namespace['perfect_game'])
    except Exception as error:  # noqa: BLE001
        return [f'perfect_game: raised {type(error).__name__}: {error}']
    finally:
        namespace['print_state'] = print_state
    problems = []
    if not boards or boards[0] != oracle.EMPTY_BOARD:
        problems.append(f'perfect_game: the first board printed is {boards[:1]}, not the empty board')
    for before, after in zip(boards, boards[1:]):
        made = [(r, c) for r, c in oracle.empty_cells(before) if after[r][c] != ' ']
        player = to_move(before)
        if oracle.outcome(before) is not None or len(made) != 1 or oracle.place(before, *made[0], player) != after \
                or made[0] not in oracle.optimal_moves(before, player):
            problems.append(f'perfect_game: {after!r} is not an optimal move of {player!r} from {before!r}')
            break
    if not boards or oracle.outcome(boards[-1]) != 0:
        problems.append(f'perfect_game: the last board printed is {boards[-1:]}, not a full board without a line')
    if not DRAW_WORDS.search(text):
        problems.append('perfect_game: no line says draw or tie')
    if not is_number(returned, 0):
        problems.append(f'perfect_game: returned {returned!r}, not 0')
    return problems


def test_the_corpus_has_ten_styles_each_expecting_full_marks_and_named_in_the_readme():
    readme = (HERE / 'README.md').read_text()
    assert len(STUDENTS) >= 10
    for student in STUDENTS:
        header = (CORPUS / f'{student}.py').read_text().split('\n# %%')[0]
        assert 'Expected: 12/12' in header, student
        _, answers = democlass.read_answers(CORPUS / f'{student}.py')
        assert set(answers) == set(FUNCTIONS), student
        assert f'`noughts_and_crosses/{student}.py`' in readme, student


@pytest.mark.parametrize('student', STUDENTS)
def test_every_implementation_is_right_on_every_reachable_position(student):
    assert len(oracle.reachable_positions()) == 5478
    assert exhaustive_problems(implementation(student)) == []


# A correct implementation with one function replaced by a wrong one: the check must say which.
MUTANTS = {
    'score_end misses the diagonals': ('score_end', '''
def score_end(state):
    lines = [*state, *zip(*state)]
    for mark, value in (('x', 1), ('o', -1)):
        if (mark,) * 3 in lines:
            return value
    return 0 if all(' ' not in row for row in state) else None'''),
    'score_end calls a full board a draw before looking for lines': ('score_end', '''
def score_end(state):
    if all(' ' not in row for row in state):
        return 0
    lines = [*state, *zip(*state), (state[0][0], state[1][1], state[2][2]), (state[0][2], state[1][1], state[2][0])]
    for mark, value in (('x', 1), ('o', -1)):
        if (mark,) * 3 in lines:
            return value
    return None'''),
    'moves gives up on a won board': ('moves', '''
def moves(state):
    if score_end(state) is not None:
        return []
    return [(r, c) for r in range(3) for c in range(3) if state[r][c] == ' ']'''),
    'play returns lists': ('play', '''
def play(state, row, col, mark):
    rows = [list(r) for r in state]
    rows[row][col] = mark
    return rows'''),
    'play puts the mark of the player to move, whatever mark it is given': ('play', '''
def play(state, row, col, mark):
    squares = [square for line in state for square in line]
    mark = 'x' if squares.count('x') == squares.count('o') else 'o'
    rows = [list(r) for r in state]
    rows[row][col] = mark
    return tuple(map(tuple, rows))'''),
    'score values from the point of view of the player to move': ('score', '''
@lru_cache(maxsize=None)
def score(state, player):
    end = score_end(state)
    if end is not None:
        return (end if player == 'x' else -end), None
    opponent = 'o' if player == 'x' else 'x'
    options = [(-score(play(state, r, c, player), opponent)[0], (r, c)) for r, c in moves(state)]
    return max(options, key=lambda option: option[0])'''),
    'score returns the first move with the right value': ('score', '''
@lru_cache(maxsize=None)
def score(state, player):
    end = score_end(state)
    if end is not None:
        return end, None
    opponent = 'o' if player == 'x' else 'x'
    values = [score(play(state, r, c, player), opponent)[0] for r, c in moves(state)]
    return (max if player == 'x' else min)(values), moves(state)[0]'''),
    'print_state puts spaces around the bars': ('print_state', '''
def print_state(state):
    for row in state:
        print(' | '.join(row))'''),
    'perfect_game never prints its last board': ('perfect_game', '''
def perfect_game():
    state, player = EMPTY_BOARD, 'x'
    while score_end(state) is None:
        print_state(state)
        state = play(state, *score(state, player)[1], player)
        player = 'o' if player == 'x' else 'x'
    print("It's a draw")
    return score_end(state)'''),
}


@pytest.mark.parametrize('mutant', MUTANTS)
def test_the_exhaustive_check_catches_a_wrong_function(mutant):
    function, source = MUTANTS[mutant]
    preamble, answers = democlass.read_answers(CORPUS / 'lru_score.py')
    found = exhaustive_problems(namespace_of(preamble, {**answers, function: source.strip('\n')}))
    assert [problem for problem in found if problem.startswith(f'{function}:')], found


# ------------------------------------------------------------------------------------------------ the grader

@pytest.fixture(scope='module')
def graded(tmp_path_factory):
    """({student: {task: marks}}, {student: {grade_id: marks lost}}) after one `make grade` run of the corpus."""
    course = copy_course(tmp_path_factory.mktemp('corpus') / 'course', students=[])
    for student in STUDENTS:
        folder = submission(course / 'submitted' / student / ASSIGNMENT, student)
        (folder / 'timestamp.txt').write_text(democlass.TIMESTAMP + '\n')
    result = run_grade(course)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    db = 'sqlite:///' + str(course / 'gradebook.db')
    by_task, maxima = marks.marks_by_task(db, ASSIGNMENT)
    assert maxima == FULL_MARKS
    _, cells, scores, _ = marks.scores_by_cell(db, ASSIGNMENT)
    lost = {student: {cell: cells[cell] - (scores[student].get(cell) or 0) for cell in cells
                      if (scores[student].get(cell) or 0) < cells[cell]} for student in STUDENTS}
    return by_task, lost


@needs_sandbox
@pytest.mark.parametrize('student', by_student(STUDENTS))
def test_make_grade_gives_every_implementation_full_marks(graded, student):
    by_task, lost = graded
    failing = {name: ({task: by_task[name][task] for task in FUNCTIONS}, lost[name]) for name in STUDENTS
               if lost[name] or by_task[name] != FULL_MARKS}
    assert student not in failing, (
        f'{student} got {failing[student][0]} (lost {failing[student][1]}); of the corpus, not 12/12: ' +
        '; '.join(f'{name} {got} lost {cells}' for name, (got, cells) in failing.items()))


# ---------------------------------------------------------------------------------- as the student runs it

def visible_failures(folder, student):
    """{grade_id: error message} of the test cells that fail when the student runs the notebook (Restart & Run
    All), as test_fairness.visible_failures."""
    return failed_test_cells(submission(folder / student, student), f'{ASSIGNMENT}.ipynb')


@pytest.fixture(scope='module')
def visible(tmp_path_factory):
    """{student: {grade_id: error}} of the test cells that fail when each notebook is run top to bottom, two
    notebooks at a time."""
    folder = tmp_path_factory.mktemp('corpus-visible')
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        runs = {student: pool.submit(visible_failures, folder, student) for student in STUDENTS}
        return {student: run.result() for student, run in runs.items()}


@pytest.mark.parametrize('student', STUDENTS)
def test_every_visible_test_passes_as_the_student_runs_the_notebook(visible, student):
    assert visible[student] == {}
