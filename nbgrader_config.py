"""nbgrader settings for the course. Read by every `nbgrader` command run from this folder and by `make grade`."""
import functools
import os
import sysconfig
import warnings

from coursetools.grading.autograde import HideHiddenTests, RestoreHiddenTests, SaveAutoGradesIgnoringStderr
from coursetools.instructor.repair import ResolveDuplicateGradeIds, grade_renamed_notebooks
from coursetools.instructor.safe_html import PlainOutputSizes
from coursetools.grading.feedback_page import FeedbackPage
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, ClearOutput, DeduplicateIds, GetGrades,
                                    IgnorePattern, LimitOutput, OverwriteKernelspec)
from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from coursetools.grading.execute import SandboxedExecute

c = get_config()  # noqa: F821 (provided by traitlets when nbgrader loads this file)

# nbgrader's Gradebook.add_submission links a new submission's rows before adding them to the session (they are added
# right after), which SQLAlchemy 2 reports in three long SAWarning lines: that warning alone is not shown.
warnings.filterwarnings('ignore', r"Object of type <\w+> not in session, add operation along '\w+\.submissions' will "
                        'not proceed', module='nbgrader.api')

# nbgrader runs `alembic` from PATH when it creates a gradebook: `.venv/bin/nbgrader` finds the one beside it.
scripts = sysconfig.get_path('scripts')
if scripts not in os.environ.get('PATH', '').split(os.pathsep):
    os.environ['PATH'] = scripts + os.pathsep + os.environ.get('PATH', '')

c.CourseDirectory.course_id = 'minimax'
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.db_url = 'sqlite:///' + os.path.join(c.CourseDirectory.root, 'gradebook.db')
c.CourseDirectory.assignment_id = ''
c.CourseDirectory.ignore = ['.ipynb_checkpoints', '*.pyc', '__pycache__', 'feedback']
# The exchange in the course folder (exchange/README.md), so formgrader's Release and Collect work on a fresh clone.
c.Exchange.root = os.path.join(c.CourseDirectory.root, 'exchange')
# Every student can write the exchange's inbound folder: collect takes only regular files and folders from it,
# never what a link points to (coursetools/instructor/exchange.py).
c.ExchangeFactory.collect = 'coursetools.instructor.exchange.CollectRegularFiles'
# A student id is a folder's name, which a student can choose: grades.csv quotes what needs it and writes no value
# a spreadsheet would run as a formula (coursetools/instructor/grades_csv.py); an ordinary class gets nbgrader's file.
c.ExportApp.plugin_class = 'coursetools.instructor.grades_csv.QuotedCsvExport'

# nbconvert checks the notebook against nbformat's schema once, after the last step, instead of after every step
# (about ten per notebook in autograde): an invalid notebook still stops there.
c.Exporter.optimistic_validation = True

# Deleted test cells are put back, so a missing test costs nothing more than that test's marks.
c.OverwriteCells.add_missing_cells = True

# Wherever nbgrader autogrades with this file (plain commands, formgrader), submissions are repaired as `make grade`
# repairs its staged copies (docs/nbgrader.md): a renamed notebook is graded from a copy written beside it,
# duplicated cells are resolved, and the hidden tests of released test cells are put back without a warning.
c.Autograde.pre_convert_hook = functools.partial(grade_renamed_notebooks, c.CourseDirectory.root)
c.Autograde.sanitize_preprocessors = [
    ClearOutput,
    ResolveDuplicateGradeIds,
    DeduplicateIds,
    OverwriteKernelspec,
    RestoreHiddenTests,
    CheckCellMetadata,
]

# Every notebook runs in a bubblewrap sandbox (docs/sandbox.md). To grade without it, on a machine where it
# cannot start, set c.SandboxedExecute.sandbox = False or COURSE_GRADE_UNSANDBOXED=1 (documented in README).
c.SandboxedExecute.sandbox = True
# A correct `score` that is 10x slower than the reference must fit in one cell: the tests need at most one
# full search from the empty board (in the perfect game), 1.8 s for a plain minimax here.
c.SandboxedExecute.timeout = 180
c.SandboxedExecute.memory_limit = 2 * 1024 ** 3      # bytes of address space per kernel
c.SandboxedExecute.cpu_time_limit = 900              # CPU seconds per kernel
c.SandboxedExecute.max_output_bytes = 1024 ** 2      # output kept per notebook; a print flood is cut

# Autograde as nbgrader does, except in a sandbox and that output on stderr (a student's warnings.warn, logging) is not a failure.
# An output keeps no metadata but an image's size as numbers: pages write it into the image's tag unquoted.
c.Autograde.autograde_preprocessors = [
    SandboxedExecute,
    PlainOutputSizes,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    SaveAutoGradesIgnoringStderr,
    AssignLatePenalties,
    CheckCellMetadata,
]

# Late penalties: nbgrader's 'none' (the default: nothing taken) and 'zero', or a percentage of the marks per day or
# hour late, with a cap and a grace period (coursetools.instructor.late; docs/lms.md, "Late penalties"), e.g.
#   c.LateSubmissionPlugin.penalty_method = 'percentage'; c.LatePenalty.percent = 10; c.LatePenalty.cap = 30
c.AssignLatePenalties.plugin_class = 'coursetools.instructor.late.LatePenalty'

# Feedback shows each check's name and failure message, but not the code of hidden tests; FeedbackPage (after
# GetGrades: it reads the scores) names the student's cells in tracebacks and works out the summary and contents
# of `make grade`'s page (coursetools.grading.feedback_page; nbgrader's own page ignores them).
c.GenerateFeedback.preprocessors = [HideHiddenTests, GetGrades, FeedbackPage, CSSHTMLHeaderPreprocessor]

# The pages that show what a student wrote or printed (formgrader's Manual Grading, the feedback pages) are served
# from the instructor's Jupyter server: they keep its formatting but show its scripts and event handlers as text
# (coursetools.instructor.safe_html).
c.HTMLExporter.sanitize_html = True
c.HTMLExporter.filters = {'clean_html': 'coursetools.instructor.safe_html.clean_html',
                          'strip_files_prefix': 'coursetools.instructor.safe_html.strip_files_prefix'}

# Parallel grading (`make grade`, coursetools.grading.run): an existing Dask scheduler instead of a LocalCluster
# here ('tcp://host:8786'), notebooks at once (0: cores + 2). The speed-ups that use nbgrader's and nbconvert's internals
# (coursetools.grading.adapters; c.Grading.pooled_gradebook, ...) are on by default with the nbgrader they were tested
# with; plain `nbgrader` commands do not use them.
c.Grading.scheduler = ''
c.Grading.workers = 0
