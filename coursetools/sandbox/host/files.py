"""The grading process's files for a sandbox, and the only code of it that touches a path a sandbox can write.

Each notebook gets a folder on the host that only the grading process can write (`NotebookFolder`, mode 0700):
the grader's copy of the submission, which the sandbox reads through a read-only bind, and a folder per kernel
(`KernelFolder`) with the connection file (bound read-only), the kernel's log (the kernel gets only a descriptor)
and the one folder a sandbox can write on the host, its ZeroMQ sockets. That folder is the kernel's until the
kernel is ready, before any of the student's code runs, and root's from then on (`lock_sockets`, by descriptor).
Nothing here follows a link: files are opened with O_NOFOLLOW and checked with fstat, folders are removed by
`rm`, which follows none, and only once the sandbox is dead."""
import os
import shutil
import stat
import subprocess
import tempfile
from typing import Optional


def special_files(dirpath, names):
    """`shutil.copytree`'s ignore: everything that is not a regular file, a folder or a symlink (fifos, devices,
    sockets), so that copying a submission never blocks or reads outside it."""
    skip = []
    for name in names:
        try:
            mode = os.lstat(os.path.join(dirpath, name)).st_mode
        except OSError:
            skip.append(name)
            continue
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
            skip.append(name)
    return skip


def copy_submission(src: str, dest: str) -> str:
    """Copy the submission folder to `dest` (links kept as links, special files skipped, so that nothing outside
    `src` is ever read and copying never blocks)."""
    shutil.copytree(src, dest, symlinks=True, ignore=special_files)
    return dest


def remove_tree(path: str) -> None:
    """Remove a folder a student's code wrote in, however deep (as shutil.rmtree(path, ignore_errors=True) does,
    without its recursion)."""
    subprocess.run(['rm', '-rf', '--', path], capture_output=True)


LOG_TAIL = 2000


class KernelFolder:
    """One kernel's files: `connection_file`, `log_path` (both in a folder only the grader writes) and `sockets`."""

    def __init__(self, path: str, uid: Optional[int]):
        os.mkdir(path, 0o700)
        self.path = path
        self.connection_file = os.path.join(path, 'kernel.json')
        self.log_path = os.path.join(path, 'kernel.log')
        self.sockets = os.path.join(path, 'sockets')
        os.mkdir(self.sockets, 0o700)
        if uid is not None:
            self._on_sockets(lambda fd: os.fchown(fd, uid, uid))

    def _on_sockets(self, act) -> None:
        fd = os.open(self.sockets, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            act(fd)
        finally:
            os.close(fd)

    def open_log(self) -> int:
        """A new log file's descriptor, for the kernel's stdout and stderr."""
        return os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_NOFOLLOW
                       | os.O_CLOEXEC, 0o600)

    def share_connection_file(self) -> None:
        """Let the kernel's uid read the connection file (bound read-only; its folder stays the grader's)."""
        fd = os.open(self.connection_file, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            os.fchmod(fd, 0o644)
        finally:
            os.close(fd)

    def lock_sockets(self) -> None:
        """The kernel is ready: its sockets folder becomes root's, so nothing in it can change any more."""
        self._on_sockets(lambda fd: (os.fchown(fd, 0, 0), os.fchmod(fd, 0o711)) if os.geteuid() == 0
                         else os.fchmod(fd, 0o500))

    def log_tail(self, n: int = LOG_TAIL) -> str:
        """The last `n` bytes the kernel wrote to its log, as text ('' when there is none)."""
        try:
            fd = os.open(self.log_path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return ''
        try:
            size = os.fstat(fd).st_size
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return ''
            os.lseek(fd, max(0, size - n), os.SEEK_SET)
            return os.read(fd, n).decode('utf-8', 'replace')
        finally:
            os.close(fd)


class NotebookFolder:
    """One notebook's folder on the host (0700, the grader's): `submission`, its copy the sandbox reads, and a
    `KernelFolder` per kernel. `remove` once no sandbox of the notebook is alive."""

    def __init__(self, submission: Optional[str], parent: Optional[str] = None, uid: Optional[int] = None):
        self.root = tempfile.mkdtemp(prefix='nbsbx-', dir=parent or None)
        self.uid, self.kernels = uid, 0
        self.submission = os.path.join(self.root, 'submission')
        if submission is not None:
            copy_submission(submission, self.submission)
        else:
            os.mkdir(self.submission, 0o700)

    def kernel(self) -> KernelFolder:
        self.kernels += 1
        return KernelFolder(os.path.join(self.root, f'kernel{self.kernels}'), self.uid)

    def remove(self) -> None:
        remove_tree(self.root)
