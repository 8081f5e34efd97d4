"""Changes to nbgrader's autograding steps, plugged in through nbgrader_config.py."""
from nbgrader.preprocessors import ClearHiddenTests, SaveAutoGrades


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


class HideHiddenTests(ClearHiddenTests):
    """For feedback: show each check's name and failure message, never the code of hidden tests.

    nbgrader's feedback shows the autograded notebook, hidden test code included (its issue #917). Here the
    hidden regions are removed from test cells, and their tracebacks (which quote hidden code and the checks'
    source) are cut down to the error's name and message.
    """

    enforce_metadata = False

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type == 'code' and cell.metadata.get('nbgrader', {}).get('grade'):
            self._remove_hidden_test_region(cell)
            for output in cell.get('outputs', []):
                if output.get('output_type') == 'error':
                    output.traceback = [f'{output.ename}: {output.evalue}']
        return cell, resources
