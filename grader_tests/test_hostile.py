"""A catalogue of careless and hostile submissions, graded through `make grade`'s own code path.

Each student is written as a student would write it, starting from a correct answer set (demo student ada) and
changing what that student changed. The class is graded once; then every student's marks are checked, and so is
everything they must not have been able to touch.
"""
import copy
import hashlib
import json
import os
import pathlib
import sqlite3

import nbformat
import pytest

from conftest import ROOT, copy_course, needs_sandbox, processes_marked, run_grade
from coursetools.instructor import democlass
from coursetools.instructor import marks
from coursetools.instructor import report
from test_demo_class import EXPECTED as DEMO_EXPECTED

pytestmark = needs_sandbox

ASSIGNMENT = 'noughts_and_crosses'
NOTEBOOK = f'{ASSIGNMENT}.ipynb'
TASKS = ('print_state', 'score_end', 'play', 'moves', 'score', 'perfect_game')
MARKER = 'student-process-left-behind-7d1c'
CELL_TIMEOUT = 6       # an honest cell here takes about 1 s; the loopers wait this long in each cell that calls them

ESCAPE = r'''
import os
touched = []
here = os.path.abspath('.')
folder = here
for up in range(6):  # every ancestor and two levels below it
    folder = os.path.dirname(folder)
    for root, dirs, files in os.walk(folder):
        if root.count(os.sep) - folder.count(os.sep) >= 2 or root.startswith(('/proc', '/sys', '/usr', '/dev')):
            dirs[:] = []
        for name in files:
            path = os.path.join(root, name)
            if (name.endswith('.ipynb') and not path.startswith(here)) or name == 'gradebook.db':
                try:
                    with open(path, 'w') as handle:
                        handle.write('{}')
                    touched.append(path)
                except OSError:
                    pass
        for name in ('source', 'submitted', 'release'):
            try:
                with open(os.path.join(root, name, 'pwned.txt'), 'w') as handle:
                    handle.write('x')
                touched.append(os.path.join(root, name))
            except OSError:
                pass
for link in ('/proc/%d/cwd' % os.getppid(), '/proc/1/cwd'):
    try:
        touched.extend(os.path.join(link, name) for name in os.listdir(link) if name in ('source', 'gradebook.db'))
    except OSError:
        pass
print('escape touched:', touched)
'''

FORK = f'''
import os, subprocess, time
subprocess.Popen(['{MARKER}', '600'], executable='/bin/sleep')
if os.fork() == 0:
    os.setsid()
    os.execv('/bin/sleep', ['{MARKER}', '600'])
time.sleep(0.5)
def _marked(pid):
    try:
        return '{MARKER}' in open(f'/proc/{{pid}}/cmdline').read()
    except OSError:
        return False
print('left running:', sum(map(_marked, filter(str.isdigit, os.listdir('/proc')))))
'''

# A folder 3,000 levels deep where the next student's kernel starts, and another in /tmp: Python's own tree walks
# (shutil.rmtree, os.walk) stop at about 1,000 with RecursionError, which had stopped `make grade` for the class.
BURROW = '''
import os as _os
_here = _os.getcwd()
for _place in (_here, '/tmp'):
    _os.chdir(_place)
    for _ in range(3000):
        _os.mkdir('deep')
        _os.chdir('deep')
_os.chdir(_here)
'''

HIDE_ERRORS = '''
import sys
import IPython
get_ipython().set_custom_exc((BaseException,), lambda *args, **kwargs: None)
IPython.core.interactiveshell.InteractiveShell.showtraceback = lambda *args, **kwargs: None
sys.excepthook = lambda *args: None
picture = lambda state: ''
def printed(state):
    return [' | |o', 'x|x|o', 'x|o|']
hidden = None
'''


def ada():
    return democlass.read_answers(ROOT / 'demo_class' / ASSIGNMENT / 'ada.py')


def with_answers(**changes):
    preamble, answers = ada()
    answers = dict(answers)
    for grade_id, source in changes.items():
        answers[grade_id] = source
    return preamble, answers


def released():
    return nbformat.read(ROOT / 'release' / ASSIGNMENT / NOTEBOOK, as_version=4)


def filled(preamble, answers):
    return democlass.fill(released(), preamble, answers)


def prepend(grade_id, code):
    preamble, answers = ada()
    return with_answers(**{grade_id: code.strip() + '\n\n\n' + answers[grade_id]})


def replace(grade_id, old, new):
    preamble, answers = ada()
    assert old in answers[grade_id]
    return with_answers(**{grade_id: answers[grade_id].replace(old, new)})


def exits_on_a_full_board():
    return replace('moves', '    result = []\n', '    result = []\n    if all(cell != " " for row in state for cell in row):\n'
                   '        import os\n        os._exit(1)\n')


# Each entry: student -> (how to build the folder, expected marks per task, a phrase the grader's notes must contain)
def build_duplicator():
    nb = filled(*ada())
    ids = [cell.metadata.get('nbgrader', {}).get('grade_id') for cell in nb.cells]
    score_end = nb.cells[ids.index('score_end')]
    nb.cells.insert(ids.index('score_end'), copy.deepcopy(score_end))        # pasted twice
    play = nb.cells[ids.index('play') + 1]
    first = copy.deepcopy(play)                                   # a split cell: both halves keep the id
    first.source = 'def flip(mark):\n    return "o" if mark == "x" else "x"'
    nb.cells.insert(ids.index('play') + 1, first)
    for cell in nb.cells:
        cell.id = nbformat.corpus.words.generate_corpus_id()
    return nb


def build_deleter():
    nb = filled(*ada())
    nb.cells = [cell for cell in nb.cells if not cell.metadata.get('nbgrader', {}).get('grade')]
    return nb


def build_editor():
    preamble, answers = ada()
    answers['score_end'] = ('def score_end(state):\n    """Return 1 if x has a line, -1 if o has, 0 for a full board '
                            'without one, None if play goes on."""\n    return None')
    nb = filled(preamble, answers)
    for cell in nb.cells:
        if cell.metadata.get('nbgrader', {}).get('grade_id', '').startswith('score_end-'):
            cell.source = 'pass  # my tests pass now'
    return nb


def build_retyper():
    nb = filled(*ada())
    for cell in nb.cells:
        grade_id = cell.metadata.get('nbgrader', {}).get('grade_id')
        if grade_id in ('moves-empty-cells', 'moves'):
            cell.cell_type = 'markdown'
            cell.pop('outputs', None)
            cell.pop('execution_count', None)
    return nb


def build_hider():
    nb = released()
    for cell in nb.cells:
        if cell.metadata.get('nbgrader', {}).get('grade_id') == 'print_state':
            cell.source = HIDE_ERRORS + '\n\n' + cell.source
    return nb


WAIT_FOREVER = """
import time


def wait_forever():
    while True:
        try:
            time.sleep(0.1)
        except BaseException:  # swallows the grader's interrupt too
            pass
"""


def build_looper():
    preamble, answers = ada()
    score = answers['score'].replace('    end = score_end(state)\n', '    wait_forever()\n    end = score_end(state)\n', 1)
    return filled(*with_answers(score=WAIT_FOREVER.strip() + '\n\n\n' + score))


def notebook_v3():
    return nbformat.writes(nbformat.convert(filled(*ada()), 3), version=3)


def notebook_v4(minor):
    """As an older Jupyter, an editor or an LMS converter saves it: nbformat 4.<minor>, no cell ids."""
    data = json.loads(nbformat.writes(filled(*ada())))
    data['nbformat_minor'] = minor
    for cell in data['cells']:
        cell.pop('id', None)
    return json.dumps(data, indent=1)


CATALOGUE = {
    'ada': (lambda: filled(*ada()), (1, 3, 2, 1, 3, 2), None),
    'escaper': (lambda: filled(*prepend('print_state', ESCAPE)), (1, 3, 2, 1, 3, 2), None),
    'forker': (lambda: filled(*prepend('print_state', FORK)), (1, 3, 2, 1, 3, 2), None),
    'burrower': (lambda: filled(*prepend('print_state', BURROW)), (1, 3, 2, 1, 3, 2), None),
    'exiter': (lambda: filled(*exits_on_a_full_board()), (1, 3, 2, 0, 3, 2), None),
    'hog': (lambda: filled(*replace('moves', '    result = []\n',
                                    "    result = []\n    if state == EMPTY_BOARD:\n"
                                    "        hoard = bytearray(3 * 1024 ** 3)\n")), (1, 3, 2, 0, 3, 0), None),
    'looper': (build_looper, (1, 3, 2, 1, 0, 0), None),
    'flooder': (lambda: filled(*prepend('print_state', "print('flood ' * 10, end='')\nprint('x' * 10_000_000)")),
                (1, 3, 2, 1, 3, 2), None),
    'duplicator': (build_duplicator, (1, 3, 2, 1, 3, 2), 'appeared 2 times'),
    'deleter': (build_deleter, (1, 3, 2, 1, 3, 2), None),
    'editor': (build_editor, (1, 0, 2, 1, 3, 0), None),
    'retyper': (build_retyper, (1, 3, 2, 1, 3, 2), None),
    'hider': (build_hider, (0, 0, 0, 0, 0, 0), None),
    'truncated': (lambda: '{"cells": [', (0, 0, 0, 0, 0, 0), 'not valid JSON'),
    'empty': (lambda: '', (0, 0, 0, 0, 0, 0), 'is empty'),
    'old_format': (notebook_v3, (1, 3, 2, 1, 3, 2), 'converted from nbformat 3'),
    'format_4_0': (lambda: notebook_v4(0), (1, 3, 2, 1, 3, 2), None),
    'format_4_4': (lambda: notebook_v4(4), (1, 3, 2, 1, 3, 2), None),
    'renamed': (lambda: filled(*ada()), (1, 3, 2, 1, 3, 2), 'noughts_and_crosses (1).ipynb'),
}
HONEST_DEMO_STUDENTS = ('cat', 'kim')

# A fake hidden-checks package shipped with the notebook: if the kernel imported it, every check would fail.
FAKE_CHECKS = """print('FAKE-CHECKS-IMPORTED')
def __getattr__(name):
    def fake(*args, **kwargs):
        raise AssertionError('FAKE-CHECKS-USED')
    return fake
"""
EXTRA_FILES = {'impostor': {'coursetools/__init__.py': '', 'coursetools/checks/__init__.py': '',
                            'coursetools/checks/noughts_and_crosses.py': FAKE_CHECKS}}
CATALOGUE['impostor'] = (lambda: filled(*ada()), (1, 3, 2, 1, 3, 2), None)

# A timestamp.txt nbgrader cannot read: nbgrader's own autograde then stops on that student (an AttributeError of
# its own), so the answers earned nothing; the time is left out instead (no late penalty), and the report says so.
EXTRA_FILES['clockless'] = {'timestamp.txt': 'handed in on Tuesday, before lunch'}
CATALOGUE['clockless'] = (lambda: filled(*ada()), (1, 3, 2, 1, 3, 2), 'timestamp.txt holds no time nbgrader can read')

# Leaves files where a later kernel would read them at start-up or import time (IPython start-up folder,
# modules named like numpy in HOME, /tmp and /dev/shm).
PLANT = """
import os
home = os.path.expanduser('~')
os.makedirs(f'{home}/.ipython/profile_default/startup', exist_ok=True)
with open(f'{home}/.ipython/profile_default/startup/00-planted.py', 'w') as handle:
    handle.write("print('PLANTED-BY-PLANTER')\\nscore_end = None\\n")
for folder in (home, '/tmp', '/dev/shm'):
    try:
        with open(f'{folder}/numpy.py', 'w') as handle:
            handle.write("print('PLANTED-BY-PLANTER')\\n")
    except OSError:
        pass
"""
# Freezes its kernel's parent (once a fork server; now the sandbox's init, pid 1, which it leaves alone), then kills
# its own kernel in a later cell: the grader must go on, and marks are the exiter's.
FREEZE = """
import os, signal
if os.getppid() != 1:
    os.kill(os.getppid(), signal.SIGSTOP)
"""


def freezes_then_exits():
    preamble, answers = exits_on_a_full_board()
    return preamble, {**answers, 'print_state': FREEZE.strip() + '\n\n\n' + answers['print_state']}


CATALOGUE['freezer'] = (lambda: filled(*freezes_then_exits()), (1, 3, 2, 0, 3, 2), None)
CATALOGUE['planter'] = (lambda: filled(*prepend('print_state', PLANT)), (1, 3, 2, 1, 3, 2), None)

# --- Forging marks (issue 10). The tests are judged outside the kernel, so each of these earns only what its real
# answers deserve. The first family changes how IPython runs cells, with every function left a stub.


def stubs_with(code):
    """The released notebook, untouched except for `code` at the top of the first solution cell."""
    nb = released()
    for cell in nb.cells:
        if cell.metadata.get('nbgrader', {}).get('grade_id') == 'print_state':
            cell.source = code.strip() + '\n\n\n' + cell.source
    return nb


TRY_EVERYTHING = """
def swallow(lines):
    return ['try:\\n'] + ['    ' + line for line in lines] + ['\\n', 'except BaseException:\\n', '    pass\\n']
get_ipython().input_transformers_post.append(swallow)
"""
TRANSFORM_CELL = """
import textwrap
def wrapped(cell):
    return 'try:\\n' + textwrap.indent(cell, '    ') + '\\nexcept BaseException:\\n    pass\\n'
get_ipython().transform_cell = wrapped
"""
RUN_CELL = """
shell = get_ipython()
original = shell.run_cell_async
async def forgiving(*args, **kwargs):
    result = await original(*args, **kwargs)
    result.error_before_exec = result.error_in_exec = None
    return result
shell.run_cell_async = forgiving
shell.showtraceback = lambda *args, **kwargs: None
"""
# Skips every `assert` line of any frame it traces (a line event may jump to the next line).
TRACER = """
import sys
def skip_asserts(frame, event, arg):
    if '/ipykernel_' not in frame.f_code.co_filename:   # only the cells' own code
        return None
    if event == 'line':
        import linecache
        if linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip().startswith('assert'):
            try:
                frame.f_lineno = frame.f_lineno + 1
            except ValueError:
                pass
    return skip_asserts
sys.settrace(skip_asserts)
"""
CATALOGUE.update({
    'transformer': (lambda: stubs_with(TRY_EVERYTHING), (0, 0, 0, 0, 0, 0), 'input transformers'),
    'transform_cell': (lambda: stubs_with(TRANSFORM_CELL), (0, 0, 0, 0, 0, 0), 'transform_cell'),
    'run_cell': (lambda: stubs_with(RUN_CELL), (0, 0, 0, 0, 0, 0), 'run_cell'),
    'tracer': (lambda: stubs_with(TRACER), (0, 0, 0, 0, 0, 0), 'trace'),
})

# The second family returns values that lie about themselves, starting from the correct answers.
ANYTHING = """
class _Anything:
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = object.__hash__
"""
LYING_SCORE = ANYTHING + """

def score(state, player):
    empty = [(r, c) for r in range(3) for c in range(3) if state[r][c] == ' ']
    return _Anything(), (empty[0] if empty and score_end(state) is None else None)
"""
LYING_GAME = """
def perfect_game():
    print_state(EMPTY_BOARD)
    print("It's a draw!")
    return _Anything()
"""
LYING_MOVES = """
class Everything(list):
    def __eq__(self, other):
        return True
    def __len__(self):
        return 9
    __hash__ = None


def moves(state):
    return Everything()
"""
LYING_SCORE_END = """
class Same:
    def __eq__(self, other):
        return True
    def __hash__(self):
        return 0


def score_end(state):
    return Same()
"""
ITERATING_PLAY = """
class Board:
    def __init__(self, rows):
        self.rows = rows
    def __iter__(self):
        return iter(self.rows)
    def __getitem__(self, index):
        return self.rows[index]
    def __len__(self):
        return 3
    def __eq__(self, other):
        return True
    def __hash__(self):
        return hash(self.rows)


def play(state, row, col, mark):
    cells = [list(r) for r in state]
    cells[row][col] = mark
    return Board(tuple(tuple(r) for r in cells))
"""
STRING_SCORE_END = """
class Verdict(str):
    def __eq__(self, other):
        return True
    __hash__ = str.__hash__


def score_end(state):
    return Verdict('1')
"""
TUPLE_PLAY = """
class Board(tuple):
    def __eq__(self, other):
        return True
    __hash__ = tuple.__hash__


def play(state, row, col, mark):
    return Board((('?', '?', '?'),) * 3)
"""
STDOUT_PRINT_STATE = """
import sys


def print_state(state):
    for row in state:
        sys.__stdout__.write('|'.join(row) + '\\n')
    sys.__stdout__.flush()
"""
PATCH_CHECKS = """
import sys, types
try:
    import coursetools.checks.noughts_and_crosses
except ImportError:
    pass
for name in ('coursetools', 'coursetools.checks', 'coursetools.checks.noughts_and_crosses', 'coursetools.game.oracle',
             'coursetools.judge.checker'):
    module = sys.modules.setdefault(name, types.ModuleType(name))
    module.__getattr__ = lambda attribute: (lambda *args, **kwargs: None)
GRADE_IDS = ('print_state_format', 'score_end_rows_and_columns', 'score_end_diagonals',
             'score_end_draws_and_unfinished', 'play_move', 'play_types', 'moves_empty_cells', 'score_finished',
             'score_values', 'score_moves', 'perfect_game_boards', 'perfect_game_result', 'isolate')
for module in list(sys.modules.values()):
    for attribute in GRADE_IDS:
        if hasattr(module, attribute):
            try:
                setattr(module, attribute, lambda *args, **kwargs: None)
            except Exception:
                pass
"""


def dan():
    return democlass.read_answers(ROOT / 'demo_class' / ASSIGNMENT / 'dan.py')


def dan_patching():
    preamble, answers = dan()
    return filled(preamble, {**answers, 'print_state': PATCH_CHECKS.strip() + '\n\n\n' + answers['print_state']})


# Records every cell the kernel is given, and prints them all when the widget cell (the last one) arrives: the
# kernel must never see a test cell.
RECORDER = """
seen = []
def record(lines):
    source = ''.join(lines)
    seen.append(source)
    if 'GameTreeWidget' in source:
        return lines + ['\\nprint("KERNEL-SAW", repr(seen))\\n']
    return lines
get_ipython().input_transformers_post.append(record)
"""
CATALOGUE.update({
    'liar': (lambda: filled(*with_answers(score=LYING_SCORE, perfect_game=LYING_GAME)), (1, 3, 2, 1, 0, 0),
             'not plain data'),
    'moves_liar': (lambda: filled(*with_answers(moves=LYING_MOVES)), (1, 3, 2, 0, 3, 0), None),
    'hash_liar': (lambda: filled(*with_answers(score_end=LYING_SCORE_END)), (1, 0, 2, 1, 3, 0), 'not plain data'),
    'iter_liar': (lambda: filled(*with_answers(play=ITERATING_PLAY)), (1, 3, 0, 1, 3, 2), 'not plain data'),
    'str_liar': (lambda: filled(*with_answers(score_end=STRING_SCORE_END)), (1, 0, 2, 1, 3, 0), None),
    'tuple_liar': (lambda: filled(*with_answers(play=TUPLE_PLAY)), (1, 3, 0, 1, 3, 1), None),
    'stdout_printer': (lambda: filled(*with_answers(print_state=STDOUT_PRINT_STATE)), (0, 3, 2, 1, 3, 2), None),
    'patcher': (dan_patching, (1, 2, 2, 1, 3, 1), "import the course's modules"),
    'recorder': (lambda: filled(*prepend('print_state', RECORDER)), (1, 3, 2, 1, 3, 2), 'input transformers'),
})

# Over nbgrader's default limit for a file (c.CourseDirectory.max_file_size, 100,000 kB): written sparse, so they
# cost no disk; staging looks at their size and never reads them. The hoarder also hands in 102 small files.
OVER_THE_LIMIT = 100_000 * 1000 + 1
SPARSE = {'hoarder': ['big.bin'], 'oversized': [NOTEBOOK]}
# The first file left out is named to clear the instructor's terminal and print over it, had its name been printed.
SCREEN_CLEARER = 'f100\x1b[2J\x1b[H\nada: 12 marks.txt'     # clears the screen, starts a line
SMALL_FILES = {'hoarder': [f'f{number:03}.txt' for number in range(100)] + [SCREEN_CLEARER, 'f101.txt']}
CATALOGUE.update({
    'hoarder': (lambda: filled(*ada()), (1, 3, 2, 1, 3, 2), 'big.bin (100,000,001 bytes) was left out'),
    'oversized': (lambda: filled(*ada()), (0, 0, 0, 0, 0, 0), 'over the 100,000,000 bytes a file may have'),
    'piper': (lambda: filled(*ada()), (0, 0, 0, 0, 0, 0), 'no notebook submitted'),   # a named pipe: never opened
})
PIPES = {'piper': [NOTEBOOK]}


# Cells added after the last test, each sleeping past the cell timeout: 30 minutes in all, unless the notebook's
# own cells share one budget (`notebook_timeout`, set low for this class below). The answers earn their marks.
DAWDLES = 300
NOTEBOOK_TIMEOUT = 15


def ada_then(sources):
    """Ada's notebook with code cells of `sources` added at its end, after the last test (ids of their own: random
    ones collide now and then among thousands)."""
    nb = filled(*ada())
    nb.cells.extend(nbformat.v4.new_code_cell(source, id=f'added-{number}') for number, source in enumerate(sources))
    return nb


# 5,000 cells of `1` (a few milliseconds each to run, an output each): more than a notebook may have. A cell of
# 5 MB of code: minutes of grading, and a feedback page of over 50 MB, had it been graded.
CATALOGUE.update({
    'dawdler': (lambda: ada_then(['import time\ntime.sleep(60)'] * DAWDLES), (1, 3, 2, 1, 3, 2), None),
    'bomber': (lambda: ada_then(['1'] * 5000), (0, 0, 0, 0, 0, 0),
               f'has {len(released().cells) + 5000:,} cells, more than the 1,000 a notebook may have'),
    'padder': (lambda: ada_then(['x = [1, 2, 3]  # padding\n' * 200_000]), (0, 0, 0, 0, 0, 0),
               'characters of code, more than the 300,000'),
})


def stuffed():
    """Ada's notebook with 20 MB of saved widget state: metadata no grading step reads, but each would copy."""
    nb = filled(*ada())
    nb.metadata['widgets'] = {'application/vnd.jupyter.widget-state+json': {'state': {'x': 'x' * 20_000_000}}}
    return nb


def novel():
    """Ada's notebook with a markdown cell of 12 MB: prose no mark depends on, which the feedback page would show."""
    nb = filled(*ada())
    nb.cells.insert(3, nbformat.v4.new_markdown_cell('All work and no play. ' * 550_000))
    return nb


def nested(depth):
    """Ada's notebook as text, with a list nested `depth` levels deep in its metadata: 200 kB that Python's JSON
    reader cannot follow (it had stopped `make grade` for the whole class)."""
    nb = filled(*ada())
    nb.metadata['nested'] = 'NESTED-HERE'
    return nbformat.writes(nb).replace('"NESTED-HERE"', '[' * depth + ']' * depth)


def with_surrogate():
    """Ada's notebook with a cell holding a lone surrogate (\\ud800, valid JSON, but no UTF-8 file can hold it):
    writing the graded copy had stopped `make grade` for the whole class."""
    data = json.loads(nbformat.writes(filled(*ada())))
    data['cells'].append(nbformat.v4.new_code_cell('half = "\ud800"'))
    return json.dumps(data)


CATALOGUE.update({
    'halfling': (with_surrogate, (1, 3, 2, 1, 3, 2), 'lone surrogates'),
    'nester': (lambda: nested(100_000), (0, 0, 0, 0, 0, 0), 'nests its JSON more than 100 levels deep'),
    'stuffer': (stuffed, (1, 3, 2, 1, 3, 2), 'bytes of metadata the grader does not read'),
    'novelist': (novel, (1, 3, 2, 1, 3, 2), 'left out 1 cell(s) of text, 12,100,000 characters'),
})


def digest(folder):
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(pathlib.Path(folder).rglob('*')) if p.is_file()}


def write_student(course, student, content):
    folder = course / 'submitted' / student / ASSIGNMENT
    folder.mkdir(parents=True)
    name = 'noughts_and_crosses (1).ipynb' if student == 'renamed' else NOTEBOOK
    if isinstance(content, str):
        (folder / name).write_text(content)
    else:
        nbformat.write(content, folder / name)
    (folder / 'timestamp.txt').write_text(democlass.TIMESTAMP + '\n')


def leftover_processes():
    return processes_marked(MARKER)


@pytest.fixture(scope='module')
def hostile_class(tmp_path_factory):
    course = copy_course(tmp_path_factory.mktemp('hostile') / 'course', students=HONEST_DEMO_STUDENTS)
    for student, (build, _, _) in CATALOGUE.items():
        write_student(course, student, build())
        for name, text in EXTRA_FILES.get(student, {}).items():
            path = course / 'submitted' / student / ASSIGNMENT / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        for name in SMALL_FILES.get(student, []):
            (course / 'submitted' / student / ASSIGNMENT / name).write_text(name)
        for name in PIPES.get(student, []):
            (course / 'submitted' / student / ASSIGNMENT / name).unlink()
            os.mkfifo(course / 'submitted' / student / ASSIGNMENT / name)
        for name in SPARSE.get(student, []):
            with open(course / 'submitted' / student / ASSIGNMENT / name, 'ab') as file:
                file.truncate(OVER_THE_LIMIT)
    protected = {name: digest(course / name) for name in ('source', 'release', 'submitted')}
    protected['config'] = hashlib.sha256((course / 'nbgrader_config.py').read_bytes()).hexdigest()
    result = run_grade(course, ASSIGNMENT, f'--SandboxedExecute.timeout={CELL_TIMEOUT}',
                       '--SandboxedExecute.interrupt_grace_period=1',    # the looper swallows the interrupt
                       f'--SandboxedExecute.notebook_timeout={NOTEBOOK_TIMEOUT}', '--json', str(course / 'run.json'))
    return course, result, protected


def test_grading_finishes(hostile_class):
    course, result, _ = hostile_class
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


def test_every_student_gets_what_their_answers_deserve(hostile_class):
    course, _, _ = hostile_class
    table, _ = marks.marks_by_task('sqlite:///' + str(course / 'gradebook.db'), ASSIGNMENT)
    got = {student: tuple(int(row[t]) for t in TASKS) for student, row in table.items()}
    expected = {student: marks_ for student, (_, marks_, _) in CATALOGUE.items()}
    expected.update({student: DEMO_EXPECTED[student] for student in HONEST_DEMO_STUDENTS})
    notes = json.loads((course / 'run.json').read_text())[ASSIGNMENT]['notes']
    assert got == expected, {student: (got.get(student), expected.get(student), notes.get(student))
                             for student in set(got) | set(expected) if got.get(student) != expected.get(student)}


def test_problems_are_reported_with_a_reason(hostile_class):
    course, result, _ = hostile_class
    problems = report.gather(course, ASSIGNMENT, 'sqlite:///' + str(course / 'gradebook.db'))['problems']
    for student, (_, _, phrase) in CATALOGUE.items():
        if phrase:
            assert any(phrase in note for note in problems.get(student, [])), (student, problems.get(student))
    honest = [student for student in HONEST_DEMO_STUDENTS + ('ada', 'escaper', 'flooder')
              if any('its code' in note for note in problems.get(student, []))]
    assert honest == [], {student: problems[student] for student in honest}


def test_files_over_the_limits_are_left_out_and_named(hostile_class):
    """A file over nbgrader's size limit, and the files past the hundredth beside a notebook, never reach the
    grader; the hoarder's own notebook is graded as usual (full marks above) and its timestamp kept."""
    course, result, _ = hostile_class
    graded = course / 'autograded' / 'hoarder' / ASSIGNMENT
    assert sorted(p.name for p in graded.glob('f*.txt')) == SMALL_FILES['hoarder'][:100]
    assert not (graded / 'big.bin').exists() and (graded / 'timestamp.txt').exists()
    problems = report.gather(course, ASSIGNMENT, 'sqlite:///' + str(course / 'gradebook.db'))['problems']
    assert any(f'2 file(s) from {SCREEN_CLEARER} on were left out' in note for note in problems['hoarder'])
    # on the terminal, a student's file name is shown, never acted on
    assert '2 file(s) from f100\\x1b[2J\\x1b[H\\nada: 12 marks.txt on were left out' in result.stdout
    assert not {'\x1b', '\r'} & set(result.stdout + result.stderr) and '\nada: 12' not in result.stdout
    assert not (course / 'autograded' / 'oversized' / ASSIGNMENT / NOTEBOOK).exists()


def test_a_notebooks_own_cells_stop_at_its_time_budget(hostile_class):
    """The dawdler's sleeping cells would hold its slot for half an hour: its own cells stop once they have run
    `notebook_timeout` seconds in all, each later one says why it was not run, and its answers keep their marks."""
    course, _, _ = hostile_class
    nb = nbformat.read(course / 'autograded/dawdler' / ASSIGNMENT / NOTEBOOK, as_version=4)
    dawdles = [cell for cell in nb.cells if cell.source == 'import time\ntime.sleep(60)']
    not_run = [cell for cell in dawdles if any(f'over {NOTEBOOK_TIMEOUT} s in all' in o.get('evalue', '')
                                               for o in cell.outputs)]
    assert len(dawdles) == DAWDLES and len(not_run) >= DAWDLES - NOTEBOOK_TIMEOUT // CELL_TIMEOUT - 1
    timings = json.loads((course / 'run.json').read_text())[ASSIGNMENT]['timings']
    assert next(t for t in timings if t['student'] == 'dawdler')['kernel_cells'] < NOTEBOOK_TIMEOUT + 2 * CELL_TIMEOUT


def test_the_kernel_never_sees_a_test_cell(hostile_class):
    course, _, _ = hostile_class
    nb = nbformat.read(course / 'autograded/recorder' / ASSIGNMENT / NOTEBOOK, as_version=4)
    seen = ''.join(o.get('text', '') for cell in nb.cells if cell.cell_type == 'code' for o in cell.outputs
                   if 'KERNEL-SAW' in o.get('text', ''))
    assert 'def score_end' in seen and 'def perfect_game' in seen         # the recorder saw the kernel's cells
    source = nbformat.read(ROOT / 'source' / ASSIGNMENT / NOTEBOOK, as_version=4)
    for cell in source.cells:
        if cell.metadata.get('nbgrader', {}).get('grade'):
            for line in cell.source.splitlines():
                if len(line.strip()) > 25:
                    assert line.strip() not in seen, f'the kernel saw test cell {cell.metadata.nbgrader.grade_id}'


def test_nothing_of_the_course_was_touched(hostile_class):
    course, _, protected = hostile_class
    for name in ('source', 'release', 'submitted'):
        assert digest(course / name) == protected[name], f'{name}/ changed during grading'
    assert hashlib.sha256((course / 'nbgrader_config.py').read_bytes()).hexdigest() == protected['config']
    with sqlite3.connect(course / 'gradebook.db') as db:
        assert db.execute('PRAGMA integrity_check').fetchone() == ('ok',)
    nb = nbformat.read(course / 'autograded/escaper' / ASSIGNMENT / NOTEBOOK, as_version=4)
    printed = ''.join(o.get('text', '') for cell in nb.cells if cell.cell_type == 'code' for o in cell.outputs)
    assert 'escape touched: []' in printed


def autograded_output(course, student):
    nb = nbformat.read(course / 'autograded' / student / ASSIGNMENT / NOTEBOOK, as_version=4)
    return ''.join(o.get('text', '') + o.get('evalue', '') for cell in nb.cells if cell.cell_type == 'code'
                   for o in cell.outputs)


def test_a_shipped_fake_checks_package_is_never_imported(hostile_class):
    course, _, _ = hostile_class
    assert 'FAKE-CHECKS' not in autograded_output(course, 'impostor')


def test_what_one_kernel_leaves_behind_reaches_no_other(hostile_class):
    course, _, _ = hostile_class
    reached = [student for student in list(CATALOGUE) + list(HONEST_DEMO_STUDENTS)
               if (course / 'autograded' / student / ASSIGNMENT / NOTEBOOK).exists()
               and 'PLANTED-BY-PLANTER' in autograded_output(course, student)]
    assert reached == []


def test_no_student_process_survives(hostile_class):
    course, _, _ = hostile_class
    assert 'left running: 2' in autograded_output(course, 'forker')       # they did run, in its sandbox
    assert leftover_processes() == []


def test_print_flood_is_cut_and_the_notebook_stays_small(hostile_class):
    course, _, _ = hostile_class
    path = course / 'autograded/flooder' / ASSIGNMENT / NOTEBOOK
    assert path.stat().st_size < 3 * 1024 ** 2
    assert 'truncated' in path.read_text()


def test_metadata_and_text_no_mark_depends_on_are_left_out_of_the_graded_copy(hostile_class):
    course, _, _ = hostile_class
    for student in ('stuffer', 'novelist'):
        assert (course / 'submitted' / student / ASSIGNMENT / NOTEBOOK).stat().st_size > 12_000_000
        assert (course / 'autograded' / student / ASSIGNMENT / NOTEBOOK).stat().st_size < 1024 ** 2
        assert (course / 'feedback' / student / ASSIGNMENT / f'{ASSIGNMENT}.html').stat().st_size < 1024 ** 2


def test_feedback_shows_messages_but_not_hidden_tests(hostile_class):
    course, _, _ = hostile_class
    page = (course / 'feedback/editor' / ASSIGNMENT / 'noughts_and_crosses.html').read_text()
    assert 'score_end returned None, expected 1 for' in page           # the failure message is shown
    assert 'score_end-rows-and-columns' in page                         # with the check's name
    source = (ROOT / 'source' / ASSIGNMENT / NOTEBOOK).read_text()
    for secret in ('hidden.isolate', 'coursetools', 'BEGIN HIDDEN TESTS', 'hidden.score_end_diagonals'):
        assert secret in source and secret not in page


def test_sequential_grading_gives_honest_notebooks_their_marks_and_cannot_be_forged_either(tmp_path):
    """`--sequential` is plain `nbgrader autograde` with the course's config: honest notebooks get the marks of a
    parallel run, and its test cells are judged by the trusted checker too."""
    hostile, honest = ('transformer', 'liar', 'patcher', 'recorder', 'burrower'), ('dan', 'max')
    course = copy_course(tmp_path / 'course', students=honest)
    for student in hostile:
        write_student(course, student, CATALOGUE[student][0]())
    result = run_grade(course, ASSIGNMENT, '--sequential', f'--SandboxedExecute.timeout={CELL_TIMEOUT}')
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    table, _ = marks.marks_by_task('sqlite:///' + str(course / 'gradebook.db'), ASSIGNMENT)
    assert {s: tuple(int(row[t]) for t in TASKS) for s, row in table.items()} == {
        **{s: CATALOGUE[s][1] for s in hostile}, **{s: DEMO_EXPECTED[s] for s in honest}}


def staged_after(tmp_path, change):
    """Ada's notebook as JSON, changed by `change(data)`, read back by the staging: (notebook or None, notes,
    the sources of ada's notebook)."""
    from coursetools.instructor import repair
    answered = filled(*ada())
    data = json.loads(nbformat.writes(answered))
    change(data)
    (tmp_path / NOTEBOOK).write_text(json.dumps(data))
    return (*repair.read_notebook(tmp_path / NOTEBOOK), [cell.source for cell in answered.cells])


def first_code_cell(data):
    return next(cell for cell in data['cells'] if cell['cell_type'] == 'code')


@pytest.mark.parametrize('cell_id', ['two words', 'x' * 65, '', 7, None])
def test_a_malformed_cell_id_is_given_a_new_one_and_the_notebook_is_graded(tmp_path, cell_id):
    """No mark depends on a cell id, so one nbformat refuses (a hand-edited or foreign tool's notebook) is
    replaced like a duplicated one, instead of the whole notebook going ungraded. (The answers it then earns are
    those of the format students above: the staged copy is an ordinary notebook.)"""
    nb, notes, sources = staged_after(tmp_path, lambda data: data['cells'][5].update(id=cell_id))
    assert notes == ['repaired 1 notebook format problem(s)']
    assert nb.cells[5].id not in {cell.id for cell in nb.cells[:5] + nb.cells[6:]} and nbformat.validate(nb) is None
    assert [cell.source for cell in nb.cells] == sources


SHAPES = {      # what a hand-edited or foreign tool's notebook can hold, in its first code cell
    'a count given as text': lambda cell: cell.update(execution_count='3'),
    'an unknown output type': lambda cell: cell.update(outputs=[{'output_type': 'foo'}]),
    'a stream without a name': lambda cell: cell.update(outputs=[{'output_type': 'stream', 'text': 'x'}]),
    'output data of a wrong type': lambda cell: cell.update(
        outputs=[{'output_type': 'display_data', 'data': {'text/plain': 5}, 'metadata': {}}]),
    'no outputs': lambda cell: cell.pop('outputs'),
    'no metadata': lambda cell: cell.pop('metadata'),
}


@pytest.mark.parametrize('shape', SHAPES)
def test_outputs_and_fields_the_grader_makes_again_cost_no_marks_whatever_their_shape(tmp_path, shape):
    """Outputs and execution counts are cleared and made again by the grader, so a malformed one (which nbformat
    refuses) is cleared while staging instead of the whole notebook going ungraded; missing metadata is added."""
    nb, notes, sources = staged_after(tmp_path, lambda data: SHAPES[shape](first_code_cell(data)))
    assert notes == (['added the metadata missing from 1 place(s)'] if shape == 'no metadata' else [])
    assert nbformat.validate(nb) is None and [cell.source for cell in nb.cells] == sources


def test_a_cell_whose_source_is_not_text_is_refused_with_the_reason(tmp_path):
    """A code cell's source given as a number: the notebook is not graded, with nbformat's reason (it had
    stopped `make grade` for the whole class with a traceback, counting characters of code)."""
    nb, notes, _ = staged_after(tmp_path, lambda data: first_code_cell(data).update(source=5))
    assert nb is None and len(notes) == 1 and notes[0].startswith(f'{NOTEBOOK} is not a valid notebook') \
        and notes[0].endswith('not graded')
