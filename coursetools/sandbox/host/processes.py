"""A sandbox's processes, from bwrap's start to the end of its init: the grading process's only way to start one
(`start`, for a cold kernel and for one the zygote forks into it) and to know it is gone (`wait_gone`). When the
sandbox's init is gone, so is every process of its PID namespace. Standard library only."""
from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
from typing import Optional

GONE_TIMEOUT = 10       # seconds a killed sandbox's processes get to be gone; they take milliseconds


class SandboxStuck(RuntimeError):
    """A sandbox's processes outlived it (the grader's fault, not the student's)."""


def start(argv: list, stdout: int, stderr: int) -> tuple:
    """Start bwrap's `argv` (from `build_command`); returns its Popen and a pidfd of the sandbox's init."""
    info_r, info_w = os.pipe()
    try:
        process = subprocess.Popen([argv[0], '--info-fd', str(info_w), *argv[1:]], cwd='/',
                                   env={'PATH': os.environ.get('PATH', '/usr/bin:/bin')}, stdin=subprocess.DEVNULL,
                                   stdout=stdout, stderr=stderr, start_new_session=True, pass_fds=(info_w,))
        os.close(info_w)
        info_w = None
        return process, sandbox_init(info_r)
    finally:
        os.close(info_r)
        if info_w is not None:
            os.close(info_w)


def sandbox_init(info_fd: int, timeout: float = 30) -> Optional[int]:
    """A pidfd of the sandbox's init (bwrap's --info-fd tells its pid): when it is gone, so is every process of the
    sandbox's PID namespace. None if bwrap ended before saying."""
    data = b''
    while select.select([info_fd], [], [], timeout)[0]:
        chunk = os.read(info_fd, 4096)
        data += chunk
        with contextlib.suppress(ValueError, KeyError):
            child = json.loads(data)['child-pid']
            try:
                return os.pidfd_open(child)
            except ProcessLookupError:      # gone already
                return None
        if not chunk:
            break
    return None


def wait_gone(pidfd: Optional[int], timeout: float = GONE_TIMEOUT) -> None:
    """Wait until the sandbox's init, and with it the whole sandbox, is gone; close the pidfd."""
    if pidfd is None:
        return
    try:
        if not select.select([pidfd], [], [], timeout)[0]:
            raise SandboxStuck(f'a sandbox\'s processes were still alive {timeout} s after its kernel was killed')
    finally:
        os.close(pidfd)
