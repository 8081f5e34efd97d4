"""The instructor's policy for the grading service, in nbgrader_config.py (`c.Service.*`, docs/jupyterhub.md):

    c.Service.attempts_per_day = 3      # graded submissions per student and assignment in any 24 hours (0: any)
    c.Service.attempts_per_hour = 0     # and in any hour (0: any)
    c.Service.after_due = 'on time counts'   # or 'grade late ones too'
    c.Service.before_due = 'everything'      # or 'marks': a failed hidden test's message only after the due date

and how the service runs (where it listens, how it watches). `decide` says what happens to one submission: graded,
or refused with the reason and, over the limit, when the next attempt will be graded. Refusing loses nothing: the
submission stays in the exchange (and `make grade` after a collect still sees the student's newest).

After the due date (c.Term.duedates, plus the student's extension in the roster), a late submission of a student
who handed one in on time is not graded: the last one on time is the one that counts, as nbgrader's
`collect --before-duedate` takes it. A student with nothing on time has their late one graded, with the late
penalty `make grade` takes (`coursetools.instructor.late`, from the collected `timestamp.txt`)."""
from __future__ import annotations

import datetime
from dataclasses import dataclass

from traitlets import Bool, Enum, Float, Int, Unicode
from traitlets.config import LoggingConfigurable

WINDOWS = (('attempts_per_hour', 3600, 'hour'), ('attempts_per_day', 86400, '24 hours'))


class Service(LoggingConfigurable):
    """`c.Service.*` in nbgrader_config.py."""
    attempts_per_day = Int(0, help='graded submissions per student and assignment in any 24 hours; 0: no limit'
                           ).tag(config=True)
    attempts_per_hour = Int(0, help='graded submissions per student and assignment in any hour; 0: no limit'
                            ).tag(config=True)
    after_due = Enum(('on time counts', 'grade late ones too'), default_value='on time counts',
                     help='after the due date: a late submission of a student with one on time is refused '
                     "('on time counts'), or graded as any other ('grade late ones too')").tag(config=True)
    before_due = Enum(('everything', 'marks'), default_value='everything',
                      help="what a feedback page shows before the student's due date: 'everything' (as make grade's), "
                      "or 'marks': per-task marks and the visible tests' failures, a hidden test's failure only as "
                      'failed (its message is shown after the due date)').tag(config=True)
    batch = Int(40, help='submissions of one assignment graded together at most (a burst is graded in parallel)'
                ).tag(config=True)
    force_polling = Bool(False, help='poll the inbound folder instead of inotify (network filesystems)'
                         ).tag(config=True)
    poll_seconds = Float(2.0, help='how often the inbound folder is looked at again anyway, in seconds'
                         ).tag(config=True)
    port = Int(8765, help='where the pages are served (standalone; under JupyterHub: its service URL)'
               ).tag(config=True)
    ip = Unicode('127.0.0.1', help='the address the pages listen on').tag(config=True)
    instructors_group = Unicode('instructors', help="JupyterHub group whose members see the dashboard"
                                ).tag(config=True)


@dataclass
class Decision:
    grade: bool
    reason: str = ''
    not_before: float | None = None


def utc(when):
    """Unix time of nbgrader's naive UTC datetime (a due date, a submission's time)."""
    return when.replace(tzinfo=datetime.timezone.utc).timestamp()


def shown(when):
    """A Unix time as the pages and messages show it."""
    return datetime.datetime.fromtimestamp(when, datetime.timezone.utc).strftime('%Y-%m-%d %H:%M:%S UTC')


def decide(policy, row, graded_times, due=None, on_time_graded=None):
    """What to do with the queued submission `row`: `graded_times`, the submitted times of the student's graded
    submissions of this assignment in the last 24 hours; `due`, the student's due date (Unix time, extension
    included) or None; `on_time_graded`: the submitted time of their last graded submission on time, or None."""
    if due is not None and row.submitted_at > due and on_time_graded is not None \
            and policy.after_due == 'on time counts':
        return Decision(False, f'handed in after the due date ({shown(due)}): your last submission on time '
                        f'({shown(on_time_graded)}) is the one that counts, and keeps its marks. This one is kept.')
    for trait, seconds, span in WINDOWS:
        limit = getattr(policy, trait)
        recent = [t for t in graded_times if t > row.submitted_at - seconds]
        if limit and len(recent) >= limit:
            next_at = recent[-limit] + seconds
            return Decision(False, f'{len(recent)} of your submissions were graded in the last {span} (the limit '
                            f'is {limit}): your next attempt will be graded from {shown(next_at)}. This submission '
                            'is kept.', next_at)
    return Decision(True)
