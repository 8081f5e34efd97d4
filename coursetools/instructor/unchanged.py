"""Which submissions need grading again: `make grade` skips a submission whose files, and everything that decides
its marks (the course's code, its notebooks and nbgrader settings, the options of the run), are exactly as they
were when it was last graded, and which the gradebook and autograded/ still hold. `--force`, `--student` and
`make clean` (which removes the record, `.grading/graded.json`) grade again regardless.

Marks given by hand in formgrader (a written answer, a grader's override or comment) change no file: a submission
whose hand marks changed since its feedback was written gets new feedback, and the exports are written again, without
being autograded again (`remarked_students`)."""
import hashlib
import json
import os
import pathlib
import stat

from coursetools.grading.course import Course
from coursetools.grading.progress import printable
from coursetools.grading.pool import course_digest
from coursetools.instructor.repair import size_limits


def _files_digest(digest, folder: pathlib.Path, limit: int):
    """The submission's files into `digest`: a link by its target, never followed; a file over the size limit,
    which staging leaves out unread, by its size; any other file by its bytes, read a megabyte at a time."""
    for path in sorted(p for p in folder.rglob('*') if '.ipynb_checkpoints' not in p.parts):
        info = path.lstat()
        digest.update(str(path.relative_to(folder)).encode() + b'\0')
        if stat.S_ISLNK(info.st_mode):
            digest.update(b'link to ' + os.fsencode(os.readlink(path)))
        elif stat.S_ISREG(info.st_mode) and info.st_size > limit:
            digest.update(f'{info.st_size} bytes, over the limit'.encode())
        elif stat.S_ISREG(info.st_mode):
            with open(path, 'rb') as file:
                while chunk := file.read(2 ** 20):
                    digest.update(chunk)
        digest.update(b'\0')


def grader_digest(course: Course, assignment, options=(), db=None) -> str:
    """A hash of what decides an assignment's marks besides the submission (the course's code, settings,
    source notebook and roster, the run's options): a change regrades everyone."""
    digest = hashlib.sha256(course_digest().encode())
    from coursetools.instructor import roster           # names, extensions: the late penalty depends on them
    for path in (course.root / 'nbgrader_config.py', course.root / 'source' / assignment / f'{assignment}.ipynb',
                 course.root / roster.settings(course.root).roster):
        digest.update(path.read_bytes() if path.is_file() else b'-')
    digest.update(json.dumps([sorted(options), db or '']).encode())
    return digest.hexdigest()


def submission_digest(course: Course, assignment, student, grader, limit) -> str:
    """A hash of the submission's files (`limit`: the course's size limit for a file) under `grader`'s digest."""
    digest = hashlib.sha256(grader.encode())
    _files_digest(digest, course.submitted / student / assignment, limit)
    return digest.hexdigest()


def _record_path(course: Course) -> pathlib.Path:
    return course.root / '.grading' / 'graded.json'


def _read_record(course: Course) -> dict:
    try:
        record = json.loads(_record_path(course).read_text())
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def changed_students(course: Course, assignment, db_url, options=(), db=None) -> list:
    """The students of `assignment` whose submission must be graded: new, changed, or not in the gradebook or
    autograded/ as it was left."""
    from nbgrader.api import Gradebook
    autograded = set(course.graded_students(assignment))
    if not autograded:              # nothing graded before (the gradebook may not even exist yet: not made here)
        return list(course.students(assignment))
    grader = grader_digest(course, assignment, options, db)
    known = _read_record(course).get(assignment, {})
    with Gradebook(db_url) as gradebook:
        try:
            in_gradebook = {s.student_id for s in gradebook.assignment_submissions(assignment)}
        except Exception:           # no such assignment in the gradebook yet
            in_gradebook = set()
    limit = size_limits(course.root).file
    return [student for student in course.students(assignment)
            if student not in in_gradebook or student not in autograded
            or known.get(student) != submission_digest(course, assignment, student, grader, limit)]


HAND_MARKS = 'hand marks'     # the record's key for {assignment: {student: hand_marks_digest}}; no assignment's name


def hand_marks(db_url, assignment) -> dict:
    """{student: a hash of the marks and comments a person gave that submission in formgrader}."""
    from nbgrader.api import Gradebook, MissingEntry
    digests = {}
    with Gradebook(db_url) as gradebook:
        try:
            submissions = gradebook.assignment_submissions(assignment)
        except MissingEntry:                # not in the gradebook yet: nothing marked
            return digests
        for submission in submissions:
            given = sorted((grade.name, grade.manual_score, grade.extra_credit) for notebook in submission.notebooks
                           for grade in notebook.grades)
            given += sorted((comment.name, comment.manual_comment) for notebook in submission.notebooks
                            for comment in notebook.comments)
            digests[submission.student_id] = hashlib.sha256(json.dumps(given).encode()).hexdigest()
    return digests


def remarked_students(course: Course, assignment, db_url, graded) -> list:
    """The students of `assignment`, other than `graded` (about to be graded anyway), whose hand marks changed since
    their feedback was written."""
    others = [student for student in course.graded_students(assignment) if student not in graded]
    if not others:                      # (nothing graded before: the gradebook may not even exist yet)
        return []
    known = _read_record(course).get(HAND_MARKS, {}).get(assignment, {})
    now = hand_marks(db_url, assignment)
    return sorted(student for student in others if student in now and known.get(student) != now[student])


def forget(course: Course, assignment, students=None):
    """Before grading `students` (None: all) again: a run stopped half-way leaves them to be graded next time."""
    record = _read_record(course)
    graded = record.get(assignment, {})
    for student in list(graded) if students is None else students:
        graded.pop(student, None)
    _write_record(course, record)


def remember(course: Course, assignment, students, options=(), db=None, files=True):
    """Record the submissions of `students` as graded now, with the hand marks their feedback shows (only those,
    if not `files`)."""
    record = _read_record(course)
    if files:
        grader, limit = grader_digest(course, assignment, options, db), size_limits(course.root).file
        graded = record.setdefault(assignment, {})
        for student in students:
            graded[student] = submission_digest(course, assignment, student, grader, limit)
    now = hand_marks(db or course.db_url, assignment)
    remarked = record.setdefault(HAND_MARKS, {}).setdefault(assignment, {})
    remarked.update({student: now[student] for student in students if student in now})
    _write_record(course, record)


def _write_record(course: Course, record):
    """The record written whole, or not at all."""
    path = _record_path(course)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix('.partial')
    partial.write_text(json.dumps(record, indent=1, sort_keys=True))
    partial.replace(path)


def counted(count: int, noun: str) -> str:
    """'1 notebook', '3 notebooks'."""
    return f'{count} {noun}{"s" * (count != 1)}'


def named(names, at_most: int = 8) -> str:
    """'cat', 'cat and dan', 'ada, ben, cat and 2 more' (past `at_most` names)."""
    names = list(names)
    if len(names) > at_most:
        return f'{", ".join(names[:at_most])} and {len(names) - at_most} more'
    return ' and '.join(filter(None, [', '.join(names[:-1]), names[-1]])) if names else ''


def to_grade(course, assignments, students, force, db, options):
    """{assignment: the students to grade (None: all)}: `students` if given; else, unless `force`, only the
    submissions that changed since they were last graded (`changed_students`), saying so."""
    selection = {}
    for assignment in assignments:
        if students is not None or force:
            selection[assignment] = students
            if students is not None:
                handed_in = [s for s in course.students(assignment) if s in students]
                print(printable(f'{assignment}: grading {named(handed_in)} only (--student); the others keep their '
                                'marks.'), flush=True)
            continue
        changed = changed_students(course, assignment, db or course.db_url, options, db)
        skipped = len(course.students(assignment)) - len(changed)
        if skipped:
            again = f'; grading the {len(changed)} new or changed: {named(changed)}' if changed else ''
            print(printable(f'{assignment}: {skipped} of {skipped + len(changed)} submissions unchanged since they '
                            f'were graded: not graded again (--force grades them again){again}.'), flush=True)
        if changed:
            selection[assignment] = changed if skipped else None
    return selection


def to_remark(course, assignments, selection, db):
    """{assignment: students not about to be graded whose hand marks (formgrader) changed since their feedback was
    written}, saying so."""
    remarked = {}
    for assignment in assignments:
        if assignment in selection and selection[assignment] is None:
            continue
        students = remarked_students(course, assignment, db or course.db_url, selection.get(assignment) or ())
        if students:
            print(f'{assignment}: marks given by hand changed for {len(students)} submission'
                  f'{"s" * (len(students) != 1)} since their feedback was written: new feedback, not graded again.',
                  flush=True)
            remarked[assignment] = students
    return remarked
