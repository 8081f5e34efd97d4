"""The widget's background thread: every call of the notebook's functions runs there, one job after another, so
the notebook stays responsive and the widget can say "thinking…" while a slow score works."""
import itertools
import queue
import threading
import time

from .calls import Cancelled, FunctionError, shorten


class Worker:
    """Runs jobs in order. ``generation`` moves on with every user action: a background job queued for an older
    generation is skipped, and one running is cancelled at its next function call. ``stops`` moves on with Stop
    (and with anything else that ends a perfect game)."""

    BUSY_AFTER = 0.4   # seconds of work before the status says "thinking…"

    def __init__(self, on_error, on_busy, on_idle):
        self.on_error, self.on_busy, self.on_idle = on_error, on_busy, on_idle
        self.jobs = queue.Queue()
        self._generations, self._stops = itertools.count(1), itertools.count(1)   # next() is atomic: any thread
        self.generation = self.stops = 0
        self.busy = None    # (what, since) while a job the user waits for runs
        self._busy_shown = False
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        threading.Thread(target=self._run, name='nac-widget-worker', daemon=True).start()
        threading.Thread(target=self._tick, name='nac-widget-ticker', daemon=True).start()

    def advance(self):
        """A user action: whatever the widget was doing for the old position is no longer wanted."""
        self.generation = next(self._generations)
        return self.generation

    def stop(self):
        self.stops = next(self._stops)
        self._wake.set()

    def submit(self, job, *args, background=False):
        """Queue ``job(*args)``; a background job runs only if no user action came in between."""
        self.jobs.put((job, args, self.generation if background else None))

    def cancel_check(self, generation=None, stops=None):
        """A function that raises Cancelled once the generation (or the stop count) has moved on."""
        def check():
            if generation not in (None, self.generation) or stops not in (None, self.stops):
                raise Cancelled()
        return check

    def pause(self, seconds, stops):
        """Sleep up to ``seconds``; False if Stop was pressed meanwhile."""
        deadline = time.monotonic() + seconds
        while self.stops == stops:
            left = deadline - time.monotonic()
            if left <= 0:
                return True
            self._wake.wait(min(left, 0.05))
            self._wake.clear()
        return False

    def set_busy(self, what):
        """Say what the job the user waits for is doing (None: nothing); once shown, the end of it is shown too."""
        with self._lock:
            self.busy = None if what is None else (what, time.monotonic())
            ended, self._busy_shown = self._busy_shown and what is None, self._busy_shown and what is not None
        if ended:
            self.on_idle()

    def wait(self, timeout=60):
        """Block until every queued job is done (for tests and scripts); False on timeout."""
        deadline = time.monotonic() + timeout
        while self.jobs.unfinished_tasks:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    def close(self):
        self._closed = True
        self.stop()
        self.jobs.put((None, (), None))

    def _run(self):
        while True:
            job, args, generation = self.jobs.get()
            try:
                if job is None:
                    return
                if generation is None or generation == self.generation:
                    job(*args)
            except Cancelled:
                pass
            except FunctionError as error:
                self.on_error(str(error))
            except Exception as error:   # a bug in the widget itself: still one line
                self.on_error(shorten(f'widget error: {type(error).__name__}: {error}'))
            finally:
                try:
                    self.set_busy(None)
                finally:
                    self.jobs.task_done()

    def _tick(self):
        while not self._closed:
            time.sleep(0.25)
            with self._lock:
                busy = self.busy
                if busy is not None and time.monotonic() - busy[1] > self.BUSY_AFTER:
                    self._busy_shown = True
                    self.on_busy(busy[0], time.monotonic() - busy[1])
