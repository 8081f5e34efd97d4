"""Test cells leave the student's names alone: a correct solution whose helpers are named after every name a test
cell ever bound at the top level (`value`, `player`, `board`, `best`, ...) gets full marks, through `make grade`
and in the student's own Restart & Run All. Before, the test cells overwrote those names with their data."""
import ast

import nbformat
import pytest

from conftest import ROOT, copy_course, run_all, run_grade
from coursetools.instructor import democlass
from coursetools.instructor import marks

# The names the test cells of each workbook bound at the top level before they became test functions.
FORMER_NAMES = {
    'noughts_and_crosses': ['after', 'before', 'best', 'board', 'c', 'col', 'contextlib', 'expected', 'game',
                            'game_result', 'game_text', 'got', 'hidden', 'io', 'line', 'mark', 'move', 'output',
                            'player', 'printed', 'r', 'row', 'rows', 'value'],
    'alpha_beta': ['best', 'board', 'calls', 'corner', 'count', 'depth', 'expected', 'families', 'good', 'got',
                   'hidden', 'known', 'move', 'player', 'value', 'visited'],
}
FULL = {'noughts_and_crosses': 12, 'alpha_beta': 15}     # alpha_beta's written answer waits for a grader
# The function of each workbook that uses the helpers (each of them must still be a function when it runs).
USER = {'noughts_and_crosses': 'score', 'alpha_beta': 'score_counted'}


def helpers(names):
    """A helper function for every name, and one function that calls them all."""
    lines = []
    for name in names:
        lines += [f'def {name}(x):', f'    """A helper named {name}."""', '    return x', '', '']
    lines += ['def through_helpers(x):', f'    for helper in ({", ".join(names)},):',
              '        x = helper(x)', '    return x']
    return '\n'.join(lines)


def student(assignment):
    """Demo student ada's correct answers, with the helpers, and the search passing its result through them."""
    preamble, answers = democlass.read_answers(ROOT / 'demo_class' / assignment / 'ada.py')
    user = USER[assignment]
    source = answers[user]
    tree = ast.parse(source)
    function = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == user)
    renamed = source.replace(f'def {user}(', f'def _{user}_itself(', 1)
    wrapper = (f'def {user}(*args):\n    """The search, its answer passed through every helper."""\n'
               f'    return through_helpers(_{user}_itself(*args))')
    assert function.name == user
    answers = dict(answers, **{user: helpers(FORMER_NAMES[assignment]) + '\n\n\n' + renamed + '\n\n\n' + wrapper})
    return preamble, answers


@pytest.mark.parametrize('assignment', sorted(FORMER_NAMES))
def test_test_cells_bind_only_test_functions_and_private_names(assignment):
    nb = nbformat.read(ROOT / 'source' / assignment / f'{assignment}.ipynb', as_version=4)
    for cell in nb.cells:
        if cell.cell_type == 'code' and cell.metadata.get('nbgrader', {}).get('grade'):
            from coursetools.judge.checker_plan import defined_names
            bound = defined_names(cell.source)
            assert all(name.startswith(('test_', '_')) for name in bound), (cell.metadata.nbgrader.grade_id, bound)


@pytest.fixture(scope='module')
def graded_quin(tmp_path_factory):
    """A course whose one student, quin, handed in both workbooks with the helpers, graded in one run."""
    course = copy_course(tmp_path_factory.mktemp('namespaces') / 'course', students=[])
    for assignment in FORMER_NAMES:
        folder = course / 'submitted' / 'quin' / assignment
        folder.mkdir(parents=True)
        release = nbformat.read(course / 'release' / assignment / f'{assignment}.ipynb', as_version=4)
        nbformat.write(democlass.fill(release, *student(assignment)), folder / f'{assignment}.ipynb')
    result = run_grade(course)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return course


@pytest.mark.parametrize('assignment', sorted(FORMER_NAMES))
def test_helpers_named_like_old_test_variables_keep_full_marks(graded_quin, tmp_path, assignment):
    course = graded_quin
    release = nbformat.read(course / 'release' / assignment / f'{assignment}.ipynb', as_version=4)
    table, _ = marks.marks_by_task('sqlite:///' + str(course / 'gradebook.db'), assignment)
    assert sum(table['quin'].values()) == FULL[assignment], table['quin']

    # and in the student's own Jupyter, where the test cells run in the kernel beside these helpers
    work = tmp_path / 'own'
    (work / 'release').mkdir(parents=True)
    import shutil
    shutil.copytree(course / 'release' / assignment, work / 'release' / assignment)
    nbformat.write(democlass.fill(release, *student(assignment)), work / 'release' / assignment / f'{assignment}.ipynb')
    _, errors = run_all(work / 'release' / assignment, f'{assignment}.ipynb', tmp_path / 'run')
    assert errors == []
