"""Throw-away uids, each held by one live sandbox (or checker) at a time.

A uid is reserved by a lock on a file named after it, in a folder only root can write: the lock lasts as long as
the lease's descriptor, so it ends when the lease is released or its process dies, and no two graders on one
machine (threads, Dask worker processes) ever hand the same uid to two live sandboxes."""
from __future__ import annotations

import fcntl
import os
import secrets
import stat
from typing import Optional

FIRST, COUNT = 200_000, 1_000_000
LEASES = '/run/coursetools-uids'


class Lease:
    """One reserved uid (None when the grader is not root: the sandbox then uses a user namespace)."""

    def __init__(self, uid: Optional[int], fd: Optional[int]):
        self.uid, self._fd = uid, fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


def _leases_folder() -> str:
    folder = LEASES if os.path.isdir(os.path.dirname(LEASES)) else os.path.join('/tmp', 'coursetools-uids')
    os.makedirs(folder, 0o700, exist_ok=True)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or stat.S_IMODE(info.st_mode) & 0o022:
        raise OSError(f'{folder} is not a folder only root can write: uids cannot be reserved there')
    return folder


def lease(tries: int = 64) -> Lease:
    """A uid no other live sandbox holds; `Lease(None, None)` when not root."""
    if os.geteuid() != 0:
        return Lease(None, None)
    folder = _leases_folder()
    for _ in range(tries):
        uid = FIRST + secrets.randbelow(COUNT)
        fd = os.open(os.path.join(folder, str(uid)), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return Lease(uid, fd)
    raise OSError(f'no free sandbox uid after {tries} tries')
