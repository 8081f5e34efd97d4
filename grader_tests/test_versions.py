"""An nbgrader the course was not tested with: a warning that names the tested range, and grading that goes on
without the speed-ups that reach into nbgrader."""
import subprocess
import sys


def run(code):
    return subprocess.run([sys.executable, '-W', 'always', '-c', code], capture_output=True, text=True)


def test_an_untested_nbgrader_warns_and_turns_the_speed_ups_off():
    result = run("import nbgrader; nbgrader.__version__ = '0.10.1'\n"
                 "import coursetools.grading.adapters as adapters\n"
                 "from coursetools import grading\n"
                 "print(adapters.allowed())")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == 'False'
    assert 'tested with nbgrader 0.9.x' in result.stderr and 'not nbgrader 0.10.1' in result.stderr


def test_the_tested_nbgrader_imports_without_a_word():
    result = run('import coursetools.grading.adapters as adapters\nprint(adapters.allowed())')
    assert result.returncode == 0 and result.stdout.strip() == 'True'
    assert 'tested with' not in result.stderr
