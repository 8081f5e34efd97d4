"""Each test cell's calls in a process of their own, forked from the kernel (standard library only; sent into
the kernel as text with the agent, whose `install` is given this module).

When a test cell makes its first call, the kernel forks a child that serves every call of that cell; the child
ends when the next cell begins. Whatever the student's functions change while one cell tests them (a dictionary
memo filled by the perfect game, a global counter, a patched module) goes with the child, so each test cell starts
from the state the notebook's own cells left, never from what another test cell left. Where forking fails, the
kernel serves the calls itself, as it did before.
"""
import contextlib
import gc
import inspect
import io
import json
import os
import signal
import sys
from multiprocessing.connection import Pipe

STDERR_LIMIT = 100_000            # characters of what a request's calls wrote to stderr passed on
REPLY_AFTER_INTERRUPT = 3.0       # seconds the child gets to answer once interrupted (it reports what it printed)


class CellProcesses:
    """The child serving the current test cell. `serve(text)` answers one request (in the child); `quiet()`
    runs first in each child and cuts it off from the kernel's sockets, which belong to the parent;
    `take_tables(sent)` keeps the tables of answers the grader sends this kernel, here, so that every child
    has them, read once; it returns the names of those kept."""

    def __init__(self, serve, quiet, take_tables):
        self.serve, self.quiet, self.take_tables = serve, quiet, take_tables
        self.tables = set()
        self.cell = self.pid = self.child = None

    def respond(self, request_text):
        """The answer to one request: from the current cell's child, or (no child) served here."""
        try:
            request = json.loads(request_text)
            if request.get('tables'):
                self.tables.update(self.take_tables(request.pop('tables')))
                request_text = json.dumps(request, allow_nan=True)      # the child has them already
                self.end()                  # a child forked before has not got them
            needed = [table for table in request.get('replace', ()) if table not in self.tables]
            if needed:
                return json.dumps({'need_tables': needed})
            if self.pid is None or request.get('cell') != self.cell:
                self.end()
                self._start(request.get('cell'))
        except Exception as error:
            return json.dumps({'failed': '%s: %s' % (type(error).__name__, error)})
        if self.pid is None:                # forking failed: served here
            return self.serve(request_text)
        try:
            self.child.send_bytes(request_text.encode('utf-8', 'surrogatepass'))
            return self._reply()
        except KeyboardInterrupt:           # the cell ran out of time: the child has the interrupted call's answer
            return self._after_interrupt()
        except (EOFError, OSError):
            return json.dumps({'failed': "the process running this cell's calls ended (%s) before it answered"
                                         % self.end()})

    def _reply(self):
        """The child's answer; what it wrote to stderr (warnings, logging) goes to the kernel's stderr first."""
        stray, answer = self.child.recv()
        if stray:
            sys.stderr.write(stray)
        return answer

    def end(self):
        """Stop the current child; how it ended."""
        pid, child, self.pid, self.cell, self.child = self.pid, self.child, None, None, None
        if child is not None:
            child.close()
        if pid is None:
            return 'no process'
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        return 'killed by signal %d' % -code if code < 0 else 'exit status %d' % code

    def _start(self, cell):
        here, there = Pipe()
        gc.freeze()             # the child's collector leaves the kernel's objects alone: fewer pages copied
        try:
            pid = os.fork()
        except OSError:
            pid = None
        if pid != 0:
            gc.unfreeze()
        if pid is None:
            return
        if pid == 0:
            here.close()
            self._child(there)
        there.close()
        self.pid, self.cell, self.child = pid, cell, here

    def _child(self, parent):
        try:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            self.quiet()
            while True:
                text = parent.recv_bytes().decode('utf-8', 'surrogatepass')
                stderr, sys.stderr = sys.stderr, io.StringIO()
                try:
                    answer = self.serve(text)
                    stray = sys.stderr.getvalue()[-STDERR_LIMIT:]
                finally:
                    sys.stderr = stderr
                parent.send((stray, answer))
        finally:
            os._exit(0)

    def _after_interrupt(self):
        """The interrupted child's answer (the interrupt reached it too, or is passed on now); then it ends."""
        try:
            if not self.child.poll(0.5):
                os.kill(self.pid, signal.SIGINT)
            if self.child.poll(REPLY_AFTER_INTERRUPT):
                return self._reply()
        except (EOFError, OSError, KeyboardInterrupt):
            pass
        finally:
            self.end()
        return '{"interrupted": true, "results": []}'


def end_before_shutdown(kernel, cells):
    """The cell's child ends, reaped, when the kernel is asked to shut down: ipykernel then waits for its
    children to go, and an unreaped one (a zombie) would keep it waiting for seconds."""
    shutting_down = kernel.do_shutdown

    async def do_shutdown(restart):
        cells.end()
        done = shutting_down(restart)
        return await done if inspect.isawaitable(done) else done

    kernel.do_shutdown = do_shutdown


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
