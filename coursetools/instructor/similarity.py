"""The similarity report: which submissions of an assignment share code they did not get from the release.

    python -m coursetools.instructor.similarity [--assignment A] [--course DIR] [--minimum 150] [--common 0.25]

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

Pairs are ranked by the characters of tokenized code they share beyond those two. A pair is flagged when they
share at least `minimum` characters and each has `ALIKE` of its code (common code counted) in the other, or
when their text (names kept; comments and layout aside) is the same or nearly (each has `NEAR` of its text in the
other), however common that code is. A pair that shares less than `minimum` is a possible common mistake (two
students who made the same slip), not a copy.
"""
from __future__ import annotations

import argparse
import collections
import copy
import datetime
import io
import itertools
import json
import pathlib
import re
import tokenize
from dataclasses import dataclass

from coursetools.instructor.safe_html import escaped as _e

NOISE = 25          # copydetect's default: matches shorter than 25 characters of tokenized code are noise
MINIMUM = 150       # characters of tokenized code beyond the release and common code: a flag's least amount
COMMON = 0.25       # code in more than a quarter of the submissions is common code
MIN_COMMON = 2      # ...but code in only two submissions is never common (a class of two can copy too)
SHOWN = 0.33        # pairs listed in the report (copydetect's display threshold), flagged or not
ALIKE = 0.95        # a copy: each has this share of its tokenized code (common code kept) in the other
NEAR = 0.9          # near-identical: each has this share of its text (runs of TEXT_RUN tokens) in the other
TEXT_RUN = 8
KINDS = {'identical': 'identical or near-identical', 'copied': 'shares much code',
         'mistake': 'possible common mistake', 'shared': ''}


@dataclass
class Pair:
    first: str
    second: str
    similarity: tuple        # (share of first's code found in second, share of second's found in first)
    overlap: int             # characters of tokenized code in common, beyond the release and common code
    kind: str                # a key of KINDS
    spread: int = 2          # the most submissions any passage they share is found in

    @property
    def flagged(self):
        return self.kind in ('identical', 'copied')


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


def fingerprints(code):
    """{student: fingerprint}: each distinct text tokenized once (tokenizing is most of the report's cost)."""
    made = {}
    for source in set(code.values()):
        made[source] = fingerprint(source)
    return {student: copy.copy(made[source]) for student, source in code.items()}


def covered(print_, hashes):
    """Characters of a fingerprint's tokenized code inside a k-gram whose hash is in `hashes`."""
    total, reach = 0, 0
    for start in sorted(i for h in hashes for i in print_.hash_idx[h]):
        total += start + print_.k - max(start, reach)
        reach = start + print_.k
    return total


def shared(first, second):
    """copydetect's compare_files without the slices, in plain Python (copydetect's numpy calls cost more than the
    work on a few hundred fingerprints): (characters of first's code also in second, (share of first's code in
    second, share of second's in first))."""
    both = first.hashes & second.hashes
    if not both:
        return 0, (0.0, 0.0)
    amounts = [covered(p, both) for p in (first, second)]
    return amounts[0], tuple(n / p.token_coverage if p.token_coverage else 0.0
                             for n, p in zip(amounts, (first, second)))


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


def text_runs(code):
    """The hashes of every run of TEXT_RUN tokens of `code` as written, names and strings kept, comments and
    layout left out: what a near-identical copy keeps."""
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    try:
        tokens = [t.string for t in tokenize.generate_tokens(io.StringIO(code).readline) if t.type not in skip]
    except (tokenize.TokenError, SyntaxError):          # code that does not tokenize: words and signs
        tokens = re.findall(r'\w+|\S', re.sub(r'#.*', '', code))
    return {hash(tuple(tokens[i:i + TEXT_RUN])) for i in range(len(tokens) - TEXT_RUN + 1)}


def near_identical(runs, first, second):
    a, b = runs[first], runs[second]
    if not a or not b or min(len(a), len(b)) < NEAR * max(len(a), len(b)):
        return False
    return len(a & b) >= NEAR * max(len(a), len(b))


def compare(code, boilerplate, minimum=MINIMUM, common=COMMON, release_text=''):
    """({student: fingerprint}, {student: fingerprint with common code kept}, [Pair] of every pair that shares any
    code or is near-identical, flagged first, then the most shared code first)."""
    whole = {student: drop(p, boilerplate) for student, p in fingerprints(code).items()}
    usual = common_hashes(whole, common)
    prints = {student: drop(copy.copy(p), usual) for student, p in whole.items()}
    given = text_runs(release_text)
    runs = {student: text_runs(source) - given for student, source in code.items()}
    holders = collections.defaultdict(set)
    for student, p in prints.items():
        for h in p.hashes:
            holders[h].add(student)
    candidates = {pair for students in holders.values() for pair in itertools.combinations(sorted(students), 2)}
    near = {pair for pair in itertools.combinations(sorted(code), 2) if near_identical(runs, *pair)}
    pairs = []
    for first, second in sorted(candidates | near):
        overlap, similarity = shared(prints[first], prints[second])
        # the whole code only for a pair that may be flagged
        alike, shares = shared(whole[first], whole[second]) if overlap >= minimum or (first, second) in near \
            else (0, (0, 0))
        if (first, second) in near and alike >= minimum:
            kind = 'identical'
        elif overlap >= minimum:
            kind = 'copied' if min(shares) >= ALIKE else 'shared'
        else:
            kind = 'mistake' if overlap else 'shared'
        spread = max((len(holders[h]) for h in prints[first].hashes & prints[second].hashes), default=2)
        pairs.append(Pair(first, second, similarity, int(overlap), kind, spread))
    pairs.sort(key=lambda p: (not p.flagged, -p.overlap, -min(p.similarity), p.first, p.second))
    return prints, whole, pairs


def groups(pairs):
    """The identical or near-identical submissions, as groups (joined through their pairs), largest first."""
    group_of = {}
    for pair in pairs:
        if pair.kind == 'identical':
            joined = group_of.get(pair.first, {pair.first}) | group_of.get(pair.second, {pair.second})
            for student in joined:
                group_of[student] = joined
    unique = {tuple(sorted(group)) for group in group_of.values()}
    return sorted(unique, key=lambda group: (-len(group), group))


def analyse(course, assignment, minimum=MINIMUM, common=COMMON):
    """Everything the page shows, as plain data."""
    code, skipped = submissions(course, assignment)
    prints, whole, pairs = {}, {}, []
    if len(code) >= 2:               # else no pair to compare
        release = release_code(course, assignment)
        prints, whole, pairs = compare(code, fingerprint(release, 'release.py').hashes, minimum, common, release)
    return dict(assignment=assignment, prints=prints, whole=whole, pairs=pairs, groups=groups(pairs),
                skipped=skipped, minimum=minimum, common=common, compared=len(code))


# ---------------------------------------------------------------------------------------------------- page

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; padding: 0 1em; }
table { border-collapse: collapse; font-size: 0.9em; } th, td { border-bottom: 1px solid #e5e5e5;
padding: 0.3em 0.6em; text-align: left; } th { background: #f4f6f8; } td.num { text-align: right; }
tr.flagged td { background: #fde8e8; font-weight: 600; } tr.mistake td { background: #f3f3e6; }
.meta { color: #666; } .sides { display: flex; gap: 1em; } .sides > div { flex: 1; min-width: 0; }
pre { background: #f8f8f8; padding: 0.6em; overflow-x: auto; font-size: 0.8em; }
.copied { background: #ffd7a8; }
"""


def highlighted(code, slices):
    """`code`, escaped, with the `slices` marked (copydetect's highlighting, which leaves code with no slice
    unescaped: never given one here)."""
    from copydetect.utils import highlight_overlap
    if not len(slices) or not slices.shape[-1]:
        return _e(code)
    return highlight_overlap(code, slices, "<span class='copied'>", '</span>', escape_html=True)[0]


def side_by_side(pair, prints):
    """The two submissions' code with what they share highlighted."""
    from copydetect import compare_files
    _, _, (slices1, slices2) = compare_files(prints[pair.first], prints[pair.second])
    columns = [f'<div><h3>{_e(student)}</h3><pre>{highlighted(prints[student].raw_code, slices)}</pre></div>'
               for student, slices in ((pair.first, slices1), (pair.second, slices2))]
    return f'<section class="pair" data-pair="{_e(pair.first)}/{_e(pair.second)}"><h2>{_e(pair.first)} and ' \
           f'{_e(pair.second)} ({_e(KINDS[pair.kind])})</h2><div class="sides">{"".join(columns)}</div></section>'


def label(pair):
    if pair.kind == 'mistake':
        return f'possible common mistake (in {pair.spread} submissions)' if pair.spread > 2 else KINDS[pair.kind]
    return KINDS[pair.kind]


def render(data):
    assignment, pairs, minimum = data['assignment'], data['pairs'], data['minimum']
    flagged = [p for p in pairs if p.flagged]
    shown = [p for p in pairs if p.flagged or max(p.similarity) >= SHOWN]
    parts = ['<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
             f'<title>{_e(assignment)}: similarity</title><style>{STYLE}</style></head><body>',
             f'<h1>{_e(assignment)}: similarity between submissions</h1>',
             f'<p class="meta">{data["compared"]} submission{"s" * (data["compared"] != 1)} compared (their '
             f'solution cells; the release\'s code and code found in more than {data["common"]:.0%} of submissions '
             f'left out); {len(flagged)} pair{"s" * (len(flagged) != 1)} flagged. Made with copydetect; no student '
             f'code was run. Generated {datetime.datetime.now():%Y-%m-%d %H:%M}.</p>',
             f'<p class="minimum">Minimum shared size: <strong>{minimum} characters</strong> of tokenized code '
             f'(names and strings written as one letter, comments and layout left out), beyond the release and the '
             f'common code. A pair is flagged when it shares at least that much and each has {ALIKE:.0%} of its code '
             f'(common code counted) in the other, or when the two submissions are '
             f'identical or near-identical ({NEAR:.0%} of each one\'s text, names kept, is in the other) and share '
             f'at least that much beyond the release, however common their code. A pair that shares less is a '
             f'possible common mistake (the same slip, made by two students), not a sign of copying. Pairs are '
             f'ranked by how much they share.</p>']
    if data['skipped']:
        parts.append('<p>Not compared: ' + '; '.join(f'{_e(s)} ({_e(why)})' for s, why in data['skipped'].items())
                     + '</p>')
    for group in data['groups']:
        parts.append(f'<p class="group" data-group="{_e(" ".join(group))}">Identical or near-identical: '
                     f'<strong>{_e(", ".join(group))}</strong> ({len(group)} submissions).</p>')
    parts.append('<table class="pairs"><tr><th>pair</th><th>flagged</th><th>why</th><th class="num">characters in '
                 'common</th><th class="num">share of first</th><th class="num">share of second</th></tr>')
    for pair in shown:
        kind = 'flagged' if pair.flagged else 'mistake' if pair.kind == 'mistake' else 'shown'
        parts.append(f'<tr class="{kind}" data-pair="{_e(pair.first)}/{_e(pair.second)}"><td>{_e(pair.first)} / '
                     f'{_e(pair.second)}</td><td>{"yes" if pair.flagged else ""}</td><td>{_e(label(pair))}</td>'
                     f'<td class="num">{pair.overlap}</td><td class="num">{pair.similarity[0]:.0%}</td>'
                     f'<td class="num">{pair.similarity[1]:.0%}</td></tr>')
    parts.append('</table>')
    if not shown:
        parts.append(f'<p>No pair shares {SHOWN:.0%} of either\'s code.</p>')
    for pair in flagged:
        parts.append(side_by_side(pair, data['whole'] if pair.kind == 'identical' else data['prints']))
    parts.append('</body></html>\n')
    return '\n'.join(parts)


def write_similarity(course_root, assignment, minimum=MINIMUM, common=COMMON):
    """Write reports/<assignment>-similarity.html; return (its path, the flagged pairs)."""
    course = pathlib.Path(course_root)
    data = analyse(course, assignment, minimum, common)
    path = course / 'reports' / f'{assignment}-similarity.html'
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(data), encoding='utf-8')
    return path, [p for p in data['pairs'] if p.flagged]


def summary(pairs):
    """One line for `make grade`'s output naming the flagged pairs (a group of identical ones as one)."""
    if not pairs:
        return 'no pair flagged'
    together = groups(pairs)
    grouped = {student for group in together for student in group if len(group) > 2}
    named = [f'{p.first} & {p.second} ({p.similarity[0]:.0%}/{p.similarity[1]:.0%})' for p in pairs
             if not (p.first in grouped and p.second in grouped)]
    return 'flagged ' + ', '.join(named + [f'{" = ".join(group)} (identical)' for group in together
                                           if len(group) > 2])


def main(argv=None):
    from coursetools.grading.course import Course
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--assignment', action='append', help='assignment id (default: every one in source/)')
    parser.add_argument('--course', help='course folder (default: the current folder)')
    parser.add_argument('--minimum', type=int, default=MINIMUM,
                        help=f'characters of tokenized code a flagged pair shares at least (default {MINIMUM})')
    parser.add_argument('--common', type=float, default=COMMON,
                        help=f'code in more than this share of submissions is common (default {COMMON})')
    parser.add_argument('--json', action='store_true', help='print the flagged pairs as JSON')
    args = parser.parse_args(argv)
    course = Course(pathlib.Path(args.course).resolve()) if args.course else Course.at()
    for assignment in args.assignment or course.assignments():
        if not course.students(assignment):
            continue
        path, flagged = write_similarity(course.root, assignment, args.minimum, args.common)
        if args.json:
            print(json.dumps({assignment: [[p.first, p.second, p.kind, p.overlap, *p.similarity] for p in flagged]}))
        else:
            print(f'Similarity: {path}: {summary(flagged)}')


if __name__ == '__main__':
    main()
