"""Each test cell's calls in a process of their own, forked from the kernel (standard library only; sent into
the kernel as text with the agent, whose `install` is given this module).

When a test cell makes its first call, the kernel forks a child that serves every call of that cell; the child
ends when the next cell begins. Whatever the student's functions change while one cell tests them (a dictionary
memo filled by the perfect game, a global counter, a patched module) goes with the child, so each test cell starts
from the state the notebook's own cells left, never from what another test cell left. Where forking fails, the
kernel serves the calls itself, as it did before.
"""
import io
import json
import os
import select
import signal
import struct
import sys
import time

_HEADER = struct.Struct('>Q')
STDERR_LIMIT = 100_000            # characters of what a request's calls wrote to stderr passed on
REPLY_AFTER_INTERRUPT = 3.0       # seconds the child gets to answer once interrupted (it reports what it printed)


def _send(fd, text):
    data = text.encode('utf-8', 'surrogatepass')
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _read_exactly(fd, size):
    parts, left = [], size
    while left:
        part = os.read(fd, min(left, 1 << 20))
        if not part:
            raise EOFError('the process serving the cell has gone')
        parts.append(part)
        left -= len(part)
    return b''.join(parts)


def _receive(fd):
    size, = _HEADER.unpack(_read_exactly(fd, _HEADER.size))
    return _read_exactly(fd, size).decode('utf-8', 'surrogatepass')


class CellProcesses:
    """The child serving the current test cell. `serve(text)` answers one request (in the child); `quiet()`
    runs first in each child and cuts it off from the kernel's sockets, which belong to the parent; `tables`
    holds the tables of answers the grader has sent this kernel (kept here, so that every child has them)."""

    def __init__(self, serve, quiet, tables):
        self.serve, self.quiet, self.tables = serve, quiet, tables
        self.cell = self.pid = self.to_child = self.from_child = None

    def respond(self, request_text):
        """The answer to one request: from the current cell's child, or (no child) served here."""
        try:
            request = json.loads(request_text)
            given = request.get('tables') or {}
            if given:
                self.tables.update(given)
                self.end()                  # a child forked before has not got them
            needed = [table for table in request.get('replace', ()) if table not in self.tables]
            if needed:
                return json.dumps({'need_tables': needed})
            cell = request.get('cell')
        except Exception as error:
            return json.dumps({'failed': '%s: %s' % (type(error).__name__, error)})
        replied = self.answer(cell, request_text)
        return self.serve(request_text) if replied is None else replied

    def answer(self, cell, text):
        """The answer (text) of the current cell's child; None if no child could be started (the caller then
        serves the request itself)."""
        if self.pid is None or cell != self.cell:
            self.end()
            if not self._start(cell):
                return None
        try:
            _send(self.to_child, text)
            return self._reply()
        except KeyboardInterrupt:       # the cell ran out of time: the child has the interrupted call's answer
            return self._after_interrupt()
        except (EOFError, OSError):
            status = self.end()
            return '{"failed": "the process running this cell\'s calls ended (%s) before it answered"}' % status

    def _reply(self):
        """The child's answer; what it wrote to stderr (warnings, logging) goes to the kernel's stderr first."""
        stray = _receive(self.from_child)
        answer = _receive(self.from_child)
        if stray:
            sys.stderr.write(stray)
        return answer

    def end(self):
        """Stop the current child; how it ended."""
        pid, self.pid, self.cell = self.pid, None, None
        for fd in (self.to_child, self.from_child):
            if fd is not None:
                os.close(fd)
        self.to_child = self.from_child = None
        if pid is None:
            return 'no process'
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
            if not done:
                os.kill(pid, signal.SIGKILL)
                _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            return 'gone'
        if os.WIFSIGNALED(status):
            return 'killed by signal %d' % os.WTERMSIG(status)
        return 'exit status %d' % os.WEXITSTATUS(status)

    def _start(self, cell):
        down_read, down_write = os.pipe()
        up_read, up_write = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            for fd in (down_read, down_write, up_read, up_write):
                os.close(fd)
            return False
        if pid == 0:
            os.close(down_write)
            os.close(up_read)
            self._child(down_read, up_write)
        os.close(down_read)
        os.close(up_write)
        self.pid, self.cell, self.to_child, self.from_child = pid, cell, down_write, up_read
        return True

    def _child(self, requests, answers):
        try:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            self.quiet()
            while True:
                try:
                    text = _receive(requests)
                except EOFError:
                    break
                answer, stray = self._served(text)
                _send(answers, stray)
                _send(answers, answer)
        except BaseException:
            pass
        finally:
            os._exit(0)

    def _served(self, text):
        """(answer, what the calls wrote to stderr) of one request, in the child."""
        stderr, sys.stderr = sys.stderr, io.StringIO()
        try:
            return self.serve(text), sys.stderr.getvalue()[-STDERR_LIMIT:]
        finally:
            sys.stderr = stderr

    def _after_interrupt(self):
        """The interrupted child's answer (it reached the child too, or is passed on now), then the child ends."""
        try:
            waited, deadline = False, time.monotonic() + REPLY_AFTER_INTERRUPT
            while time.monotonic() < deadline:
                ready, _, _ = select.select([self.from_child], [], [], 0.3)
                if ready:
                    return self._reply()
                if not waited:
                    waited = True
                    os.kill(self.pid, signal.SIGINT)
        except (EOFError, OSError, KeyboardInterrupt):
            pass
        finally:
            self.end()
        return '{"interrupted": true, "results": []}'


def quiet_kernel(shell):
    """In a child: nothing may reach the kernel's ZeroMQ sockets (their context belongs to the parent); the
    display publisher and the kernel's own streams write nowhere."""
    kernel = getattr(shell, 'kernel', None)
    session = getattr(kernel, 'session', None)
    if session is not None:
        session.send = lambda *arguments, **keywords: None
    thread = getattr(kernel, 'iopub_thread', None)
    if thread is not None:
        thread.schedule = lambda function: None
        thread.send_multipart = lambda *arguments, **keywords: None
