"""The one place that touches nbgrader's, nbconvert's (and jsonschema's) internals, for speed-ups of `make grade`
(on by default with the nbgrader they were tested with).

Everything else in the course package uses nbgrader, nbconvert and jupyter_client through their public API. A
grading run of a whole class spends much of its serial time in a few places inside nbgrader, and these
adapters remove that time when the matching `c.Grading.*` setting is on (each is, by default;
`benchmarks/grading_benchmark.py` shows what they save; grader_tests/test_grading.py and
grader_tests/test_feedback_html.py that the marks and the feedback are the same with and without them). Plain
`nbgrader` commands never use them:

* **pooled gradebook**: nbgrader opens a new `Gradebook` (a new SQLAlchemy engine, a schema check and a course
  check) in every preprocessor for every notebook and commits once per cell. Inside `speed_ups`, the
  `Gradebook` name in nbgrader's modules is a subclass that shares one engine and session for the run, and the
  preprocessors after execution commit once per notebook. Its `find_grade` and `find_comment` read all the rows
  of a submitted notebook in one query, where nbgrader makes one per cell (SaveAutoGrades).
* **cached validation**: nbgrader validates every cell's metadata with `jsonschema.validate`, which checks the
  schema and builds a validator on every call. Inside `speed_ups`, nbgrader's `jsonschema` is a stand-in that
  builds the validator once per schema and raises the same errors.
* **in-process alembic** (`c.Grading.in_process_alembic`): when nbgrader creates a new gradebook it runs
  `alembic heads` as a process of its own (about 3 s) to learn the schema's revision. Inside `speed_ups` it
  reads the same revision from nbgrader's migration scripts instead (`alembic_head`); if they cannot be read
  unambiguously, nbgrader's own way is used.
* **fast feedback HTML** (`c.Grading.fast_feedback_html`): `FeedbackHTMLExporter`, under `make grade`'s feedback
  page (`feedback_page.FastFeedbackPageExporter`). nbconvert's HTML exporter parses every page it renders with BeautifulSoup only to mark cells
  focusable (`tabindex`) and images without `alt`; that is half of a feedback page's cost. This exporter marks
  the same elements in the rendered text, and highlights each distinct piece of code and markdown once per run
  (a class's notebooks share most of their cells). The page is the same document: parsed, it is what nbconvert
  writes.

The patches are undone when the run ends. The module checks the installed versions when it is imported: with a
version it was not tested with, it warns (naming the tested range) and applies none of them, so grading goes on
with nbgrader as it is (COURSE_UNTESTED_NBGRADER=1 applies them anyway).
"""
from __future__ import annotations

import glob
import importlib
import json
import os
import re
import warnings
from contextlib import contextmanager, suppress

import jinja2
import nbconvert
import sqlalchemy
from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
from nbgrader import __version__ as nbgrader_version
from nbgrader.api import Comment, Grade
from nbgrader.nbgraderformat import SchemaTooNewError, SchemaTooOldError

TESTED = {'nbgrader': ('0.9.',), 'nbconvert': ('7.',)}
INSTALLED = {'nbgrader': nbgrader_version, 'nbconvert': nbconvert.__version__}
UNTESTED = {package: version for package, version in INSTALLED.items() if not version.startswith(TESTED[package])}
if UNTESTED:
    warnings.warn('coursetools was tested with ' + ' and '.join(f'{p} {v[0]}x' for p, v in TESTED.items())
                  + ', not ' + ', '.join(f'{p} {v}' for p, v in UNTESTED.items()) + ': its speed-ups of nbgrader '
                  'are off and grading runs nbgrader as it is (COURSE_UNTESTED_NBGRADER=1 turns them on anyway).',
                  stacklevel=2)


def allowed() -> bool:
    """Whether the speed-ups may touch this nbgrader (a tested version, or the instructor said so)."""
    return not UNTESTED or os.environ.get('COURSE_UNTESTED_NBGRADER') == '1'

#: errors after which nbgrader stops the whole run rather than skipping a student
FATAL_ERRORS = (sqlalchemy.exc.OperationalError, SchemaTooOldError, SchemaTooNewError, KeyboardInterrupt)

# The nbgrader modules that call `Gradebook(...)` while autograding.
_GRADEBOOK_USERS = ('nbgrader.converters.autograde', 'nbgrader.preprocessors.overwritecells',
                    'nbgrader.preprocessors.saveautogrades', 'nbgrader.preprocessors.overwritekernelspec',
                    'nbgrader.preprocessors.latesubmissions', 'nbgrader.preprocessors.getgrades')


@contextmanager
def speed_ups(pooled_gradebook=False, cached_validation=False, in_process_alembic=False):
    """Apply the chosen speed-ups to nbgrader for the duration of a run (see the module's docstring); none with
    an untested nbgrader."""
    undo = []
    if not allowed():
        pooled_gradebook = cached_validation = in_process_alembic = False
    try:
        if pooled_gradebook:
            undo.append(_pool_gradebooks())
        if cached_validation:
            undo.append(_cache_validation())
        if in_process_alembic:
            undo.append(_alembic_in_process())
        yield
    finally:
        for action in reversed(undo):
            action()


def _pool_gradebooks():
    from nbgrader import api
    pool = _GradebookPool(api.Gradebook)
    patched = []
    for name in _GRADEBOOK_USERS:
        module = importlib.import_module(name)
        if getattr(module, 'Gradebook', None) is api.Gradebook:
            module.Gradebook = pool.cls
            patched.append(module)

    def undo():
        for module in patched:
            module.Gradebook = api.Gradebook
        pool.dispose()
    return undo


def _cache_validation():
    from nbgrader.nbgraderformat import common
    real = common.jsonschema
    common.jsonschema = _CachedJsonschema(real)

    def undo():
        common.jsonschema = real
    return undo


class _GradebookPool:
    """`Gradebook(url)` inside nbgrader shares one engine and session per URL; `close()` ends the session's
    transaction as `Session.close` does. A commit is a flush until the gradebook that made it is closed, so
    a preprocessor commits once per notebook instead of once per cell. nbgrader's course check (and the row it
    adds for a new course id) still happens, once per course id."""

    def __init__(self, real_cls):
        self.shared, self.sessions, self.checked = {}, {}, set()
        pool = self

        class Gradebook(real_cls):
            def __init__(self, db_url, course_id='default_course', authenticator=None):
                base = pool.shared.get(db_url)
                if base is None:
                    base = pool.shared[db_url] = real_cls(db_url, course_id)
                    pool.sessions[db_url] = _DeferredCommits(base.db)
                    pool.checked.add((db_url, course_id))
                self.engine, self.db = base.engine, pool.sessions[db_url]
                if (db_url, course_id) not in pool.checked:
                    self.check_course(course_id=course_id)
                    pool.checked.add((db_url, course_id))
                self.course_id, self.authenticator = course_id, authenticator
                self.rows = {}          # (Grade or Comment, notebook, assignment, student) -> {cell name: [rows]}

            def find_grade(self, grade_cell, notebook, assignment, student):
                found = self._one_of(Grade, grade_cell, notebook, assignment, student)
                return found if found is not None else super().find_grade(grade_cell, notebook, assignment, student)

            def find_comment(self, solution_cell, notebook, assignment, student):
                found = self._one_of(Comment, solution_cell, notebook, assignment, student)
                return found if found is not None else super().find_comment(solution_cell, notebook, assignment,
                                                                            student)

            def _one_of(self, kind, name, notebook, assignment, student):
                """The only row of `kind` for a cell of this name in the submitted notebook, from one query of all
                its rows of that kind; None when nbgrader's own lookup must decide (no match, or several)."""
                key = (kind, notebook, assignment, student)
                if key not in self.rows:
                    self.rows[key] = _rows_by_cell_name(self.db, kind, notebook, assignment, student)
                found = self.rows[key].get(name, ())
                return found[0] if len(found) == 1 else None

            def close(self):
                self.db.commit_now()
                self.db.close()

        self.cls = Gradebook

    def dispose(self):
        for gradebook in self.shared.values():
            with suppress(Exception):
                gradebook.close()
        self.shared.clear()
        self.sessions.clear()


def _rows_by_cell_name(session, kind, notebook, assignment, student):
    """{cell name: [rows]} of the grades (kind=Grade) or comments (kind=Comment) of one submitted notebook, for the
    cells `find_grade` / `find_comment` look in first: grade cells, or solution cells."""
    from nbgrader.api import (Assignment, GradeCell, Notebook, SolutionCell, Student, SubmittedAssignment,
                              SubmittedNotebook)
    cell = GradeCell if kind is Grade else SolutionCell
    query = (session.query(cell.name, kind)
             .join(cell, cell.id == kind.cell_id)
             .join(SubmittedNotebook, SubmittedNotebook.id == kind.notebook_id)
             .join(Notebook, Notebook.id == SubmittedNotebook.notebook_id)
             .join(SubmittedAssignment, SubmittedAssignment.id == SubmittedNotebook.assignment_id)
             .join(Assignment, Assignment.id == SubmittedAssignment.assignment_id)
             .join(Student, Student.id == SubmittedAssignment.student_id)
             .filter(Notebook.name == notebook, Assignment.name == assignment, Student.id == student))
    found = {}
    for name, row in query:
        found.setdefault(name, []).append(row)
    return found


class _DeferredCommits:
    """A session whose `commit()` flushes; the real commit comes when its gradebook is closed."""

    def __init__(self, session):
        self._session = session
        self._dirty = False

    def commit(self):
        self._session.flush()
        self._dirty = True

    def commit_now(self):
        if self._dirty:
            self._dirty = False
            self._session.commit()

    def __getattr__(self, name):
        return getattr(self._session, name)


class _CachedJsonschema:
    """`jsonschema` as nbgrader's metadata validator uses it, with each schema's validator built once."""

    def __init__(self, module):
        self._module = module
        self._validators = {}

    def validate(self, instance, schema, cls=None, *args, **kwargs):
        from jsonschema import exceptions, validators
        key = (json.dumps(schema, sort_keys=True), cls, args, tuple(sorted(kwargs.items())))
        validator = self._validators.get(key)
        if validator is None:
            validator_class = cls or validators.validator_for(schema)
            validator_class.check_schema(schema)
            validator = self._validators[key] = validator_class(schema, *args, **kwargs)
        error = exceptions.best_match(validator.iter_errors(instance))
        if error is not None:
            raise error

    def __getattr__(self, name):
        return getattr(self._module, name)


def _alembic_in_process():
    from nbgrader import api
    real = api.get_alembic_version

    def version():
        return alembic_head() or real()
    api.get_alembic_version = version

    def undo():
        api.get_alembic_version = real
    return undo


_REVISION = re.compile(r"^revision\s*=\s*['\"]([0-9A-Za-z_]+)['\"]", re.M)
_DOWN_REVISION = re.compile(r"^down_revision\s*=\s*(.*)$", re.M)


def alembic_head():
    """The head revision of nbgrader's gradebook migrations, as `alembic heads` gives it, read from the scripts'
    `revision` and `down_revision` lines; None unless there is exactly one head."""
    from nbgrader.dbutil import ALEMBIC_DIR
    revisions, parents = set(), set()
    for path in glob.glob(os.path.join(ALEMBIC_DIR, 'versions', '*.py')):
        with open(path, encoding='utf-8') as f:
            text = f.read()
        revision, down = _REVISION.search(text), _DOWN_REVISION.search(text)
        if revision is None or down is None:
            return None
        revisions.add(revision.group(1))
        parents.update(re.findall(r"['\"]([0-9A-Za-z_]+)['\"]", down.group(1)))
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 and parents <= revisions else None


class FeedbackHTMLExporter(HTMLExporter):
    """nbconvert's HTML exporter, writing the same document faster for a class's feedback (module docstring).

    Its settings are the HTML exporter's (`c.HTMLExporter.*`), as nbgrader's feedback configures them."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._highlighters, self._markdown = {}, {}

    def from_notebook_node(self, nb, resources=None, **kw):
        """What `HTMLExporter.from_notebook_node` does, with the focusable marks put in by `mark_focusable`."""
        langinfo = nb.metadata.get('language_info', {})
        lexer = langinfo.get('pygments_lexer', langinfo.get('name', None))
        highlight_code = self.filters.get('highlight_code') or self._highlighter(lexer)
        resources = self._init_resources(resources)
        filter_data_type = WidgetsDataTypeFilter(notebook_metadata=self._nb_metadata, parent=self,
                                                 resources=resources)
        self.register_filter('highlight_code', highlight_code)
        self.register_filter('filter_data_type', filter_data_type)
        html, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        html, missing_alt = mark_focusable(html)
        if missing_alt:
            self.log.warning('Alternative text is missing on %s image(s).', missing_alt)
        return html, resources

    def _highlighter(self, lexer):
        if lexer not in self._highlighters:
            self._highlighters[lexer] = _Remembered(Highlight2HTML(pygments_lexer=lexer, parent=self))
        return self._highlighters[lexer]

    @jinja2.pass_context
    def markdown2html(self, context, source):
        cell = context.get('cell', {})
        if cell.get('attachments') or self.embed_images:     # the page depends on more than the source
            return HTMLExporter.markdown2html(self, context, source)
        if source not in self._markdown:
            self._markdown[source] = HTMLExporter.markdown2html(self, context, source)
        return self._markdown[source]


class _Remembered:
    """A highlight filter that highlights each (source, language) once."""

    def __init__(self, highlight):
        self.highlight, self.done = highlight, {}

    def __call__(self, source, language=None, metadata=None):
        key = (source, language, (metadata or {}).get('magics_language'))
        if key not in self.done:
            self.done[key] = self.highlight(source, language, metadata)
        return self.done[key]


_ALT = 'No description has been provided for this image'
_FOCUSABLE = {'jp-Cell-inputWrapper', 'jp-OutputArea-output'}
# Comments and the text of script and style elements are not markup (as for html.parser); start tags are.
_MARKUP = re.compile(r'<!--.*?-->|<(script|style)\b.*?</\1\s*>|<(div|img)((?:\s+[^\s"\'>/=]+(?:\s*=\s*(?:"[^"]*"|'
                     r"'[^']*'|[^\s\"'=<>`]+))?)*)(\s*/?)>", re.S | re.I)
_ATTRIBUTE = re.compile(r'\s+([^\s"\'>/=]+)(?:\s*=\s*("[^"]*"|\'[^\']*\'|[^\s"\'=<>`]+))?')


def mark_focusable(html):
    """(html with tabindex="0" on cell inputs and outputs and an alt text on images without one, the number of
    such images): what nbconvert's HTML exporter does with BeautifulSoup, done on the text."""
    missing_alt = 0

    def mark(match):
        nonlocal missing_alt
        tag = match.group(2)
        if tag is None:
            return match.group(0)
        attributes = match.group(3)
        names = {m.group(1).lower(): m for m in _ATTRIBUTE.finditer(attributes)}
        if tag.lower() == 'img':
            if 'alt' in names:
                return match.group(0)
            missing_alt += 1
            attributes += f' alt="{_ALT}"'
        else:
            value = names['class'].group(2) or '' if 'class' in names else ''
            if not _FOCUSABLE & set(value.strip('"\'').split()):
                return match.group(0)
            if 'tabindex' in names:
                old = names['tabindex']
                attributes = attributes[:old.start()] + ' tabindex="0"' + attributes[old.end():]
            else:
                attributes += ' tabindex="0"'
        return f'<{tag}{attributes}{match.group(4)}>'
    return _MARKUP.sub(mark, html), missing_alt
