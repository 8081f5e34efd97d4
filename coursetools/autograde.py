"""Changes to nbgrader's autograding steps, plugged in through nbgrader_config.py."""
from nbformat.v4 import new_code_cell
from nbgrader.api import MissingEntry
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor, OverwriteCells, SaveAutoGrades

from coursetools import repair


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


class ResolveDuplicateGradeIds(NbGraderPreprocessor):
    """Sanitize step: one cell per grade_id, kept as `make grade` keeps it (`repair.resolve_duplicate_grade_ids`).

    JupyterLab's copy/paste and split-cell copy a cell's grade_id. nbgrader's DeduplicateIds keeps the last copy
    even when the student answered in another one; this keeps the last answered copy, so plain nbgrader and
    formgrader grade the cell that `make grade` grades. A no-op on notebooks that `make grade` staged.
    """

    def preprocess(self, nb, resources):
        info = resources['nbgrader']
        course_root = CourseDirectory(config=self.config).root
        released = repair.released_sources(course_root, info['assignment'], info['notebook'] + '.ipynb')
        for note in repair.resolve_duplicate_grade_ids(nb, released):
            self.log.warning('%s: %s', info['student'], note)
        return nb, resources


class RestoreHiddenTests(OverwriteCells):
    """OverwriteCells that puts back the hidden tests of a released test cell without a warning.

    A released test cell lacks its hidden tests, so its checksum never matches the gradebook's and nbgrader
    warns "Attribute 'checksum' for cell ... has changed!" for every test cell of every honest student. A locked
    cell whose source is exactly the gradebook's with the hidden-test regions removed is restored silently here;
    any other change to a locked cell is still reported and restored by nbgrader.
    """

    def preprocess(self, nb, resources):
        self.hidden_test_remover = ClearHiddenTests(parent=self, enforce_metadata=False)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, cell_index):
        grade_id = cell.metadata.get('nbgrader', {}).get('grade_id')
        if grade_id is not None:
            try:
                source_cell = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
            except MissingEntry:
                source_cell = None
            if source_cell is not None and source_cell.locked and cell.source != source_cell.source \
                    and cell.source == self.released_source(source_cell.source):
                cell.source = source_cell.source
        return super().preprocess_cell(cell, resources, cell_index)

    def released_source(self, source):
        cell = new_code_cell(source)
        self.hidden_test_remover.preprocess_cell(cell, {}, 0)
        return cell.source


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
