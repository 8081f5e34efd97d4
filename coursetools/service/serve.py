"""`make serve`: the grading service. It runs for the term in the course folder:

    python -m coursetools.service.serve [--course DIR] [--db URL] [--port N] [--no-pages]

Each submission that appears in the exchange's inbound folder (`watch`) is queued in the gradebook's database
(`queue`); queued submissions are claimed, up to `c.Service.batch` of one assignment at once (a burst is graded in
parallel, as `make grade` grades a class), and each is decided on by the instructor's policy (`policy`). One to
grade is collected with the course's own safe collect (nbgrader's collect with `exchange.CollectOne`: regular
files only), graded alone for its student with `make grade`'s engine (`engine.grade_assignment`, the same marks),
and its feedback page released to that student only (nbgrader's `release_feedback`, keyed by the submission's
secret, so the student's *Fetch Feedback* finds it). One refused gets a page saying why, released the same way.

The grading takes the course's grading lock for each batch (`preflight.grading_turn`): `make grade` and the
service wait for each other, one grading at a time. Ctrl-C or SIGTERM stops the service within seconds: a batch
under way is stopped as `make grade` stops, its submissions queued again for the next start. The log (stdout)
says what was queued, graded (for whom, the mark, how long from submission to feedback) or refused, and why."""
from __future__ import annotations

import argparse
import contextlib
import fcntl
import html
import logging
import os
import pathlib
import signal
import sys
import tempfile
import threading
import time

from traitlets.config import Config

from coursetools.grading.course import STUDENT_ID_RULE, Course, is_student_id
from coursetools.grading.progress import Phases, printable
from coursetools.instructor import commands, engine, preflight, roster
from coursetools.instructor.exchange import NotCollected, SafeCopy
from coursetools.service.policy import Service, decide, shown, utc
from coursetools.service.queue import Queue
from coursetools.service.watch import Watcher, scan

log = logging.getLogger('coursetools.service')
DAY = 86400
RETRY_SECONDS = 30        # after the grader itself failed (not a submission: those get a page)

REFUSED_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{assignment}: not graded now</title>
<style>body {{ font-family: sans-serif; max-width: 46em; margin: 2em auto; line-height: 1.5 }}</style></head>
<body><h1>{assignment}: this submission is not graded now</h1>
<p>Handed in at {submitted}.</p><p class="reason">{reason}</p></body></html>
"""


class GradingService:
    def __init__(self, course, db=None, options=()):
        self.course = course
        self.config = roster.course_config(course.root)
        self.policy = Service(config=self.config)
        self.term = roster.Term(config=self.config)
        self.db = db or self.config.CourseDirectory.get('db_url') or course.db_url
        self.course_id = self.config.CourseDirectory.get('course_id') or 'course'
        root = self.config.Exchange.get('root') or '/srv/nbgrader/exchange'
        self.inbound = os.path.join(root, self.course_id, 'inbound')
        self.outbound_feedback = os.path.join(root, self.course_id, 'feedback')
        self.options = list(options)
        self.feedback_options = ['--FeedbackPage.marks_only_until_due=True'] if self.policy.before_due == 'marks' \
            else []
        self.queue = Queue(self.db)
        self.wake = threading.Event()
        self.claimed = []
        self.busy = {}          # what the pages show as in progress: {row id: row}

    # ------------------------------------------------------------------------------------------------ the loop

    def run(self, once=False):
        """Grade what arrives until interrupted (KeyboardInterrupt); with `once`, until nothing is queued."""
        recovered = self.queue.recover()
        if recovered:
            log.info('%d submission(s) left mid-grade by a service that stopped: queued again', recovered)
        watcher = Watcher(self.inbound, self.wake, self.policy.force_polling).start()
        log.info('watching %s (%s; listed again every %g s)', self.inbound, watcher.how, self.policy.poll_seconds)
        try:
            while True:
                found, pending = scan(self.inbound, self.course.assignments(), time.time())
                for folder, student, assignment, when in self.queue.add(found):
                    log.info(printable(f'queued {student} {assignment}, handed in {shown(when)} ({folder!r})'))
                rows = self.queue.claim(self.policy.batch)
                if rows:
                    self.claimed = [row.id for row in rows]
                    try:
                        self.grade_batch(rows)
                    except Exception as error:      # the grader's fault (no worker, a failed command): not theirs
                        log.exception(printable(f'grading {", ".join(row.student for row in rows)} failed '
                                                f'({type(error).__name__}: {error}); queued again, tried again in '
                                                f'{RETRY_SECONDS} s'))
                        self.queue.unclaim(self.claimed)
                        time.sleep(RETRY_SECONDS)
                    self.claimed = []
                    continue
                if once and not pending:
                    return
                self.wake.wait(0.25 if pending or once else self.policy.poll_seconds)
                self.wake.clear()
        finally:
            self.queue.unclaim(self.claimed)        # stopped mid-batch: graded again at the next start
            watcher.stop()

    def grade_batch(self, rows):
        assignment = rows[0].assignment
        chosen, dues = {}, {}
        for row in rows:                # oldest first: each student's newest, or newest on time, is graded
            due = dues.setdefault(row.student, self.due(row.student, assignment))
            late = due is not None and row.submitted_at > due and self.policy.after_due == 'on time counts'
            if not (late and row.student in chosen and chosen[row.student].submitted_at <= due):
                chosen[row.student] = row
        to_grade, collected, notes = [], [], {}
        for row in rows:
            reason, not_before = self.refusal(row, chosen[row.student], dues[row.student])
            if reason:
                self.refuse(row, reason, not_before)
            else:
                to_grade.append(row)
        if not to_grade:
            return
        started, phases = time.perf_counter(), Phases()
        with preflight.grading_turn(self.course, waiting=lambda: log.info('waiting for `make grade` to finish')):
            for row in to_grade:
                self.busy[row.id] = row
            try:
                collected = [row for row in to_grade if self.collect(row)]
                students = [row.student for row in collected]
                if students:
                    run, notes = engine.grade_assignment(self.course, assignment, students, phases, db=self.db,
                                                         options=self.options, compare=False, quiet=True,
                                                         progress=False, feedback_options=self.feedback_options)
                    with phases.start('release feedback'):
                        self.release(assignment, students, notes)
            finally:
                self.busy = {}
        took = time.perf_counter() - started
        if collected:
            log.info('graded %d submission(s) of %s in %.1f s: %s', len(collected), assignment, took, ', '.join(
                f'{name.removeprefix(assignment + ": ")} {seconds:.1f} s' for name, seconds in phases.seconds.items()))
        for row in collected:
            mark, note = self.mark_of(assignment, row.student, notes.get(row.student))
            self.queue.finish(row.id, 'graded', note, *mark)
            log.info(printable(f'graded {row.student} {assignment}: {mark[0]:g}/{mark[1]:g}'
                               f'{" (" + note + ")" if note else ""}; graded in {took:.1f} s with '
                               f'{len(collected) - 1} other(s), {time.time() - row.submitted_at:.1f} s after '
                               'it was handed in'))

    # ------------------------------------------------------------------------------------------------ policy

    def due(self, student, assignment):
        """The student's due date as Unix time (the roster's extension added), or None."""
        when = self.term.duedates.get(assignment)
        if not when:
            return None
        from nbgrader.utils import parse_utc
        due = utc(parse_utc(when))
        entry = roster.read_roster(self.course.root / self.term.roster).get(student)
        return due + (entry.extension.total_seconds() if entry and entry.extension else 0)

    def refusal(self, row, chosen, due):
        """(reason, not_before) to refuse `row`, or ('', None) to grade it: `chosen`, the row of its student that
        this batch grades; `due`, the student's due date."""
        if not is_student_id(row.student):
            return f'not collected: {STUDENT_ID_RULE}', None
        graded = self.queue.graded_since(row.student, row.assignment, 0)
        on_time = max([t for t in graded if due is not None and t <= due], default=None)
        if chosen.id != row.id:
            if due is not None and chosen.submitted_at <= due < row.submitted_at:
                on_time = chosen.submitted_at       # late, and graded instead: the one on time
            else:
                return (f'you handed in again at {shown(chosen.submitted_at)} before this one was graded: that one '
                        'is graded instead. This one is kept.'), None
        elif graded and graded[-1] > row.submitted_at:
            return f'a later submission of yours ({shown(graded[-1])}) is graded already. This one is kept.', None
        decision = decide(self.policy, row, [t for t in graded if t > row.submitted_at - DAY], due, on_time)
        return ('', None) if decision.grade else (decision.reason, decision.not_before)

    def refuse(self, row, reason, not_before=None):
        page = REFUSED_PAGE.format(assignment=html.escape(row.assignment), submitted=shown(row.submitted_at),
                                   reason=html.escape(reason))
        released = self.release_page(row, page)
        self.queue.finish(row.id, 'refused', reason, not_before=not_before)
        log.info(printable(f'refused {row.student} {row.assignment} handed in {shown(row.submitted_at)}: {reason}'
                           f'{"" if released else " (no page released: " + released.reason + ")"}'))

    # ------------------------------------------------------------------------------------------------ exchange

    def collect(self, row):
        """nbgrader's collect of this one submission (`CollectOne`, the course's safe collect) into submitted/;
        False (and the row refused, saying why) if it was not collected."""
        config = Config()
        config.ExchangeFactory.collect = 'coursetools.instructor.exchange.CollectOne'
        config.CollectOne.folder = row.folder
        config.CourseDirectory.student_id = row.student
        try:
            output = commands.run(self.course, 'collect', row.assignment, '--update', db=self.db, config=config)
        except commands.CommandFailed as failed:
            output = str(failed)
        stamp = self.course.submitted / row.student / row.assignment / 'timestamp.txt'
        folder_time = row.folder.rsplit('+', 3)[2]
        if stamp.is_file() and stamp.read_text().strip() == folder_time.strip():
            return True
        why = [line.split(': ', 1)[-1].removesuffix(': not collected') for line in output.splitlines()
               if 'not collected' in line]
        self.refuse(row, 'not collected: ' + (why[-1] if why else 'the exchange did not give it to the grader'))
        return False

    def release(self, assignment, students, notes):
        """Each student's feedback page to the exchange's feedback folder, for that student only."""
        for student in students:
            feedback = self.course.root / 'feedback' / student / assignment
            for name in ('timestamp.txt', 'submission_secret.txt'):       # a page saying why it was not graded
                source = self.course.submitted / student / assignment / name
                if source.is_file() and not (feedback / name).exists() and feedback.is_dir():
                    (feedback / name).write_bytes(source.read_bytes())
            config = Config()
            config.CourseDirectory.student_id = student
            commands.run(self.course, 'release_feedback', assignment, db=self.db, config=config)

    def release_page(self, row, page):
        """A page for the submission `row` in the exchange's feedback folder, where `fetch_feedback` looks for
        its feedback (the hash of its secret and notebook): a true value, or one whose `reason` says why not."""
        from nbgrader.utils import notebook_hash
        with tempfile.TemporaryDirectory(prefix='refused-') as scratch:
            copy = os.path.join(scratch, 'submission')
            try:        # the course's safe copy: nothing opened in the inbound folder through a link
                SafeCopy(log, 10 ** 8).copy(os.path.join(self.inbound, row.folder), copy)
                secret = pathlib.Path(copy, 'submission_secret.txt').read_text()
            except (NotCollected, OSError) as error:
                return Outcome(False, f'{error}')
        name = notebook_hash(secret=secret, notebook_id=row.assignment) + '.html'
        os.makedirs(self.outbound_feedback, exist_ok=True)
        temporary = os.path.join(self.outbound_feedback, f'.{name}.tmp')
        with open(temporary, 'w', encoding='utf-8') as out:
            out.write(page)
        os.chmod(temporary, 0o644)
        os.replace(temporary, os.path.join(self.outbound_feedback, name))
        return Outcome(True)

    def mark_of(self, assignment, student, notes):
        """((final mark, max_score), note) of a graded student, from the gradebook."""
        from nbgrader.api import Gradebook, MissingEntry
        from coursetools.grading.mark import mark_of
        with Gradebook(self.db) as gradebook:
            try:
                mark = mark_of(gradebook.find_submission(assignment, student))
            except MissingEntry:
                return (0.0, 0.0), 'not graded: ' + '; '.join(notes or ['nbgrader could not grade it'])
        note = f'{mark.penalty:g} taken for lateness' if mark.penalty else ''
        return (mark.final, mark.max_score), ('not graded: ' + '; '.join(notes) if mark.ungraded and notes else note)


class Outcome:
    def __init__(self, done, reason=''):
        self.done, self.reason = done, reason

    def __bool__(self):
        return self.done


def hold_the_service(course):
    """One service per course: refused, in one line, when another one runs."""
    folder = course.root / '.grading'
    folder.mkdir(exist_ok=True)
    lock = open(folder / 'service.lock', 'a+')
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.seek(0)
        raise SystemExit(f'Cannot serve: the grading service already runs in this course (process '
                         f'{lock.read().strip() or "?"}).') from None
    lock.truncate(0)
    lock.write(f'{os.getpid()}\n')
    lock.flush()
    return lock


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m coursetools.service.serve', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--course', help='the course folder (default: the current folder)')
    parser.add_argument('--db', help='gradebook URL (default: the course\'s, c.CourseDirectory.db_url)')
    parser.add_argument('--port', type=int, help='where the pages listen (default: c.Service.port)')
    parser.add_argument('--no-pages', action='store_true', help='grade only: serve no pages')
    parser.add_argument('--once', action='store_true', help='grade what is in the exchange, then stop')
    args, options = commands.parse_with_nbgrader_settings(parser, argv)
    logging.basicConfig(level=logging.INFO, format='%(asctime)s %(message)s', stream=sys.stdout)
    logging.getLogger('tornado.access').setLevel(logging.WARNING)
    logging.getLogger('watchfiles').setLevel(logging.WARNING)
    course = Course.at(args.course)
    os.chdir(course.root)           # nbgrader reads nbgrader_config.py from the current folder
    from coursetools.instructor import grade
    grade.check_environment(course)
    grade.check_sandbox()
    preflight.check_temporary_folder()
    held = hold_the_service(course)
    run_folder = preflight.take_a_run_folder()
    commands.stop_on_ctrl_c_and_kill()
    service = GradingService(course, db=args.db, options=options)
    pages = None
    if not args.no_pages:
        from coursetools.service import pages as web
        pages = web.start(service, args.port or service.policy.port)
    try:
        service.run(once=args.once)
    except KeyboardInterrupt:
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, signal.SIG_IGN)
        logging.disable(logging.NOTSET)
        log.info('stopped: %s', ', '.join(f'{n} {s}' for s, n in service.queue.counts().items()))
    finally:
        if pages is not None:
            pages.stop()
        service.queue.close()
        with contextlib.suppress(OSError):
            from coursetools.sandbox.host.files import remove_tree
            remove_tree(run_folder)
        held.close()


if __name__ == '__main__':
    main()
