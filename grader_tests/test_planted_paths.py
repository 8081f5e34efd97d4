"""Students who plant links, pipes, shared memory and full disks for the grader to trip over (issue 41), graded
through `make grade`'s own code path beside honest classmates.

The grader used to open files by path in folders a student's kernel could write: a leftover process of the
student's could plant kernel.log as a named pipe (the run hung), kernel.json as a link to gradebook.db (truncated)
or to a classmate's notebook (destroyed), kernel.log as a link to the hidden checks (printed on the terminal) or to
any host path (a root-owned file made there); SysV shared memory outlived its student, and /tmp had no size limit.
Now every kernel is a sandbox of its own (own PID and IPC namespaces), its files are in a host folder only the
grader writes (`coursetools/sandbox/host/files.py`), and its one writable host folder, `kernelN/sockets/`, becomes
root's once the kernel is ready, before any of the student's code runs.

What this module proves, each student written as a student would write it (demo student ada's correct answers,
plus an attack):

* `planter` finds every folder its kernel can write (a walk of /), the connection file's folder, its parent and
  its sockets folder, and in each plants kernel.json, kernel.log, k-1..k-5 (and the same in kernel1..kernel20)
  as links to the gradebook, to a classmate's notebook, to the hidden checks, to a new file in a classmate's
  folder and to named pipes (its own, and one on the host); a setsid watcher re-plants them every 10 ms, and the
  notebook kills its own kernel six times. The run finishes within RUN_BOUND, nobody's marks change (the planter
  keeps the 12 its answers earn), the gradebook and submitted/ are byte for byte as they were, nothing appears in
  a classmate's folder, and no output (autograded notebooks, feedback and report pages, the run's terminal
  output) holds a line of the hidden checks. None of the folders near its connection file is writable from
  inside. Under an audit hook, the grading process opens, removes, renames, links, chmods, chowns or makes no
  path inside a sockets folder (the one host folder a sandbox writes) except through `sandbox/host/files.py`.
* `ipc_hoarder` leaves SysV segments and a POSIX shm file; `ipc_lister`, an honest-looking look at shared memory
  graded after it, sees none, and none is left on the host.
* `disk_filler` gets at most 256 MiB in each of /tmp, /dev/shm and HOME (its working folder is in HOME), and at
  most RLIMIT_FSIZE (50 MiB) in the one host file it can write, its kernel's log; its answers keep their marks.
* `lingerer` and the planter's watchers (setsid, double-forked) leave no process on the host.

The sandbox's HOME, /tmp and /dev/shm are tmpfs mounted inside it only: no host path to watch there.
"""
import errno
import hashlib
import json
import os
import pathlib
import re
import signal
import sqlite3
import stat
import subprocess
import sys
import time

import nbformat
import pytest

import coursetools.checks.noughts_and_crosses as hidden_checks
from conftest import ROOT, copy_course, grade_env, needs_sandbox, processes_marked
from coursetools.instructor import democlass
from coursetools.instructor import marks
from test_demo_class import EXPECTED as DEMO_EXPECTED

pytestmark = needs_sandbox

ASSIGNMENT = 'noughts_and_crosses'
NOTEBOOK = f'{ASSIGNMENT}.ipynb'
TASKS = ('print_state', 'score_end', 'play', 'moves', 'score', 'perfect_game')
FULL = (1, 3, 2, 1, 3, 2)
HONEST = ('ada', 'cat', 'dan')           # demo students; ada is also the classmate the planter aims at
CLASSMATE = 'ada'
MARKER = 'planted-paths-left-behind-'   # in the argv of every process a student leaves behind
CELL_TIMEOUT = 20       # an honest cell takes about 1 s; the planter's watchers share the CPU with everyone
RUN_BOUND = 150         # seconds the class's whole `make grade` may take (it takes about a third of that)
HARD_LIMIT = 300        # seconds after which a run is killed: a hung grader fails the test instead of hanging it
SCRATCH = 256 * 1024 ** 2               # SandboxedExecute.scratch_limit: each of HOME, /tmp, /dev/shm
LOG_LIMIT = 50 * 1024 ** 2              # SandboxedExecute.file_size_limit (RLIMIT_FSIZE): the host's kernel.log
SEGMENT = 64 * 1024 ** 2 + 7 * 4096     # the hoarder's SysV segments: a size nothing else on the host has
SEGMENTS = 4

# A few lines of the hidden checks; none may appear in any output of the run.
CHECKS_LINES = (
    "boards = list(oracle.reachable_positions()[::40]) + [",
    "return tuple(board for board in oracle.reachable_positions() if _line_kinds(board) == kind)",
    "own = testing == 'perfect_game'       # the integration task: every function is the student's own",
    "moves = [(board, row, col, mark) for board in oracle.reachable_positions()[::7]",
    "from coursetools.checks.isolation import MISSING, clear_student_cache, memoized, replace_until_cell_ends",
)

# How many processes of this sandbox carry the marker (a student's check that its own processes run).
COUNT = f'''
import os
marked = 0
for entry in os.listdir('/proc'):
    try:
        marked += entry.isdigit() and '{MARKER}' in open('/proc/%s/cmdline' % entry).read()
    except OSError:
        pass
'''


# --- the planter ---------------------------------------------------------------------------------------------

# Shared by the cell and its watcher: plant each name as a link (replacing what is there) in every folder given and
# in its kernel1..kernel20; which name points at which target turns every round.
PLANT = r'''
import os
NAMES = ['kernel.json', 'kernel.log'] + ['k-%d' % n for n in range(1, 6)]
def plant(folders, targets, round_):
    planted = []
    for folder in folders:
        for where in [folder] + [os.path.join(folder, 'kernel%d' % n) for n in range(1, 21)]:
            try:
                os.makedirs(where, exist_ok=True)
            except OSError:
                continue
            for number, name in enumerate(NAMES):
                path = os.path.join(where, name)
                try:
                    if os.path.lexists(path + '~'):
                        os.unlink(path + '~')
                    os.symlink(targets[(number + round_) % len(targets)], path + '~')
                    os.replace(path + '~', path)
                    planted.append(path)
                except OSError:
                    pass
    return planted
'''

WATCH = PLANT + r'''
import json, sys, time
folders, targets = json.loads(sys.argv[2]), json.loads(sys.argv[3])
end, round_ = time.time() + 60, 0
while time.time() < end:
    round_ += 1
    plant(folders, targets, round_)
    time.sleep(0.01)
'''

PLANTER = r'''
import json, os, sys
from ipykernel.connect import get_connection_file
exec(PLANT)
connection = get_connection_file()
here = os.path.dirname(connection)
pipe = '/tmp/planted-pipe'
try:
    os.mkfifo(pipe)
except OSError:
    pass
targets = [GRADEBOOK, CLASSMATE_NOTEBOOK, HIDDEN_CHECKS, NEW_FILE, HOST_PIPE, pipe]
writable = []
for root, dirs, files in os.walk('/'):
    dirs[:] = [name for name in dirs if os.path.join(root, name) not in ('/proc', '/sys')]
    if os.access(root, os.W_OK):
        writable.append(root)
folders = list(dict.fromkeys(writable + [here, os.path.dirname(here), os.path.join(here, 'sockets')]))
planted = plant(folders, targets, 0)
print('PLANTER connection file', connection)
print('PLANTER writable', json.dumps(writable))
print('PLANTER planted', len(planted), 'links, near the connection file', json.dumps(
    [path for path in planted if path.startswith(os.path.dirname(here) + '/')]))
if os.fork() == 0:            # a watcher that keeps planting, in a session of its own
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, '-c', WATCH, MARKER, json.dumps(folders), json.dumps(targets)])
    os._exit(0)
os.wait()
'''

KILL = 'import os\nos._exit(1)'
# Right after print_state's test, in the kernel started after the first death: the replayed planting cell's
# watcher puts back what is taken away.
WATCHING = COUNT + '''
import time
os.unlink('/tmp/kernel.json')
time.sleep(0.3)
print('PLANTER watcher re-planted:', os.path.islink('/tmp/kernel.json'), 'marked processes:', marked)
'''
# The planter's kernel dies in a cell of its own after each of these cells: six deaths, one more than the five
# restarts a notebook gets (SandboxedExecute.max_kernel_restarts).
KILL_AFTER = ('print_state', 'score_end', 'play', 'moves', 'score', 'perfect_game-result')
# Its marks, worked out: the kill cells are its own cells (no marks). Deaths 1-5 each cost their kill cell only: a
# fresh kernel starts and replays the completed cells (the planting cell and every answer; the planting and its
# watcher start again in every kernel). The test cells run in the trusted order (print_state, play, moves,
# perfect_game, score_end, score): score_end's and score's wait until perfect_game-result has run, and then all
# run at once, before the sixth kill cell, which comes after perfect_game-result. So every test cell runs in a
# kernel holding ada's answers: full marks. The sixth death leaves the cells after it (score_fast,
# check_score_fast, the widget: no marks) "not run: too many kernel deaths".
PLANTER_MARKS = FULL

# --- the others ----------------------------------------------------------------------------------------------

HOARD = f'''
import ctypes, os, time
libc = ctypes.CDLL('libc.so.6', use_errno=True)
libc.shmget.restype, libc.shmget.argtypes = ctypes.c_int, [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
libc.shmat.restype, libc.shmat.argtypes = ctypes.c_void_p, [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
IPC_PRIVATE, IPC_CREAT = 0, 0o1000
hoard = []
for _ in range({SEGMENTS}):
    segment = libc.shmget(IPC_PRIVATE, {SEGMENT}, IPC_CREAT | 0o600)
    address = libc.shmat(segment, None, 0) if segment >= 0 else None
    if address in (None, ctypes.c_void_p(-1).value):
        print('shmget/shmat failed', ctypes.get_errno())
        continue
    ctypes.memset(address, 0x41, {SEGMENT})
    hoard.append(segment)
with open('/dev/shm/{MARKER}hoard-%d' % os.getpid(), 'wb') as handle:
    handle.write(b'x' * (16 * 1024 * 1024))
'''
# An honest-looking look at the machine's shared memory.
LIST = '''
import os, time
with open('/proc/sysvipc/shm') as handle:
    segments = handle.read().splitlines()[1:]
print('IPC-LIST sysv', len(segments), 'posix', len(os.listdir('/dev/shm')), 'at', time.time())
'''

# Fills its working folder, HOME, /tmp and /dev/shm, and then the one host file it can write: the kernel's log, of
# which it holds a descriptor (as every process of its sandbox does).
FILL = '''
import os


def fill(folder):
    """Write 32-MiB files into folder until it is full; the bytes written and the errno that stopped it."""
    written, number = 0, 0
    chunk = b'\\0' * (1024 * 1024)
    while True:
        number += 1
        try:
            fd = os.open(os.path.join(folder, 'fill-%d.bin' % number), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        except OSError as error:
            return written, error.errno
        try:
            for _ in range(32):
                written += os.write(fd, chunk)
        except OSError as error:
            return written, error.errno
        finally:
            os.close(fd)


def fill_descriptor(fd):
    written = 0
    try:
        while True:
            written += os.write(fd, b'L' * (1024 * 1024))
    except OSError as error:
        return written, error.errno


for place in (os.getcwd(), os.path.expanduser('~'), '/tmp', '/dev/shm'):
    print('DISK-FILLER', place, *fill(place))
logs = []
for fd in os.listdir('/proc/self/fd'):
    try:
        if os.readlink('/proc/self/fd/' + fd).endswith('/kernel.log'):
            logs.append(int(fd))
    except OSError:
        pass
print('DISK-FILLER kernel.log', *fill_descriptor(min(logs)))
'''

# `sleep 600` with the marker as its argv[0] (dash, /bin/sh here, has no `exec -a`: a shell would exit at once).
LINGER = f'''
import os, shutil, subprocess, time
sleep = shutil.which('sleep')
subprocess.Popen(['{MARKER}lingerer', '600'], executable=sleep)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sleep, ['{MARKER}lingerer', '600'])
    os._exit(0)
os.wait()
time.sleep(0.5)
'''


def ada():
    return democlass.read_answers(ROOT / 'demo_class' / ASSIGNMENT / 'ada.py')


def released():
    return nbformat.read(ROOT / 'release' / ASSIGNMENT / NOTEBOOK, as_version=4)


def prepended(grade_id, code):
    """Ada's notebook with `code` typed at the top of her answer cell `grade_id`."""
    preamble, answers = ada()
    return democlass.fill(released(), preamble, {**answers, grade_id: code.strip() + '\n\n\n' + answers[grade_id]})


def with_cells(nb, after):
    """`nb` with new code cells, from (grade_id, source) pairs: each right after the cell of that grade_id."""
    for number, (grade_id, source) in enumerate(after):
        index = next(i for i, cell in enumerate(nb.cells) if cell.metadata.get('nbgrader', {}).get('grade_id') ==
                     grade_id)
        nb.cells.insert(index + 1, nbformat.v4.new_code_cell(source, id=f'added-{number}'))
    return nb


def host_pipe(course):
    """A named pipe on the host, beside the course (a grader that opened a link to it for reading would hang)."""
    return course.parent / 'planted-pipe'


def planter(course):
    submitted = course / 'submitted' / CLASSMATE / ASSIGNMENT
    if not os.path.lexists(host_pipe(course)):
        os.mkfifo(host_pipe(course))
    settings = (f'PLANT = {PLANT!r}\nWATCH = {WATCH!r}\nMARKER = {MARKER + "planter"!r}\n'
                f'GRADEBOOK = {str(course / "gradebook.db")!r}\nCLASSMATE_NOTEBOOK = {str(submitted / NOTEBOOK)!r}\n'
                f'HIDDEN_CHECKS = {hidden_checks.__file__!r}\nNEW_FILE = {str(submitted / "PLANTED.txt")!r}\n'
                f'HOST_PIPE = {str(host_pipe(course))!r}\n')
    return with_cells(prepended('print_state', settings + PLANTER),
                      [(grade_id, KILL) for grade_id in KILL_AFTER] + [('print_state-format', WATCHING)])


ATTACKERS = {           # student -> (notebook, given the course folder; expected marks)
    'planter': (planter, PLANTER_MARKS),
    'ipc_hoarder': (lambda course: with_cells(democlass.fill(released(), *ada()),
                                              [('helpers', HOARD + LIST)]), FULL),
    'ipc_lister': (lambda course: with_cells(democlass.fill(released(), *ada()), [('helpers', LIST)]), FULL),
    'disk_filler': (lambda course: prepended('print_state', FILL), FULL),
    'lingerer': (lambda course: prepended('print_state', LINGER + COUNT + 'print("LINGERER marked:", marked)'),
                 FULL),
}


def write_student(course, student, nb):
    folder = course / 'submitted' / student / ASSIGNMENT
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / NOTEBOOK)
    (folder / 'timestamp.txt').write_text(democlass.TIMESTAMP + '\n')


def build_class(folder, honest, attackers):
    course = copy_course(folder, students=honest)
    for student in attackers:
        write_student(course, student, ATTACKERS[student][0](course))
    return course


def listing(folder):
    """Every entry below `folder`, links, pipes and folders included: its kind and content (a file's hash)."""
    found = {}
    for path in sorted(pathlib.Path(folder).rglob('*')):
        mode = path.lstat().st_mode
        found[str(path.relative_to(folder))] = (
            ('file', hashlib.sha256(path.read_bytes()).hexdigest()) if stat.S_ISREG(mode) else
            ('link', os.readlink(path)) if stat.S_ISLNK(mode) else ('dir', None) if stat.S_ISDIR(mode) else
            ('other', stat.S_IFMT(mode)))
    return found


def run_bounded(argv, course):
    """Run `argv` in `course` as conftest.run_grade runs `make grade`, killed (its whole process group) after
    HARD_LIMIT seconds: an attack that hangs the grader fails the test instead of hanging it. (returncode, stdout,
    stderr, seconds)."""
    started = time.monotonic()
    process = subprocess.Popen(argv, cwd=course, env=grade_env(course), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=HARD_LIMIT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        return None, stdout, stderr, time.monotonic() - started
    return process.returncode, stdout, stderr, time.monotonic() - started


def grade_args(*more):
    return [ASSIGNMENT, '--no-progress', f'--SandboxedExecute.timeout={CELL_TIMEOUT}', *more]


def host_state():
    """What students could leave on the host: SysV segments of the hoarder's size, shm files, marked processes."""
    with open('/proc/sysvipc/shm') as handle:
        segments = [line.split() for line in handle.read().splitlines()[1:]]
    return {'segments': [fields for fields in segments if fields[3] == str(SEGMENT)],
            'shm_files': [name for name in os.listdir('/dev/shm') if name.startswith(MARKER)],
            'processes': leftover_processes()}


def leftover_processes():
    return processes_marked(MARKER)


def outputs(course, student):
    nb = nbformat.read(course / 'autograded' / student / ASSIGNMENT / NOTEBOOK, as_version=4)
    return ''.join(o.get('text', '') + o.get('evalue', '') for cell in nb.cells if cell.cell_type == 'code'
                   for o in cell.outputs)


def got_marks(course):
    table, _ = marks.marks_by_task('sqlite:///' + str(course / 'gradebook.db'), ASSIGNMENT)
    return {student: tuple(int(row[task]) for task in TASKS) for student, row in table.items()}


def expected_marks(honest, attackers):
    return {**{student: DEMO_EXPECTED[student] for student in honest},
            **{student: ATTACKERS[student][1] for student in attackers}}


def lister_line(course, student):
    """(SysV segments, POSIX shm files, time) as `student`'s LIST cell printed them."""
    found = re.search(r'IPC-LIST sysv (\d+) posix (\d+) at ([\d.]+)', outputs(course, student))
    assert found, outputs(course, student)[-2000:]
    return int(found[1]), int(found[2]), float(found[3])


@pytest.fixture(scope='module')
def planted_class(tmp_path_factory):
    """The class graded once, with the default number of slots: (course, returncode, stdout, stderr, seconds,
    what was protected before the run)."""
    course = build_class(tmp_path_factory.mktemp('planted') / 'course', HONEST, ATTACKERS)
    protected = {'submitted': listing(course / 'submitted'),
                 'checks': hashlib.sha256(pathlib.Path(hidden_checks.__file__).read_bytes()).hexdigest()}
    returncode, stdout, stderr, seconds = run_bounded(
        [sys.executable, '-m', 'coursetools.instructor.grade', *grade_args('--json', str(course / 'run.json'))],
        course)
    return course, returncode, stdout, stderr, seconds, protected


def test_the_run_finishes_within_its_bound(planted_class):
    course, returncode, stdout, stderr, seconds, _ = planted_class
    assert returncode is not None, f'make grade hung: killed after {HARD_LIMIT} s\n{stdout[-3000:]}{stderr[-3000:]}'
    assert returncode == 0, stdout[-3000:] + stderr[-3000:]
    assert seconds < RUN_BOUND, f'the run took {seconds:.0f} s'


def test_every_student_gets_exactly_their_marks(planted_class):
    course = planted_class[0]
    assert got_marks(course) == expected_marks(HONEST, ATTACKERS)


def test_the_attacks_ran(planted_class):
    """Each attacker did what it set out to do inside its sandbox: the other tests prove it came to nothing."""
    course = planted_class[0]
    planter_said = outputs(course, 'planter')
    writable = json.loads(re.search(r'PLANTER writable (\[.*\])', planter_said)[1])
    assert {'/tmp', '/dev/shm', '/home/student', f'/home/student/{ASSIGNMENT}'} <= set(writable), writable
    planted = int(re.search(r'PLANTER planted (\d+) links', planter_said)[1])
    assert planted >= len(writable) * 21 * 7         # every name, in every writable folder and its kernel1..20
    nb = nbformat.read(course / 'autograded' / 'planter' / ASSIGNMENT / NOTEBOOK, as_version=4)
    kills = [cell for cell in nb.cells if cell.source == KILL]
    assert len(kills) == 6 and all(any(o.get('ename') == 'KernelDied' for o in cell.outputs) for cell in kills)
    errors = ''.join(o.get('evalue', '') for cell in nb.cells for o in cell.get('outputs', ()))
    assert 'not run: too many kernel deaths (6)' in errors
    watching = re.search(r'PLANTER watcher re-planted: (\w+) marked processes: (\d+)', planter_said)
    assert watching[1] == 'True' and int(watching[2]) >= 1, watching[0]     # the watcher of the second kernel
    assert int(re.search(r'LINGERER marked: (\d+)', outputs(course, 'lingerer'))[1]) >= 2
    sysv, posix, _ = lister_line(course, 'ipc_hoarder')     # a kernel sees its own shared memory
    assert (sysv, posix) == (SEGMENTS, 1), outputs(course, 'ipc_hoarder')[-2000:]


def test_nothing_was_planted_near_the_grader(planted_class):
    """No folder on the path of the kernel's connection file is writable from inside: not its own folder, not the
    notebook's, not the sockets folder (root's 0711 once the kernel is ready, before any student code)."""
    course = planted_class[0]
    planter_said = outputs(course, 'planter')
    connection = re.search(r'PLANTER connection file (\S+)', planter_said)[1]
    assert re.search(r'/nbsbx-[^/]+/kernel\d+/kernel\.json$', connection), connection
    near = json.loads(re.search(r'near the connection file (\[.*\])', planter_said)[1])
    writable = json.loads(re.search(r'PLANTER writable (\[.*\])', planter_said)[1])
    assert near == [] and not [folder for folder in writable if 'nbsbx-' in folder], (near, writable)


def tables(path):
    with sqlite3.connect(path) as db:
        assert db.execute('PRAGMA integrity_check').fetchone() == ('ok',)
        return {name for name, in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_the_gradebook_submissions_and_checks_are_intact(planted_class):
    course, _, _, _, _, protected = planted_class
    assert listing(course / 'submitted') == protected['submitted'], 'submitted/ changed during grading'
    assert hashlib.sha256(pathlib.Path(hidden_checks.__file__).read_bytes()).hexdigest() == protected['checks']
    from nbgrader.api import Base
    assert stat.S_ISREG(os.lstat(course / 'gradebook.db').st_mode)
    assert tables(course / 'gradebook.db') == set(Base.metadata.tables) | {'alembic_version'}   # nbgrader's schema
    assert stat.S_ISFIFO(os.lstat(host_pipe(course)).st_mode)        # the host's pipe is as it was: never opened


def test_no_file_appears_in_a_classmates_folder(planted_class):
    course, _, _, _, _, protected = planted_class
    folder = course / 'submitted' / CLASSMATE / ASSIGNMENT
    assert not os.path.lexists(folder / 'PLANTED.txt')
    now = listing(course / 'submitted')
    assert {path for path in now if path.startswith(f'{CLASSMATE}/')} == \
        {path for path in protected['submitted'] if path.startswith(f'{CLASSMATE}/')}
    assert {path: kind for path, (kind, _) in now.items() if kind not in ('file', 'dir')} == {}


def test_no_output_holds_the_hidden_checks(planted_class):
    course, _, stdout, stderr, _, _ = planted_class
    source = pathlib.Path(hidden_checks.__file__).read_text()
    assert all(line in source for line in CHECKS_LINES)         # the markers are still lines of the checks
    places = {'the run\'s output': stdout + stderr}
    for pattern in ('autograded/**/*.ipynb', 'feedback/**/*.html', 'reports/*.html'):
        places.update({str(path.relative_to(course)): path.read_text(errors='replace')
                       for path in course.glob(pattern)})
    assert len([place for place in places if place.startswith('feedback/')]) == len(HONEST) + len(ATTACKERS)
    leaks = {place: line for place, text in places.items() for line in CHECKS_LINES if line in text}
    assert leaks == {}


def test_each_scratch_space_holds_at_most_its_limit(planted_class):
    """/tmp, /dev/shm and HOME (the working folder is in it) are tmpfs of 256 MiB each: the filler fills each, and
    ENOSPC (not RLIMIT_FSIZE's EFBIG, not a dead kernel) stops it there. The one host file a kernel writes, its
    log (through a descriptor), stops at RLIMIT_FSIZE."""
    course = planted_class[0]
    got = {place: (int(written), int(code)) for place, written, code in
           re.findall(r'DISK-FILLER (\S+) (\d+) (\d+)', outputs(course, 'disk_filler'))}
    home, work = '/home/student', f'/home/student/{ASSIGNMENT}'
    assert set(got) == {home, work, '/tmp', '/dev/shm', 'kernel.log'}, got
    written, code = got.pop('kernel.log')
    assert code == errno.EFBIG and LOG_LIMIT - 1024 ** 2 < written <= LOG_LIMIT, (written, code)
    assert all(code == errno.ENOSPC for _, code in got.values()), got
    assert got[work][0] + got[home][0] <= SCRATCH and got['/tmp'][0] <= SCRATCH and got['/dev/shm'][0] <= SCRATCH
    assert min(got[work][0] + got[home][0], got['/tmp'][0], got['/dev/shm'][0]) > SCRATCH - 16 * 1024 ** 2, got


def test_shared_memory_dies_with_its_kernel(planted_class):
    course = planted_class[0]
    assert lister_line(course, 'ipc_lister')[:2] == (0, 0)
    state = host_state()
    assert state['segments'] == [] and state['shm_files'] == [], state


def test_no_student_process_survives(planted_class):
    assert leftover_processes() == []


# --- the same attackers on one slot, under an audit hook -----------------------------------------------------

# Run as `python -c AUDIT <events file> <scratch folder> <make grade's arguments...>` in the course folder: records
# every path event of this process and of the helpers it forks (one JSON line each, written as it happens, so a
# process that ends without running atexit loses nothing), checks that the records tell a sockets folder's path
# from files.py's and other code's (a canary of each), then runs `make grade` (coursetools.instructor.grade.main).
AUDIT = r'''
import json, os, re, sys, threading
LOG = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
# event -> the positions of its arguments that are paths (os.replace raises os.rename; os.symlink's first is the
# link's text, its second the link made)
PATHS = {'open': (0,), 'os.remove': (0,), 'os.rename': (0, 1), 'os.symlink': (1,), 'os.link': (0, 1),
         'os.chmod': (0,), 'os.chown': (0,), 'os.mkdir': (0,), 'os.rmdir': (0,), 'os.truncate': (0,),
         'os.utime': (0,), 'shutil.rmtree': (0,), 'shutil.copyfile': (0, 1), 'sqlite3.connect': (0,)}
busy = threading.local()


def as_path(value):
    if value is None or isinstance(value, int):         # a descriptor: no path
        return None
    try:
        value = os.fspath(value)
    except TypeError:
        return None
    if isinstance(value, bytes):
        value = os.fsdecode(value)
    if value == ':memory:':
        return None
    return os.path.normpath(os.path.join(os.getcwd(), value))


def hook(event, args):
    positions = PATHS.get(event)
    if positions is None or getattr(busy, 'on', False):
        return
    busy.on = True
    try:
        for position in positions:
            path = as_path(args[position]) if position < len(args) else None
            if path is None:
                continue
            record = {'event': event, 'path': path, 'pid': os.getpid()}
            if 'nbsbx-' in path:
                frame, record['files_py'] = sys._getframe(1), False
                while frame is not None:
                    if frame.f_code.co_filename.replace(os.sep, '/').endswith('sandbox/host/files.py'):
                        record['files_py'] = True
                        break
                    frame = frame.f_back
            os.write(LOG, (json.dumps(record) + '\n').encode())
    finally:
        busy.on = False


sys.addaudithook(hook)
scratch = sys.argv[2]
sockets = os.path.join(scratch, 'nbsbx-canary', 'kernel1', 'sockets')
os.makedirs(sockets)
open(os.path.join(sockets, 'k-1'), 'w').close()                  # must be recorded as not from files.py
os.makedirs(os.path.join(scratch, 'canary-submission'))
open(os.path.join(scratch, 'canary-submission', 'answers.py'), 'w').close()
from coursetools.sandbox.host import files
files.copy_submission(os.path.join(scratch, 'canary-submission'), os.path.join(sockets, 'copied'))  # from files.py
if sys.argv[3] == 'nbgrader':                 # plain nbgrader, with the course's nbgrader_config.py
    from nbgrader.apps.nbgraderapp import main as nbgrader
    sys.argv = ['nbgrader', *sys.argv[4:]]
    nbgrader()
else:
    from coursetools.instructor import grade
    grade.main(sys.argv[3:])
'''
SOCKETS_FILE = re.compile(r'/nbsbx-[^/]+/kernel\d+/sockets/.')
AUDITED = ('ada', 'ipc_hoarder', 'planter')     # then the lister, in a run of its own


@pytest.fixture(scope='module')
def audited_class(tmp_path_factory):
    """Ada, the hoarder and the planter graded on one slot by `make grade` in a process recording its path events;
    then the lister, by a second `make grade --student ipc_lister` on one slot. (Dask keeps no order among the
    notebooks of one run, even on one slot: the lister had come before the hoarder.) Returns (course, returncode,
    stdout, stderr, events) of the first run, and the returncode and output of the second."""
    folder = tmp_path_factory.mktemp('audited')
    course = build_class(folder / 'course', ['ada'], ['ipc_hoarder', 'planter', 'ipc_lister'])
    (folder / 'scratch').mkdir()
    events_file = folder / 'events.jsonl'
    students = [f'--student={student}' for student in AUDITED]
    returncode, stdout, stderr, _ = run_bounded(
        [sys.executable, '-c', AUDIT, str(events_file), str(folder / 'scratch'),
         *grade_args('--workers=1', *students, '--json', str(course / 'run.json'))], course)
    events = [json.loads(line) for line in events_file.read_text().splitlines()]
    after = run_bounded([sys.executable, '-m', 'coursetools.instructor.grade',
                         *grade_args('--workers=1', '--student=ipc_lister')], course)
    plain_file = folder / 'events-plain.jsonl'
    plain = run_bounded([sys.executable, '-c', AUDIT, str(plain_file), str(folder / 'scratch-plain'), 'nbgrader',
                         'autograde', ASSIGNMENT, '--student=planter', '--force',
                         f'--SandboxedExecute.timeout={CELL_TIMEOUT}'], course)
    plain_events = [json.loads(line) for line in plain_file.read_text().splitlines()]
    return course, returncode, stdout, stderr, events, after, (plain, plain_events)


def test_on_one_slot_every_student_gets_exactly_their_marks(audited_class):
    course, returncode, stdout, stderr, _, (after, after_stdout, after_stderr, _), _ = audited_class
    assert returncode == 0, stdout[-3000:] + stderr[-3000:]
    assert after == 0, after_stdout[-3000:] + after_stderr[-3000:]
    assert json.loads((course / 'run.json').read_text())[ASSIGNMENT]['workers'] == 1
    assert got_marks(course) == expected_marks(['ada'], ['ipc_hoarder', 'planter', 'ipc_lister'])


def test_students_graded_after_the_hoarder_see_no_shared_memory(audited_class):
    course = audited_class[0]
    hoarded, lister = lister_line(course, 'ipc_hoarder'), lister_line(course, 'ipc_lister')
    assert hoarded[:2] == (SEGMENTS, 1) and lister[2] > hoarded[2]      # the lister ran after the hoarder
    assert lister[:2] == (0, 0)
    state = host_state()
    assert state['segments'] == [] and state['shm_files'] == [] and state['processes'] == [], state


def test_the_grader_touches_no_path_a_sandbox_can_write(audited_class):
    """Every path the grading process opened, removed, renamed, linked, chmod-ed, chown-ed or made: none lies in a
    sockets folder (the one host folder a sandbox writes), except through sandbox/host/files.py."""
    course, returncode, _, _, events, _, _ = audited_class
    assert returncode == 0
    # the hook works: it saw the canaries, told them apart, saw the gradebook and the kernels' folders
    canary = [event for event in events if '/nbsbx-canary/' in event['path']]
    assert {(event['event'], event['files_py']) for event in canary if event['path'].endswith('/sockets/k-1')} == \
        {('open', False)}
    assert any(event['files_py'] for event in canary if '/sockets/copied' in event['path'])
    assert any(event['path'] == str(course / 'gradebook.db') for event in events)
    grading = [event for event in events if 'nbsbx-' in event['path'] and '/nbsbx-canary/' not in event['path']]
    made = {event['path'] for event in grading if event['event'] == 'open' and event['path'].endswith('/kernel.json')}
    assert len(made) >= 1 + 1 + 6, made     # ada's kernel, the hoarder's, the planter's first and its five restarts
    inside = [event for event in grading if SOCKETS_FILE.search(event['path']) and not event['files_py']]
    assert inside == []


def test_plain_nbgrader_autograde_touches_no_path_a_sandbox_can_write_either(audited_class):
    """`nbgrader autograde` with the course's configuration grades the planter again (SandboxedExecute, the same
    kernels): the same marks, and no path event under a sockets folder but through sandbox/host/files.py."""
    course, _, _, _, _, _, ((returncode, stdout, stderr, _), events) = audited_class
    assert returncode == 0, stdout[-3000:] + stderr[-3000:]
    assert got_marks(course)['planter'] == PLANTER_MARKS
    grading = [event for event in events if 'nbsbx-' in event['path'] and '/nbsbx-canary/' not in event['path']]
    assert sum(event['event'] == 'open' and event['path'].endswith('/kernel.json') for event in grading) >= 6
    assert [event for event in grading if SOCKETS_FILE.search(event['path']) and not event['files_py']] == []
