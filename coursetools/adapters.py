"""The one place that touches nbgrader's (and jsonschema's) internals, for two opt-in speed-ups of a grading run.

Everything else in the course package uses nbgrader, nbconvert and jupyter_client through their public API. A
grading run of a whole class spends much of its serial time in two places inside nbgrader, and these
adapters remove that time when `c.Grading.pooled_gradebook` / `c.Grading.cached_validation` are set (the
course's nbgrader_config.py sets both; `benchmarks/grading_benchmark.py` shows what they save, and
grader_tests/test_adapters.py that the marks are the same with and without them):

* **pooled gradebook**: nbgrader opens a new `Gradebook` (a new SQLAlchemy engine, a schema check and a course
  check) in every preprocessor for every notebook and commits once per cell. Inside `speed_ups`, the
  `Gradebook` name in nbgrader's modules is a subclass that shares one engine and session for the run, and the
  preprocessors after execution commit once per notebook.
* **cached validation**: nbgrader validates every cell's metadata with `jsonschema.validate`, which checks the
  schema and builds a validator on every call. Inside `speed_ups`, nbgrader's `jsonschema` is a stand-in that
  builds the validator once per schema and raises the same errors.

Both are undone when the run ends. The module checks the installed versions when it is imported and refuses a
version it was not tested with (set COURSE_UNTESTED_NBGRADER=1 to try anyway).
"""
from __future__ import annotations

import importlib
import json
import os
from contextlib import contextmanager

import sqlalchemy
from nbgrader import __version__ as nbgrader_version
from nbgrader.nbgraderformat import SchemaTooNewError, SchemaTooOldError

TESTED = {'nbgrader': ('0.9.',)}
if not nbgrader_version.startswith(TESTED['nbgrader']) and os.environ.get('COURSE_UNTESTED_NBGRADER') != '1':
    raise ImportError(f'coursetools.adapters was tested with nbgrader {TESTED["nbgrader"][0]}x, not '
                      f'{nbgrader_version}: check its speed-ups against this version (or set '
                      'COURSE_UNTESTED_NBGRADER=1 to try, or turn c.Grading.pooled_gradebook and '
                      'c.Grading.cached_validation off).')

#: errors after which nbgrader stops the whole run rather than skipping a student
FATAL_ERRORS = (sqlalchemy.exc.OperationalError, SchemaTooOldError, SchemaTooNewError, KeyboardInterrupt)

# The nbgrader modules that call `Gradebook(...)` while autograding.
_GRADEBOOK_USERS = ('nbgrader.converters.autograde', 'nbgrader.preprocessors.overwritecells',
                    'nbgrader.preprocessors.saveautogrades', 'nbgrader.preprocessors.overwritekernelspec',
                    'nbgrader.preprocessors.latesubmissions', 'nbgrader.preprocessors.getgrades')


@contextmanager
def speed_ups(pooled_gradebook=False, cached_validation=False):
    """Apply the chosen speed-ups to nbgrader for the duration of a run (see the module's docstring)."""
    undo = []
    try:
        if pooled_gradebook:
            undo.append(_pool_gradebooks())
        if cached_validation:
            undo.append(_cache_validation())
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

            def close(self):
                self.db.commit_now()
                self.db.close()

        self.cls = Gradebook

    def dispose(self):
        for gradebook in self.shared.values():
            try:
                gradebook.close()
            except Exception:
                pass
        self.shared.clear()
        self.sessions.clear()


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
