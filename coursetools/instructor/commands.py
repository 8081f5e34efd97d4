"""nbgrader's own commands, run for `make grade` as an instructor would type them in the course folder.

`run` runs one in this process through nbgrader's app class (`GenerateAssignmentApp`, `ExportApp`, ...):
the same configuration files, command-line options and logic as `nbgrader <command>`, without a new Python
and nbgrader's imports each time (about 3 s per command). `Feedback` spreads `generate_feedback` over the
cores: nbgrader converts one notebook at a time, and a graded notebook's HTML costs about 0.4 s.
`run_separately` is the plain command in a process of its own (used by `--sequential`).
"""
from __future__ import annotations

import contextlib
import importlib
import io
import json
import logging
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time
import traceback

APPS = {'generate_assignment': 'GenerateAssignmentApp', 'generate_feedback': 'GenerateFeedbackApp', 'export': 'ExportApp',
        'autograde': 'AutogradeApp', 'collect': 'CollectApp', 'release_feedback': 'ReleaseFeedbackApp'}
MIN_PER_PROCESS = 8        # fewer notebooks than this per process are not worth a process's start-up


class CommandFailed(SystemExit):
    def __init__(self, args, log):
        super().__init__(f'{log.rstrip()}\n`nbgrader {" ".join(args)}` failed; its log is above.')


def _argv(args, db):
    return [*args, f'--db={db}'] if db else list(args)


def _env():
    """This environment, with the venv's bin first on PATH (nbgrader runs `alembic` from there)."""
    env = dict(os.environ)
    env['PATH'] = os.path.join(sys.prefix, 'bin') + os.pathsep + env.get('PATH', '')
    return env


def run(course, command, *args, db=None, config=None):
    """`nbgrader <command> <args>` in this process, in the course folder (the current one), with `config` (a
    traitlets Config) over the course's; its log is shown only if it fails, and returned."""
    assert os.path.samefile(os.getcwd(), course.root), 'nbgrader reads nbgrader_config.py from the current folder'
    argv = _argv(args, db)
    code, log = _run_app(command, argv, config)
    if code:
        raise CommandFailed([command, *argv], log)
    return log


def _run_app(command, argv, config=None):
    """(exit code, log) of nbgrader's app for `command`, run here, with the speed-ups `c.Grading` turns on."""
    import nbgrader.apps
    from coursetools.grading import adapters, feedback_page
    from coursetools.grading.settings import Grading
    log = io.StringIO()
    try:
        with contextlib.redirect_stderr(log), contextlib.redirect_stdout(log):
            app = getattr(nbgrader.apps, APPS[command])()
            app.initialize(argv)
            if config is not None:
                app.update_config(config)
            settings = Grading(config=app.config)
            if adapters.allowed() and 'exporter_class' not in app.config.GenerateFeedback:
                app.config.GenerateFeedback.exporter_class = (feedback_page.FastFeedbackPageExporter
                                                              if settings.fast_feedback_html
                                                              else feedback_page.FeedbackPageExporter)
            with adapters.speed_ups(in_process_alembic=settings.in_process_alembic):
                app.start()
    except SystemExit as stop:
        if stop.code not in (None, 0):
            return 1, log.getvalue()
    except Exception as error:
        return 1, f'{log.getvalue()}{type(error).__name__}: {error}'
    return 0, log.getvalue()


def stop_on_ctrl_c_and_kill():
    """Ctrl-C and `kill` (SIGTERM) raise KeyboardInterrupt in the grading process, which stops the run cleanly and
    says so in one line: from then on the libraries' logs are silenced (their complaints about the interrupt, such
    as a connection closed half-way, are not news). Python drops an exception raised where it cannot propagate (a
    garbage collector's callback, a `__del__`); an interrupt dropped there is raised again at once, so that none is
    lost."""
    def interrupted(signum, frame):
        logging.disable(logging.CRITICAL)
        raise KeyboardInterrupt
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM):
        signal.signal(signum, interrupted)
    dropped = sys.unraisablehook

    def raise_again(unraisable):
        if issubclass(unraisable.exc_type, KeyboardInterrupt):      # raised again 10 ms later, by SIGALRM
            signal.setitimer(signal.ITIMER_REAL, 0.01)      # (a timer thread's kill could land before its start()
            # returned, inside this hook, and be dropped with it; a second drop re-arms the alarm)
        else:
            dropped(unraisable)
    sys.unraisablehook = raise_again


def parse_with_nbgrader_settings(parser, argv=None):
    """The command's own arguments, and the nbgrader settings given after them (`--Class.trait=value`, passed on
    to nbgrader); anything else is refused by the parser."""
    args, options = parser.parse_known_args(argv)
    unknown = [o for o in options if not o.startswith('--') or '=' not in o]
    if unknown:
        parser.error(f'unrecognised arguments: {" ".join(unknown)} (nbgrader settings look like --Class.trait=value)')
    return args, options


def run_separately(course, command, *args, db=None, check=True):
    """`nbgrader <command> <args>` as a process of its own in the course folder; stops with its log if it fails
    (unless check=False). Returns the finished process."""
    argv = [command, *_argv(args, db)]
    with subprocess.Popen([sys.executable, '-m', 'nbgrader', *argv], cwd=course.root, env=_env(), text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True) as process:
        try:
            output, errors = process.communicate()
        except KeyboardInterrupt:       # one Ctrl-C for it too: nbgrader then removes what it began for a student
            process.send_signal(signal.SIGINT)
            try:
                process.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
            raise
    result = subprocess.CompletedProcess(process.args, process.returncode, output, errors)
    if result.returncode != 0 and check:
        raise CommandFailed(argv, result.stdout + result.stderr)
    return result


def share_count(students, processes, min_share=MIN_PER_PROCESS):
    """Into how many shares feedback for `students` notebooks is split on `processes` processes: at least
    `min_share` notebooks each, one share at the least."""
    return max(1, min(processes, students // min_share))


class Feedback:
    """`nbgrader generate_feedback <assignment> --force`, split over the cores: each share of the students (the
    others left out with nbgrader's own `student_id_exclude`) is converted by its own process, one of the `forked`
    helpers `make grade` made (`ForkedHelpers`). Without them (forking was not safe) this process converts every
    share. `start` gives the helpers their shares and returns at once, so that this process can do other work
    meanwhile (the similarity report); `finish` converts what no helper took and waits for the rest."""

    def __init__(self, course, assignment, expected, db=None, min_share=MIN_PER_PROCESS, forked=None, options=()):
        self.course, self.assignment, self.db, self.min_share = course, assignment, db, min_share
        self.options = list(options)        # nbgrader settings for generate_feedback, as on its command line
        self.processes = share_count(expected, len(forked.feedback) if forked and forked.feedback else 1, min_share)
        self.helpers = forked.feedback[:self.processes] if forked else []
        self._students, self._mine, self._given = [], [], []

    def run(self, students):
        self.start(students)
        self.finish()

    def start(self, students):
        students = sorted(students)
        count = share_count(len(students), self.processes, self.min_share)
        if any(',' in student for student in students):
            count = 1
        shares = [students[i::count] for i in range(count)]
        helpers, self.helpers = self.helpers, []
        self._students = students
        self._given = [(share, helper, helper.give(self._argv(students, share)))
                       for share, helper in zip(shares, helpers)]
        self._mine = shares[len(self._given):]
        for helper in helpers[len(shares):]:
            helper.dismiss()

    def finish(self):
        students, failed, lost = self._students, [], []
        given, self._given = self._given, []
        try:
            for share in self._mine:
                self._convert(students, share, failed)
        finally:
            for share, helper, ticket in given:
                outcome = helper.result(ticket)
                if outcome is None:         # a helper that is gone: its share is converted here
                    lost.append(share)
                elif outcome[0]:
                    failed.append((self._argv(students, share), outcome[1]))
        for share in lost:
            self._convert(students, share, failed)
        if failed:
            raise CommandFailed(['generate_feedback', *failed[0][0]], failed[0][1])

    def _convert(self, students, share, failed):
        argv = self._argv(students, share)
        code, log = _run_app('generate_feedback', argv)
        if code:
            failed.append((argv, log))

    def _argv(self, students, share):
        """generate_feedback for `share` alone: every other student graded (not only those of this run, when
        one student is regraded) is left out."""
        argv = [self.assignment, '--force', *self.options]
        others = sorted((set(self.course.graded_students(self.assignment)) | set(students)) - set(share))
        if others:
            argv.append(f'--CourseDirectory.student_id_exclude={",".join(others)}')
        return _argv(argv, self.db)

    def close(self):
        """Stop the helpers started for this run and never given a share (grading stopped early)."""
        for helper in self.helpers:
            helper.release()
        self.helpers = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class ForkedHelpers:
    """Helpers forked from this process after its imports and before it starts any thread: `feedback` ones each
    convert the feedback shares they are given (`Feedback`), and a `spare` one writes reports (`Report`), one
    job after another, for as long as the run lasts. Forked, they have nbgrader and nbconvert imported already
    (about 2.5 CPU-s each for a process started anew). `fork` returns None where forking is not safe (threads
    running, not Linux) or not possible: this process then writes the feedback and the reports itself."""

    def __init__(self, feedback, spare):
        import nbgrader.apps  # noqa: F401  (what the feedback helpers need, imported once, here)
        from coursetools.grading import adapters  # noqa: F401
        helpers = self.all = []
        sys.stdout.flush()
        sys.stderr.flush()
        for _ in range(feedback + bool(spare)):
            requests_out, requests_in = os.pipe()
            answers_out, answers_in = os.pipe()
            stopping = {signal.SIGINT, signal.SIGTERM}      # held over the fork: a child never runs our handlers
            held = signal.pthread_sigmask(signal.SIG_BLOCK, stopping)
            try:
                pid = os.fork()
            except OSError:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
                for fd in (requests_out, requests_in, answers_out, answers_in):
                    os.close(fd)
                self.close()
                raise
            if pid == 0:
                try:
                    for signum in stopping:         # Ctrl-C and `kill` are for the grading process, which closes us
                        signal.signal(signum, signal.SIG_IGN)
                    signal.pthread_sigmask(signal.SIG_SETMASK, held)
                    for fd in [requests_in, answers_out] + [fd for helper in helpers for fd in helper.fds()]:
                        os.close(fd)
                    _serve_forked(requests_out, answers_in)
                finally:
                    os._exit(0)
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
            os.close(requests_out)
            os.close(answers_in)
            helpers.append(_ForkedHelper(pid, os.fdopen(requests_in, 'w'), os.fdopen(answers_out)))
        self.feedback = helpers[:feedback]
        self.spare = helpers[feedback] if spare else None

    @classmethod
    def fork(cls, feedback, spare=False):
        if (feedback < 1 and not spare) or sys.platform != 'linux' or threading.active_count() != 1:
            return None
        try:
            return cls(max(0, feedback), spare)
        except OSError:         # no process to spare (a limit on processes or memory): no helpers
            return None

    def get_ready(self):
        """Let the spare helper import what the report needs, while the last notebooks run."""
        if self.spare is not None:
            self.spare.ask(['import', 'coursetools.instructor.report'])

    def close(self):
        for helper in self.all:
            helper.stop()
        self.all, self.feedback, self.spare = [], [], None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _ForkedHelper:
    """A forked helper's end in this process. It answers its jobs in the order they were asked; each job asked gets
    a ticket, and `result(ticket)` is that job's answer, whichever order the answers are read in."""

    def __init__(self, pid, requests, answers):
        self.pid, self.requests, self.answers = pid, requests, answers
        self.asked, self.read, self.unclaimed = 0, 0, {}

    def fds(self):
        return [self.requests.fileno(), self.answers.fileno()]

    def give(self, argv):
        """A share of the feedback: `generate_feedback` with `argv`; its ticket."""
        return self.ask(['feedback', argv])

    def ask(self, job):
        """Send `job`; its ticket for `result` (None for an import, which gets no answer)."""
        try:
            self.requests.write(json.dumps(job) + '\n')
            self.requests.flush()
        except (BrokenPipeError, ValueError):
            pass                    # gone: `result` says so
        if job[0] == 'import':
            return None
        self.asked += 1
        return self.asked - 1

    def result(self, ticket):
        """(exit code, log) of the job with `ticket`, or None if the helper is gone; answers read on the way, to
        jobs asked before it, are kept for their own `result`."""
        while ticket not in self.unclaimed and self.read <= ticket:
            try:
                self.unclaimed[self.read] = tuple(json.loads(self.answers.readline()))
            except (ValueError, OSError):
                return None
            self.read += 1
        return self.unclaimed.pop(ticket, None)

    def dismiss(self):      # it waits for the next assignment's share
        pass

    def release(self):      # `ForkedHelpers.close` stops it
        pass

    def stop(self, grace=2.0):
        """Close its pipes (an idle helper exits at once); one still busy after `grace` seconds is killed."""
        for stream in (self.requests, self.answers):
            with contextlib.suppress(OSError):
                stream.close()
        deadline = time.monotonic() + grace
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(self.pid, os.WNOHANG) == (0, 0):
                if time.monotonic() > deadline:
                    os.kill(self.pid, signal.SIGKILL)
                    os.waitpid(self.pid, 0)
                    return
                time.sleep(0.01)


class Report:
    """reports/<assignment>.html (`coursetools.instructor.report`), written by the spare forked helper while this process
    writes feedback, or by this process when `path` is asked for."""

    def __init__(self, course, assignment, db_url, helpers=None):
        self.job = [str(course.root), assignment, db_url]
        self.helper = helpers.spare if helpers is not None else None
        if self.helper is not None:
            self.ticket = self.helper.ask(['report', *self.job])

    def path(self):
        helper, self.helper = self.helper, None
        outcome = helper.result(self.ticket) if helper is not None else None
        if outcome is not None and outcome[0] == 0:
            return pathlib.Path(outcome[1])
        from coursetools.instructor import report        # not written (no helper, or it failed): here, failing as it fails
        return report.write_report(*self.job)


def _write_report(course_root, assignment, db_url):
    from coursetools.instructor import report
    try:
        return 0, str(report.write_report(course_root, assignment, db_url))
    except Exception:
        return 1, traceback.format_exc()


def _serve_forked(requests_fd, answers_fd):
    """A forked helper: each job read (feedback or a report) done, and its (exit code, log) written back; an
    import asked for ahead is done without an answer."""
    jobs = {'feedback': lambda argv: _run_app('generate_feedback', argv), 'report': _write_report}
    with os.fdopen(requests_fd) as requests, os.fdopen(answers_fd, 'w') as answers:
        for line in requests:
            kind, *arguments = json.loads(line)
            if kind == 'import':            # no answer
                with contextlib.suppress(Exception):
                    importlib.import_module(*arguments)
                continue
            answers.write(json.dumps(jobs[kind](*arguments)) + '\n')
            answers.flush()
