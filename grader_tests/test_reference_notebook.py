"""The instructor's source notebook runs cleanly from a fresh kernel and passes every test, visible and hidden."""
import os
import shutil
import subprocess
import sys

import nbformat
from nbclient import NotebookClient

from conftest import ROOT

SOURCE = ROOT / 'source' / 'noughts_and_crosses'


def test_restart_and_run_all_passes_every_test(tmp_path):
    shutil.copytree(SOURCE, tmp_path / 'nb')
    nb = nbformat.read(tmp_path / 'nb' / 'noughts_and_crosses.ipynb', as_version=4)
    NotebookClient(nb, timeout=120, kernel_name='python3', resources={'metadata': {'path': str(tmp_path / 'nb')}}).execute()
    errors = [(cell.id, output.ename, output.evalue) for cell in nb.cells if cell.cell_type == 'code'
              for output in cell.outputs if output.output_type == 'error']
    assert not errors
    tests = [cell for cell in nb.cells if cell.metadata.get('nbgrader', {}).get('grade')]
    assert sum(cell.metadata.nbgrader.points for cell in tests) == 12
    assert all(cell.execution_count for cell in tests)
    game = next(cell for cell in nb.cells if cell.id == 'perfect_game-boards').outputs[0].text
    assert game.count('|') == 10 * 6 and "It's a draw!" in game  # the empty board, nine moves, the verdict


def test_nbgrader_validate_passes_the_source(tmp_path):
    shutil.copytree(SOURCE, tmp_path / 'nb')
    env = dict(os.environ, PATH=os.path.join(sys.prefix, 'bin') + os.pathsep + os.environ['PATH'])
    result = subprocess.run([sys.executable, '-m', 'nbgrader', 'validate', 'noughts_and_crosses.ipynb'],
                            cwd=tmp_path / 'nb', env=env, capture_output=True, text=True)
    assert 'Success! Your notebook passes all the tests.' in result.stdout, result.stdout + result.stderr


def test_nbgrader_validate_fails_the_release(tmp_path):
    shutil.copytree(ROOT / 'release' / 'noughts_and_crosses', tmp_path / 'nb')
    env = dict(os.environ, PATH=os.path.join(sys.prefix, 'bin') + os.pathsep + os.environ['PATH'])
    result = subprocess.run([sys.executable, '-m', 'nbgrader', 'validate', 'noughts_and_crosses.ipynb'],
                            cwd=tmp_path / 'nb', env=env, capture_output=True, text=True)
    assert 'NotImplementedError' in result.stdout and 'Success!' not in result.stdout
