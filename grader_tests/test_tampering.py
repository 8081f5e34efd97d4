"""Tampering notes decided in the grading process (coursetools/judge/tampering.py, wired in coursetools/grading/pipeline.py): the
static scan of the student's code cells, locked cells compared with the gradebook, and nbgrader's own warnings."""
import logging
import threading

import nbformat
import pytest

from conftest import ROOT, copy_course, needs_sandbox, run_grade
from coursetools.instructor import democlass
from coursetools.instructor import report
from coursetools.judge import tampering
from coursetools.grading.pipeline import CourseCells, NbgraderWarnings
from test_hostile import ASSIGNMENT, NOTEBOOK, build_deleter, build_editor, filled, prepend, released, write_student

# (source, phrase a note must contain): one per pattern of tampering.PATTERNS, as a student would write it
PLAIN = [
    ('get_ipython().input_transformers_post.append(lambda lines: lines)', 'input transformers'),
    ('get_ipython().input_transformers_cleanup.insert(0, str)', 'input transformers'),
    ('get_ipython().ast_transformers.append(object())', 'AST transformers'),
    ('shell = get_ipython()\nshell.run_cell = lambda *a, **k: None', 'IPython shell methods (run_cell)'),
    ('get_ipython().run_cell_async = None', 'run_cell_async'),
    ('get_ipython().transform_cell = str', 'transform_cell'),
    ('get_ipython().run_code = None\nget_ipython().run_ast_nodes = None', 'run_code, run_ast_nodes'),
    ('import IPython\nIPython.core.interactiveshell.InteractiveShell.showtraceback = print', 'showtraceback'),
    ('get_ipython().set_custom_exc((Exception,), print)', 'set_custom_exc'),
    ('get_ipython().events.register("pre_run_cell", print)', 'pre_run_cell'),
    ('kernel = get_ipython().kernel\nkernel.do_execute = None', "kernel's methods (do_execute)"),
    ('get_ipython().kernel.shell_handlers["execute_request"] = print', 'execute_request'),
    ('get_ipython().kernel.dispatch_shell = print', 'dispatch_shell'),
    ('get_ipython().kernel.send_response = print', 'send_response'),
    ('import sys\nsys.settrace(print)', 'set a trace or profile function (settrace)'),
    ('import sys\nsys.setprofile(print)', 'setprofile'),
    ('import threading\nthreading.settrace(print)', 'settrace'),
    ('import sys\nsys.excepthook = print', "interpreter's hooks (excepthook)"),
    ('import sys\nsys.displayhook = print', 'displayhook'),
    ('import coursetools.checks', "tried to import the course's modules (coursetools)"),
    ('from coursetools import oracle', "import the course's modules"),
    ('import _course_grader\n_course_grader.observe = lambda: []', "grader's module in the kernel (_course_grader)"),
    ('import sys\nsys.__stdout__.write("x")', "wrote around the notebook's output (__stdout__)"),
    ('import os\nos.write(1, b"x")', 'file descriptor 1'),
    ('import os\nos.dup2(os.open("/tmp/x", 0), 2)', 'file descriptor 2'),
    ('open("/dev/stdout", "w").write("x")', '/dev/stdout'),
    ('import sys\nframe = sys._getframe(1)', "read the interpreter's frames or objects (_getframe)"),
    ('import inspect\ncaller = inspect.currentframe().f_back', 'currentframe, f_back'),
    ('import inspect\nprint(inspect.stack())', 'inspect.stack'),
    ('import gc\nfor o in gc.get_objects(): pass', 'get_objects'),
    ('import gc\ngc.get_referrers(print)', 'get_referrers'),
    ('get_ipython().kernel.comm_manager.comms.clear()', "kernel's messaging (comm_manager)"),
    ('k = get_ipython().kernel\nk.session.send(k.iopub_socket, "stream", {})', 'iopub_socket, session.send'),
    ('import zmq', 'zmq'),
]

# The same things, with the names built at run time from literals
OBFUSCATED = [
    ("setattr(get_ipython(), 'run_' + 'cell', None)", 'run_cell'),
    ("getattr(get_ipython(), 'llec_mrofsnart'[::-1])", 'transform_cell'),
    ("getattr(get_ipython(), ''.join(['input_', 'transformers', '_post'])).append(str)", 'input transformers'),
    ("getattr(get_ipython(), ''.join(reversed('kcabecartwohs')))", 'showtraceback'),
    ("getattr(__import__('sys'), ''.join(map(chr, [115, 101, 116, 116, 114, 97, 99, 101])))(print)", 'settrace'),
    ("import codecs\ngetattr(__import__('sys'), codecs.decode('frgcebsvyr', 'rot13'))(print)", 'setprofile'),
    ("__import__('course' + 'tools.checks')", "import the course's modules"),
    ("import importlib\nimportlib.import_module(f'{\"course\"}tools')", "import the course's modules"),
    ("import sys\nsys.modules['_course' + '_grader'].observe = lambda: []", '_course_grader'),
    ("import base64\nexec(base64.b64decode('aW1wb3J0IHN5czsgc3lzLnNldHRyYWNlKE5vbmUp'))", 'settrace'),
    ("exec(bytes.fromhex('7a6d71').decode())", 'zmq'),
    ("exec('import sys\\nsys.' + 'excepthook = print')", 'excepthook'),
    ("getattr(__import__('sys'), '_GETFRAME'.lower())()", '_getframe'),
    ("%time get_ipython().run_cell_async = None", 'run_cell_async'),           # IPython syntax: translated
    ("def broken(:\n    sys.settrace(print)", 'settrace'),                      # no parse: text search
]


@pytest.mark.parametrize('source, phrase', PLAIN + OBFUSCATED)
def test_each_pattern_is_found(source, phrase):
    found = tampering.notes_of(tampering.scan(source))
    assert any(phrase in note and note.startswith('its code ') for note in found), found


def test_ordinary_code_gives_no_note():
    source = '''
import sys, copy, functools, warnings
import numpy as np

@functools.lru_cache(maxsize=None)
def score(state, player):
    """Minimax: return (value, move). Uses sys.stdout.write for debugging, see trace below."""
    print('(debug) score', state, file=sys.stderr)
    warnings.warn('slow')
    trace = [line.strip() for line in 'a.b\\nc'.split('\\n')]
    return max(((0, (r, c)) for r in range(3) for c in range(3)), default=(0, None))
'''
    assert tampering.notes_of(tampering.scan(source)) == []


def test_cpython_s_spurious_ast_error_costs_no_note(monkeypatch):
    """CPython 3.11's ast.parse may raise "AST constructor recursion depth mismatch" at random in a process with
    threads (python/cpython#106905; it once named an honest notebook "could not read" in the trust class). A
    parse that fails so is tried again, and one that keeps failing falls back to reading the text."""
    import ast
    real, failures = ast.parse, []

    def flaky(source, *args, **kwargs):
        if len(failures) < limit:
            failures.append(source)
            raise SystemError('AST constructor recursion depth mismatch (before=51, after=98)')
        return real(source, *args, **kwargs)
    monkeypatch.setattr(ast, 'parse', flaky)
    for limit in (1, 10 ** 6):                # once: the retry parses it; always: the text is read instead
        failures.clear()
        found = tampering.notes_of(tampering.scan("import sys\nsys.settrace(print)"))
        assert failures and any('settrace' in note for note in found), (limit, found)
        assert tampering.notes_of(tampering.scan('x = 1')) == []


def release():
    return nbformat.read(ROOT / 'release' / ASSIGNMENT / NOTEBOOK, as_version=4)


def test_the_demo_class_gives_no_note():
    students = sorted((ROOT / 'demo_class' / ASSIGNMENT).glob('*.py'))
    assert len(students) >= 10
    for answers in students:
        nb = democlass.fill(release(), *democlass.read_answers(answers))
        assert tampering.notes(nb) == [], answers.stem


def test_the_course_own_cells_are_not_read_but_a_student_cell_marked_locked_is():
    nb = release()
    locked = {cell.metadata.nbgrader.grade_id: cell.source for cell in nb.cells
              if cell.cell_type == 'code' and cell.metadata.get('nbgrader', {}).get('locked')}
    course_code = next(cell for cell in nb.cells if cell.metadata.get('nbgrader', {}).get('grade_id') == 'helpers')
    course_code.source += '\nimport coursetools'          # pretend the course's helper cell used the package
    assert tampering.notes(nb, {**locked, 'helpers': course_code.source}) == []
    # nbgrader puts a deleted test cell back under a comment line: still the course's
    nb.cells.append(nbformat.v4.new_code_cell('# This cell (id:helpers) was missing.\n\n' + course_code.source,
                                              metadata={'nbgrader': {'grade_id': 'helpers', 'locked': True}}))
    assert tampering.notes(nb, {**locked, 'helpers': course_code.source}) == []
    # a student's cell claiming to be locked (metadata is the student's) is read when the gradebook is given
    nb.cells.append(nbformat.v4.new_code_cell('import zmq', metadata={'nbgrader': {'locked': True}}))
    assert tampering.notes(nb) == []
    assert tampering.notes(nb, {**locked, 'helpers': course_code.source}) == [
        "its code reached the kernel's messaging (zmq)"]


def released_expected():
    """Locked cells as the gradebook would give them, from the release (checksums nbgrader computes)."""
    from nbgrader.utils import compute_checksum
    return {cell.metadata.nbgrader.grade_id: (compute_checksum(cell), (cell.source,)) for cell in release().cells
            if cell.metadata.get('nbgrader', {}).get('locked')}


def test_locked_cells_changed_or_deleted():
    expected = released_expected()
    preamble, answers = democlass.read_answers(ROOT / 'demo_class' / ASSIGNMENT / 'ada.py')
    assert tampering.locked_cell_notes(filled(preamble, answers), expected) == []
    edited = tampering.locked_cell_notes(build_editor(), expected)
    assert edited == [f'changed a locked cell ({gid})' for gid in
                      ('score_end-rows-and-columns', 'score_end-diagonals', 'score_end-draws-and-unfinished')]
    deleted = tampering.locked_cell_notes(build_deleter(), expected)
    assert 'deleted a locked cell (print_state-format)' in deleted and 'deleted a locked cell (score-moves)' in deleted
    assert not any(note.startswith('changed') for note in deleted)
    unlocked = released()
    for cell in unlocked.cells:
        if cell.metadata.get('nbgrader', {}).get('grade_id') == 'intro':
            cell.metadata.nbgrader.locked = False        # same text, but no longer locked
    assert tampering.locked_cell_notes(unlocked, expected) == ['changed a locked cell (intro)']


def test_nbgrader_warnings_are_collected_per_thread():
    logger = logging.getLogger('test_tampering.nbgrader')
    logger.setLevel(logging.INFO)
    logger.propagate = False
    seen, ready = {}, threading.Barrier(2)

    def student(name):
        with NbgraderWarnings(logger) as warnings:
            ready.wait()
            logger.info('%s: not a warning', name)
            logger.warning('Attribute %r for cell %s has changed!', 'checksum', name)
            ready.wait()
        seen[name] = warnings.notes()

    threads = [threading.Thread(target=student, args=(name,)) for name in ('amy', 'bob')]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == {name: [f"nbgrader: Attribute 'checksum' for cell {name} has changed!"] for name in ('amy', 'bob')}
    assert not logger.handlers
    with NbgraderWarnings(logger) as many:
        for index in range(12):
            logger.warning('warning %d', index)
    assert len(many.notes()) == 9 and many.notes()[-1] == 'nbgrader: 4 more warnings'


# --- through `make grade`

SNEAKY = """
import sys
_agent = sys.modules.get('_course' + '_grader')
if _agent is not None:
    setattr(_agent, 'obs' + 'erve', lambda *args: [])    # blind the grader's report
"""


@pytest.fixture(scope='module')
def graded(tmp_path_factory):
    course = copy_course(tmp_path_factory.mktemp('tampering') / 'course', students=('ada',))
    write_student(course, 'sneaky', filled(*prepend('print_state', SNEAKY)))
    write_student(course, 'editor', build_editor())
    write_student(course, 'deleter', build_deleter())
    result = run_grade(course, ASSIGNMENT, '--SandboxedExecute.timeout=30')
    return course, result


@needs_sandbox
def test_notes_reach_the_report_and_the_output(graded):
    course, result = graded
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    db = 'sqlite:///' + str(course / 'gradebook.db')
    problems = report.gather(course, ASSIGNMENT, db)['problems']
    printed = result.stdout + result.stderr
    sneaky = "its code touched the grader's module in the kernel (_course_grader)"
    expected = {
        'sneaky': [sneaky],
        'editor': ['changed a locked cell (score_end-rows-and-columns)', 'changed a locked cell (score_end-diagonals)',
                   "nbgrader: Attribute 'checksum' for cell score_end-diagonals has changed!"],
        'deleter': ['deleted a locked cell (print_state-format)', 'deleted a locked cell (perfect_game-result)',
                    'nbgrader: Missing grade cell print_state-format encountered, adding to notebook'],
    }
    for student, notes in expected.items():
        for note in notes:
            assert any(note in found for found in problems.get(student, [])), (student, note, problems.get(student))
            assert note in printed, (student, note)
    assert 'ada' not in problems, problems.get('ada')
    assert not any('its code' in note for student in ('editor', 'deleter') for note in problems[student])
    graded_nb = nbformat.read(course / 'autograded' / 'sneaky' / ASSIGNMENT / NOTEBOOK, as_version=4)
    assert sneaky in graded_nb.metadata['coursetools']['grading_notes']


@needs_sandbox
def test_the_gradebook_locked_cells_match_an_honest_submission(graded):
    """The released test cells lack their hidden tests: against the gradebook they count as unchanged."""
    course, _ = graded
    cells = CourseCells.from_gradebook('sqlite:///' + str(course / 'gradebook.db'), ASSIGNMENT, ASSIGNMENT)
    assert 'score-values' in cells.expected and 'helpers' in cells.sources and 'intro' not in cells.sources
    ada = nbformat.read(course / 'submitted' / 'ada' / ASSIGNMENT / NOTEBOOK, as_version=4)
    assert tampering.locked_cell_notes(ada, cells.expected) == []
    assert tampering.notes(ada, cells.sources) == []
