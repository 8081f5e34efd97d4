"""The settings of `make grade`'s parallel run (`coursetools.grading.run`).

Settings, in nbgrader_config.py (`make grade`'s options override them)::

    c.Grading.scheduler = ''          # an existing Dask scheduler (tcp://host:8786); '' starts a LocalCluster
    c.Grading.workers = 0             # notebooks at once on the LocalCluster (0: cores + 2)
    c.Grading.scheduler_timeout = 30  # seconds to wait for that scheduler
    c.Grading.pooled_gradebook = True     # speed-ups with nbgrader's internals (coursetools.grading.adapters): on by
    c.Grading.cached_validation = True    # default with the nbgrader they were tested with, off with any other
    c.Grading.in_process_alembic = True
    c.Grading.fast_feedback_html = True
"""
from traitlets import Bool, Float, Integer, Unicode
from traitlets.config import Configurable


class Grading(Configurable):
    """Settings of parallel grading (`c.Grading.*` in nbgrader_config.py)."""

    scheduler = Unicode('', help='Address of an existing Dask scheduler (tcp://host:8786); empty: a LocalCluster '
                                 'of worker threads in the grading process.').tag(config=True)
    scheduler_timeout = Float(30, help='Seconds to wait for the scheduler given before giving up with a one-line '
                                       'message.').tag(config=True)
    workers = Integer(0, help='Notebooks executed at once on the LocalCluster (0: cores + 2).').tag(config=True)
    pooled_gradebook = Bool(True, help='Let nbgrader share one gradebook connection for the run and commit once '
                                        'per notebook (coursetools.grading.adapters).').tag(config=True)
    cached_validation = Bool(True, help="Compile nbgrader's cell-metadata schema once instead of once per "
                                         'cell (coursetools.grading.adapters).').tag(config=True)
    in_process_alembic = Bool(True, help="Read a new gradebook's schema revision in this process instead of "
                                          'running `alembic heads` (coursetools.grading.adapters).').tag(config=True)
    fast_feedback_html = Bool(True, help="Write the feedback page (coursetools.grading.feedback_page) on top of "
                                          'coursetools.grading.adapters.FeedbackHTMLExporter: the same pages as '
                                          "nbconvert's HTML exporter, faster.").tag(config=True)
