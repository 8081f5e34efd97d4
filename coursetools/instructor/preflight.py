"""What `make grade` checks before it starts anything: that no other `make grade` is running in the course (and
waits for the grading service's turn, `grading_turn`, to end), and
that the temporary folder leaves room for the kernels' sockets. Each refusal is one line. Then the run's own
temporary folder, which holds everything the run puts in the temporary folder and goes with it, even after a
SIGKILL (the next run removes it)."""
import contextlib
import fcntl
import os
import shutil
import tempfile
import time

from coursetools.grading.kernels import SOCKET_ROOM


SERVICE = 'make serve'       # what the grading service writes beside its process id in the course's lock


def hold_the_course(course, wait_for_service=600):
    """One `make grade` at a time in a course: two would share its staging folder, `autograded/` and gradebook.
    The lock is held until this process ends, however it ends. The grading service (`make serve`) takes the same
    lock for each grading it does (`grading_turn`): `make grade` waits for that turn to end (up to
    `wait_for_service` seconds), and the service waits for `make grade`."""
    folder = course.root / '.grading'
    folder.mkdir(exist_ok=True)
    lock = open(folder / 'lock', 'a+')
    deadline = time.monotonic() + wait_for_service
    said = False
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            lock.seek(0)
            holder = lock.read().strip()
            if holder.endswith(SERVICE) and time.monotonic() < deadline:
                if not said:
                    print(f'The grading service (process {holder.split()[0]}) is grading a submission: waiting for '
                          'it to finish.', flush=True)
                    said = True
                time.sleep(0.2)
                continue
            by = f' (process {holder})' if holder else ''
            raise SystemExit(f'Cannot grade: `make grade` is already running in this course{by}; wait for it to '
                             'end, or stop it first.') from None
    lock.truncate(0)
    lock.write(f'{os.getpid()}\n')
    lock.flush()
    _HELD.append(lock)


_HELD = []          # the course's lock file, open while this process runs


@contextlib.contextmanager
def grading_turn(course, waiting=None):
    """The course's grading lock for one grading of the service: taken when `make grade` (which holds it for its
    whole run) has ended, released at once after. `waiting()` is called once if it has to wait."""
    folder = course.root / '.grading'
    folder.mkdir(exist_ok=True)
    with open(folder / 'lock', 'a+') as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting is not None:
                waiting()
            fcntl.flock(lock, fcntl.LOCK_EX)
        lock.truncate(0)
        lock.write(f'{os.getpid()} {SERVICE}\n')
        lock.flush()
        try:
            yield
        finally:
            lock.truncate(0)
            lock.flush()
            fcntl.flock(lock, fcntl.LOCK_UN)


RUN_FOLDER_PREFIX = 'nb-'     # short: the kernels' sockets are files below it


def temporary_folder_room():
    """The longest temporary folder path, in bytes, that leaves room for the kernels' sockets (the run's own
    folder, `take_a_run_folder`, is made in it)."""
    return SOCKET_ROOM - len(f'/{RUN_FOLDER_PREFIX}XXXXXXXX')


def check_temporary_folder():
    """Refuse, in one line, a temporary folder whose path leaves no room for the kernels' sockets (every kernel
    would fail to start)."""
    folder = tempfile.gettempdir()
    room = temporary_folder_room()
    if len(os.fsencode(folder)) > room:
        raise SystemExit(f'Cannot grade: the temporary folder {folder} has a path of {len(os.fsencode(folder))} '
                         f'bytes, and the kernels\' sockets in it need one of at most {room}. Set a shorter one: '
                         'TMPDIR=/tmp make grade')


RUN_LOCK = '.make-grade-run'     # in a run's temporary folder, locked while the run lives


def take_a_run_folder():
    """A temporary folder for this run, made the temporary folder of this process and the processes it starts.
    Its lock file appears already locked (locked under another name, then renamed), and the lock goes with the
    process however it ends: the folders of runs that are gone are removed first, those of live runs left alone."""
    base = tempfile.gettempdir()
    for folder in os.scandir(base):
        if folder.name.startswith(RUN_FOLDER_PREFIX) and folder.is_dir(follow_symlinks=False):
            with contextlib.suppress(OSError), open(os.path.join(folder.path, RUN_LOCK)) as lock:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)       # BlockingIOError (an OSError): still running
                _remove_lock_last(folder.path)
    folder = tempfile.mkdtemp(prefix=RUN_FOLDER_PREFIX, dir=base)
    lock = open(os.path.join(folder, RUN_LOCK + '-new'), 'w')
    fcntl.flock(lock, fcntl.LOCK_EX)
    os.rename(lock.name, os.path.join(folder, RUN_LOCK))
    _HELD.append(lock)
    tempfile.tempdir = os.environ['TMPDIR'] = folder
    return folder


def _remove_lock_last(folder):
    """A gone run's folder, its lock file last: what cannot be removed now keeps the lock, and so is tried again."""
    for entry in os.scandir(folder):
        if entry.name != RUN_LOCK:
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)
    if os.listdir(folder) == [RUN_LOCK]:
        os.unlink(os.path.join(folder, RUN_LOCK))
        os.rmdir(folder)
