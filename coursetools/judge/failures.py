"""Where a test cell failed, in the student's terms: the traceback entry the checker adds for it.

A test cell runs in the checker from the gradebook's source, hidden tests included, but the student's notebook
holds the released cell, in which nbgrader removed each `### BEGIN HIDDEN TESTS` ... `### END HIDDEN TESTS`
region. So a line number of the gradebook's source is not the one the student sees (it is off by the lines of the
hidden regions above it). Here the failing line is numbered as in the released cell, and said to be a visible
test (a line the student can read and run) or a hidden test (whose code is never shown).

The entries start with fixed words (`VISIBLE`, `HIDDEN`), which the feedback page reads to label each failed
check (`coursetools.grading.feedback_page`).
"""
import re

BEGIN, END = 'BEGIN HIDDEN TESTS', 'END HIDDEN TESTS'     # nbgrader's ClearHiddenTests delimiters
VISIBLE = 'In the test cell (a visible test), line'
HIDDEN = 'In a hidden test of this cell'
VISIBLE_ENTRY = re.compile(re.escape(VISIBLE) + r' (\d+): ')


def released_line(source, number):
    """The number that line `number` (1-based) of a test cell's gradebook `source` has in the released cell, or
    None if it is inside a hidden-test region (delimiters included). Lines are kept and dropped exactly as
    nbgrader's ClearHiddenTests keeps and drops them."""
    kept, inside = 0, False
    for index, line in enumerate(source.split('\n'), 1):
        if BEGIN in line:
            inside, shown = True, False
        elif END in line:
            inside, shown = False, False
        else:
            shown = not inside
        kept += shown
        if index == number:
            return kept if shown else None
    return None


def failing_line(raised, filename):
    """The line number, in the code compiled as `filename`, of the innermost frame of that code in the traceback
    of `raised`; None if none of its frames ran that code."""
    tb, line = raised.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def where_it_failed(raised, filename, source):
    """The traceback entry naming the line of the test cell (compiled from `source` as `filename`) where `raised`
    stopped it: 'In the test cell (a visible test), line 9: <that line>', with the line numbered as in the released
    cell, or the `HIDDEN` entry when that line is hidden test code; '' if the cell's own code is not in the
    traceback."""
    number = failing_line(raised, filename)
    if number is None:
        return ''
    released = released_line(source, number)
    if released is None:
        return f'{HIDDEN} (its code is not in your notebook; the message below says what it checked)'
    text = source.split('\n')[number - 1].strip()
    return f'{VISIBLE} {released}: {text}'
