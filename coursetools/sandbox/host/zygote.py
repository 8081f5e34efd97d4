"""The grading process's side of the warm kernel start (`coursetools.sandbox.inside.zygote`).

`Zygote.launch` starts a sandbox with bubblewrap as for a cold kernel, with no command: it only says it is ready and
holds the sandbox open (`bubblewrap.HOLD`). Then the zygote gets a descriptor of the sandbox's init, the kernel's
log and a status pipe, and forks the kernel into the sandbox. The bwrap process stands for the kernel, as it does
for a cold one: when the kernel ends, the sandbox ends and bwrap exits; killing bwrap ends the sandbox with the
kernel in it. Only for root (a throw-away uid per notebook); standard library only."""
from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
from typing import Optional

from coursetools.sandbox.host import processes
from coursetools.sandbox.host.bubblewrap import SandboxUnavailable
from coursetools.sandbox.inside import zygote as inside

READY_TIMEOUT = 30      # seconds for a zygote or a held sandbox to say it is ready; they take milliseconds


class ZygoteFailed(SandboxUnavailable):
    """The warm start failed: the machine's fault, never a student's."""


def read_word(fd: int, word: bytes, timeout: float = READY_TIMEOUT) -> bytes:
    """What a process writes on `fd`: `word`, or what it wrote instead until it closed `fd` or `timeout` passed."""
    data = b''
    while data != word and select.select([fd], [], [], timeout)[0]:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
    return data


class Zygote:
    """One warm zygote process; `launch` forks one kernel into a new sandbox."""

    def __init__(self, env: dict):
        self.env = env
        self.process: Optional[subprocess.Popen] = None
        self.channel: Optional[socket.socket] = None

    def start(self) -> None:
        self.close()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.process = subprocess.Popen([sys.executable, inside.__file__, str(theirs.fileno())], cwd='/',
                                            env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                            pass_fds=(theirs.fileno(),), start_new_session=True)   # no Ctrl-C
        finally:
            theirs.close()
        self.channel = ours
        ours.settimeout(READY_TIMEOUT)
        try:
            word = ours.recv(16)
        except OSError as error:
            word = str(error).encode()
        ours.settimeout(None)
        if word != b'ready':
            self.close()
            raise ZygoteFailed(f'the kernels\' zygote did not start: {word.decode(errors="replace") or "it exited"}')

    def launch(self, argv: list, log: int, request: dict) -> tuple:
        """Start bwrap's `argv` (a sandbox held open) and fork a kernel into it; returns the bwrap Popen and a pidfd
        of the sandbox's init."""
        if self.process is None or self.process.poll() is not None:
            self.start()
        ready_r, ready_w = os.pipe()
        try:
            process, init = processes.start(argv, ready_w, log)
            os.close(ready_w)
            ready_w = None
            try:
                self._fork_into(process, init, ready_r, log, request)
            except BaseException:
                process.kill()
                process.wait()
                processes.wait_gone(init)
                raise
            return process, init
        finally:
            for fd in (ready_r, ready_w):
                if fd is not None:
                    os.close(fd)

    def _fork_into(self, process, init: Optional[int], ready_r: int, log: int, request: dict) -> None:
        held = read_word(ready_r, b'ready') == b'ready'
        if not held or init is None:
            raise RuntimeError(f'the sandbox did not start (bwrap exit status {process.poll()})')
        status_r, status_w = os.pipe()
        try:
            try:
                socket.send_fds(self.channel, [json.dumps(request).encode()], [init, log, status_w])
            except OSError as error:
                raise ZygoteFailed(f'the kernels\' zygote is gone: {error}') from None
            os.close(status_w)
            status_w = None
            word = read_word(status_r, b'ok')
        finally:
            os.close(status_r)
            if status_w is not None:
                os.close(status_w)
        if word.startswith(b'SubmissionNotCopied'):      # as when a cold kernel's launcher cannot copy it
            raise RuntimeError(f'the submission could not be copied into its sandbox: {word.decode(errors="replace")}')
        if word != b'ok':
            raise ZygoteFailed(f'a kernel could not be forked into its sandbox: '
                               f'{word.decode(errors="replace") or "it exited"}')

    def close(self) -> None:
        if self.channel is not None:
            self.channel.close()
            self.channel = None
        if self.process is not None:
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None
