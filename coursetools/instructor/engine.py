"""The grading engine that `make grade` and the grading service (`make serve`) share: `grade_assignment` grades
the submissions of some students (one, or a whole class) of one assignment, as `make grade` always has: release,
stage repaired copies, autograde (on the Dask workers, or with --sequential plain `nbgrader autograde`), the
feedback pages and the record of what was graded. Nothing in it is batch-wide: the run-wide lock and the forked
feedback helpers belong to `make grade` (`grade.py`), which passes its helpers in; the service passes none, and
takes the course's grading lock around each call (`preflight.grading_turn`), so that the two run side by side,
one grading at a time, with the same marks."""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys

from coursetools.instructor import commands, marks, repair, roster, unchanged
from coursetools.grading.run import RunReport
from coursetools.grading.progress import printable


def start_workers(course, assignment, db=None, options=(), sequential=False, students=None, **settings):
    """The autograde run of `assignment`, its workers starting now (`grading.start`), or None with
    `sequential`. `settings`: those of `grading.start`."""
    if sequential:
        return None
    from coursetools.grading import run as grading
    notebooks = len(students if students is not None else course.students(assignment))
    return grading.start(assignment, db_url=db, submitted_dir=course.staging, options=options, students=students,
                         notebooks=notebooks, **settings)


def autograde(course, assignment, db=None, options=(), sequential=False, started=None, on_tail=None, students=None,
              quiet=False):
    """Stage repaired copies of the submissions (only `students`', if given), then autograde them (in `started`,
    the run from `start_workers`, unless `sequential`); returns ({student: notes}, run report)."""
    notes = repair.stage(course.root, assignment, course.staging, students)
    for student, student_notes in notes.items():
        for note in student_notes:
            if not quiet:
                print(printable(f'   {student}: {note}'), flush=True)
    if sequential:
        only = [] if students is None else ['--CourseDirectory.student_id_exclude=' + ','.join(
            s for s in course.students(assignment) if s not in students)]
        run = RunReport(grader_faults=sequential_autograde(course, assignment, notes, db, list(options) + only))
        for student, found in static_notes(course, assignment, db).items():
            notes[student] = list(dict.fromkeys(notes.get(student, []) + found))
            print(printable(f'   {student}: {"; ".join(found)}'), flush=True)
    else:
        run = started.run(notes=notes, on_tail=on_tail)
        for student, student_notes in run.notes.items():
            notes[student] = list(dict.fromkeys(notes.get(student, []) + student_notes))
    ungraded = [s for s in notes if not list((course.staging / s / assignment).glob('*.ipynb'))]
    marks.record_zero(db or course.db_url, assignment, ungraded, course.staging)
    for student in ungraded:        # a 0 now: nothing of an earlier grading stays beside it
        shutil.rmtree(course.autograded / student / assignment, ignore_errors=True)
    return notes, run


def sequential_autograde(course, assignment, notes, db, options):
    staging = os.path.relpath(course.staging, course.root)
    try:
        result = commands.run_separately(course, 'autograde', assignment, '--force',
                                         f'--CourseDirectory.submitted_directory={staging}', *options, db=db,
                                         check=False)
    except KeyboardInterrupt:
        forget_unwritten(course, assignment, db)
        raise
    if result.returncode != 0:
        # nbgrader carries on past a student it cannot grade and fails at the end: say who, and carry on too.
        failed = sorted(set(re.findall(r"for student '([^']+)'", result.stdout + result.stderr)))
        for student in failed:
            notes.setdefault(student, []).append('nbgrader could not grade this submission (see autograde.log)')
            print(printable(f'   {student}: nbgrader could not grade this submission'), flush=True)
        (course.root / 'autograde.log').write_text(result.stdout + result.stderr)
        if not failed:
            sys.stderr.write(result.stdout + result.stderr)
            raise SystemExit(f'nbgrader autograde {assignment} failed; its log is above.')
        return failed           # the grader's fault: they were staged as gradable
    return []


def forget_unwritten(course, assignment, db):
    """After an interrupted `nbgrader autograde`: it removed the autograded notebook of the student under way, not
    the marks it had saved; remove those too, so that no mark stays without its notebook."""
    from nbgrader.api import Gradebook, MissingEntry
    with Gradebook(db or course.db_url) as gradebook:
        for folder in course.staging.glob(f'*/{assignment}'):
            student = folder.parent.name
            if not list((course.root / 'autograded' / student / assignment).glob('*.ipynb')):
                with contextlib.suppress(MissingEntry):
                    gradebook.remove_submission(assignment, student)


def static_notes(course, assignment, db=None):
    """{student: notes} after `--sequential` (plain nbgrader, in its own process): the locked cells each staged
    submission changed or deleted, and what the student's code in the autograded notebook does to the grader
    (`coursetools.judge.tampering`, as the parallel run's pipeline decides them)."""
    import nbformat

    from coursetools.judge import tampering
    from coursetools.grading.pipeline import CourseCells
    found, cells = {}, {}
    for graded in sorted(course.root.glob(f'autograded/*/{assignment}/*.ipynb')):
        student, name = graded.parent.parent.name, graded.stem
        if not (course.staging / student / assignment).is_dir():      # not graded in this run
            continue
        try:
            if name not in cells:
                cells[name] = CourseCells.from_gradebook(db or course.db_url, assignment, name)
            staged = course.staging / student / assignment / graded.name
            notes = tampering.locked_cell_notes(nbformat.read(staged, as_version=4), cells[name].expected) \
                if staged.exists() else []
            notes += tampering.notes(nbformat.read(graded, as_version=4), cells[name].sources)
        except Exception as error:      # a report for the instructor: never a reason not to grade
            notes = [f'the grader could not read this notebook for the report ({type(error).__name__})']
        if notes:
            found.setdefault(student, []).extend(notes)
    return found


def write_status(course, assignment, notes):
    """reports/<assignment>-status.json: the repair and autograde notes per student, shown by the report."""
    path = course.reports / f'{assignment}-status.json'
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({s: n for s, n in sorted(notes.items()) if n}, indent=1) + '\n')


def compare_submissions(course, assignment):
    """reports/<assignment>-similarity.html (`similarity`), before the report that links to it; the line that
    `make grade` prints about it. It reads the notebooks, runs nothing, and never stops the grading."""
    try:
        from coursetools.instructor import similarity       # copydetect imports pyplot: only when it is needed
        path, flagged = similarity.write_similarity(course.root, assignment)
    except Exception as error:
        return f'Similarity: not compared ({type(error).__name__}: {error})'
    return f'Similarity: {path}: {similarity.summary(flagged)}'


def grade_assignment(course, assignment, students, phases, *, helpers=None, reports=None, db=None, options=(),
                     sequential=False, compare=True, quiet=False, feedback_options=(), **settings):
    """Release `assignment`, then autograde and write feedback for the submissions of `students` (None: every
    student with a submission); returns (the autograde run report, {student: notes}). `helpers`: `make grade`'s
    forked helpers (`commands.ForkedHelpers`), or None (this process writes the feedback); `reports`, if given,
    receives the assignment's `commands.Report`, begun beside its feedback, and the similarity line
    (`compare_submissions`, skipped unless `compare`), as (report, line); `settings`: those of `grading.start`.
    `quiet`: no phase headings on stdout (the service logs instead); `feedback_options`: nbgrader settings for
    generate_feedback (the service's policy for what a page shows before the due date)."""
    say = (lambda text: None) if quiet else (lambda text: print(text, flush=True))
    # autograde's workers (slots, checkers) start on the core that release leaves idle
    started = start_workers(course, assignment, db=db, options=options, sequential=sequential,
                            students=students, **settings)
    try:
        unchanged.forget(course, assignment, students)
        with phases.start(f'{assignment}: release'):
            say(f'== {assignment}: release')
            course.copy_widget_beside_notebooks()
            commands.run(course, 'generate_assignment', assignment, '--force', db=db)
            # names, the due date and extensions (nbgrader_config.py's c.Term), before autograde dates them
            roster.apply(course.root, assignment, db or course.db_url,
                         [s for s in course.students(assignment) if students is None or s in students])
        with commands.Feedback(course, assignment, len(course.students(assignment)), db=db, forked=helpers,
                               options=feedback_options) as feedback:

            def on_tail():
                """The last notebooks run: the spare forked helper imports the report's modules."""
                if helpers is not None:
                    helpers.get_ready()

            with phases.start(f'{assignment}: autograde'):
                say(f'== {assignment}: autograde')
                notes, run = autograde(course, assignment, db=db, options=options, sequential=sequential,
                                       started=started, on_tail=on_tail, students=students, quiet=quiet)
                write_status(course, assignment, notes)
            with phases.start(f'{assignment}: feedback'):
                say(f'== {assignment}: feedback')
                graded = [s for s in course.graded_students(assignment) if students is None or s in students]
                # the helpers write the pages while this process compares the submissions
                feedback.start(graded)
                try:
                    compared = compare_submissions(course, assignment) if compare else None
                    if reports is not None:     # after the similarity page, which the report links to
                        reports[assignment] = (commands.Report(course, assignment, db or course.db_url, helpers),
                                               compared)
                    explain_ungraded(course, assignment, notes, students)
                finally:
                    feedback.finish()
            unchanged.remember(course, assignment, graded, options, db)
    finally:
        if started is not None:
            started.close()
    return run, notes


UNGRADED_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{assignment}: not graded</title>
<style>body {{ font-family: sans-serif; max-width: 46em; margin: 2em auto; line-height: 1.5 }}
li {{ white-space: pre-wrap; overflow-wrap: anywhere }}</style></head>
<body><h1>{assignment}: your submission could not be graded</h1>
<p>The grader could not grade <code>{notebook}</code> from your submission, so none of its tasks has a mark
from this grading. What the grader found:</p>
<ul>{reasons}</ul>
<p>What to do: open your notebook in Jupyter and check that it opens, then run <em>Restart &amp; Run All</em>,
save it as <code>{notebook}</code> and submit it again. If it opens and runs for you, tell your instructor.</p>
</body></html>
"""


def explain_ungraded(course, assignment, notes, students=None):
    """feedback/<student>/<assignment>/<notebook>.html for each submission that could not be graded: what went
    wrong and what to do, instead of no page (nbgrader writes none) or a page left from an earlier grading."""
    import html
    notebook = f'{assignment}.ipynb'
    graded = set(course.graded_students(assignment))
    for student in course.students(assignment):
        if student in graded or (students is not None and student not in students):
            continue
        folder = course.root / 'feedback' / student / assignment
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        reasons = ''.join(f'<li>{html.escape(note)}</li>' for note in notes.get(student) or
                          ['nbgrader could not grade it'])
        page = UNGRADED_PAGE.format(assignment=html.escape(assignment), notebook=html.escape(notebook),
                                    reasons=reasons)
        (folder / f'{assignment}.html').write_text(page, encoding='utf-8')
