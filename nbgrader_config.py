"""nbgrader settings for the course. Read by every `nbgrader` command run from this folder and by `make grade`."""
import os

from coursetools.autograde import SaveAutoGradesIgnoringStderr
from nbgrader.preprocessors import AssignLatePenalties, CheckCellMetadata, IgnorePattern, LimitOutput
from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.preprocessors import Execute

c = get_config()  # noqa: F821 (provided by traitlets when nbgrader loads this file)

c.CourseDirectory.course_id = 'minimax'
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.db_url = 'sqlite:///' + os.path.join(c.CourseDirectory.root, 'gradebook.db')
c.CourseDirectory.assignment_id = ''
c.CourseDirectory.ignore = ['.ipynb_checkpoints', '*.pyc', '__pycache__', 'feedback']

# Deleted test cells are put back, so a missing test costs nothing more than that test's marks.
c.OverwriteCells.add_missing_cells = True

# A correct `score` that is 10x slower than the reference must fit in one cell: the tests need at most one
# full search from the empty board (in the perfect game). Measured in docs/measurements.md.
c.Execute.timeout = 180

# Autograde as nbgrader does, except that output on stderr (a student's warnings.warn, logging) is not a failure.
c.Autograde.autograde_preprocessors = [
    Execute,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    SaveAutoGradesIgnoringStderr,
    AssignLatePenalties,
    CheckCellMetadata,
]
