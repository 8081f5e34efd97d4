"""The grader's side of the channel to a student's kernel: only well-formed, signed messages of bounded size are
read (`CheckedChannel`, `GradingKernelClient`), the handshake that a kernel is ready, and what an error output
may hold. Everything here treats the kernel as hostile: it is the student's process."""
from __future__ import annotations

import time
from queue import Empty

import jupyter_client
import zmq
import zmq.asyncio
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from traitlets import Type

MAX_MESSAGE_BYTES = 64 * 1024**2    # a larger message from a kernel is dropped by ZeroMQ before it is read
ERROR_CHARS = 4000                  # characters kept of an error's message and of each traceback entry


class ChannelError(Exception):
    """A message from the kernel that is not a well-formed, signed Jupyter message."""


class CheckedChannel(AsyncZMQSocketChannel):
    """A channel to a student's kernel that only ever returns well-formed, signed messages; anything else
    raises ChannelError (the kernel is then stopped: see `_channel_broken`)."""

    async def _recv(self, **kwargs):
        frames = await self.socket.recv_multipart(**kwargs)
        try:
            _, message = self.session.feed_identities(frames)
            message = self.session.deserialize(message)
        except Exception as error:
            raise ChannelError(f'{type(error).__name__}: {str(error)[:200]}') from None
        if not (isinstance(message.get('header'), dict) and isinstance(message.get('parent_header'), dict)
                and isinstance(message.get('content'), dict) and isinstance(message.get('msg_type'), str)):
            raise ChannelError('a message without the parts of a Jupyter message')
        return message


class GradingKernelClient(AsyncKernelClient):
    """The client of a grading kernel: checked channels, and no message over MAX_MESSAGE_BYTES."""

    shell_channel_class = Type(CheckedChannel)
    iopub_channel_class = Type(CheckedChannel)
    stdin_channel_class = Type(CheckedChannel)

    def _context_default(self):
        self._created_context = True
        context = zmq.asyncio.Context()
        context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
        return context


class KernelGone(Exception):
    """The kernel died or had to be killed while running a cell or a call."""

    def __init__(self, ename: str, message: str):
        super().__init__(message)
        self.ename, self.message = ename, message


async def wait_until_ready(kc, timeout):
    """Wait until the kernel answers on its shell channel and its IOPub channel is connected: the handshake of
    jupyter_client's `wait_for_ready`, which then waits for 0.2 s of silence on IOPub (0.2 s more per notebook,
    half of a forked kernel's start). Here IOPub is drained up to the kernel's idle status for the handshake's own
    request, the last message it sends for it."""
    deadline = time.monotonic() + timeout
    while True:
        request = kc.kernel_info()
        try:
            reply = await kc.shell_channel.get_msg(timeout=1)
        except Empty:
            reply = None
        if reply is not None and reply['msg_type'] == 'kernel_info_reply':
            if await _idle_seen(kc, request, 0.2, deadline):
                version = int(reply['content']['protocol_version'].split('.')[0])
                if version != jupyter_client.protocol_version_info[0]:
                    kc.session.adapt_version = version     # as jupyter_client does for an older kernel
                return
        if not await kc.is_alive():
            raise RuntimeError('Kernel died before replying to kernel_info')
        if time.monotonic() > deadline:
            raise RuntimeError(f"Kernel didn't respond in {timeout:g} seconds")


async def _idle_seen(kc, request, timeout, deadline):
    """True once IOPub carried the kernel's idle status for `request`; False if IOPub stayed silent for
    `timeout` (not connected yet: the handshake starts over) or the deadline passed."""
    while time.monotonic() < deadline:
        try:
            message = await kc.iopub_channel.get_msg(timeout=timeout)
        except Empty:
            return False
        if (message['msg_type'] == 'status' and message['parent_header'].get('msg_id') == request
                and message['content'].get('execution_state') == 'idle'):
            return True
    return False


def mb(n: int) -> str:
    return f'{n / 1024**2:g} MB' if n < 1024**3 else f'{n / 1024**3:g} GB'


def cap_error(content: dict) -> None:
    """Keep errors, but not megabytes of them: the message and each traceback entry cut, at most 10 entries."""
    content['ename'] = str(content.get('ename', 'Error'))[:100]
    content['evalue'] = cut(str(content.get('evalue', '')), ERROR_CHARS)
    tb = [str(t) for t in content.get('traceback') or []]
    if len(tb) > 10:
        tb = tb[:5] + ['...'] + tb[-5:]
    content['traceback'] = [cut(t, ERROR_CHARS) for t in tb]


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f'... [{len(text) - limit} characters cut by the grader]'


def channel_broken(error: BaseException) -> KernelGone:
    return KernelGone('GraderChannelError', 'The kernel sent the grader a message it could not read '
                                             f'({type(error).__name__}); the kernel was stopped and later cells '
                                             'run in a fresh kernel.')


def error_output(ename: str, message: str) -> dict:
    return {'output_type': 'error', 'ename': ename, 'evalue': message,
            'traceback': [f'\x1b[0;31m{ename}\x1b[0m: {message}']}
