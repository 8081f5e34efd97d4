"""The instructor's own nbgrader tools agree with `make grade`.

An instructor who knows nbgrader follows the README's plain-nbgrader steps in a copy of the course that looks like a
checkout (its Makefile, the course package and the venv), from a clean gradebook: `make release`, then
`.venv/bin/nbgrader autograde | generate_feedback | export` with the venv NOT on PATH. The class: demo students with
known marks, a notebook saved as `noughts_and_crosses (1).ipynb`, a duplicated cell, and a real edit of locked test
cells. Also the exchange (release_assignment, fetch_assignment, submit, collect) and formgrader's Autograde button
(nbgrader's NbGraderAPI, in-process).
"""
import csv
import hashlib
import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from nbgrader.apps import NbGraderAPI
from nbgrader.coursedir import CourseDirectory
from traitlets.config.loader import PyFileConfigLoader

from conftest import ROOT, copy_course, needs_sandbox
from coursetools.instructor import marks
from coursetools.instructor import repair
from coursetools.grading.autograde import HideHiddenTests
from test_demo_class import EXPECTED
from test_hostile import CATALOGUE, ada, build_duplicator, build_editor, filled, write_student

pytestmark = needs_sandbox

ASSIGNMENT = 'noughts_and_crosses'
NOTEBOOK = f'{ASSIGNMENT}.ipynb'
RENAMED = 'noughts_and_crosses (1).ipynb'
TASKS = ('print_state', 'score_end', 'play', 'moves', 'score', 'perfect_game')
DEMO_STUDENTS = ('cat', 'max')          # with 'renamed', whose answers are ada's: full marks
EDITED_CELLS = {'score_end-rows-and-columns', 'score_end-diagonals', 'score_end-draws-and-unfinished'}
# What `make grade` gives each student (test_demo_class.py, test_hostile.py).
MAKE_GRADE_MARKS = {**{s: EXPECTED[s] for s in DEMO_STUDENTS}, 'renamed': CATALOGUE['renamed'][1],
                    'duplicator': CATALOGUE['duplicator'][1], 'editor': CATALOGUE['editor'][1]}
OVER_A_LIMIT = {'bomber': CATALOGUE['bomber'][2].replace('has', f'{NOTEBOOK} has', 1) + ': not graded',
                'padder': f'{NOTEBOOK} has 5,0'}      # 5,0xx,xxx characters of code, more than the 300,000
HIDDEN = re.compile(r'### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS', re.S)


def checkout(destination, students):
    """A copy of the course as an instructor's checkout: the Makefile and package lists, and (linked) the course
    package and the venv these tests run in."""
    course = copy_course(destination, students=students)
    for name in ('Makefile', 'requirements.txt', 'pyproject.toml'):
        shutil.copy2(ROOT / name, course / name)
    (course / '.venv').symlink_to(sys.prefix)
    (course / 'coursetools').symlink_to(ROOT / 'coursetools')
    return course


def without_venv_on_path():
    """The environment of a shell where the venv is not activated."""
    venv_bins = {os.path.realpath(os.path.join(sys.prefix, 'bin'))}
    path = [p for p in os.environ.get('PATH', '').split(os.pathsep) if os.path.realpath(p) not in venv_bins]
    env = {k: v for k, v in os.environ.items() if k != 'VIRTUAL_ENV'}
    env['PATH'] = os.pathsep.join(path)
    assert shutil.which('alembic', path=env['PATH']) is None, 'alembic on PATH outside the venv: nothing to test'
    return env


def prefixed_nbgrader(folder, course, *args):
    """`.venv/bin/nbgrader ARGS` typed in `folder`, the venv not activated."""
    return subprocess.run([str(course / '.venv' / 'bin' / 'nbgrader'), *args], cwd=folder, env=without_venv_on_path(),
                          capture_output=True, text=True)


def log_of(result):
    return result.stdout + result.stderr


def task_marks(course):
    table, _ = marks.marks_by_task(f'sqlite:///{course / "gradebook.db"}', ASSIGNMENT)
    return {student: tuple(int(row[task]) for task in TASKS) for student, row in table.items()}


def digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def warnings_by_student(log):
    """{student: [warning lines]} from an autograde log, each warning given to the submission being sanitized."""
    found, student = {}, None
    for line in log.splitlines():
        sanitizing = re.search(r'Sanitizing .*/submitted/([^/]+)/', line)
        if sanitizing:
            student = sanitizing.group(1)
        elif 'WARNING' in line:
            found.setdefault(student, []).append(line)
    return found


def hidden_test_lines():
    """Every line of hidden test code in the source notebook that is not also shown to students."""
    source = nbformat.read(ROOT / 'source' / ASSIGNMENT / NOTEBOOK, as_version=4)
    hidden, public = set(), set()
    for cell in source.cells:
        hidden.update(line.strip() for block in HIDDEN.findall(cell.source) for line in block.splitlines()
                      if len(line.strip()) > 12)
        public.update(line.strip() for line in HIDDEN.sub('', cell.source).splitlines())
    return hidden - public


@pytest.fixture(scope='module')
def instructor(tmp_path_factory):
    """The README's plain-nbgrader workflow, run once on a class in a fresh checkout without a gradebook."""
    course = checkout(tmp_path_factory.mktemp('plain') / 'course', DEMO_STUDENTS)
    write_student(course, 'renamed', filled(*ada()))
    write_student(course, 'duplicator', build_duplicator())
    write_student(course, 'editor', build_editor())
    renamed_digest = digest(course / 'submitted/renamed' / ASSIGNMENT / RENAMED)
    assert not (course / 'gradebook.db').exists()
    steps = {'release': subprocess.run(['make', 'release'], cwd=course, capture_output=True, text=True)}
    steps['autograde'] = prefixed_nbgrader(course, course, 'autograde', ASSIGNMENT)
    steps['feedback'] = prefixed_nbgrader(course, course, 'generate_feedback', ASSIGNMENT)
    steps['export'] = prefixed_nbgrader(course, course, 'export')
    return SimpleNamespace(course=course, steps=steps, renamed_digest=renamed_digest,
                           marks=task_marks(course) if steps['autograde'].returncode == 0 else None)


def test_the_readme_workflow_works_from_a_clean_gradebook(instructor):
    course, steps = instructor.course, instructor.steps
    for name, result in steps.items():
        assert result.returncode == 0, f'{name} failed:\n{log_of(result)[-3000:]}'
    assert 'scratch gradebook' not in log_of(steps['release'])
    assert 'not recognized' not in log_of(steps['feedback'])       # no config warning from HideHiddenTests
    assert (course / 'release' / ASSIGNMENT / NOTEBOOK).read_bytes() == (
        ROOT / 'release' / ASSIGNMENT / NOTEBOOK).read_bytes()


def test_marks_agree_with_make_grade(instructor):
    assert instructor.marks == MAKE_GRADE_MARKS
    with open(instructor.course / 'grades.csv', newline='') as handle:
        exported = {row['student_id']: float(row['raw_score']) for row in csv.DictReader(handle)
                    if row['assignment'] == ASSIGNMENT}
    assert exported == {student: sum(task) for student, task in MAKE_GRADE_MARKS.items()}


def test_renamed_notebook_is_graded_from_a_copy_beside_the_students_file(instructor):
    folder = instructor.course / 'submitted/renamed' / ASSIGNMENT
    assert digest(folder / RENAMED) == instructor.renamed_digest
    assert repair.copy_of(folder / NOTEBOOK) == RENAMED
    assert any(f"renamed: graded '{RENAMED}' as '{NOTEBOOK}'" in line and f'renamed/{ASSIGNMENT}/{NOTEBOOK}' in line
               for line in log_of(instructor.steps['autograde']).splitlines())


def test_make_grade_stages_the_renamed_notebook_as_before(instructor, tmp_path):
    """After plain nbgrader wrote its copy, `make grade`'s staging still grades the student's own file."""
    notes = repair.stage(instructor.course, ASSIGNMENT, tmp_path / 'staged')
    assert notes['renamed'] == [f"graded '{RENAMED}' as '{NOTEBOOK}' (the only notebook submitted)"]
    assert repair.copy_of(tmp_path / 'staged/renamed' / ASSIGNMENT / NOTEBOOK) is None


def test_only_a_real_edit_of_a_locked_cell_is_reported_and_it_is_restored(instructor):
    reported = {student: {re.search(r'for cell (\S+) has changed', line).group(1) for line in lines
                          if "Attribute 'checksum'" in line}
                for student, lines in warnings_by_student(log_of(instructor.steps['autograde'])).items()}
    assert {student: cells for student, cells in reported.items() if cells} == {'editor': EDITED_CELLS}
    source = nbformat.read(instructor.course / 'source' / ASSIGNMENT / NOTEBOOK, as_version=4)
    graded = nbformat.read(instructor.course / 'autograded/editor' / ASSIGNMENT / NOTEBOOK, as_version=4)
    originals = {cell.metadata.nbgrader['grade_id']: cell.source for cell in source.cells
                 if cell.metadata.get('nbgrader', {}).get('grade_id') in EDITED_CELLS}
    restored = {cell.metadata.nbgrader['grade_id']: cell.source for cell in graded.cells
                if cell.metadata.get('nbgrader', {}).get('grade_id') in EDITED_CELLS}
    assert restored == originals


def test_duplicated_cells_are_resolved_as_make_grade_resolves_them(instructor):
    warnings = '\n'.join(warnings_by_student(log_of(instructor.steps['autograde'])).get('duplicator', []))
    assert "cell 'score_end' appeared 2 times" in warnings and "cell 'play' appeared 2 times" in warnings
    assert 'exists multiple times' not in warnings


def test_feedback_shows_the_students_traceback_and_no_hidden_test(instructor):
    feedback = instructor.course / 'feedback'
    page = html.unescape((feedback / 'max' / ASSIGNMENT / 'noughts_and_crosses.html').read_text())
    assert re.search(r'In your code:\n  File "[^"]+", line \d+, in score_end\n    raise NotImplementedError\(\)', page)
    secrets = hidden_test_lines()
    assert len(secrets) > 10
    for student in MAKE_GRADE_MARKS:
        page = html.unescape((feedback / student / ASSIGNMENT / 'noughts_and_crosses.html').read_text())
        assert 'coursetools' not in page and 'HIDDEN TESTS' not in page, student
        assert [line for line in secrets if line in page] == [], student


def test_exchange_round_trip_gives_a_correct_student_full_marks_and_her_feedback(instructor, tmp_path):
    """The instructor's commands use the exchange the course configures; a student on the machine names it (and
    keeps nbgrader's record of what she submitted in her own cache). She fetches the feedback the instructor
    released: her marks, and no hidden test."""
    course = instructor.course
    home = tmp_path / 'zoe'
    home.mkdir()
    student = [f'--Exchange.root={course / "exchange"}', '--CourseDirectory.course_id=minimax',
               f'--Exchange.cache={tmp_path / "zoe-cache"}', '--CourseDirectory.student_id=zoe']
    for folder, args in ((course, ['release_assignment', ASSIGNMENT]),
                         (home, ['fetch_assignment', ASSIGNMENT, *student])):
        result = prefixed_nbgrader(folder, course, *args)
        assert result.returncode == 0, log_of(result)[-2000:]
    nbformat.write(filled(*ada()), home / ASSIGNMENT / NOTEBOOK)
    submitted = prefixed_nbgrader(home, course, 'submit', ASSIGNMENT, *student)
    assert submitted.returncode == 0, log_of(submitted)[-2000:]
    planted = plant_links_in_the_exchange(course)
    collected = prefixed_nbgrader(course, course, 'collect', ASSIGNMENT)
    assert collected.returncode == 0, log_of(collected)[-2000:]
    for name in planted:        # named in collect's log, and never collected
        assert f'{name} is a link, a pipe or another special file' in log_of(collected), name
    assert 'eve+noughts_and_crosses' in log_of(collected)
    assert 'a link, or no folder: not collected' in log_of(collected)
    assert sorted(p.name for p in (course / 'submitted' / 'mallory' / ASSIGNMENT).iterdir()) == ['timestamp.txt']
    assert not (course / 'submitted' / 'eve' / ASSIGNMENT).exists()
    assert (course / 'submitted' / 'os+car' / ASSIGNMENT / 'answers.txt').read_text() == 'mine'
    assert 'folders nested more than 16 deep: not collected' in log_of(collected)
    assert not (course / 'submitted' / 'nesta' / ASSIGNMENT).exists()
    assert 'more than 10,000 files and folders: not collected' in log_of(collected)
    assert "zoe,,,,12.0\\nnew+noughts_and_crosses" in log_of(collected)       # named, escaped
    assert log_of(collected).count('a student id holds no control character') == 2
    assert [p.name for p in (course / 'submitted').iterdir() if not p.name.isprintable() or '<' in p.name] == []
    assert not (course / 'submitted' / 'heaps' / ASSIGNMENT).exists()
    # A newer folder in zoe's name that is not collected (hers, or another student's) leaves her collected work.
    newer = course / 'exchange' / 'minimax' / 'inbound' / f'zoe+{ASSIGNMENT}+2099-01-01 00:00:00.000000 UTC+4c5d6e'
    (newer / os.path.join(*['d'] * 40)).mkdir(parents=True)
    updated = prefixed_nbgrader(course, course, 'collect', ASSIGNMENT, '--update')
    assert updated.returncode == 0 and 'folders nested more than 16 deep' in log_of(updated), log_of(updated)[-2000:]
    assert (course / 'submitted' / 'zoe' / ASSIGNMENT / NOTEBOOK).exists()
    for step in ('autograde', 'generate_feedback', 'release_feedback'):
        done = prefixed_nbgrader(course, course, step, ASSIGNMENT, '--student=zoe')
        assert done.returncode == 0, log_of(done)[-2000:]
    assert task_marks(course)['zoe'] == (1, 3, 2, 1, 3, 2)
    fetched = prefixed_nbgrader(home, course, 'fetch_feedback', ASSIGNMENT, *student)
    assert fetched.returncode == 0, log_of(fetched)[-2000:]
    page, = (home / ASSIGNMENT / 'feedback').glob(f'*/{ASSIGNMENT}.html')
    text = html.unescape(page.read_text())
    assert f'{ASSIGNMENT} (Score: 12.0 / 12.0)' in text, text[:3000]
    assert 'HIDDEN TESTS' not in text and [line for line in hidden_test_lines() if line in text] == []


def plant_links_in_the_exchange(course):
    """What a student can put in the exchange's inbound folder, which every student can write, for the
    instructor's collect to take: mallory's notebook a link to the course's source notebook (its solutions would
    earn full marks), a link to a file of the instructor's, a pipe (a copy would wait on it for ever); eve's whole
    submission a link to the source folder; a folder of os+car's (an id with a +) named with no time in it;
    nesta's folders nested 40 deep; a student id with a line break; heaps's 10,001 files. Returns the names that
    must be left out."""
    inbound = course / 'exchange' / 'minimax' / 'inbound'
    when = '2026-11-20 17:00:00.000000 UTC'
    mallory = inbound / f'mallory+{ASSIGNMENT}+{when}+0a1b2c'
    mallory.mkdir()
    (mallory / 'timestamp.txt').write_text(when)
    (mallory / NOTEBOOK).symlink_to(course / 'source' / ASSIGNMENT / NOTEBOOK)
    (mallory / 'secrets.txt').symlink_to(course / 'nbgrader_config.py')
    os.mkfifo(mallory / 'pipe')
    (inbound / f'eve+{ASSIGNMENT}+{when}+3d4e5f').symlink_to(course / 'source' / ASSIGNMENT)
    oscar = inbound / f'os+car+{ASSIGNMENT}+sometime on Friday+6a7b8c'     # stopped nbgrader's collect for all
    oscar.mkdir()
    (oscar / 'answers.txt').write_text('mine')
    nesta = inbound / f'nesta+{ASSIGNMENT}+{when}+9d8e7f'     # 1,100 deep had stopped nbgrader's collect for all
    (nesta / os.path.join(*['d'] * 40)).mkdir(parents=True)
    forger = inbound / f'zoe,,,,12.0\nnew+{ASSIGNMENT}+{when}+2e3f4a'     # a line break had stopped grading
    forger.mkdir()
    (forger / NOTEBOOK).write_text('{}')
    scripter = inbound / f'<img src=x onerror=alert(1)>+{ASSIGNMENT}+{when}+3a4b5c'     # formgrader shows an id raw
    scripter.mkdir()
    (scripter / NOTEBOOK).write_text('{}')
    heaps = inbound / f'heaps+{ASSIGNMENT}+{when}+1f2e3d'
    heaps.mkdir()
    for number in range(10_001):
        (heaps / f'{number}.txt').touch()
    return [NOTEBOOK, 'secrets.txt', 'pipe']


def formgrader_api(course):
    """The API formgrader's buttons call, on the course's own configuration."""
    config = PyFileConfigLoader('nbgrader_config.py', path=str(course)).load_config()
    return NbGraderAPI(CourseDirectory(config=config), config=config)


def test_formgrader_finds_the_exchange_on_a_fresh_checkout(tmp_path):
    """formgrader disables Release and Collect when its exchange is missing (NbGraderAPI.exchange_missing)."""
    course = checkout(tmp_path / 'course', students=[])
    api = formgrader_api(course)
    assert api.exchange_root == str(course / 'exchange')
    assert not api.exchange_missing


@pytest.fixture(scope='module')
def formgrader_course(tmp_path_factory):
    """A checkout with no gradebook yet and one renamed notebook, generated with `.venv/bin/nbgrader`."""
    course = checkout(tmp_path_factory.mktemp('formgrader') / 'course', students=[])
    write_student(course, 'renamed', filled(*ada()))
    for student in (*OVER_A_LIMIT, 'novelist'):
        write_student(course, student, CATALOGUE[student][0]())
    generated = prefixed_nbgrader(course, course, 'generate_assignment', ASSIGNMENT, '--force')
    return course, generated


def test_prefixed_nbgrader_creates_the_gradebook(formgrader_course):
    course, generated = formgrader_course
    assert generated.returncode == 0, log_of(generated)[-2000:]
    assert (course / 'gradebook.db').exists()


@pytest.mark.filterwarnings('ignore::sqlalchemy.exc.SAWarning')   # nbgrader's own, on the command line too
def test_formgrader_autograde_grades_a_renamed_notebook(formgrader_course):
    course, _ = formgrader_course
    api = formgrader_api(course)
    result = api.autograde(ASSIGNMENT, 'renamed')
    assert result['success'], result.get('error', '') + result.get('log', '')[-2000:]
    assert f"graded '{RENAMED}' as '{NOTEBOOK}'" in result['log']
    assert task_marks(course) == {'renamed': (1, 3, 2, 1, 3, 2)}


@pytest.mark.filterwarnings('ignore::sqlalchemy.exc.SAWarning')
def test_formgrader_refuses_a_notebook_over_a_limit_before_running_any_of_it(formgrader_course):
    """The hostile catalogue's bomber (5,000 cells more than the release) and padder (5 MB of code), autograded by formgrader's own
    button (plain nbgrader, no `make grade` staging): refused with the reason, nothing of them run or kept."""
    course, _ = formgrader_course
    api = formgrader_api(course)
    for student, reason in OVER_A_LIMIT.items():
        result = api.autograde(ASSIGNMENT, student)
        assert not result['success'] and reason in result['log'], result.get('log', '')[-2000:]
        assert not (course / 'autograded' / student / ASSIGNMENT / NOTEBOOK).exists()
    assert {student: task_marks(course)[student] for student in OVER_A_LIMIT} == {   # as `make grade` gives them
        student: CATALOGUE[student][1] for student in OVER_A_LIMIT}


@pytest.mark.filterwarnings('ignore::sqlalchemy.exc.SAWarning')
def test_formgrader_leaves_out_text_no_mark_depends_on_as_make_grade_does(formgrader_course):
    """The novelist's 12 MB markdown cell: left out of the graded copy, with the reason in the log, its marks
    those `make grade` gives."""
    course, _ = formgrader_course
    result = formgrader_api(course).autograde(ASSIGNMENT, 'novelist')
    assert result['success'], result.get('error', '') + result.get('log', '')[-2000:]
    assert 'novelist: left out 1 cell(s) of text, 12,100,000 characters' in result['log']
    assert task_marks(course)['novelist'] == CATALOGUE['novelist'][1]
    assert (course / 'autograded/novelist' / ASSIGNMENT / NOTEBOOK).stat().st_size < 1024 ** 2


def test_make_clean_removes_the_staging_folder_too_and_keeps_the_gradebook(tmp_path):
    course = checkout(tmp_path / 'course', students=['ada'])
    for folder in ('.grading/submitted/ada', 'autograded', 'feedback', 'reports'):
        (course / folder).mkdir(parents=True)
    (course / 'gradebook.db').write_text('manual grades and comments')
    result = subprocess.run(['make', 'clean'], cwd=course, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in course.iterdir() if not p.name.startswith('.')) == [
        'Makefile', 'backups', 'coursetools', 'demo_class', 'exchange', 'nbgrader_config.py', 'pyproject.toml',
        'release', 'requirements.txt', 'roster.csv', 'source', 'submitted']
    assert not (course / '.grading').exists() and (course / 'submitted/ada' / ASSIGNMENT / NOTEBOOK).exists()
    kept = list((course / 'backups').glob('gradebook-*.db'))
    assert len(kept) == 1 and kept[0].read_text() == 'manual grades and comments'
    assert f'kept as backups/{kept[0].name}' in result.stdout


def hide(source, traceback):
    cell = nbformat.v4.new_code_cell(source, metadata={'nbgrader': {'grade': True, 'grade_id': 't', 'points': 1}})
    cell.outputs = [nbformat.v4.new_output('error', ename='AssertionError', evalue='no', traceback=traceback)]
    cell, _ = HideHiddenTests().preprocess_cell(cell, {}, 0)
    return cell.source, cell.outputs[0].traceback


def test_feedback_keeps_the_students_frames_and_drops_hidden_checks():
    source = ('assert score(EMPTY_BOARD) == 0, "score of the empty board"\n### BEGIN HIDDEN TESTS\n'
              'from coursetools.checks import noughts_and_crosses as hidden\nhidden.score_values(score)\n'
              '### END HIDDEN TESTS\n')
    student = 'In your code:\n  File "/tmp/ipykernel_7/1.py", line 3, in score\n    return best[0]'
    traceback = [student,
                 'test cell, line 1: assert score(EMPTY_BOARD) == 0, "score of the empty board"',
                 '\x1b[0;32m----> 4\x1b[0m \x1b[43mhidden\x1b[39m\x1b[38;5;241m.\x1b[39mscore_values(score)\n'
                 '      5 ### END HIDDEN TESTS',
                 'File /course/coursetools/checks/noughts_and_crosses.py:88, in score_values(score)\n'
                 '     87 for board in positions():\n---> 88     assert got == want',
                 '\x1b[0;31mAssertionError\x1b[0m: no']
    shown, kept = hide(source, traceback)
    assert 'hidden' not in shown
    assert kept == [student, traceback[1], traceback[-1]]


def test_the_renamed_notebook_hook_writes_only_the_copy_and_keeps_it_current(tmp_path):
    folder = tmp_path / 'submitted/zoe' / ASSIGNMENT
    folder.mkdir(parents=True)
    nbformat.write(filled(*ada()), folder / NOTEBOOK)
    listed = [str(folder / NOTEBOOK)]
    repair.grade_renamed_notebooks(ROOT, assignment=ASSIGNMENT, student='*', notebooks=listed)
    assert listed == [str(folder / NOTEBOOK)] and os.listdir(folder) == [NOTEBOOK]     # as `make grade` stages it

    (folder / NOTEBOOK).rename(folder / RENAMED)
    for answers in (ada(), ada(), (ada()[0], {'print_state': 'def print_state(state):\n    pass'})):
        nbformat.write(filled(*answers), folder / RENAMED)
        before = digest(folder / RENAMED)
        listed = sorted(str(p) for p in folder.iterdir())
        repair.grade_renamed_notebooks(ROOT, assignment=ASSIGNMENT, student='*', notebooks=listed)
        assert listed == [str(folder / NOTEBOOK)] and digest(folder / RENAMED) == before
        copy = nbformat.read(folder / NOTEBOOK, as_version=4)
        assert copy.metadata.coursetools == {'graded_copy_of': RENAMED}
        assert [c.source for c in copy.cells] == [c.source for c in nbformat.read(folder / RENAMED, as_version=4).cells]


def test_released_sources_are_read_again_when_the_release_changes(tmp_path):
    released = tmp_path / 'release' / ASSIGNMENT / NOTEBOOK
    released.parent.mkdir(parents=True)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('x = 1')])
    nbformat.write(nb, released)
    assert repair.released_sources(tmp_path, ASSIGNMENT, NOTEBOOK) == {'x = 1'}
    nb.cells.append(nbformat.v4.new_markdown_cell('A new task.'))
    nbformat.write(nb, released)
    assert repair.released_sources(tmp_path, ASSIGNMENT, NOTEBOOK) == {'x = 1', 'A new task.'}
    released.unlink()
    assert repair.released_sources(tmp_path, ASSIGNMENT, NOTEBOOK) == frozenset()
