"""Read marks back out of the gradebook, per student and per task.

A test cell's grade_id is `<function>-<check>`, so a task's mark is the sum over the cells whose grade_id starts
with that function's name.
"""
import sys

from nbgrader.api import Gradebook, MissingEntry

from coursetools.grading.course import hand_marked, task_of
from coursetools.grading.mark import Mark, marks_of
from coursetools.grading.progress import printable


def marks_by_task(db_url, assignment):
    """{student: {task: score}} for every student with a submission, plus {task: max score}."""
    table, maxima = {}, {}
    with Gradebook(db_url) as gradebook:
        for notebook in gradebook.find_assignment(assignment).notebooks:
            for cell in notebook.grade_cells:
                maxima[task_of(cell.name)] = maxima.get(task_of(cell.name), 0) + cell.max_score
        for student in sorted(s.id for s in gradebook.students):
            try:
                submission = gradebook.find_submission(assignment, student)
            except MissingEntry:
                continue
            row = dict.fromkeys(maxima, 0.0)
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    row[task_of(grade.cell.name)] += grade.score
            table[student] = row
    return table, maxima


def written_answers(db_url, assignment, state='waiting'):
    """{student: {grade_id: points}} of the written answers in `state` (`written_answer_states`)."""
    return written_answer_states(db_url, assignment)[state]


def written_answer_states(db_url, assignment):
    """{state: {student: {grade_id: points}}} of the written answers no person has marked (`course.hand_marked`),
    in one reading of the gradebook: 'waiting' for a grader (they count as 0 in every total until a grader marks
    them in formgrader), and 'unanswered'."""
    found = {'waiting': {}, 'unanswered': {}}
    with Gradebook(db_url) as gradebook:
        for submission in gradebook.assignment_submissions(assignment):
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    state = hand_marked(grade)
                    if state:
                        found[state].setdefault(submission.student_id, {})[grade.cell.name] = grade.max_score
    return found


def not_graded(db_url, assignment):
    """{student: {grade_id}} of each submitted notebook the autograder never scored: a test cell (a code cell that
    is no answer) with neither an automatic nor a hand score, as nbgrader leaves a notebook it could not grade (its
    notes say why). Its written answers are unscored too, but they do not wait for a grader."""
    found = {}
    with Gradebook(db_url) as gradebook:
        for submission in gradebook.assignment_submissions(assignment):
            for notebook in submission.notebooks:
                answers = {cell.name for cell in notebook.notebook.solution_cells}
                if any(grade.cell.cell_type == 'code' and grade.cell.name not in answers and grade.auto_score is None
                       and grade.manual_score is None for grade in notebook.grades):
                    found.setdefault(submission.student_id, set()).update(grade.cell.name for grade in notebook.grades)
    return found


def marks_by_cell(db_url, assignment, student):
    """{grade_id: score} for one student's submission."""
    with Gradebook(db_url) as gradebook:
        submission = gradebook.find_submission(assignment, student)
        return {grade.cell.name: grade.score for notebook in submission.notebooks for grade in notebook.grades}


def scores_by_cell(db_url, assignment):
    """(notebooks, {grade_id: max}, {student: {grade_id: score}}, {student: seconds late})."""
    cells, scores, late = {}, {}, {}
    with Gradebook(db_url) as gradebook:
        found = gradebook.find_assignment(assignment)
        notebooks = [notebook.name for notebook in found.notebooks]
        for notebook in found.notebooks:
            for cell in notebook.grade_cells:
                cells[cell.name] = cell.max_score
        for student in sorted(s.id for s in gradebook.students):
            try:
                submission = gradebook.find_submission(assignment, student)
            except MissingEntry:
                continue
            scores[student] = {grade.cell.name: grade.score for notebook in submission.notebooks
                               for grade in notebook.grades if grade.cell.name in cells}
            late[student] = submission.total_seconds_late or 0
    return notebooks, cells, scores, late


def record_zero(db_url, assignment, students, staging):
    """Give students without a gradable notebook a submission scored 0, as nbgrader does for a missing one."""
    with Gradebook(db_url) as gradebook:
        for student in students:
            gradebook.update_or_create_student(student)
            timestamp = staging / student / assignment / 'timestamp.txt'
            kwargs = {'timestamp': timestamp.read_text().strip()} if timestamp.exists() else {}
            submission = gradebook.update_or_create_submission(assignment, student, **kwargs)
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    grade.auto_score = 0
                    grade.needs_manual_grade = False
            gradebook.db.commit()


def final_marks(db_url, assignment):
    """{student: `grading.mark.Mark`}: raw, late penalty, final, marks waiting for a hand grader."""
    with Gradebook(db_url) as gradebook:
        return marks_of(gradebook, assignment)


def marks_table(db_url, assignment):
    """The marks table of `assignment` as `make grade` prints it (`format_table`), from the gradebook."""
    return format_table(*marks_by_task(db_url, assignment), written_answers(db_url, assignment),
                        not_graded(db_url, assignment), final_marks(db_url, assignment))


def format_table(table, maxima, waiting=None, ungraded=None, finals=None):
    """The marks table `make grade` prints; a task whose answer still waits for a grader (`written_answers`) shows
    '?', and the tasks and total of a notebook that could not be graded (`not_graded`) show '-', each explained
    under the table. The total is the student's `Mark` (`finals`; without them, the tasks' sum) as `Mark.text`
    writes it: final mark, marks waiting, raw mark and late penalty."""
    def by_task(found):
        return {student: {task_of(grade_id) for grade_id in cells} for student, cells in (found or {}).items()}
    finals = finals or {student: Mark(raw=sum(row.values()), penalty=0.0, max_score=sum(maxima.values()),
                                      waiting=sum((waiting or {}).get(student, {}).values()),
                                      ungraded=student in (ungraded or {})) for student, row in table.items()}
    waiting, ungraded = by_task(waiting), by_task(ungraded)
    tasks = list(maxima)
    totals = {student: finals[student].text() if student in finals else '-' for student in table}
    width = max([len('student')] + [len(s) for s in table])
    total_width = max([7] + [len(text) for text in totals.values()])
    header = ['student'.ljust(width)] + [t.rjust(max(len(t), 5)) for t in tasks] + ['total'.rjust(total_width)]
    lines = ['  '.join(header)]
    lines.append('  '.join([' ' * width] + [f'/{maxima[t]:g}'.rjust(max(len(t), 5)) for t in tasks] +
                           [f'/{sum(maxima.values()):g}'.rjust(total_width)]))
    for student, row in table.items():
        shown = {t: '-' if t in ungraded.get(student, ()) else '?' if t in waiting.get(student, ()) and not row[t]
                 else f'{row[t]:g}' for t in tasks}
        lines.append('  '.join([student.ljust(width)] + [shown[t].rjust(max(len(t), 5)) for t in tasks] +
                               [totals[student].rjust(total_width)]))
    unmarked = sorted(s for s in waiting if s in table and waiting[s] - ungraded.get(s, set()))
    if unmarked:
        lines.append(f'? a written answer still to be marked by hand (formgrader, Manual Grading), not counted in the '
                     f'total until it is: {len(unmarked)} student{"s" * (len(unmarked) != 1)} ({", ".join(unmarked)}).')
    failed = sorted(student for student in ungraded if student in table)
    if failed:
        lines.append(f'- not graded: the notebook could not be graded (its notes and the report say why; make grade '
                     f'tries again): {len(failed)} student{"s" * (len(failed) != 1)} ({", ".join(failed)}).')
    late = sorted(student for student in table if student in finals and finals[student].penalty)
    if late:
        lines.append(f'late: the total is the mark less the late penalty (raw - penalty late): {", ".join(late)}.')
    return '\n'.join(map(printable, lines))        # a line each: an id's own line break stays escaped


if __name__ == '__main__':
    db_url, assignment = sys.argv[1], sys.argv[2]
    print(marks_table(db_url, assignment))
