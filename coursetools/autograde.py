"""Changes to nbgrader's autograding steps, plugged in through nbgrader_config.py."""
from nbgrader.preprocessors import SaveAutoGrades


def is_stderr(output):
    return output.get('output_type') == 'stream' and output.get('name') == 'stderr'


class SaveAutoGradesIgnoringStderr(SaveAutoGrades):
    """Record grades as nbgrader does, but let only errors fail a test cell.

    nbgrader gives a test cell no marks when anything at all was printed to stderr, so a student's
    `warnings.warn` or a library's deprecation warning would cost marks. Here stderr is left out when the
    grade is decided; the notebook's outputs themselves are kept as they are.
    """

    def _add_score(self, cell, resources):
        outputs = cell.outputs
        cell.outputs = [output for output in outputs if not is_stderr(output)]
        try:
            super()._add_score(cell, resources)
        finally:
            cell.outputs = outputs
