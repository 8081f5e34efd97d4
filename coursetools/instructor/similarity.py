"""The similarity report: which submissions of an assignment share code they did not get from the release.

    python -m coursetools.instructor.similarity [--assignment A] [--course DIR] [--flag 0.5] [--common 0.25]

`make grade` writes reports/<assignment>-similarity.html after autograding and names the flagged pairs in its
output; the grading report links to it. The comparison is copydetect's (winnowed fingerprints of the tokenized
code, in which every name becomes V and every string S, so renamed variables and rewritten comments change
nothing). Only text is read: no student code runs. What is compared, and what is left out:

* a submission's code is its solution cells (nbgrader's `solution` cells, the ones the student writes in), from
  the autograded notebook (repaired: a renamed notebook, duplicated cells) or else the submitted one;
* the release's code (`release/<assignment>/*.ipynb`: stubs, docstrings, given helpers) is boilerplate;
* so is code found in more than `common` (a share) of the submissions: the obvious way to write a line, which
  every student writes alike, is no sign of copying between two of them (MOSS's `-m`, Dolos's
  max-fingerprint share). See docs/similarity.md.

A pair is flagged when each of the two shares at least `flag` of its remaining code with the other.
"""
from __future__ import annotations

import argparse
import collections
import datetime
import io
import itertools
import json
import pathlib
from dataclasses import dataclass

from coursetools.instructor.safe_html import escaped as _e

NOISE = 25          # copydetect's default: matches shorter than 25 characters of tokenized code are noise
FLAG = 0.5          # each side shares at least half of its own code with the other
COMMON = 0.25       # code in more than a quarter of the submissions is common code
MIN_COMMON = 2      # ...but code in only two submissions is never common (a class of two can copy too)
SHOWN = 0.33        # pairs listed in the report (copydetect's display threshold), flagged or not


@dataclass
class Pair:
    first: str
    second: str
    similarity: tuple        # (share of first's code found in second, share of second's found in first)
    overlap: int             # characters of tokenized code in common
    flagged: bool


# ---------------------------------------------------------------------------------------------------- reading

def solution_code(notebook):
    """The code of a notebook's solution cells (the student's own), cell after cell."""
    return '\n\n'.join(cell.source for cell in notebook.cells if cell.cell_type == 'code'
                       and (cell.metadata.get('nbgrader') or {}).get('solution'))


def release_code(course, assignment):
    """What every student got, not what they wrote: the released notebooks' code cells, and their solution cells
    joined as a submission's are (so that an untouched stub and the join of two stubs are not the student's)."""
    import nbformat
    sources = []
    for path in sorted((pathlib.Path(course) / 'release' / assignment).glob('*.ipynb')):
        notebook = nbformat.read(path, as_version=4)
        sources += [cell.source for cell in notebook.cells if cell.cell_type == 'code']
        sources.append(solution_code(notebook))
    return '\n\n'.join(sources)


def submissions(course, assignment):
    """({student: code}, {student: why not compared}) for every student with a submission folder."""
    import nbformat
    course = pathlib.Path(course)
    from coursetools.instructor.repair import regular_file, size_limits
    names = [p.name for p in sorted((course / 'release' / assignment).glob('*.ipynb'))]
    code, skipped, limit = {}, {}, size_limits(course).file
    for folder in sorted((course / 'submitted').glob(f'*/{assignment}')):
        student = folder.parent.name
        parts = []
        for name in names:
            graded = course / 'autograded' / student / assignment / name
            path = graded if graded.exists() else folder / name
            try:
                if path != graded and not regular_file(path, limit):
                    raise OSError('not a regular file, or over the size limit: not read')
                parts.append(solution_code(nbformat.read(path, as_version=4)))
            except Exception as error:      # missing or unreadable: the grading report says more
                skipped[student] = f'{name} could not be read ({type(error).__name__})'
        if student not in skipped:
            code[student] = '\n\n'.join(parts)
    return code, skipped


# ---------------------------------------------------------------------------------------------------- comparing

def fingerprint(code, name='submission.py'):
    """copydetect's fingerprint of Python code: every k-gram kept (window 1), so the result does not depend on
    Python's per-process string hashing."""
    from copydetect import CodeFingerprint          # with pyplot: 0.7 s, only where there is something to compare
    return CodeFingerprint(name, NOISE, 1, fp=io.StringIO(code), language='python')


def drop(print_, hashes):
    """Leave `hashes` out of a fingerprint. (copydetect 0.5.0's own `boilerplate` argument also drops a
    fingerprint that occurs twice in one file, by its use of numpy's intersect1d with assume_unique.)"""
    from copydetect.utils import get_token_coverage
    print_.hashes = print_.hashes - hashes
    print_.hash_idx = {h: i for h, i in print_.hash_idx.items() if h not in hashes}
    print_.token_coverage = get_token_coverage(print_.hash_idx, print_.k, len(print_.filtered_code))
    return print_


def common_hashes(prints, share):
    """Fingerprints found in more than `share` of the submissions (and in more than MIN_COMMON)."""
    counts = collections.Counter(h for p in prints.values() for h in p.hashes)
    limit = max(MIN_COMMON, int(share * len(prints)))
    return {h for h, n in counts.items() if n > limit}


def compare(code, boilerplate, flag=FLAG, common=COMMON):
    """({student: fingerprint}, [Pair] of every pair that shares any code, most similar first)."""
    from copydetect import compare_files
    prints = {student: drop(fingerprint(source, f'{student}.py'), boilerplate) for student, source in code.items()}
    shared = common_hashes(prints, common)
    prints = {student: drop(p, shared) for student, p in prints.items()}
    holders = collections.defaultdict(set)
    for student, p in prints.items():
        for h in p.hashes:
            holders[h].add(student)
    candidates = {pair for students in holders.values() for pair in itertools.combinations(sorted(students), 2)}
    pairs = []
    for first, second in sorted(candidates):
        overlap, similarity, _ = compare_files(prints[first], prints[second])
        similarity = tuple(float(s) for s in similarity)
        pairs.append(Pair(first, second, similarity, int(overlap), min(similarity) >= flag))
    pairs.sort(key=lambda p: (-min(p.similarity), -max(p.similarity), p.first, p.second))
    return prints, pairs


def analyse(course, assignment, flag=FLAG, common=COMMON):
    """Everything the page shows, as plain data."""
    code, skipped = submissions(course, assignment)
    if len(code) < 2:               # no pair to compare
        prints, pairs = {}, []
    else:
        prints, pairs = compare(code, fingerprint(release_code(course, assignment), 'release.py').hashes, flag, common)
    return dict(assignment=assignment, prints=prints, pairs=pairs, skipped=skipped, flag=flag, common=common,
                compared=len(code))


# ---------------------------------------------------------------------------------------------------- page

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; padding: 0 1em; }
table { border-collapse: collapse; font-size: 0.9em; } th, td { border-bottom: 1px solid #e5e5e5;
padding: 0.3em 0.6em; text-align: left; } th { background: #f4f6f8; } td.num { text-align: right; }
tr.flagged td { background: #fde8e8; font-weight: 600; } .meta { color: #666; }
.sides { display: flex; gap: 1em; } .sides > div { flex: 1; min-width: 0; }
pre { background: #f8f8f8; padding: 0.6em; overflow-x: auto; font-size: 0.8em; }
.copied { background: #ffd7a8; }
"""


def side_by_side(pair, prints):
    """The two submissions' code with what they share highlighted (copydetect's highlighting)."""
    from copydetect import compare_files
    from copydetect.utils import highlight_overlap
    _, _, (slices1, slices2) = compare_files(prints[pair.first], prints[pair.second])
    columns = []
    for student, slices in ((pair.first, slices1), (pair.second, slices2)):
        marked, _ = highlight_overlap(prints[student].raw_code, slices, "<span class='copied'>", '</span>',
                                      escape_html=True)
        columns.append(f'<div><h3>{_e(student)}</h3><pre>{marked}</pre></div>')
    return f'<section class="pair" data-pair="{_e(pair.first)}/{_e(pair.second)}"><h2>{_e(pair.first)} and ' \
           f'{_e(pair.second)}</h2><div class="sides">{"".join(columns)}</div></section>'


def render(data):
    assignment, pairs = data['assignment'], data['pairs']
    flagged = [p for p in pairs if p.flagged]
    shown = [p for p in pairs if p.flagged or max(p.similarity) >= SHOWN]
    parts = ['<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
             f'<title>{_e(assignment)}: similarity</title><style>{STYLE}</style></head><body>',
             f'<h1>{_e(assignment)}: similarity between submissions</h1>',
             f'<p class="meta">{data["compared"]} submission{"s" * (data["compared"] != 1)} compared (their '
             f'solution cells; the release\'s code '
             f'and code found in more than {data["common"]:.0%} of submissions left out); {len(flagged)} '
             f'pair{"s" * (len(flagged) != 1)} flagged (each shares at least {data["flag"]:.0%} of its code with '
             f'the other). Made with copydetect; no student code was run. Generated '
             f'{datetime.datetime.now():%Y-%m-%d %H:%M}.</p>']
    if data['skipped']:
        parts.append('<p>Not compared: ' + '; '.join(f'{_e(s)} ({_e(why)})' for s, why in data['skipped'].items())
                     + '</p>')
    parts.append('<table class="pairs"><tr><th>pair</th><th>flagged</th><th class="num">share of first</th>'
                 '<th class="num">share of second</th><th class="num">characters in common</th></tr>')
    for pair in shown:
        parts.append(f'<tr class="{"flagged" if pair.flagged else "shown"}" data-pair="{_e(pair.first)}/'
                     f'{_e(pair.second)}"><td>{_e(pair.first)} / {_e(pair.second)}</td>'
                     f'<td>{"yes" if pair.flagged else ""}</td><td class="num">{pair.similarity[0]:.0%}</td>'
                     f'<td class="num">{pair.similarity[1]:.0%}</td><td class="num">{pair.overlap}</td></tr>')
    parts.append('</table>')
    if not shown:
        parts.append(f'<p>No pair shares {SHOWN:.0%} of either\'s code.</p>')
    parts += [side_by_side(pair, data['prints']) for pair in flagged]
    parts.append('</body></html>\n')
    return '\n'.join(parts)


def write_similarity(course_root, assignment, flag=FLAG, common=COMMON):
    """Write reports/<assignment>-similarity.html; return (its path, the flagged pairs)."""
    course = pathlib.Path(course_root)
    data = analyse(course, assignment, flag, common)
    path = course / 'reports' / f'{assignment}-similarity.html'
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(data), encoding='utf-8')
    return path, [p for p in data['pairs'] if p.flagged]


def summary(pairs):
    """One line for `make grade`'s output naming the flagged pairs."""
    if not pairs:
        return 'no pair flagged'
    return 'flagged ' + ', '.join(f'{p.first} & {p.second} ({p.similarity[0]:.0%}/{p.similarity[1]:.0%})'
                                  for p in pairs)


def main(argv=None):
    from coursetools.grading.course import Course
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--assignment', action='append', help='assignment id (default: every one in source/)')
    parser.add_argument('--course', help='course folder (default: the current folder)')
    parser.add_argument('--flag', type=float, default=FLAG, help=f'share each side must share (default {FLAG})')
    parser.add_argument('--common', type=float, default=COMMON,
                        help=f'code in more than this share of submissions is common (default {COMMON})')
    parser.add_argument('--json', action='store_true', help='print the flagged pairs as JSON')
    args = parser.parse_args(argv)
    course = Course(pathlib.Path(args.course).resolve()) if args.course else Course.at()
    for assignment in args.assignment or course.assignments():
        if not course.students(assignment):
            continue
        path, flagged = write_similarity(course.root, assignment, args.flag, args.common)
        if args.json:
            print(json.dumps({assignment: [[p.first, p.second, *p.similarity] for p in flagged]}))
        else:
            print(f'Similarity: {path}: {summary(flagged)}')


if __name__ == '__main__':
    main()
