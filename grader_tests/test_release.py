"""release/ reveals nothing and keeps what a student needs. That it is exactly what `nbgrader generate_assignment`
makes from source/ is checked on the release `make grade` regenerates (test_contract.py)."""
import pathlib
import re
import subprocess

import nbformat
import pytest

from conftest import ROOT

ASSIGNMENTS = sorted(p.name for p in (ROOT / 'source').iterdir() if p.is_dir())
SOLUTION = re.compile(r'### BEGIN SOLUTION\n(.*?)### END SOLUTION', re.S)
HIDDEN = re.compile(r'### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS', re.S)


def released_files(assignment):
    return sorted(p for p in (ROOT / 'release' / assignment).rglob('*') if p.is_file())


def secrets(assignment):
    """Every non-trivial line of solution code, hidden tests and written model answers (a Markdown solution cell,
    which the release replaces whole) in the source notebook."""
    nb = nbformat.read(ROOT / 'source' / assignment / f'{assignment}.ipynb', as_version=4)
    hidden, public = set(), set()
    for cell in nb.cells:
        written = cell.cell_type == 'markdown' and cell.metadata.get('nbgrader', {}).get('solution')
        for block in SOLUTION.findall(cell.source) + HIDDEN.findall(cell.source) + ([cell.source] if written else []):
            hidden.update(line.strip() for line in block.splitlines() if len(line.strip()) > 12)
        if not written:
            public.update(line.strip() for line in HIDDEN.sub('', SOLUTION.sub('', cell.source)).splitlines())
    return hidden - public  # a line the students are shown elsewhere anyway is no secret


@pytest.mark.check
@pytest.mark.parametrize('assignment', ASSIGNMENTS)
def test_release_reveals_no_solution_or_hidden_test(assignment):
    found = secrets(assignment)
    assert len(found) > 20, 'the source notebook should have solutions and hidden tests to hide'
    for path in released_files(assignment):
        text = path.read_text()
        for marker in ('BEGIN SOLUTION', 'END SOLUTION', 'HIDDEN TESTS', 'coursetools', 'hidden.'):
            assert marker not in text, f'{path.name} contains {marker!r}'
        if path.suffix == '.ipynb':  # other files are checked by their own tests (the widget: test_widget.py)
            leaked = [line for line in found if line in text]
            assert not leaked, f'{path.name} reveals source lines: {leaked[:5]}'


@pytest.mark.check
@pytest.mark.parametrize('assignment', ASSIGNMENTS)
def test_release_keeps_the_stubs_and_visible_tests(assignment):
    nb = nbformat.read(ROOT / 'release' / assignment / f'{assignment}.ipynb', as_version=4)
    solutions = [c for c in nb.cells if c.metadata.get('nbgrader', {}).get('solution')]
    tests = [c for c in nb.cells if c.metadata.get('nbgrader', {}).get('grade')]
    assert solutions and tests
    for cell in solutions:
        if cell.cell_type == 'markdown':                  # a written answer
            assert cell.source == 'YOUR ANSWER HERE' and cell.metadata.nbgrader.grade, cell.id
            continue
        assert re.search(r'^def \w+\(.*\):\n    """', cell.source, re.M), f'{cell.id} lost its def line or docstring'
        assert 'raise NotImplementedError()' in cell.source
    for cell in tests:
        if cell.cell_type == 'markdown':
            continue
        assert 'assert' in cell.source, f'test cell {cell.id} has no visible test'


def package_files(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob('*.py'))}


@pytest.mark.parametrize('assignment', ASSIGNMENTS)
def test_widget_beside_the_notebook_is_the_course_widget(assignment):
    course_widget = package_files(ROOT / 'coursetools' / 'widget')
    assert course_widget, 'the widget package is missing'
    assert package_files(ROOT / 'source' / assignment / 'minimax_widget') == course_widget, 'run `make release`'
    assert package_files(ROOT / 'release' / assignment / 'minimax_widget') == course_widget, 'run `make release`'
    assert not (ROOT / 'source' / assignment / 'minimax_widget.py').exists()


def test_the_widget_is_in_git_once_and_where_it_ships():
    tracked = subprocess.run(['git', 'ls-files', '*minimax_widget/*', 'coursetools/widget/*'], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split()
    folders = sorted({str(pathlib.Path(path).parent) for path in tracked})
    assert folders == ['coursetools/widget'] + [f'release/{a}/minimax_widget' for a in sorted(ASSIGNMENTS)], folders

