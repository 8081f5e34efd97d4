"""The report after grading: reports/<assignment>.html, one self-contained page (its charts drawn in it as SVG).

    python -m coursetools.instructor.report [--assignment A] [--db URL] [--course DIR]

It reads the gradebook (marks per task and per check) and the autograded notebooks (the failed checks' messages,
kernel deaths, timeouts), and shows

* the class's marks: a histogram of the marks of each task and of the total, and a table per student;
* the checks that failed most often: grade_id, how many students failed it (and who), its most common message;
* a link to reports/<assignment>-similarity.html when it exists (`coursetools.instructor.similarity`);
* the students with problems: 0 marks in total, a kernel that died, a cell that timed out, a missing or
  unreadable notebook, a submission that was not graded, a late submission, and the notes in
  reports/<assignment>-status.json ({"student": ["note", ...]}), which other grading steps may write.

grades.csv (nbgrader's export) is written by `make grade` next to it.
"""
import argparse
import collections
import datetime
import json
import math
import pathlib
import re

from nbgrader.api import MissingEntry

from coursetools.instructor import marks
from coursetools.instructor.repair import regular_file, size_limits
from coursetools.instructor.safe_html import escaped as _e
from coursetools.grading.course import ATTENTION_ERRORS, Course

ANSI = re.compile(r'\x1b\[[0-9;]*[A-Za-z]')
PROBLEM_ERRORS = {'KernelDied': 'the kernel died', 'CellTimeoutError': 'a cell timed out',
                  'GraderChannelError': 'the kernel sent a message the grader could not read',
                  'CheckerLimitError': 'the checks hit their CPU limit'}
assert set(PROBLEM_ERRORS) == set(ATTENTION_ERRORS)


def first_line(text, limit=200):
    lines = [line.strip() for line in ANSI.sub('', str(text)).splitlines() if line.strip()]
    line = lines[0] if lines else ''
    return line if len(line) <= limit else line[:limit - 1] + '…'


def error_message(output):
    """`AssertionError: first line of the message` for an error output."""
    message = first_line(output.get('evalue', ''))
    return f'{output.get("ename", "Error")}: {message}' if message else output.get('ename', 'Error')


# ---------------------------------------------------------------------------------------------------- gathering

def read_autograded(path):
    """({grade_id: [error outputs]}, [(cell label, ename) of kernel deaths and timeouts], [the grader's notes])
    or raises."""
    import nbformat
    nb = nbformat.read(path, as_version=4)
    errors, incidents = {}, []
    notes = [str(note) for note in (nb.metadata.get('coursetools') or {}).get('grading_notes', [])]
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != 'code':
            continue
        grade_id = cell.metadata.get('nbgrader', {}).get('grade_id') or f'cell {index + 1}'
        for output in cell.get('outputs', []):
            if output.get('output_type') != 'error':
                continue
            errors.setdefault(grade_id, []).append(output)
            if output.get('ename') in PROBLEM_ERRORS:
                incidents.append((grade_id, output.get('ename')))
    return errors, incidents, notes


def read_status(path):
    """{student: [notes]} from the optional status file; ({}, problem) when it is unreadable."""
    if not path.exists():
        return {}, None
    try:
        data = json.loads(path.read_text())
        if not isinstance(data, dict):
            raise ValueError('not a JSON object')
        return {str(k): [str(n) for n in (v if isinstance(v, list) else [v])] for k, v in data.items()}, None
    except (OSError, ValueError) as error:
        return {}, f'{path.name} could not be read: {error}'


def gather(course, assignment, db_url):
    """Everything the page shows, as plain data (the tests and other tools may use it too)."""
    course = pathlib.Path(course)
    notebooks, cells, scores, late = marks.scores_by_cell(db_url, assignment)
    table, maxima = marks.marks_by_task(db_url, assignment)
    finals = marks.final_marks(db_url, assignment)
    written = marks.written_answer_states(db_url, assignment)
    waiting, unanswered = written['waiting'], written['unanswered']
    problems = collections.defaultdict(list)
    failures = collections.defaultdict(dict)   # grade_id: {student: message}
    status, status_problem = read_status(course / 'reports' / f'{assignment}-status.json')

    submitted = sorted(p.parent.name for p in (course / 'submitted').glob(f'*/{assignment}') if p.is_dir())
    limit = size_limits(course).file
    for student in sorted(set(submitted) | set(scores)):
        folder = course / 'submitted' / student / assignment
        for notebook in notebooks:
            path = folder / f'{notebook}.ipynb'
            graded = (course / 'autograded' / student / assignment / f'{notebook}.ipynb').exists()
            if folder.is_dir() and not path.exists() and not graded:  # (a repaired, renamed one was graded)
                others = sorted(p.name for p in folder.glob('*.ipynb'))
                problems[student].append(f'missing notebook {notebook}.ipynb' +
                                         (f' (found {", ".join(others)})' if others else ''))
            elif regular_file(path, limit):     # (staging said why it read no other)
                try:
                    json.loads(path.read_text(encoding='utf-8'))
                except (UnicodeDecodeError, ValueError):
                    problems[student].append(f'unreadable notebook {notebook}.ipynb (not valid JSON)')
                except RecursionError:      # nested too deeply: staging's note says so
                    pass
        if student not in scores:
            problems[student].append('not graded: no submission in the gradebook')
            continue
        errors = {}
        for notebook in notebooks:
            path = course / 'autograded' / student / assignment / f'{notebook}.ipynb'
            if not path.exists():
                if (folder / f'{notebook}.ipynb').exists():
                    problems[student].append(f'{notebook}.ipynb was not autograded')
                continue
            try:
                found, incidents, notes = read_autograded(path)
            except Exception as error:  # a notebook the grader could not read back
                problems[student].append(f'autograded {notebook}.ipynb unreadable: {first_line(error)}')
                continue
            errors.update(found)
            for grade_id, ename in incidents:
                problems[student].append(f'{PROBLEM_ERRORS[ename]} in {grade_id}')
            problems[student].extend(note for note in notes if note not in problems[student])
        for grade_id, maximum in cells.items():
            if scores[student].get(grade_id, 0) < maximum and grade_id not in waiting.get(student, {}):
                outputs = errors.get(grade_id, [])
                failures[grade_id][student] = (error_message(outputs[-1]) if outputs else
                                               'no answer (a written answer handed in as released)'
                                               if grade_id in unanswered.get(student, {}) else '(no error message)')
        mark = finals.get(student)
        if mark is not None and mark.final == 0 and not mark.waiting:
            problems[student].insert(0, '0 marks in total')
        if late.get(student, 0) > 0:
            penalty = f': {mark.text()}' if mark is not None and mark.penalty else ', no penalty'
            problems[student].append(f'late by {datetime.timedelta(seconds=round(late[student]))}{penalty}')
    for student, notes in status.items():
        problems[student].extend(note for note in notes if note not in problems[student])

    failed = []
    for grade_id, who in failures.items():
        common = collections.Counter(who.values()).most_common()
        failed.append(dict(grade_id=grade_id, task=marks.task_of(grade_id), count=len(who), students=sorted(who),
                           message=common[0][0], message_count=common[0][1], messages=len(common)))
    failed.sort(key=lambda f: (-f['count'], list(cells).index(f['grade_id'])))
    similar = course / 'reports' / f'{assignment}-similarity.html'
    return dict(assignment=assignment, table=table, maxima=maxima, failed=failed, finals=finals,
                problems={s: problems[s] for s in sorted(problems) if problems[s]},
                status_problem=status_problem, graded=len(scores),
                waiting={student: sorted(cells) for student, cells in waiting.items() if student in table},
                similarity=similar.name if similar.exists() else None)


# ---------------------------------------------------------------------------------------------------- drawing

def histogram(values, maximum, title, width=260, colour='#3b78b0'):
    """A bar per possible mark (0, 1, ... maximum; halves too if any mark is fractional), as inline SVG; each bar
    carries its mark and count (`data-mark`, `data-count`, and a tooltip)."""
    step = 1 if all(float(v).is_integer() for v in values) and float(maximum).is_integer() else 0.5
    marks_axis = [i * step for i in range(int(round(maximum / step)) + 1)]
    counts = collections.Counter(round(v / step) * step for v in values)
    height, left, right, top, bottom = 200, 34, 8, 26, 34
    plot_w, plot_h, base = width - left - right, height - top - bottom, height - bottom
    most = max(list(counts.values()) + [1])
    scale, slot = plot_h / (most * 1.15), plot_w / len(marks_axis)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="{_e(title)}: students per mark" font-family="sans-serif" font-size="10">',
             f'<text x="{width / 2:g}" y="15" text-anchor="middle" font-size="12">{_e(title)}</text>']
    for y in range(0, most + 1, max(1, math.ceil(most / 4))):
        level = base - y * scale
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{level:.1f}" y2="{level:.1f}" stroke="#e5e5e5"/>'
                     f'<text x="{left - 4}" y="{level + 3:.1f}" text-anchor="end">{y}</text>')
    for i, mark in enumerate(marks_axis):
        count, x = counts.get(mark, 0), left + i * slot
        parts.append(f'<rect class="bar" data-mark="{mark:g}" data-count="{count}" x="{x + 0.1 * slot:.1f}" '
                     f'y="{base - count * scale:.1f}" width="{0.8 * slot:.1f}" height="{count * scale:.1f}" '
                     f'fill="{colour}" stroke="#1f3f5f"><title>{count} student{"s" * (count != 1)}: {mark:g}'
                     f'</title></rect><text x="{x + 0.5 * slot:.1f}" y="{base + 12}" text-anchor="middle">'
                     f'{mark:g}</text>')
    parts.append(f'<line x1="{left}" x2="{width - right}" y1="{base}" y2="{base}" stroke="#333"/>'
                 f'<text x="{left + plot_w / 2:g}" y="{height - 4}" text-anchor="middle">marks</text>'
                 f'<text transform="translate(10 {top + plot_h / 2:g}) rotate(-90)" text-anchor="middle">'
                 'students</text></svg>')
    return ''.join(parts)


# ---------------------------------------------------------------------------------------------------- page

STYLE = """
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 2em auto; max-width: 1100px;
       color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
.meta { color: #666; margin-top: 0; }
.grid { display: flex; flex-wrap: wrap; gap: 0.5em; }
figure { margin: 0; border: 1px solid #e3e3e3; border-radius: 4px; background: #fff; }
figure svg { display: block; }
figcaption { font-size: 0.8em; color: #555; text-align: center; padding-bottom: 0.3em; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border-bottom: 1px solid #e5e5e5; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
th { background: #f4f6f8; } td.num, th.num { text-align: right; }
td.low { background: #fde8e8; } td.full { color: #2a7a2a; }
td.waiting { background: #fff6d6; color: #6b4e00; font-style: italic; } td.total { white-space: nowrap; }
code { font-size: 0.95em; } .message { font-family: ui-monospace, monospace; font-size: 0.85em; }
.problem { margin: 0; padding-left: 1.2em; } .problem li { margin: 0.1em 0; }
table.failed-checks code { white-space: nowrap; } .warning { color: #a33; }
"""


def render(data):
    assignment, table, maxima, finals = data['assignment'], data['table'], data['maxima'], data['finals']
    totals = {student: finals[student].final for student in table if student in finals}
    waiting = {student: {marks.task_of(grade_id) for grade_id in cells}
               for student, cells in data.get('waiting', {}).items()}
    full = sum(maxima.values())
    n = len(table)
    mean = sum(totals.values()) / n if n else 0
    parts = ['<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
             f'<title>{_e(assignment)}: grading report</title><style>{STYLE}</style></head><body>',
             f'<h1>{_e(assignment)}: grading report</h1>',
             f'<p class="meta">{n} students graded; mean {mean:.1f} / {full:g}; '
             f'{sum(t == full for t in totals.values())} with full marks; '
             f'{len(data["problems"])} with problems. Generated {datetime.datetime.now():%Y-%m-%d %H:%M}.</p>']
    if data.get('similarity'):
        parts.append(f'<p class="meta">Code shared between submissions: <a class="similarity" '
                     f'href="{_e(data["similarity"])}">the similarity report</a>.</p>')
    if waiting:
        count = len(waiting)
        parts.append(f'<p class="meta waiting">{count} student{"s" * (count != 1)} with a written answer still to be '
                     f'marked by hand (formgrader, Manual Grading): <span class="waiting-students">'
                     f'{_e(", ".join(sorted(waiting)))}</span>. Their totals say how many marks wait; the mean and '
                     'the total chart count what they have so far.</p>')
    if data.get('status_problem'):
        parts.append(f'<p class="warning">{_e(data["status_problem"])}</p>')

    parts.append('<h2>Marks per task</h2><div class="grid">')
    for task, maximum in maxima.items():
        # a mark still waiting is no mark yet: left out of its task's chart
        chart = histogram([row[task] for student, row in table.items() if task not in waiting.get(student, ())],
                          maximum, f'{task} (/{maximum:g})')
        parts.append(f'<figure class="task-histogram" data-task="{_e(task)}">{chart}</figure>')
    chart = histogram(list(totals.values()), full, f'total (/{full:g})', colour='#6a5acd',
                      width=max(260, round(28 * full + 120)))
    parts.append(f'<figure class="total-histogram">{chart}</figure></div>')

    parts.append('<h2>Checks that failed most often</h2>')
    if data['failed']:
        parts.append('<table class="failed-checks"><tr><th>check</th><th class="num">students</th>'
                     '<th>who</th><th>most common message</th></tr>')
        for check in data['failed']:
            also = (f' <small>(×{check["message_count"]}; {check["messages"] - 1} other message'
                    f'{"s" if check["messages"] > 2 else ""})</small>' if check['messages'] > 1 else '')
            parts.append(f'<tr data-grade-id="{_e(check["grade_id"])}"><td><code>{_e(check["grade_id"])}</code></td>'
                         f'<td class="num">{check["count"]} / {n}</td><td>{_e(", ".join(check["students"]))}</td>'
                         f'<td class="message">{_e(check["message"])}{also}</td></tr>')
        parts.append('</table>')
    else:
        parts.append('<p>Every check passed for every student.</p>')

    parts.append('<h2>Students with problems</h2>')
    if data['problems']:
        parts.append('<table class="problems"><tr><th>student</th><th class="num">total</th><th>problems</th></tr>')
        for student, notes in data['problems'].items():
            total = _e(finals[student].text()) if student in finals else '–'
            items = ''.join(f'<li>{_e(note)}</li>' for note in notes)
            parts.append(f'<tr data-student="{_e(student)}"><td>{_e(student)}</td><td class="num">{total}</td>'
                         f'<td><ul class="problem">{items}</ul></td></tr>')
        parts.append('</table>')
    else:
        parts.append('<p>None.</p>')

    parts.append('<h2>Marks per student</h2><table class="marks"><tr><th>student</th>' +
                 ''.join(f'<th class="num">{_e(t)}<br><small>/{m:g}</small></th>' for t, m in maxima.items()) +
                 f'<th class="num">total<br><small>/{full:g}</small></th></tr>')
    for student, row in table.items():
        cells = ''.join('<td class="num waiting">waiting</td>' if t in waiting.get(student, ()) and not row[t] else
                        f'<td class="num {"full" if row[t] >= m else "low" if row[t] == 0 else ""}">{row[t]:g}</td>'
                        for t, m in maxima.items())
        mark = finals.get(student)
        kind = ' waiting' if mark is not None and mark.waiting else ' late' if mark is not None and mark.penalty else ''
        parts.append(f'<tr data-student="{_e(student)}"><td>{_e(student)}</td>{cells}<td class="num total{kind}">'
                     f'{_e(mark.text()) if mark is not None else "–"}</td></tr>')
    parts.append('</table></body></html>\n')
    return '\n'.join(parts)


def write_report(course_root, assignment, db_url=None):
    """Write <course>/reports/<assignment>.html from the gradebook and the autograded notebooks; return its path."""
    course = pathlib.Path(course_root)
    db_url = db_url or 'sqlite:///' + str(course / 'gradebook.db')
    page = render(gather(course, assignment, db_url))
    path = course / 'reports' / f'{assignment}.html'
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding='utf-8')
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--assignment', action='append', help='assignment id (default: every one in source/)')
    parser.add_argument('--db', help='gradebook URL (default: gradebook.db in the course folder)')
    parser.add_argument('--course', help='course folder (default: the current folder)')
    args = parser.parse_args(argv)
    course = Course(pathlib.Path(args.course).resolve()) if args.course else Course.at()
    for assignment in args.assignment or course.assignments():
        try:
            print(f'Report: {write_report(course.root, assignment, args.db)}')
        except MissingEntry:
            if args.assignment:
                raise SystemExit(f'{assignment} is not in the gradebook: grade it first (make grade)')
            print(f'{assignment}: not graded yet, no report')


if __name__ == '__main__':
    main()
