"""nbgrader's autograde, split around execution so that notebooks can run elsewhere (`coursetools.grading.pool`).

`nbgrader autograde` does, for each submission in turn: set up the destination and the gradebook rows, copy the
files, sanitize each notebook (ClearOutput ... OverwriteCells), execute it, save the grades (SaveAutoGrades ...),
write it to autograded/. Here the same nbgrader objects (its `Autograde` converter, configured exactly as
`nbgrader autograde <assignment> --force` would be in the course folder, and nbconvert exporters holding its
preprocessors) do the same steps through their public methods, but the execute preprocessor is called by the
caller, so that many notebooks can execute at once while this process keeps the gradebook to itself.

    pipeline = Pipeline.for_course(course_root, assignment, db_url=None, submitted_dir=None, options=())
    for submission in pipeline.submissions():
        jobs = pipeline.prepare(submission)                # sanitized notebooks, ready to execute
        ... execute each job's notebook with pipeline.executor ...
        pipeline.finish(submission, executed_notebooks)   # grades, autograded/, permissions

Each prepared notebook carries notes for the instructor (`PreparedNotebook.notes`), all decided here: the warnings
nbgrader logged while it sanitized that student's notebook (`NbgraderWarnings`; `finish` returns those of its
own steps), the locked cells the student changed or deleted, and what the student's code cells do to the grader's
machinery (`coursetools.judge.tampering`). `finish` writes them into the autograded notebook's metadata
(`coursetools.grading_notes`), which the report reads.
"""
from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
from dataclasses import dataclass, field
from typing import Optional

import nbformat
from nbconvert.exporters import NotebookExporter
from nbconvert.writers import FilesWriter
from nbgrader.converters.base import NbGraderException
from nbgrader.utils import remove, rmtree

from coursetools.judge import tampering
from coursetools.judge.checker_host import TrustedCells

NBGRADER_NOTES = 8          # nbgrader's warnings kept per student and step; the rest are counted


@dataclass
class Submission:
    """One student's submission of the assignment."""
    student: str
    assignment: str
    folder: str                     # submitted/<student>/<assignment>
    notebooks: list                 # paths of the notebooks to grade in it


@dataclass
class PreparedNotebook:
    """A sanitized notebook, with everything needed to execute it anywhere."""
    student: str
    name: str                       # notebook id (file name without .ipynb)
    nb: nbformat.NotebookNode
    resources: dict
    folder: str                     # autograded/<student>/<assignment>: the files beside the notebook
    trusted: Optional[TrustedCells] = None
    notes: list = field(default_factory=list)      # for the instructor: nbgrader's warnings, locked cells, tampering


class Unreadable(Exception):
    """A submitted notebook that nbgrader cannot read at all."""

    def __init__(self, filename, error):
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        super().__init__(f'{os.path.basename(filename)}: {type(error).__name__}: {reason}'[:300])
        self.filename = filename


@dataclass
class Pipeline:
    """The autograde steps of one assignment, around an execute step the caller performs."""
    app: object                     # nbgrader's AutogradeApp, initialised as on the command line
    converter: object               # its Autograde converter
    sanitize: NotebookExporter
    before: list                    # autograde preprocessors before the execute preprocessor (instances)
    after: NotebookExporter         # and after it (SaveAutoGrades, ...)
    executor: object                # the execute preprocessor, configured; None if there is none
    trusted: dict = field(default_factory=dict)
    locked: dict = field(default_factory=dict)      # (db_url, assignment, notebook) -> CourseCells

    @classmethod
    def for_course(cls, assignment, *, db_url=None, submitted_dir=None, options=(), log_level=None):
        """nbgrader's AutogradeApp for `nbgrader autograde <assignment> --force [--db=URL]`, in the current
        folder (the course; its nbgrader_config.py applies)."""
        from nbclient.client import NotebookClient
        from nbgrader.apps import AutogradeApp
        from nbgrader.converters import Autograde

        argv = [assignment, '--force', *options] + ([f'--db={db_url}'] if db_url else [])
        app = AutogradeApp()
        app.initialize(argv)
        app.coursedir.assignment_id = assignment
        if submitted_dir:
            app.coursedir.submitted_directory = os.path.relpath(os.path.abspath(submitted_dir), app.coursedir.root)
        if log_level is not None:
            # nbgrader's warnings stay off the terminal but are still made, for each student's notes
            for handler in app.log.handlers:
                handler.setLevel(max(handler.level, log_level))
            app.log.setLevel(min(log_level, logging.WARNING))
        converter = Autograde(coursedir=app.coursedir, parent=app)
        converter.writer = FilesWriter(parent=converter, config=converter.config)
        converter.exporter = NotebookExporter(parent=converter, config=converter.config)
        graders = [pp(parent=converter) if isinstance(pp, type) else pp for pp in converter.autograde_preprocessors]
        at = next((i for i, pp in enumerate(graders) if isinstance(pp, NotebookClient)), None)
        return cls(app, converter, _exporter(converter, converter.sanitize_preprocessors),
                   graders[:at] if at is not None else graders,
                   _exporter(converter, graders[at + 1:] if at is not None else []),
                   graders[at] if at is not None else None)

    # --- the class

    def submissions(self, students=None):
        """Every submission found in submitted/, in nbgrader's order (only `students`, if given)."""
        self.converter.init_notebooks()
        coursedir = self.converter.coursedir
        pattern = coursedir.format_path(coursedir.submitted_directory, '(?P<student_id>.*)',
                                        '(?P<assignment_id>.*)', escape=True)
        found = []
        for folder in sorted(self.converter.assignments):
            match = re.match(pattern, folder)
            if match is None:
                raise NbGraderException(f'Could not match {folder!r} with {pattern!r}')
            student = match.group('student_id')
            if students is None or student in students:
                found.append(Submission(student, match.group('assignment_id'), folder,
                                        sorted(self.converter.assignments[folder])))
        return found

    def destination(self, submission: Submission) -> str:
        coursedir = self.converter.coursedir
        return os.path.normpath(coursedir.format_path(coursedir.autograded_directory, submission.student,
                                                      submission.assignment))

    # --- one submission

    def prepare(self, submission: Submission) -> Optional[list]:
        """Gradebook rows, files, sanitized notebooks; None if nbgrader would skip the submission."""
        converter = self.converter
        converter.notebooks = list(submission.notebooks)
        if not converter.init_destination(submission.assignment, submission.student):
            return None
        converter.run_pre_convert_hook()
        with NbgraderWarnings(converter.log) as assignment_warnings:
            converter.init_assignment(submission.assignment, submission.student)
        prepared = []
        for filename in converter.notebooks:
            converter.log.info('Sanitizing %s', filename)
            resources = converter.init_single_notebook_resources(filename)
            with NbgraderWarnings(converter.log) as logged:
                try:
                    output, resources = self.sanitize.from_filename(filename, resources=resources)
                except Exception as error:
                    try:
                        nbformat.read(filename, as_version=4)
                    except Exception as unreadable:
                        raise Unreadable(filename, unreadable) from error
                    raise
                converter.write_single_notebook(output, resources)
                nb = nbformat.reads(output, as_version=4)
                resources = dict(resources, metadata=dict(resources.get('metadata') or {}, path=self.destination(
                    submission)))
                for preprocessor in self.before:
                    nb, resources = preprocessor(nb, resources)
            notes = assignment_warnings.notes() + logged.notes() + self.static_notes(filename, nb, resources)
            prepared.append(PreparedNotebook(submission.student, resources['unique_key'], nb, resources,
                                             self.destination(submission), self.trusted_cells(resources), notes))
        return prepared

    def static_notes(self, filename, sanitized, resources) -> list:
        """The locked cells the submitted notebook (`filename`) changed or deleted, and what the student's code
        cells of the `sanitized` notebook (the code the kernel runs) do to the grader (`coursetools.judge.tampering`)."""
        info = resources.get('nbgrader') or {}
        key = (info.get('db_url'), info.get('assignment'), info.get('notebook'))
        try:
            if None in key:
                return tampering.notes(sanitized)
            if key not in self.locked:
                self.locked[key] = CourseCells.from_gradebook(*key)
            cells = self.locked[key]
            return (tampering.locked_cell_notes(nbformat.read(filename, as_version=4), cells.expected) +
                    tampering.notes(sanitized, cells.sources))
        except Exception as error:      # a report for the instructor: never a reason not to grade
            return [f'the grader could not read this notebook for the report ({type(error).__name__}: {error})'[:300]]

    def trusted_cells(self, resources) -> Optional[TrustedCells]:
        info = resources.get('nbgrader') or {}
        key = (info.get('db_url'), info.get('assignment'), info.get('notebook'))
        if None in key:
            return None
        if key not in self.trusted:
            self.trusted[key] = TrustedCells.from_gradebook(*key)
        return self.trusted[key]

    def finish(self, submission: Submission, executed: list) -> list:
        """After execution: the remaining preprocessors (grades into the gradebook), autograded/, permissions.
        Each notebook's `notes`, and the warnings nbgrader logged in these steps, go into the autograded notebook's
        metadata (`coursetools.grading_notes`); returns those warnings."""
        converter = self.converter
        found = []
        for notebook in executed:
            resources = dict(notebook.resources)
            resources.pop('trusted_cells', None)
            _add_notes(notebook.nb, notebook.notes)
            with NbgraderWarnings(converter.log) as logged:
                output, resources = self.after.from_notebook_node(notebook.nb, resources)
            if logged.notes():
                nb = nbformat.reads(output, as_version=4)
                _add_notes(nb, logged.notes())
                output = nbformat.writes(nb)
                found.extend(note for note in logged.notes() if note not in found)
            converter.write_single_notebook(output, resources)
        converter.set_permissions(submission.assignment, submission.student)
        converter.run_post_convert_hook()
        return found

    def discard(self, submission: Submission) -> None:
        """What nbgrader does for a submission it could not grade: remove what was written for it."""
        dest = self.destination(submission)
        if self.converter.coursedir.notebook_id == '*':
            if os.path.exists(dest):
                rmtree(dest)
        else:
            for notebook in submission.notebooks:
                path = os.path.join(dest, os.path.splitext(os.path.basename(notebook))[0] + '.ipynb')
                if os.path.exists(path):
                    remove(path)

    def forget(self, submission: Submission) -> None:
        """`discard`, and its submission's row in the gradebook too: it was not graded through no fault of the
        student's, so no mark (not even 0) is recorded for it."""
        from nbgrader.api import Gradebook, MissingEntry
        self.discard(submission)
        with Gradebook(self.app.coursedir.db_url) as gradebook:
            with contextlib.suppress(MissingEntry):
                gradebook.remove_submission(submission.assignment, submission.student)


@dataclass
class CourseCells:
    """The locked cells of one notebook of the assignment, from the gradebook (never from a submission)."""
    sources: dict           # grade_id -> source: the course's code, which the static scan does not read
    expected: dict          # grade_id -> (nbgrader's checksum, (the gradebook's source, the released source))

    @classmethod
    def from_gradebook(cls, db_url, assignment, notebook):
        from nbformat.v4 import new_code_cell
        from nbgrader.api import Gradebook
        from nbgrader.preprocessors import ClearHiddenTests
        remover = ClearHiddenTests(enforce_metadata=False)
        with Gradebook(db_url) as gradebook:
            cells = [(cell.name, cell.cell_type, cell.source, cell.checksum)
                     for cell in gradebook.find_notebook(notebook, assignment).source_cells if cell.locked]
        expected = {}
        for name, kind, source, checksum in cells:
            released = source
            if kind == 'code':
                cell, _ = remover.preprocess_cell(new_code_cell(source), {}, 0)
                released = cell.source
            expected[name] = (checksum, (source, released))
        return cls({name: source for name, kind, source, _ in cells if kind == 'code'}, expected)


class NbgraderWarnings(logging.Handler):
    """`with NbgraderWarnings(logger) as warnings:` collects the warnings (and errors) logged to `logger` by this
    thread while the block runs; `warnings.notes()` gives them as notes: 'nbgrader: <first line>'. Other threads'
    records (another student's, in a worker) are left out, so each student's steps can be watched on their own."""

    def __init__(self, logger):
        super().__init__(logging.WARNING)
        self.logger, self.thread, self.messages = logger, threading.get_ident(), []

    def emit(self, record):
        if record.thread != self.thread:
            return
        try:
            lines = record.getMessage().strip().splitlines() or ['']
        except Exception:
            lines = [str(record.msg)]
        text = ('nbgrader: ' + ' '.join(lines[0].split()))[:300]
        if text not in self.messages:
            self.messages.append(text)

    def notes(self):
        kept = self.messages[:NBGRADER_NOTES]
        more = len(self.messages) - len(kept)
        return kept + ([f'nbgrader: {more} more warning{"s" * (more > 1)}'] if more > 0 else [])

    def __enter__(self):
        self.logger.addHandler(self)
        return self

    def __exit__(self, *exc):
        self.logger.removeHandler(self)


def _add_notes(nb, notes):
    if notes:
        kept = (nb.metadata.get('coursetools') or {}).get('grading_notes', [])
        nb.metadata.setdefault('coursetools', {})['grading_notes'] = list(dict.fromkeys(list(kept) + list(notes)))


def _exporter(converter, preprocessors):
    exporter = NotebookExporter(parent=converter, config=converter.config)
    for pp in preprocessors:
        exporter.register_preprocessor(pp)
    return exporter
