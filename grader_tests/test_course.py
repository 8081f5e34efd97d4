"""Course-level promises that are easy to break: one reading of the sandbox opt-out, kernels that always know they
are being graded, tests that fail rather than skip, and the folders a fresh clone shows."""
import asyncio
import os
import re
import shlex
import subprocess
import sys

import pytest
from nbformat.v4 import new_code_cell, new_notebook

from conftest import ROOT, needs_sandbox
from coursetools.instructor import grade
from coursetools.sandbox.host import bubblewrap as sandbox
from coursetools.grading.execute import SandboxedExecute

TESTS = ROOT / 'grader_tests'


@pytest.mark.parametrize('value', ['1', 'true', 'TRUE', 'yes', 'on', ' On '])
def test_every_spelling_of_the_opt_out_is_announced_and_obeyed(monkeypatch, capsys, value):
    monkeypatch.setenv(sandbox.UNSANDBOXED_ENV, value)
    monkeypatch.setattr(sandbox, 'probe', lambda: pytest.fail('the sandbox was probed despite the opt-out'))
    grade.check_sandbox()
    assert 'WARNING: grading WITHOUT the sandbox' in capsys.readouterr().out
    assert SandboxedExecute().sandboxed is False


@pytest.mark.parametrize('value', ['0', '', 'no', 'false'])
def test_other_values_keep_the_sandbox(monkeypatch, capsys, value):
    monkeypatch.setenv(sandbox.UNSANDBOXED_ENV, value)
    probed = []
    monkeypatch.setattr(sandbox, 'probe', lambda: probed.append(True))
    grade.check_sandbox()
    assert probed and 'WARNING' not in capsys.readouterr().out
    assert SandboxedExecute().sandboxed is True


@needs_sandbox
def test_every_kernel_knows_it_is_being_graded(tmp_path, monkeypatch):
    monkeypatch.delenv('NBGRADER_EXECUTION', raising=False)
    folder = tmp_path / 'submission'
    folder.mkdir()
    executor = SandboxedExecute()
    printed = []

    async def twice():
        try:
            for _ in range(2):
                nb = new_notebook(cells=[new_code_cell("import os\nprint(os.environ.get('NBGRADER_EXECUTION'))")])
                await executor.async_preprocess(nb, {'metadata': {'path': str(folder)}})
                printed.append(''.join(o.get('text', '') for o in nb.cells[0].outputs))
        finally:
            await executor.kernel_source.aclose()

    asyncio.run(twice())
    assert printed == ['autograde\n', 'autograde\n']
    assert 'NBGRADER_EXECUTION' not in os.environ         # nothing was set in the grader's own environment


def test_no_code_sets_the_grading_environment_for_the_whole_process():
    for path in (ROOT / 'coursetools').rglob('*.py'):
        text = path.read_text()
        assert not re.search(r"os\.environ\[['\"]NBGRADER_EXECUTION['\"]\]\s*=", text), path
        assert 'setenv(NBGRADER_EXECUTION' not in text, path
        # the commands' entry points (make grade, make serve) work in the course folder, as nbgrader reads its config there
        assert not re.search(r'\bos\.chdir\(', text) or path.name in ('grade.py', 'serve.py', 'launcher.py'), path


def test_tests_fail_rather_than_skip():
    """`make test` installs what the tests need, so a missing piece is a failure. The one opt-out is explicit
    (COURSE_TESTS_WITHOUT_SANDBOX=1, conftest.needs_sandbox, for a machine without user namespaces)."""
    allowed = {('conftest.py', 'needs_sandbox = pytest.mark.skipif(')}
    for path in sorted(TESTS.glob('*.py')):
        for line in path.read_text().splitlines():
            if re.search(r'pytest\.(skip|importorskip)\b|mark\.skip', line) and path.name != 'test_course.py':
                assert any(path.name == name and marker in line for name, marker in allowed), f'{path.name}: {line}'


def test_a_fresh_clone_shows_the_autograded_folder_and_nothing_in_it():
    tracked = subprocess.run(['git', 'ls-files', 'autograded'], cwd=ROOT, capture_output=True, text=True, check=True)
    assert tracked.stdout.split() == ['autograded/README.md']
    assert 'make grade' in (ROOT / 'autograded' / 'README.md').read_text()
    ignored = subprocess.run(['git', 'check-ignore', 'autograded/ada/noughts_and_crosses/noughts_and_crosses.ipynb'],
                             cwd=ROOT, capture_output=True, text=True)
    assert ignored.returncode == 0


# ---- the README: what it tells each reader to type exists --------------------------------------------------------

README = (ROOT / 'README.md').read_text()


def test_the_readme_is_short_and_ordered_by_reader():
    assert len(README.splitlines()) <= 150
    headings = [line for line in README.splitlines() if line.startswith('## ')]
    assert headings == ['## Students', '## Instructors', '## Lecturers', '## Maintainers']


def test_every_make_command_in_the_readme_is_a_target_that_runs():
    """`make -n` (print, do not run) knows every target the README names, with the variables it shows."""
    commands = set(re.findall(r'`(make [^`\[]*?)\s*(?:\[[^`]*)?`', README)) | set(
        re.findall(r'^(make [a-z-]+)', README, re.M))
    assert {'make grade', 'make test', 'make release', 'make demo', 'make present', 'make clean'} <= commands
    for command in sorted(commands):
        words = shlex.split(command)
        dry = subprocess.run(['make', '-n', '-o', '.venv/.installed', *words[1:]], cwd=ROOT, capture_output=True,
                             text=True)
        assert dry.returncode == 0 and 'No rule to make target' not in dry.stderr, (command, dry.stderr)


def test_every_option_the_readme_gives_make_grade_is_one_it_takes():
    """`ARGS=--x` in the README: an option of `python -m coursetools.instructor.grade`, or an nbgrader setting."""
    given = set(re.findall(r"ARGS='?(--[a-z][a-z-]*)", README))
    assert {'--force', '--student', '--scheduler', '--workers', '--sequential', '--db'} <= given
    usage = subprocess.run([sys.executable, '-m', 'coursetools.instructor.grade', '--help'], cwd=ROOT,
                           capture_output=True, text=True)
    assert usage.returncode == 0, usage.stderr
    taken = set(re.findall(r'(--[a-z][a-z-]*)', usage.stdout))
    assert given <= taken, given - taken
    for setting in re.findall(r"ARGS='--([A-Z][A-Za-z]*)\.", README):     # --SandboxedExecute.timeout=60
        assert setting in {'SandboxedExecute'}, setting


def test_every_page_the_readme_links_to_is_there():
    for target, anchor in re.findall(r'\]\(([^)#]+)(?:#([^)]*))?\)', README):
        if not target.startswith('http'):
            assert (ROOT / target).exists(), target
            if anchor:      # a heading of that page, as GitHub makes its anchor
                headings = re.findall(r'^#+ (.+)$', (ROOT / target).read_text(), re.M)
                slugs = {re.sub(r'[^\w\- ]', '', heading.lower()).replace(' ', '-') for heading in headings}
                assert anchor in slugs, f'{target}#{anchor}'
