"""nbgrader's autograde, split around execution so that notebooks can run elsewhere (`coursetools.pool`).

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
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Optional

import nbformat
from nbconvert.exporters import NotebookExporter
from nbconvert.writers import FilesWriter
from nbgrader.converters.base import NbGraderException
from nbgrader.utils import remove, rmtree

from coursetools.checker_host import TrustedCells


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
            app.log.setLevel(log_level)
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
        converter.init_assignment(submission.assignment, submission.student)
        prepared = []
        for filename in converter.notebooks:
            converter.log.info('Sanitizing %s', filename)
            resources = converter.init_single_notebook_resources(filename)
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
            prepared.append(PreparedNotebook(submission.student, resources['unique_key'], nb, resources,
                                             self.destination(submission), self.trusted_cells(resources)))
        return prepared

    def trusted_cells(self, resources) -> Optional[TrustedCells]:
        info = resources.get('nbgrader') or {}
        key = (info.get('db_url'), info.get('assignment'), info.get('notebook'))
        if None in key:
            return None
        if key not in self.trusted:
            self.trusted[key] = TrustedCells.from_gradebook(*key)
        return self.trusted[key]

    def finish(self, submission: Submission, executed: list) -> None:
        """After execution: the remaining preprocessors (grades into the gradebook), autograded/, permissions."""
        converter = self.converter
        for notebook in executed:
            resources = dict(notebook.resources)
            resources.pop('trusted_cells', None)
            output, resources = self.after.from_notebook_node(notebook.nb, resources)
            converter.write_single_notebook(output, resources)
        converter.set_permissions(submission.assignment, submission.student)
        converter.run_post_convert_hook()

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


def _exporter(converter, preprocessors):
    exporter = NotebookExporter(parent=converter, config=converter.config)
    for pp in preprocessors:
        exporter.register_preprocessor(pp)
    return exporter
