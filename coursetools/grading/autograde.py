"""Changes to nbgrader's autograding and feedback steps, plugged in through nbgrader_config.py."""
import re

from nbconvert.utils.base import NbConvertBase
from nbformat import NotebookNode
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import ClearHiddenTests, OverwriteCells, SaveAutoGrades
from traitlets import List

ANSI_CODE = re.compile(r'\x1b\[[0-9;]*[A-Za-z]')


def is_stderr(output):
    return output.get('output_type') == 'stream' and output.get('name') == 'stderr'


class SaveAutoGradesIgnoringStderr(SaveAutoGrades):
    """Record grades as nbgrader does, but let only errors fail a test cell.

    nbgrader gives a test cell no marks when anything at all was printed to stderr, so a student's
    `warnings.warn` or a library's deprecation warning would cost marks. Here stderr is left out when the
    grade is decided; the notebook's outputs themselves are kept as they are.
    """

    def preprocess_cell(self, cell, resources, cell_index):
        outputs = cell.get('outputs')
        if outputs is None:
            return super().preprocess_cell(cell, resources, cell_index)
        cell.outputs = [output for output in outputs if not is_stderr(output)]
        try:
            return super().preprocess_cell(cell, resources, cell_index)
        finally:
            cell.outputs = outputs


class RestoreHiddenTests(OverwriteCells):
    """OverwriteCells that puts back the hidden tests of a released test cell without a warning.

    A released test cell lacks its hidden tests, so its checksum never matches the gradebook's and nbgrader
    warns "Attribute 'checksum' for cell ... has changed!" for every test cell of every honest student. A locked
    cell whose source is exactly the gradebook's with the hidden-test regions removed is restored silently here;
    any other change to a locked cell is still reported and restored by nbgrader. A deleted test cell is put back
    after the nearest cell before it that is still there (`add_missing_grade_cells`).

    The notebook's cells are read from the gradebook once, not once per cell (`NotebookCells`).
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden_test_remover = ClearHiddenTests(parent=self, enforce_metadata=False)
        self.released = {}      # the gradebook's source of a test cell -> that cell as released (no hidden tests)

    def preprocess_cell(self, cell, resources, cell_index):
        if not isinstance(self.gradebook, NotebookCells):
            self.gradebook = NotebookCells(self.gradebook, self.notebook_id, self.assignment_id)
        grade_id = cell.metadata.get('nbgrader', {}).get('grade_id')
        if grade_id is not None:
            source = self.gradebook.locked_sources.get(grade_id)
            if source is not None and cell.source != source and cell.source == self.released_source(source):
                cell.source = source
        return super().preprocess_cell(cell, resources, cell_index)

    def add_missing_grade_cells(self, nb, resources):
        """nbgrader's, except where a missing test cell goes: after the nearest cell before it in the source that
        the notebook still has (first if none). nbgrader's looks only at the source cell just before it, among
        the notebook's solution and test cells, and stops that notebook with a KeyError when it is a locked cell
        of another kind (the question above a written answer, a read-only helper cell)."""
        source = self.gradebook.find_notebook(self.notebook_id, self.assignment_id)
        order = [cell.name for cell in source.source_cells]
        solutions = {cell.name for cell in source.solution_cells}
        for grade_cell in source.grade_cells:
            where = {(cell.metadata.get('nbgrader') or {}).get('grade_id'): at for at, cell in enumerate(nb.cells)}
            if grade_cell.name in where:
                continue
            self.log.warning('Missing grade cell %s encountered, adding to notebook', grade_cell.name)
            earlier = [where[name] for name in order[:order.index(grade_cell.name)] if name in where]
            added = self.missing_cell_transform(source.source_cells[order.index(grade_cell.name)], grade_cell.max_score,
                                                is_solution=grade_cell.name in solutions)
            nb.cells.insert(earlier[-1] + 1 if earlier else 0, added)
        return nb, resources

    def released_source(self, source):
        if source not in self.released:
            cell = NotebookNode(cell_type='code', source=source, metadata=NotebookNode(), outputs=[],
                                execution_count=None)
            self.hidden_test_remover.preprocess_cell(cell, {}, 0)
            self.released[source] = cell.source
        return self.released[source]


class NotebookCells:
    """A gradebook, as OverwriteCells uses it for one notebook: its source and graded cells are read once, and
    `find_source_cell` / `find_graded_cell` for that notebook answer from them (the same rows, the same
    MissingEntry); everything else is the gradebook's own."""

    def __init__(self, gradebook, notebook_id, assignment_id):
        self.gradebook, self.key = gradebook, (notebook_id, assignment_id)
        try:
            notebook = gradebook.find_notebook(notebook_id, assignment_id)
        except MissingEntry:
            notebook = None
        self.source_cells = {cell.name: cell for cell in notebook.source_cells} if notebook else {}
        self.graded_cells = ({cell.name: cell for cell in notebook.task_cells} |
                             {cell.name: cell for cell in notebook.grade_cells}) if notebook else {}
        self.locked_sources = {name: cell.source for name, cell in self.source_cells.items() if cell.locked}

    def find_source_cell(self, name, notebook, assignment):
        if (notebook, assignment) != self.key:
            return self.gradebook.find_source_cell(name, notebook, assignment)
        if name not in self.source_cells:
            raise MissingEntry(f'No such source cell: {assignment}/{notebook}/{name}')
        return self.source_cells[name]

    def find_graded_cell(self, name, notebook, assignment):
        if (notebook, assignment) != self.key:
            return self.gradebook.find_graded_cell(name, notebook, assignment)
        if name not in self.graded_cells:
            raise MissingEntry(f'No such grade cell: {assignment}/{notebook}/{name}')
        return self.graded_cells[name]

    def __getattr__(self, name):
        return getattr(self.gradebook, name)


class HideHiddenTests(ClearHiddenTests):
    """For feedback: show each check's name, failure message and the student's own traceback, never hidden tests.

    nbgrader's feedback shows the autograded notebook, hidden test code included (its issue #917). Here the
    hidden regions are removed from test cells, and from their tracebacks every line that quotes a hidden-test
    line of the cell and every entry that mentions the course package (where the hidden checks live).
    """

    enforce_metadata = False
    # nbgrader's preprocessor base class hides nbconvert's configurable trait of this name, so the HTML exporter's
    # setting of it made traitlets warn "Config option `display_data_priority` not recognized". Unused here.
    display_data_priority = List(NbConvertBase.display_data_priority.default_value).tag(config=True)

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type == 'code' and cell.metadata.get('nbgrader', {}).get('grade'):
            hidden = self.hidden_lines(cell.source)
            cell, resources = super().preprocess_cell(cell, resources, cell_index)
            for output in cell.get('outputs', []):
                if output.get('output_type') == 'error':
                    output.traceback = visible_traceback(output.get('traceback', []), hidden) or [
                        f'{output.ename}: {output.evalue}']
        return cell, resources

    def hidden_lines(self, source):
        """The lines of the hidden-test regions of `source` (delimiters included) that say anything."""
        lines, inside = set(), False
        for line in source.splitlines():
            inside = inside or self.begin_test_delimeter in line
            if inside and any(character.isalnum() for character in line):
                lines.add(line.strip())
            inside = inside and self.end_test_delimeter not in line
        return lines


def visible_traceback(traceback, hidden_lines):
    """`traceback` without entries that mention `coursetools` and without lines that quote a hidden line."""
    visible = []
    for entry in traceback:
        if 'coursetools' in entry:
            continue
        lines = [line for line in entry.split('\n') if not quotes_any(line, hidden_lines)]
        if any(line.strip() for line in lines):
            visible.append('\n'.join(lines))
    return visible


def quotes_any(line, hidden_lines):
    text = ANSI_CODE.sub('', line).strip()
    return any(text.endswith(hidden) for hidden in hidden_lines)
