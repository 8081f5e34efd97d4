"""The class list and the term's dates, put into nbgrader's gradebook, and grades written for an LMS to import.

    python -m coursetools.instructor.roster [--course DIR] [--db URL] [ASSIGNMENT ...]

Where the term is set, in one place, `nbgrader_config.py` (docs/lms.md, "The term"):

* `c.Term.roster`: the roster file (default `roster.csv` in the course folder; never committed), one row per
  student: `student_id,first_name,last_name,email,lms_user_id,sis_user_id,sis_login_id,section,extension_hours`;
* `c.Term.duedates`: {assignment: due date}, e.g. `'2026-11-20 17:00:00 UTC'`;
* `c.Term.lms_names`: {assignment: its column in the LMS}, e.g. `'Noughts and crosses (4321)'` for Canvas;
* the late penalty: nbgrader's own `c.LateSubmissionPlugin.penalty_method` (`'none'` or `'zero'`).

`apply` writes them through nbgrader's API before autograde: each student's record
(`Gradebook.update_or_create_student`: names, email, `lms_user_id`), each assignment's due date, and each
extension as the submission's `extension` (nbgrader's per-student due date: due date + extension), so that
autograde's late penalty, `grades.csv` and formgrader all see the same dates. `export` then writes
`grades-canvas.csv` and `grades-moodle.csv` from the gradebook's scores (late penalty taken off) and the roster.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import pathlib
from dataclasses import dataclass

from traitlets import Dict, Unicode
from traitlets.config import LoggingConfigurable

from coursetools.grading.mark import number
from coursetools.instructor.grades_csv import cell as defused

COLUMNS = ('student_id', 'first_name', 'last_name', 'email', 'lms_user_id', 'sis_user_id', 'sis_login_id',
           'section', 'extension_hours')
CANVAS_COLUMNS = ['Student', 'ID', 'SIS User ID', 'SIS Login ID', 'Section']
MOODLE_COLUMNS = ['First name', 'Last name', 'ID number', 'Email address']


class Term(LoggingConfigurable):
    """The term's settings in nbgrader_config.py (`c.Term.*`)."""
    roster = Unicode('roster.csv', help='the roster file, relative to the course folder').tag(config=True)
    duedates = Dict(help="{assignment: due date}, e.g. {'noughts_and_crosses': '2026-11-20 17:00:00 UTC'}").tag(
        config=True)
    lms_names = Dict(help="{assignment: its column's name in the LMS}, e.g. 'Noughts and crosses (4321)' for "
                     'Canvas (name and Canvas assignment id)').tag(config=True)


@dataclass
class Entry:
    student_id: str
    first_name: str = ''
    last_name: str = ''
    email: str = ''
    lms_user_id: str = ''
    sis_user_id: str = ''
    sis_login_id: str = ''
    section: str = ''
    extension: datetime.timedelta | None = None


class RosterError(SystemExit):
    """A roster that cannot be used as it is: the message says which line and why."""


def course_config(course):
    """The course's nbgrader_config.py, read as nbgrader reads it; nbgrader's defaults in a folder without one."""
    from traitlets.config.loader import Config, PyFileConfigLoader
    if not (pathlib.Path(course) / 'nbgrader_config.py').is_file():
        return Config()
    return PyFileConfigLoader('nbgrader_config.py', path=str(course)).load_config()


def settings(course):
    """The course's `Term` settings, from its nbgrader_config.py."""
    return Term(config=course_config(course))


def read_roster(path):
    """{student_id: Entry} from a roster CSV (a header line, then one row per student); {} without a file."""
    path = pathlib.Path(path)
    if not path.exists():
        return {}
    entries = {}
    with open(path, newline='', encoding='utf-8-sig') as handle:
        reader = csv.DictReader(handle)
        unknown = set(reader.fieldnames or ()) - set(COLUMNS)
        if 'student_id' not in (reader.fieldnames or ()) or unknown:
            raise RosterError(f'{path}: the header must name student_id and only these columns: '
                              f'{", ".join(COLUMNS)} (found {", ".join(reader.fieldnames or ())})')
        for line, row in enumerate(reader, start=2):
            entry = _entry(path, line, {k: (v or '').strip() for k, v in row.items() if k})
            if entry.student_id in entries:
                raise RosterError(f'{path}, line {line}: {entry.student_id} is listed twice')
            entries[entry.student_id] = entry
    return entries


def _entry(path, line, row):
    if not row.get('student_id'):
        raise RosterError(f'{path}, line {line}: no student_id')
    hours = row.pop('extension_hours', '')
    try:
        extension = datetime.timedelta(hours=float(hours)) if hours else None
    except ValueError:
        raise RosterError(f'{path}, line {line}: extension_hours must be a number of hours, not {hours!r}')
    return Entry(**row, extension=extension if extension else None)


# ---------------------------------------------------------------------------------------------------- gradebook

def apply(course, assignment, db_url, students=()):
    """Put the roster's records, `assignment`'s due date and the extensions of `students` (those about to be
    graded) into the gradebook. Returns the roster."""
    from nbgrader.api import Gradebook
    term = settings(course)
    roster = read_roster(pathlib.Path(course) / term.roster)
    with Gradebook(db_url) as gradebook:
        for entry in roster.values():
            gradebook.update_or_create_student(entry.student_id, first_name=entry.first_name or None,
                                               last_name=entry.last_name or None, email=entry.email or None,
                                               lms_user_id=entry.lms_user_id or None)
        if assignment in term.duedates:
            gradebook.update_or_create_assignment(assignment, duedate=term.duedates[assignment])
        # nbgrader 0.9.6 adds an extension to the due date even when there is none (SubmittedAssignment.duedate:
        # None + timedelta, a TypeError in autograde and export): without a due date, no extension is recorded
        dated = gradebook.find_assignment(assignment).duedate is not None
        for student in students:
            extension = roster[student].extension if dated and student in roster else None
            if extension is None and not _has_submission(gradebook, assignment, student):
                continue                # nothing to record yet: autograde creates the submission
            gradebook.update_or_create_student(student)
            # nbgrader's own per-student due date (due date + extension); autograde keeps it
            gradebook.update_or_create_submission(assignment, student, extension=extension)
    return roster


def _has_submission(gradebook, assignment, student):
    from nbgrader.api import MissingEntry
    try:
        gradebook.find_submission(assignment, student)
    except MissingEntry:
        return False
    return True


def scores(db_url, assignment):
    """({student: Mark or None}, maximum): each submission's `grading.mark.Mark`, and None for a student with no
    submission (0 in the LMS files, as in grades.csv)."""
    from nbgrader.api import Gradebook
    from coursetools.grading.mark import marks_of
    with Gradebook(db_url) as gradebook:
        found = gradebook.find_assignment(assignment)
        submitted = marks_of(gradebook, assignment)
        return {student.id: submitted.get(student.id) for student in gradebook.students}, found.max_score


# ---------------------------------------------------------------------------------------------------- LMS files

def _number(value):
    """A score as the LMS reads it: '.' for the decimal point, no needless zeros (11, 10.5); None (not marked
    yet) as an empty cell, which leaves that student without a grade there."""
    return '' if value is None else number(value)


def canvas_rows(assignment, column, graded, maximum, roster):
    """The Canvas gradebook import: a header, the "Points Possible" row Canvas's own export has, and one row per
    roster student (graded or not: nbgrader counts a missing submission as 0). Names are written as grades.csv
    writes them (`grades_csv.cell`: none a spreadsheet would run as a formula); ids as they are."""
    rows = [CANVAS_COLUMNS + [column], ['    Points Possible', '', '', '', ''] + [_number(maximum)]]
    for entry in sorted(roster.values(), key=lambda e: (e.last_name.lower(), e.first_name.lower(), e.student_id)):
        name = f'{entry.last_name}, {entry.first_name}' if entry.last_name else entry.first_name or entry.student_id
        rows.append([defused(name), entry.lms_user_id, entry.sis_user_id, entry.sis_login_id, entry.section,
                     _number(graded.get(entry.student_id, 0.0))])
    return rows


def moodle_rows(assignment, column, graded, roster):
    """The Moodle grade import: a header, one row per roster student with an email address or ID number (Moodle
    stops the whole import at a row whose user it cannot find), keyed by both; names as in `canvas_rows`."""
    rows = [MOODLE_COLUMNS + [column]]
    for entry in sorted(roster.values(), key=lambda e: e.student_id):
        if entry.email or entry.sis_user_id:
            rows.append([defused(entry.first_name), defused(entry.last_name), entry.sis_user_id, entry.email,
                         _number(graded.get(entry.student_id, 0.0))])
    return rows


def _write(path, rows):
    """A UTF-8 CSV written whole or not at all."""
    partial = path.with_name(path.name + '.partial')
    with open(partial, 'w', newline='', encoding='utf-8') as handle:
        csv.writer(handle).writerows(rows)
    partial.replace(path)


def export(course, assignments, db_url):
    """grades-canvas.csv and grades-moodle.csv in the course folder, one grade column per assignment, for the
    roster's students. A student with a written answer nobody has marked yet gets an empty cell, not a partial mark
    that would look final. Returns (paths, [students graded but missing from the roster], [students left empty]);
    without a roster, nothing."""
    from nbgrader.api import MissingEntry
    course = pathlib.Path(course)
    term = settings(course)
    roster = read_roster(course / term.roster)
    if not roster:
        return [], [], []
    canvas, moodle, missing, unmarked = None, None, set(), set()
    for assignment in assignments:
        try:
            marks, maximum = scores(db_url, assignment)
        except MissingEntry:            # not in the gradebook: never graded
            continue
        missing |= {student for student, mark in marks.items() if mark is not None} - set(roster)
        waiting = {s for s, mark in marks.items() if mark and (mark.waiting or mark.ungraded)} & set(roster)
        graded = {student: None if student in waiting else mark.final if mark else 0.0
                  for student, mark in marks.items()}
        unmarked |= waiting
        column = term.lms_names.get(assignment, assignment)
        extra_canvas = canvas_rows(assignment, column, graded, maximum, roster)
        extra_moodle = moodle_rows(assignment, column, graded, roster)
        canvas = extra_canvas if canvas is None else [a + b[-1:] for a, b in zip(canvas, extra_canvas)]
        moodle = extra_moodle if moodle is None else [a + b[-1:] for a, b in zip(moodle, extra_moodle)]
    if canvas is None:
        return [], [], []
    paths = [course / 'grades-canvas.csv', course / 'grades-moodle.csv']
    _write(paths[0], canvas)
    _write(paths[1], moodle)
    return paths, sorted(missing), sorted(unmarked)


def submitted_students(db_url, assignment):
    """Students with a submission of `assignment` in the gradebook."""
    from nbgrader.api import Gradebook
    with Gradebook(db_url) as gradebook:
        return sorted(s.student.id for s in gradebook.find_assignment(assignment).submissions)


def main(argv=None):
    from coursetools.grading.course import Course
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('assignment', nargs='*', help='assignment ids (default: every one in source/)')
    parser.add_argument('--course', help='course folder (default: the current folder)')
    parser.add_argument('--db', help='gradebook URL (default: gradebook.db in the course folder)')
    parser.add_argument('--apply', action='store_true', help='only put the roster, due dates and extensions into '
                        'the gradebook (before a plain `nbgrader autograde`)')
    args = parser.parse_args(argv)
    course = Course(pathlib.Path(args.course).resolve()) if args.course else Course.at()
    db_url = args.db or course.db_url
    assignments = args.assignment or course.assignments()
    if args.apply:
        for assignment in assignments:
            roster = apply(course.root, assignment, db_url, course.students(assignment))
        print(f'{len(roster)} students from the roster; due dates and extensions set for {", ".join(assignments)}')
        return
    print(exported_line(*export(course.root, assignments, db_url)))


def exported_line(paths, missing, unmarked=()):
    """What `make grade` prints about the LMS files."""
    if not paths:
        return 'LMS grade files: none written (no roster: docs/lms.md)'
    line = f'LMS grade files: {paths[0]}, {paths[1]}'
    if missing:
        line += f'\n  not in the roster, so left out of them: {", ".join(missing)}'
    if unmarked:
        line += (f'\n  left empty until their written answers are marked by hand (formgrader, Manual Grading; then '
                 f'`make grade` again): {", ".join(unmarked)}')
    return line


if __name__ == '__main__':
    main()
