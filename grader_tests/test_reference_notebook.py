"""The instructor's source notebook runs cleanly from a fresh kernel and passes every test, visible and hidden."""
import os
import shutil
import subprocess
import sys


from conftest import ROOT, run_all

SOURCE = ROOT / 'source' / 'noughts_and_crosses'


def test_restart_and_run_all_passes_every_test(tmp_path):
    nb, errors = run_all(SOURCE, 'noughts_and_crosses.ipynb', tmp_path / 'nb')
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
