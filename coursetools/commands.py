"""nbgrader's own commands, run for `make grade` as an instructor would type them in the course folder.

`run` runs one in this process through nbgrader's app class (`GenerateAssignmentApp`, `ExportApp`, ...):
the same configuration files, command-line options and logic as `nbgrader <command>`, without a new Python
and nbgrader's imports each time (about 3 s per command). `Feedback` spreads `generate_feedback` over the
cores: nbgrader converts one notebook at a time, and a graded notebook's HTML costs about 0.4 s.
`run_separately` is the plain command in a process of its own (used by `--sequential`).

    python -m coursetools.commands      # a helper of `Feedback`, started by it (not for typing)
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys

APPS = {'generate_assignment': 'GenerateAssignmentApp', 'generate_feedback': 'GenerateFeedbackApp',
        'export': 'ExportApp', 'autograde': 'AutogradeApp'}
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


def run(course, command, *args, db=None):
    """`nbgrader <command> <args>` in this process, in the course folder (the current one); its log is shown
    only if it fails."""
    assert os.path.samefile(os.getcwd(), course.root), 'nbgrader reads nbgrader_config.py from the current folder'
    argv = _argv(args, db)
    code, log = _run_app(command, argv)
    if code:
        raise CommandFailed([command, *argv], log)


def _run_app(command, argv):
    """(exit code, log) of nbgrader's app for `command`, run here, with the speed-ups `c.Grading` turns on."""
    import nbgrader.apps
    from coursetools import adapters
    from coursetools.grading import Grading
    log = io.StringIO()
    try:
        with contextlib.redirect_stderr(log), contextlib.redirect_stdout(log):
            app = getattr(nbgrader.apps, APPS[command])()
            app.initialize(argv)
            settings = Grading(config=app.config)
            if settings.fast_feedback_html and 'exporter_class' not in app.config.GenerateFeedback:
                app.config.GenerateFeedback.exporter_class = adapters.FeedbackHTMLExporter
            with adapters.speed_ups(in_process_alembic=settings.in_process_alembic):
                app.start()
    except SystemExit as stop:
        if stop.code not in (None, 0):
            return 1, log.getvalue()
    except Exception as error:
        return 1, f'{log.getvalue()}{type(error).__name__}: {error}'
    return 0, log.getvalue()


def run_separately(course, command, *args, db=None, check=True):
    """`nbgrader <command> <args>` as a process of its own in the course folder; stops with its log if it fails
    (unless check=False). Returns the finished process."""
    argv = [command, *_argv(args, db)]
    result = subprocess.run([sys.executable, '-m', 'nbgrader', *argv], cwd=course.root, env=_env(),
                            capture_output=True, text=True)
    if result.returncode != 0 and check:
        raise CommandFailed(argv, result.stdout + result.stderr)
    return result


class Feedback:
    """`nbgrader generate_feedback <assignment> --force`, split over the cores: each share of the students (the
    others left out with nbgrader's own `student_id_exclude`) is converted by its own process, the first one by
    this process. The other processes are started by `start_helpers` (`make grade` calls it when autograde's
    workers begin to fall idle, so that they import nbgrader while the last notebooks run), or by `run`; they
    wait for their share and exit if never given one."""

    def __init__(self, course, assignment, expected, db=None, processes=None, min_share=MIN_PER_PROCESS,
                 start=True):
        self.course, self.assignment, self.db, self.min_share = course, assignment, db, min_share
        processes = processes or os.cpu_count() or 1
        self.processes = max(1, min(processes, expected // min_share))
        self.helpers, self.started = [], False
        if start:
            self.start_helpers()

    def start_helpers(self):
        if self.started:
            return
        self.started = True
        self.helpers = [subprocess.Popen([sys.executable, '-m', 'coursetools.commands'], cwd=self.course.root,
                                         env=_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, text=True) for _ in range(self.processes - 1)]

    def run(self, students):
        self.start_helpers()
        students = sorted(students)
        count = max(1, min(self.processes, len(students) // self.min_share))
        if any(',' in student for student in students):
            count = 1
        shares = [students[i::count] for i in range(count)]
        failed = []
        helpers, self.helpers = self.helpers, []
        try:
            for share, helper in zip(shares[1:], helpers):
                with contextlib.suppress(BrokenPipeError):      # a helper that died says why below
                    helper.stdin.write(json.dumps(self._argv(students, share)) + '\n')
                    helper.stdin.close()
            for helper in helpers[len(shares) - 1:]:
                with contextlib.suppress(BrokenPipeError):
                    helper.stdin.close()        # not needed: it exits
            argv = self._argv(students, shares[0])
            code, log = _run_app('generate_feedback', argv)
            if code:
                failed.append((argv, log))
        finally:
            for share, helper in zip(shares[1:], helpers):
                log = helper.stdout.read()
                helper.stdout.close()
                if helper.wait():
                    failed.append((self._argv(students, share), log))
            for helper in helpers[len(shares) - 1:]:
                helper.stdout.read()
                helper.stdout.close()
                helper.wait()
        if failed:
            raise CommandFailed(['generate_feedback', *failed[0][0]], failed[0][1])

    def _argv(self, students, share):
        argv = [self.assignment, '--force']
        if len(share) < len(students):
            mine = set(share)
            argv.append(f'--CourseDirectory.student_id_exclude={",".join(s for s in students if s not in mine)}')
        return _argv(argv, self.db)

    def close(self):
        """Stop helpers that were never given a share (grading stopped early)."""
        for helper in self.helpers:
            helper.kill()
            helper.wait()
            helper.stdin.close()
            helper.stdout.close()
        self.helpers = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _serve():
    """A helper of `Feedback`: nbgrader imported now, then one generate_feedback for the argv read from stdin."""
    import nbgrader.apps  # noqa: F401  (the start-up, paid while autograde runs)
    line = sys.stdin.readline()
    if not line.strip():
        return 0
    code, log = _run_app('generate_feedback', json.loads(line))
    sys.stdout.write(log)
    return code


if __name__ == '__main__':
    sys.exit(_serve())
