"""Progress of a grading run on the terminal: a one-line bar with count, percentage and ETA, status lines for
students who need attention, and how long each phase of `make grade` took."""
import contextlib
import os
import re
import shutil
import sys
import time
from typing import Optional


REORDERING = '\u200e\u200f\u202a-\u202e\u2066-\u2069'      # marks that reorder the text around them
# What could move a terminal's cursor, rewrite lines already printed (the marks table), start a line of its own
# or reorder text on the screen.
_CONTROL = re.compile(f'[\x00-\x1f\x7f-\x9f{REORDERING}]')


def printable(text: str) -> str:
    """One line of `text`, which may hold what a student chose (file names, messages), with control characters
    shown as escapes (`\\x1b`, `\\n`), so that printing it on a terminal shows it instead of acting."""
    return _CONTROL.sub(lambda control: control.group().encode('unicode_escape').decode(), text)


def printable_lines(text: str) -> str:
    """`printable`, line by line: a text of many lines keeps its line breaks, and nothing else acts."""
    return '\n'.join(map(printable, text.splitlines()))


class Progress:
    """One-line progress bar with count, percentage and ETA on stderr (plain lines when not a tty)."""

    def __init__(self, total: int, stream=None, enabled: bool = True, label: str = "grading"):
        self.total, self.done, self.label = total, 0, label
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.t0 = time.monotonic()
        self.t_first: Optional[float] = None
        self._shown = False
        self._last_plain = -1
        if enabled and not self.tty:
            self._write(f"{label}: {total} submission(s)\n")
        self.draw()

    def _write(self, s: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.stream.write(s)
            self.stream.flush()

    def eta(self) -> Optional[float]:
        if self.done == 0 or self.done >= self.total:
            return None if self.done == 0 else 0.0
        # rate since the first result, so that cluster start-up does not distort it
        since = self.t_first is not None and self.done > 1
        rate = (time.monotonic() - (self.t_first if since else self.t0)) / (self.done - since)
        return rate * (self.total - self.done)

    def line(self) -> str:
        pct = 100.0 * self.done / self.total if self.total else 100.0
        eta = self.eta()
        eta_s = "--:--" if eta is None else f"{int(eta) // 60:d}:{int(eta) % 60:02d}"
        elapsed = time.monotonic() - self.t0
        return (f"{self.label} {self.done}/{self.total} {pct:3.0f}% ETA {eta_s} "
                f"(elapsed {int(elapsed) // 60:d}:{int(elapsed) % 60:02d})")

    def draw(self) -> None:
        if not self.enabled:
            return
        if self.tty:
            width = shutil.get_terminal_size((80, 20)).columns
            text = self.line()
            bar_w = max(10, min(40, width - len(text) - 4))
            filled = int(bar_w * self.done / self.total) if self.total else bar_w
            self._write("\r\x1b[K[" + "#" * filled + "." * (bar_w - filled) + "] " + text)
            self._shown = True
        elif self.done and self.done != self._last_plain:
            step = max(1, self.total // 10)
            if self.done % step == 0 or self.done == self.total:
                self._write(self.line() + "\n")
                self._last_plain = self.done

    def status(self, message: str) -> None:
        """A line of its own above the bar (always shown, also with the bar disabled)."""
        if self.tty and self._shown:
            self._write("\r\x1b[K")
        self._write(printable(message.rstrip("\n")) + "\n")
        if self.enabled:
            self.draw()

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self.t_first is None:
            self.t_first = time.monotonic()
        self.draw()

    def close(self) -> None:
        if self.tty and self._shown:
            self._write("\n")
            self._shown = False


def resident_mb() -> float:
    """This process's resident memory now, in MB (0 where /proc is not there)."""
    try:
        with open('/proc/self/statm') as statm:
            return int(statm.read().split()[1]) * os.sysconf('SC_PAGE_SIZE') / 1024 ** 2
    except (OSError, ValueError, IndexError):
        return 0.0


class Phases:
    """Wall time of the phases of a grading run (release, autograde, feedback, ...), in the order they ran."""

    def __init__(self):
        self.seconds = {}
        self.memory_mb = {}         # resident memory of this process when each phase ended


    def start(self, name):
        return _Phase(self, name)

    def lines(self):
        total = sum(self.seconds.values())
        width = max((len(name) for name in self.seconds), default=5)
        return [f'  {name.ljust(width)}  {seconds:7.1f} s' for name, seconds in self.seconds.items()] + [
            f'  {"total".ljust(width)}  {total:7.1f} s']


class _Phase:
    def __init__(self, phases, name):
        self.phases, self.name = phases, name

    def __enter__(self):
        self.started = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.phases.seconds[self.name] = self.phases.seconds.get(self.name, 0.0) + time.perf_counter() - self.started
        self.phases.memory_mb[self.name] = resident_mb()
