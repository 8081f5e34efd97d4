"""Correct answers written as real students write them get full marks, and the common mistakes the hidden checks
mark down are shown by the visible tests first. One made-up student per claim (grader_tests/fairness/), graded
in one `make grade` run and run by Restart & Run All as the student runs them."""
import shutil

import nbformat
import pytest

from conftest import ROOT, copy_course, failed_test_cells, needs_sandbox, run_grade
from coursetools.instructor import democlass
from coursetools.instructor import marks

HERE = ROOT / 'grader_tests' / 'fairness'
STUDENTS = {'noughts_and_crosses': ('kit', 'deb', 'neo', 'fen', 'las', 'dic', 'cyd', 'vic', 'mia'), 'alpha_beta': ('kay', 'ali')}
WRITTEN = 'perfect_opponent'        # alpha_beta's written answer, marked by hand


def submission(folder, assignment, student):
    """The student's notebook filled in from their answer file, in a copy of the release folder."""
    shutil.copytree(ROOT / 'release' / assignment, folder, ignore=shutil.ignore_patterns('*.ipynb', '__pycache__'))
    release = nbformat.read(ROOT / 'release' / assignment / f'{assignment}.ipynb', as_version=4)
    answers = democlass.read_answers(HERE / assignment / f'{student}.py')
    nbformat.write(democlass.fill(release, *answers), folder / f'{assignment}.ipynb')
    return folder


@pytest.fixture(scope='module')
def lost(tmp_path_factory):
    """{(assignment, student): {grade_id: marks lost}} after `make grade`."""
    course = copy_course(tmp_path_factory.mktemp('fairness') / 'course', students=[])
    for assignment, students in STUDENTS.items():
        for student in students:
            folder = submission(course / 'submitted' / student / assignment, assignment, student)
            (folder / 'timestamp.txt').write_text(democlass.TIMESTAMP + '\n')
    result = run_grade(course)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    found = {}
    for assignment, students in STUDENTS.items():
        _, maxima, scores, _ = marks.scores_by_cell('sqlite:///' + str(course / 'gradebook.db'), assignment)
        for student in students:
            found[assignment, student] = {cell: maxima[cell] - (scores[student].get(cell) or 0) for cell in maxima
                                          if cell != WRITTEN and (scores[student].get(cell) or 0) < maxima[cell]}
    return found


def visible_failures(tmp_path, assignment, student, printed=None):
    """{grade_id: error message} of the test cells that fail when the student runs the notebook (`printed`: see
    `failed_test_cells`)."""
    return failed_test_cells(submission(tmp_path / student, assignment, student), f'{assignment}.ipynb', printed)


@needs_sandbox
def test_arguments_by_keyword_and_an_exact_fraction_get_full_marks(lost):
    assert lost['noughts_and_crosses', 'kit'] == {}
    assert lost['alpha_beta', 'kay'] == {}


@needs_sandbox
def test_a_solution_that_leans_on_x_moving_first_gets_full_marks(lost):
    """cyd reads a full board and whose turn it is from the counts of marks, as CS50 AI's solutions do: right for
    every board a game reaches, which are the only boards the tests use (test_boards)."""
    assert lost['noughts_and_crosses', 'cyd'] == {}


@needs_sandbox
def test_megabytes_of_debugging_output_before_the_result_cost_nothing(lost):
    assert lost['noughts_and_crosses', 'deb'] == {}


@needs_sandbox
def test_a_move_of_none_where_every_move_loses_costs_that_cell_alone(lost):
    assert lost['noughts_and_crosses', 'neo'] == {'score-moves': 1}


@needs_sandbox
def test_a_full_board_taken_for_a_draw_before_its_lines_costs_score_end_alone(lost):
    assert 'score_end-diagonals' in lost['noughts_and_crosses', 'fen']
    assert set(lost['noughts_and_crosses', 'fen']) <= {'score_end-rows-and-columns', 'score_end-diagonals',
                                                       'score_end-draws-and-unfinished'}


@needs_sandbox
def test_a_game_that_never_prints_its_last_board_costs_that_cell_alone(lost):
    assert lost['noughts_and_crosses', 'las'] == {'perfect_game-boards': 1}


@needs_sandbox
def test_a_bug_costs_its_own_task_even_where_a_dictionary_of_answers_kept_what_it_caused(lost):
    """dic's perfect game fills his score's dictionary through his buggy score_end; score's cells, given a correct
    one, never see it: each test cell's calls run in a process forked for that cell (issue 42), and the notebook's
    check-yourself cells, which call score too, stay quiet while it is graded."""
    assert 'score_end-diagonals' in lost['noughts_and_crosses', 'dic']
    assert not [cell for cell in lost['noughts_and_crosses', 'dic'] if cell.startswith('score-')]


@needs_sandbox
def test_a_search_through_an_inner_helper_loses_only_the_cells_that_count_its_calls(lost):
    assert lost['alpha_beta', 'ali'] == {'alphabeta-prunes': 1, 'alphabeta-count': 1, 'score_memo-table': 1}


@pytest.mark.parametrize('assignment, student', [('noughts_and_crosses', 'kit'), ('noughts_and_crosses', 'cyd'),
                                                 ('alpha_beta', 'kay')])
def test_the_visible_tests_accept_what_the_hidden_ones_accept(tmp_path, assignment, student):
    assert visible_failures(tmp_path, assignment, student) == {}


def test_the_visible_tests_show_the_mistakes_the_hidden_ones_mark_down(tmp_path):
    neo = visible_failures(tmp_path, 'noughts_and_crosses', 'neo')
    assert list(neo) == ['score-moves'] and 'every move loses for o' in neo['score-moves']
    fen = visible_failures(tmp_path, 'noughts_and_crosses', 'fen')
    last_square_wins = "('x', 'o', 'x'), ('o', 'x', 'o'), ('o', 'x', 'x')"
    assert 'score_end-diagonals' in fen and last_square_wins in fen['score_end-diagonals']
    las = visible_failures(tmp_path, 'noughts_and_crosses', 'las')
    assert list(las) == ['perfect_game-boards'] and 'up to the last one' in las['perfect_game-boards']
    ali = visible_failures(tmp_path, 'alpha_beta', 'ali')
    assert set(ali) == {'alphabeta-prunes', 'alphabeta-count', 'score_memo-table'}
    assert 'called once' in ali['alphabeta-prunes'] and 'called once' in ali['score_memo-table']


SCORE_CELLS = ('score-finished', 'score-values', 'score-moves')


@needs_sandbox
def test_a_wrong_score_end_costs_score_end_and_never_score(lost):
    assert 'score_end-diagonals' in lost['noughts_and_crosses', 'vic']
    assert not [cell for cell in lost['noughts_and_crosses', 'vic'] if cell in SCORE_CELLS]


@needs_sandbox
def test_a_wrong_score_loses_the_hidden_score_marks(lost):
    assert {'score-values', 'score-moves'} <= set(lost['noughts_and_crosses', 'mia'])
    assert not [cell for cell in lost['noughts_and_crosses', 'mia'] if cell.startswith('score_end')]


def test_the_visible_score_tests_agree_with_the_hidden_ones_on_a_wrong_score_end(tmp_path):
    """Issue 42: vic's score is right and his score_end wrong; the visible score tests give score correct helpers,
    as grading does, so they pass, and say which helper to fix."""
    printed = {}
    vic = visible_failures(tmp_path, 'noughts_and_crosses', 'vic', printed)
    assert 'score_end-diagonals' in vic and not set(vic) & set(SCORE_CELLS)
    for cell in SCORE_CELLS:
        assert 'Note: your score_end(board) gives None, where the right answer is' in printed[cell], cell
        assert 'fix score_end in task 2' in printed[cell] and printed[cell].count('Note:') == 1, cell


def test_the_visible_score_tests_fail_a_wrong_score_and_name_no_helper(tmp_path):
    printed = {}
    mia = visible_failures(tmp_path, 'noughts_and_crosses', 'mia', printed)
    assert {'score-values', 'score-moves'} <= set(mia) and "expected 1" in mia['score-values']
    assert not [cell for cell in SCORE_CELLS if 'Note:' in printed[cell]]
