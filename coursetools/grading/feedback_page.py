"""The feedback page `make grade` writes: nbgrader's feedback page, read the way a good TA would write it.

nbgrader's page lists "Test cell" once per test cell and shows each failure where it happened. This page adds,
from the graded notebook alone:

* a summary at the top: for each task that lost marks, the marks lost and its first failed check (which part of
  the task, visible or hidden test, the message's first line), linked to that cell;
* a contents list named by task (`score_end`, with its heading in the workbook) and part (`diagonals`);
* on each test cell, its task and part, and whether it passed, failed in a visible test (a line the student can
  run in their own notebook), failed in a hidden test (code the student never sees), or did not finish;
* the student's own cell names in "In your code" tracebacks, in place of the kernel's temporary file names;
* outputs wrapped at the page's width instead of running off it.

Two pieces: `FeedbackPage`, a preprocessor of nbgrader's feedback (after GetGrades, c.GenerateFeedback.preprocessors
in nbgrader_config.py), which works out all of the above into `resources['feedback_page']`; and the exporters
(`FeedbackPageExporter`, and `FastFeedbackPageExporter` for c.Grading.fast_feedback_html), which render it with
templates/feedback_page.html.j2, an extension of nbgrader's own feedback template. Plain `nbgrader
generate_feedback` runs the preprocessor but keeps nbgrader's template, which ignores the summary.

Where a test cell failed, and the line numbers the student sees, come from the checker (`coursetools.judge.failures`).
"""
from __future__ import annotations

import os
import re

import jinja2
from nbconvert.exporters import HTMLExporter
from nbconvert.preprocessors import Preprocessor
from nbgrader.api import Gradebook, MissingEntry
from traitlets import Bool

from coursetools.grading.adapters import FeedbackHTMLExporter
from coursetools.grading.course import ATTENTION_ERRORS, hand_marked, task_of
from coursetools.grading.mark import mark_of
from coursetools.judge import failures

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'templates')
TEMPLATE_FILE = 'feedback_page.html.j2'
MESSAGE_CHARS = 160         # of a failure's message, in the summary
ANSI_CODE = re.compile(r'\x1b\[[0-9;]*[A-Za-z]')
HEADING = re.compile(r'^#{1,2}\s+(.+?)\s*$', re.M)      # a task's heading: '## Task 2: ...'
MARKS = re.compile(r'\s*\((?:\d+|no) marks?(?:, [^)]*)?\)\s*$')
FRAME = re.compile(r'File "([^"\n]+)", line (\d+), in [^\n]*\n[ \t]+([^\n]*)')

#: what each outcome of a check is called on the page, and a sentence for the student about it
LABELS = {
    'passed': ('Passed', ''),
    'visible': ('Visible test failed', 'This test is in your notebook: run its cell to see the same failure; the '
                                       'line it stopped on is named below.'),
    'hidden': ('Hidden test failed', 'A hidden test of this cell failed: its code is not in your notebook, and the '
                                     'message says what it checked.'),
    'unfinished': ('Did not finish', 'This check stopped before it could decide; the message says why.'),
    'failed': ('Failed', 'This check did not pass.'),
    'waiting': ('Waiting for a grader', 'A person marks this written answer by hand; its marks are added to your '
                                        'score when they have.'),
}
LABELS['marked'] = ('Marked by hand', "A grader read this answer and gave these marks; the grader's comment, if "
                                     'any, is under the answer.')
LABELS['unanswered'] = ('No answer', 'This answer was handed in as it was released, so it earns no marks.')
WAITING_COMMENT = 'Not marked yet: a grader reads this answer after the autograder has run.'


class FeedbackPage(Preprocessor):
    """Works out the feedback page's summary, contents and labels (`resources['feedback_page']`, the module's
    docstring) and names the student's cells in their tracebacks. Runs after GetGrades, which puts each cell's
    score in its metadata."""

    enabled = True
    marks_only_until_due = Bool(False, help='before the student\'s due date, a failed hidden test shows only that it '
                                'failed, not its message (the grading service\'s c.Service.before_due = "marks")'
                                ).tag(config=True)

    def preprocess(self, nb, resources):
        by_hand, mark = from_gradebook(resources.get('nbgrader') or {})
        if self.marks_only_until_due and before_due(resources.get('nbgrader') or {}):
            hide_hidden_failures(nb)
        resources['feedback_page'] = page_of(nb, by_hand)
        if mark is not None:            # the score at the top: the one every output shows (`grading.mark`)
            resources['feedback_page']['mark'] = {'final': mark.final, 'max_score': mark.max_score,
                                                  'text': mark.text(), 'penalty': mark.penalty}
        return nb, resources


HIDDEN_UNTIL_DUE = 'A hidden test of this cell failed; what it checked is shown after the due date.'


def hide_hidden_failures(nb):
    """A failed hidden test's error output becomes one line saying so (its message, traceback and anything the
    cell printed are left out): what the page shows before the due date with `marks_only_until_due`."""
    for cell in nb.cells:
        meta = cell.metadata.get('nbgrader') or {}
        if meta.get('grade') and not meta.get('solution') and outcome_of(first_error(cell)) == 'hidden':
            cell.outputs = [{'output_type': 'error', 'ename': 'HiddenTestFailed', 'evalue': HIDDEN_UNTIL_DUE,
                             'traceback': [f'{failures.HIDDEN}: {HIDDEN_UNTIL_DUE}']}]


def before_due(info) -> bool:
    """Whether now is before the submission's due date (the student's extension included); False without one."""
    import datetime
    try:
        with Gradebook(info['db_url']) as gradebook:
            due = gradebook.find_submission(info['assignment'], info['student']).duedate
    except (KeyError, MissingEntry):
        return False
    return due is not None and datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None) < due


def written_answers(info) -> dict:
    """{grade_id: 'waiting' or 'unanswered'} for the submission's written answers no person has marked yet
    (`course.hand_marked`), from the gradebook named in nbgrader's resources."""
    return from_gradebook(info)[0]


def from_gradebook(info):
    """(`written_answers`, the notebook's `grading.mark.Mark`) from the gradebook named in nbgrader's resources;
    ({}, None) when it has no such submission."""
    try:
        with Gradebook(info['db_url']) as gradebook:
            notebook = gradebook.find_submission_notebook(info['notebook'], info['assignment'], info['student'])
            states = {grade.name: state for grade in notebook.grades if (state := hand_marked(grade))}
            return states, mark_of(notebook.assignment, notebook)
    except (KeyError, MissingEntry):
        return {}, None


def page_of(nb, by_hand=None) -> dict:
    """{'tasks': [task], 'checks': {grade_id: check}, 'summary': [first failure of each task that lost marks],
    'waiting': marks still to be given by hand} for a graded notebook (scores in its cells' metadata); `by_hand`:
    the states of its written answers (`written_answers`). Tracebacks get the student's cell names."""
    by_hand = by_hand or {}
    name_cells_in_tracebacks(nb)
    titles = task_titles(nb)
    tasks, checks = {}, {}
    for cell in nb.cells:
        meta = cell.metadata.get('nbgrader') or {}
        if not meta.get('grade') or not meta.get('grade_id'):
            continue
        check = check_of(cell, meta, by_hand.get(meta['grade_id']))
        if check['outcome'] == 'waiting' and not meta.get('comment'):
            meta['comment'] = WAITING_COMMENT
        checks[check['grade_id']] = check
        task = tasks.setdefault(check['task'], new_task(check['task'], titles.get(check['task'], '')))
        task['checks'].append(check)
        task['score'] += check['score']
        task['points'] += check['points']
        task['waiting'] += check['points'] if check['outcome'] == 'waiting' else 0
    for task in tasks.values():
        task['lost'] = task['points'] - task['score'] - task['waiting']
    failed = {name: [c for c in task['checks'] if c['outcome'] not in ('passed', 'waiting')]
              for name, task in tasks.items()}
    summary = [dict(task=task, first=failed[name][0]) for name, task in tasks.items() if failed[name]]
    return {'tasks': list(tasks.values()), 'checks': checks, 'summary': summary,
            'waiting': sum(task['waiting'] for task in tasks.values()),
            'anchors': {name: task['anchor'] for name, task in tasks.items()}}


def new_task(name, title):
    return {'name': name, 'title': title, 'anchor': f'task-{name}', 'checks': [], 'score': 0.0, 'points': 0.0,
            'waiting': 0.0}


def check_of(cell, meta, by_hand=None) -> dict:
    """One graded cell as the page shows it: its task and part, score, outcome, label and first message line;
    `by_hand`: 'waiting' or 'unanswered' for a written answer no person has marked (`written_answers`)."""
    grade_id = meta['grade_id']
    is_test = cell.cell_type == 'code' and not meta.get('solution')
    task = task_of(grade_id) if is_test else grade_id
    part = grade_id[len(task) + 1:].replace('-', ' ').replace('_', ' ') if is_test else 'your answer'
    score, points = float(meta.get('score') or 0), float(meta.get('points') or 0)
    error = first_error(cell)
    outcome = (by_hand if by_hand == 'waiting' else 'passed' if score >= points else by_hand or
               ('marked' if cell.cell_type == 'markdown' else outcome_of(error)))
    label, why = LABELS[outcome]
    return {'grade_id': grade_id, 'task': task, 'part': part or grade_id, 'score': score, 'points': points,
            'outcome': outcome, 'label': label, 'why': why, 'message': one_line(error) if error else ''}


def first_error(cell):
    """The cell's first error output, or None."""
    return next((o for o in cell.get('outputs', []) if o.get('output_type') == 'error'), None)


def outcome_of(error) -> str:
    """'visible', 'hidden' or 'unfinished' for a failed test cell's error (from the checker's traceback entries,
    `coursetools.judge.failures`); 'failed' when there is no error to tell."""
    if error is None:
        return 'failed'
    entries = [ANSI_CODE.sub('', entry) for entry in error.get('traceback', [])]
    if any(failures.VISIBLE_ENTRY.match(entry) for entry in entries):
        return 'visible'
    if any(entry.startswith(failures.HIDDEN) for entry in entries):
        return 'hidden'
    if error.get('ename') in ATTENTION_ERRORS or error.get('ename') in ('CheckerError', 'KeyboardInterrupt'):
        return 'unfinished'
    return 'failed'


def one_line(error) -> str:
    """'<error name>: <first line of its message>', cut to MESSAGE_CHARS characters."""
    message = next((line.strip() for line in ANSI_CODE.sub('', error.get('evalue', '')).splitlines()
                    if line.strip()), '')
    text = f"{error.get('ename', 'Error')}: {message}" if message else error.get('ename', 'Error')
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS - 1].rstrip() + '…'


def task_titles(nb) -> dict:
    """{task: the workbook's last heading (level 1 or 2) above its solution cell, without its marks}: 'Task 2: has
    the game ended?' for `score_end`. Smaller headings inside a task name parts of it, not the task."""
    titles, heading = {}, ''
    for cell in nb.cells:
        if cell.cell_type == 'markdown':
            found = HEADING.findall(cell.source)
            heading = MARKS.sub('', found[-1]) if found else heading
        meta = cell.metadata.get('nbgrader') or {}
        if meta.get('solution') and meta.get('grade_id'):
            titles[meta['grade_id']] = heading
    return titles


# --- the student's cells in tracebacks ------------------------------------------------------------------------

def name_cells_in_tracebacks(nb) -> None:
    """In every error traceback of `nb`, a frame of code the kernel ran from one of the notebook's cells names that
    cell ('File "your cell score_end", line 4, in score_end') instead of the kernel's temporary file. The line
    numbers are already the cell's own; a file whose frames match no cell, or several, keeps its name."""
    names = cell_names(nb)
    for cell in nb.cells:
        for output in cell.get('outputs', []):
            if output.get('output_type') == 'error':
                output['traceback'] = [name_frames(entry, names) for entry in output.get('traceback', [])]


def cell_names(nb) -> list:
    """[(what the student calls the cell, its source lines)] for the code cells the kernel ran that have a name."""
    named = []
    for cell in nb.cells:
        meta = cell.metadata.get('nbgrader') or {}
        if cell.cell_type != 'code' or not meta.get('grade_id') or (meta.get('grade') and not meta.get('solution')):
            continue
        who = 'your cell' if meta.get('solution') else "the notebook's cell"
        named.append((f"{who} {meta['grade_id']}", cell.source.split('\n')))
    return named


def name_frames(entry: str, names: list) -> str:
    """`entry` (a traceback entry) with each file that matches exactly one cell of `names` renamed to that cell."""
    frames = {}
    for match in FRAME.finditer(entry):
        frames.setdefault(match.group(1), []).append((int(match.group(2)), match.group(3).strip()))
    for filename, lines in frames.items():
        found = [name for name, source in names
                 if all(0 < number <= len(source) and source[number - 1].strip() == text for number, text in lines)]
        if len(found) == 1:
            entry = entry.replace(f'File "{filename}"', f'File "{found[0]}"')
    return entry


# --- the exporters ---------------------------------------------------------------------------------------------

class PageTemplate:
    """Mixed into an HTML exporter before it: nbgrader's feedback template (template name 'feedback') is rendered
    through templates/feedback_page.html.j2, which extends it (its own loader, consulted first, holds only that
    file); any other template is left as it is."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        if self.template_name == 'feedback':
            self.extra_loaders = [*self.extra_loaders, jinja2.FileSystemLoader(TEMPLATES)]
            self.template_file = TEMPLATE_FILE


class FeedbackPageExporter(PageTemplate, HTMLExporter):
    """nbconvert's HTML exporter writing the course's feedback page."""


class FastFeedbackPageExporter(PageTemplate, FeedbackHTMLExporter):
    """The same page, written by the faster exporter of `coursetools.grading.adapters`
    (c.Grading.fast_feedback_html)."""
