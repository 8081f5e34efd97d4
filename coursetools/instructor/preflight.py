"""What `make grade` checks before it starts anything: that no other `make grade` is running in the course, and
that the temporary folder leaves room for the kernels' sockets. Each refusal is one line."""
import fcntl
import os
import tempfile

from coursetools.grading.kernels import SOCKET_ROOM
from coursetools.instructor import commands


def hold_the_course(course):
    """One `make grade` at a time in a course: two would share its staging folder, `autograded/` and gradebook.
    The lock is held until this process ends, however it ends."""
    folder = course.root / '.grading'
    folder.mkdir(exist_ok=True)
    lock = open(folder / 'lock', 'a+')
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.seek(0)
        holder = lock.read().strip()
        by = f' (process {holder})' if holder else ''
        raise SystemExit(f'Cannot grade: `make grade` is already running in this course{by}; wait for it to end, '
                         'or stop it first.') from None
    lock.truncate(0)
    lock.write(f'{os.getpid()}\n')
    lock.flush()
    _HELD.append(lock)


_HELD = []          # the course's lock file, open while this process runs


def temporary_folder_room(sequential):
    """The longest temporary folder path, in bytes, that leaves room for the kernels' sockets; `--sequential`'s
    nbgrader process has a folder of its own in it."""
    return SOCKET_ROOM - (len(f'/{commands.SCRATCH_PREFIX}XXXXXXXX') if sequential else 0)


def check_temporary_folder(sequential):
    """Refuse, in one line, a temporary folder whose path leaves no room for the kernels' sockets (every kernel
    would fail to start)."""
    folder = tempfile.gettempdir()
    room = temporary_folder_room(sequential)
    if len(os.fsencode(folder)) > room:
        raise SystemExit(f'Cannot grade: the temporary folder {folder} has a path of {len(os.fsencode(folder))} '
                         f'bytes, and the kernels\' sockets in it need one of at most {room}. Set a shorter one: '
                         'TMPDIR=/tmp make grade')
