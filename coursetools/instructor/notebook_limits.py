"""What a submitted notebook may hold, checked where its bytes arrive (`repair` applies these in `make grade`'s
staging and in plain nbgrader's sanitize step): over a limit on what is graded (cells, code, graded text) or on
how deeply its JSON nests, it is not graded; over a limit on what is not graded (other metadata, the student's own
text), that part is left out of the graded copy, with a note. A release holds 40 or 55 cells, and about 20,000
characters of code and as many of text."""
import json

#: cells a notebook may have: each costs the grader a few milliseconds and an output
MAX_CELLS = 1000

#: characters of code a notebook may have in all: the kernel runs it, and the feedback page shows it highlighted,
#: at about eleven bytes of page a character
MAX_CODE_CHARS = 300_000

#: bytes of metadata a notebook may carry beyond what the grader reads (saved widget state is far less)
MAX_OTHER_METADATA = 1_000_000

#: levels of nested JSON a notebook may have (a notebook's own structure takes about 6, saved widget state or a
#: JSON output a few more): deeper, it would exhaust Python's recursion where a grading step reads it
MAX_JSON_DEPTH = 100

#: characters of markdown and raw text a notebook may have in all: the feedback page shows it, at about a byte of
#: page and 0.4 ms of grading a character
MAX_TEXT_CHARS = 10_000_000


def fit(name, nb, kept_metadata):
    """(why the notebook is not graded or None, notes on what was left out): the limits on what is graded, with
    what is not graded left out first (`leave_out_what_is_not_graded`)."""
    too_big = over_a_limit(name, len(nb.cells), code_chars(nb))
    if too_big:
        return too_big, []
    notes = leave_out_what_is_not_graded(nb, kept_metadata)
    return over_a_limit(name, 0, 0, text_chars(nb)), notes


def leave_out_what_is_not_graded(nb, kept_metadata):
    """Notes on what is left out of the graded copy: metadata the grader does not read (all but the notebook's
    `kept_metadata` keys and each cell's nbgrader part), and text cells without nbgrader's metadata (the student's
    own prose), each only where it is over its limit."""
    notes = []
    left_out = _leave_out_other_metadata(nb, kept_metadata)
    if left_out:
        notes.append(f'left out {left_out:,} bytes of metadata the grader does not read (more than '
                     f'{MAX_OTHER_METADATA:,}): the graded copy is made without it')
    over = text_chars(nb) - MAX_TEXT_CHARS
    own = sorted((cell for cell in nb.cells if cell.cell_type != 'code' and 'nbgrader' not in cell.metadata),
                 key=lambda cell: -len(cell.source))
    left_out = []
    while over > 0 and own and len(own[0].source) > 100:      # the longest first, until the rest fits
        cell = own.pop(0)
        over -= len(cell.source)
        left_out.append(len(cell.source))
        cell.source = f'*({len(cell.source):,} characters of text left out of the graded copy)*'
    if left_out:
        notes.append(f'left out {len(left_out)} cell(s) of text, {sum(left_out):,} characters (the notebook has '
                     f'more than {MAX_TEXT_CHARS:,}): the graded copy shows a note in their place')
    return notes


def _leave_out_other_metadata(nb, kept):
    """Bytes of metadata the grader does not read, removed if over `MAX_OTHER_METADATA` (a notebook's own, such
    as saved widget state, is far smaller): each grading step would read and copy them, several at once."""
    other = [(nb.metadata, key) for key in nb.metadata if key not in kept]
    other += [(cell.metadata, key) for cell in nb.cells for key in cell.metadata if key != 'nbgrader']
    size = sum(len(json.dumps(owner[key])) for owner, key in other)
    if size <= MAX_OTHER_METADATA:
        return 0
    for owner, key in other:
        del owner[key]
    return size


def over_a_limit(name, cells, code, text=0):
    """Why a notebook of `cells` cells, `code` characters of code and `text` of graded text is not graded, or
    None if it fits."""
    if cells > MAX_CELLS:
        return f'{name} has {cells:,} cells, more than the {MAX_CELLS:,} a notebook may have: not graded'
    for size, limit, what in ((code, MAX_CODE_CHARS, 'code'), (text, MAX_TEXT_CHARS, 'text in graded cells')):
        if size > limit:
            return f'{name} has {size:,} characters of {what}, more than the {limit:,} a notebook may have: not graded'
    return None


def too_deep(name, data):
    """Why notebook JSON nested deeper than `MAX_JSON_DEPTH` is not graded, or None (walked with a stack of
    its own, so no depth exhausts Python's)."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return too_deep_note(name)
        if isinstance(value, (dict, list)):
            stack.extend((item, depth + 1) for item in (value.values() if isinstance(value, dict) else value))
    return None


def too_deep_note(name):
    return f'{name} nests its JSON more than {MAX_JSON_DEPTH} levels deep, more than a notebook may: not graded'


def code_chars(nb):
    return sum(_length(cell) for cell in nb.cells if cell.get('cell_type') == 'code')


def text_chars(nb):
    return sum(_length(cell) for cell in nb.cells if cell.get('cell_type') != 'code')


def _length(cell):      # of a cell's source, 0 where it has none or one of another type (nbformat then says why)
    source = cell.get('source') if isinstance(cell, dict) else None
    return len(source) if isinstance(source, str) else 0


def cell_count(data):
    """The cells of notebook JSON (nbformat 4, or 3's worksheets); 0 where they are malformed (nbformat says why)."""
    try:
        if 'cells' in data:
            return len(data['cells'])
        return sum(len(sheet['cells']) for sheet in data['worksheets'])
    except (TypeError, KeyError):
        return 0
