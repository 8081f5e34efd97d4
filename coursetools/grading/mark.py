"""A student's mark for an assignment: the one definition that every output reads (the table `make grade` prints,
the report, the feedback page, grades.csv, the Canvas and Moodle files).

    raw      every mark the gradebook holds (nbgrader's `score`; a hand mark still waiting counts 0 in it)
    penalty  the late penalty autograde took (nbgrader's `late_submission_penalty`, `instructor.late`)
    final    raw - penalty, never below 0
    waiting  the marks still waiting for a hand grader (`course.hand_marked`) in a notebook that was graded
    ungraded a notebook the autograder never scored (a test cell without any score): shown as '-'

Shown everywhere as `text()`: `12`; `8 (11 - 3 late)`; `15 + 2 waiting`; `12.3 + 2 waiting (14 - 1.7 late)`.
"""
from __future__ import annotations

from dataclasses import dataclass

from coursetools.grading.course import hand_marked


@dataclass(frozen=True)
class Mark:
    raw: float
    penalty: float
    waiting: float
    max_score: float
    seconds_late: float = 0.0
    ungraded: bool = False

    @property
    def final(self) -> float:
        return max(0.0, self.raw - self.penalty)

    def text(self) -> str:
        if self.ungraded:
            return '-'
        shown = number(self.final)
        if self.waiting:
            shown += f' + {number(self.waiting)} waiting'
        if self.penalty:
            shown += f' ({number(self.raw)} - {number(self.penalty)} late)'
        return shown


def number(value) -> str:
    """A mark as every output writes it: '.' for the point, no needless zeros (11, 10.5, 12.3)."""
    return f'{round(float(value), 4):g}'


def mark_of(submission, notebook=None) -> Mark:
    """The Mark of an nbgrader `SubmittedAssignment` (or of one of its `SubmittedNotebook`s)."""
    part = notebook if notebook is not None else submission
    notebooks = [notebook] if notebook is not None else submission.notebooks
    answers = {cell.name for n in notebooks for cell in n.notebook.solution_cells}
    grades = [grade for n in notebooks for grade in n.grades]
    ungraded = any(grade.cell.cell_type == 'code' and grade.cell.name not in answers and grade.auto_score is None
                   and grade.manual_score is None for grade in grades)
    waiting = 0.0 if ungraded else sum(grade.max_score for grade in grades if grade.cell.name in answers
                                       and hand_marked(grade) == 'waiting')
    return Mark(raw=float(part.score or 0), penalty=float(part.late_submission_penalty or 0), waiting=float(waiting),
                max_score=float(part.max_score or 0), seconds_late=float(submission.total_seconds_late or 0),
                ungraded=ungraded)


def marks_of(gradebook, assignment) -> dict:
    """{student: Mark} for every submission of `assignment` in an open nbgrader `Gradebook`."""
    return {submission.student_id: mark_of(submission) for submission in gradebook.assignment_submissions(assignment)}
