"""grades.csv as a spreadsheet may open it safely: nbgrader's own columns and values, written as CSV should be.

nbgrader's export joins the values with commas as they are. A student id is the name of a folder, which a student
can choose in the exchange, so an id such as `mal,lory` moved the rest of its row one column on, and an id that
starts with `=` was a formula that a spreadsheet runs when the instructor opens the file (`=HYPERLINK(...)` can send
other rows away). Here a value holding a comma, a quote or a line break is quoted, and a text value that starts as a
formula does (`=`, `+`, `-`, `@`, a tab, a carriage return) starts with an apostrophe instead. An ordinary class
gets exactly nbgrader's file. Set in nbgrader_config.py (`c.ExportApp.plugin_class`), so `make grade` and
`nbgrader export` both write it. The LMS grade files write names the same way (`roster`): a roster downloaded from
an LMS holds the names students gave themselves there.
"""
import csv

from nbgrader.api import MissingEntry
from nbgrader.plugins import CsvExportPlugin

from coursetools.grading.mark import mark_of

COLUMNS = ('assignment', 'duedate', 'timestamp', 'student_id', 'last_name', 'first_name', 'email', 'raw_score',
           'late_submission_penalty', 'score', 'max_score')
FORMULA_STARTS = ('=', '+', '-', '@', '\t', '\r')


def cell(value):
    """A value as nbgrader writes it (None empty, anything else as str), defused if a spreadsheet would run it."""
    text = '' if value is None else str(value)
    return "'" + text if isinstance(value, str) and text.startswith(FORMULA_STARTS) else text


class QuotedCsvExport(CsvExportPlugin):
    """nbgrader's CSV export, quoted and defused (module docstring)."""

    def export(self, gradebook):
        destination = self.to or 'grades.csv'
        assignments, students = {str(a) for a in self.assignment}, {str(s) for s in self.student}
        self.log.info('Exporting grades to %s', destination)
        with open(destination, 'w', newline='', encoding='utf-8') as handle:
            writer = csv.writer(handle, lineterminator='\n')
            writer.writerow(COLUMNS)
            for assignment in gradebook.assignments:
                if assignments and assignment.name not in assignments:
                    continue
                for student in gradebook.students:
                    if students and student.id not in students:
                        continue
                    writer.writerow(cell(value) for value in self.row(gradebook, assignment, student))

    @staticmethod
    def row(gradebook, assignment, student):
        """The values of one row, in `COLUMNS` order: the student's `grading.mark.Mark` (raw, penalty, final), and 0
        for a student with no submission, as in nbgrader. A hand mark still waiting counts 0 here, as in nbgrader's
        file (the LMS files leave such a grade empty)."""
        try:
            submission = gradebook.find_submission(assignment.name, student.id)
        except MissingEntry:
            timestamp, raw, penalty, final = '', 0.0, 0.0, 0.0
        else:
            mark = mark_of(submission)
            timestamp, raw, penalty, final = submission.timestamp, mark.raw, mark.penalty, mark.final
        return (assignment.name, assignment.duedate, timestamp, student.id, student.last_name, student.first_name,
                student.email, raw, penalty, final, assignment.max_score)
