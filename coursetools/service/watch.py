"""Finding new submissions in the exchange's inbound folder (`c.Exchange.root`/<course>/inbound), which every student
can write: only the folder's list of names is read (never a file in it, nor through a link; collecting is the
course's safe collect, `instructor/exchange`). `watchfiles` wakes the service when the folder changes (inotify,
or polling with `c.Service.force_polling` for network filesystems); the folder is listed again every
`c.Service.poll_seconds` anyway, so nothing is missed if an event is."""
from __future__ import annotations

import logging
import os
import threading

from nbgrader.utils import parse_utc

from coursetools.service.policy import utc

log = logging.getLogger('coursetools.service')


def parse(name, assignments):
    """(folder, student, assignment, submitted_at) for an inbound folder's name as nbgrader's `submit` makes it
    (`student+assignment+time+random`; a student id may hold a +), or None when it is none of the course's
    assignments. A time nbgrader cannot read is given as 0 (the student's oldest, as collect takes it)."""
    parts = name.rsplit('+', 3)
    if len(parts) != 4 or parts[1] not in assignments:
        return None
    try:
        when = utc(parse_utc(parts[2]))
    except (ValueError, OverflowError):
        when = 0.0
    return name, parts[0], parts[1], when


SETTLED_SECONDS = 10        # a folder unchanged this long is complete, even without nbgrader's last file


def complete(inbound, name, now):
    """Whether `nbgrader submit` has finished writing the folder: it writes submission_secret.txt last. Looked at
    with lstat only (nothing opened, no link followed)."""
    try:
        os.lstat(os.path.join(inbound, name, 'submission_secret.txt'))
        return True
    except OSError:
        pass
    try:
        return now - os.lstat(os.path.join(inbound, name)).st_mtime > SETTLED_SECONDS
    except OSError:
        return False


def scan(inbound, assignments, now):
    """(every complete submission in the inbound folder, by name, oldest first; how many are still being
    written)."""
    try:
        names = os.listdir(inbound)
    except FileNotFoundError:
        return [], 0
    found = [parsed for name in names if (parsed := parse(name, assignments)) is not None]
    ready = [f for f in found if complete(inbound, f[0], now)]
    return sorted(ready, key=lambda f: (f[3], f[0])), len(found) - len(ready)


class Watcher:
    """Sets `wake` whenever the inbound folder changes, from a thread of its own, until `stop`."""

    def __init__(self, inbound, wake, force_polling=False):
        self.inbound, self.wake, self.force_polling = inbound, wake, force_polling
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._watch, name='inbound-watcher', daemon=True)
        self.how = 'polling' if force_polling else 'inotify'

    def start(self):
        os.makedirs(self.inbound, exist_ok=True)
        self.thread.start()
        return self

    def _watch(self):
        try:
            import watchfiles
            for _ in watchfiles.watch(self.inbound, stop_event=self.stopping, force_polling=self.force_polling,
                                      recursive=False, raise_interrupt=False, rust_timeout=500,
                                      debounce=200, watch_filter=None):
                self.wake.set()
        except Exception as error:       # no watching: the periodic listing still finds every submission
            log.warning('watching %s failed (%s: %s); listing it every few seconds instead', self.inbound,
                        type(error).__name__, error)

    def stop(self):
        self.stopping.set()
        self.thread.join(timeout=5)
