"""Make every submission gradable before nbgrader sees it, without touching the student's files.

`stage()` copies submitted/ into a staging folder that nbgrader then grades, and on the way:

* finds a notebook saved under another name (a browser's `noughts_and_crosses (1).ipynb`) if it is the only one;
* converts older nbformat versions and repairs what nbformat can repair (duplicate or malformed cell ids, stray or
  missing metadata), and clears outputs and execution counts, which the grader makes again whatever their shape;
* resolves duplicated nbgrader cells (JupyterLab's copy/paste and split-cell copy the `grade_id`): the last copy
  that the student answered keeps the id, the others become ordinary cells, so the whole class is not stopped;
* leaves out a file that is not a notebook at all (empty, truncated JSON), so that student gets zero, saying why;
* holds every submission to the sizes nbgrader's own `submit` allows (`c.CourseDirectory.max_file_size` a file,
  `max_dir_size` a submission, in kilobytes of 1000 bytes), to `MAX_FILES_BESIDE` files beside the notebook, and
  to the limits of `notebook_limits` on what the notebook holds: a notebook over a limit is not graded, another
  file over it is left out, and the note says which and why; metadata and text that are not graded are left out
  of the graded copy where they are over their limits. Only what fits is read or copied, so a huge file costs
  neither memory nor time. Each student gets notes; nbgrader puts back deleted, edited or retyped test cells.

Plain `nbgrader autograde` and formgrader grade submitted/ itself, so there the same repairs happen inside nbgrader:
`grade_renamed_notebooks` (its `Autograde.pre_convert_hook`) writes a renamed notebook's gradable copy beside the
student's file, and `ResolveDuplicateGradeIds` (below) applies the notebook limits and resolves duplicated cells
while sanitizing. (The file limits apply there only in `nbgrader submit`.)
"""
import contextlib
import datetime
import json
import os
import pathlib
import re
import shutil
import stat
from dataclasses import dataclass

import nbformat
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import parse_utc
from traitlets.log import get_logger

from coursetools.grading.course import Course
from coursetools.instructor.notebook_limits import (cell_count, code_chars, fit, over_a_limit, too_deep,
                                                    too_deep_note)

#: files a submission may have beside its notebooks, besides timestamp.txt; the rest are left out
MAX_FILES_BESIDE = 100

#: notebook metadata of the copy `grade_renamed_notebooks` writes: {COPY_KEY: {'graded_copy_of': file name}}
COPY_KEY = 'coursetools'

CELL_ID = re.compile('[a-zA-Z0-9_-]{1,64}')      # nbformat's own rule for a cell id; no mark depends on one

#: the notebook metadata a graded copy keeps whatever its size (a cell keeps its nbgrader part)
KEPT_METADATA = ('kernelspec', 'language_info', COPY_KEY)


def notebook_names(course, assignment):
    return sorted(p.name for p in (pathlib.Path(course) / 'source' / assignment).glob('*.ipynb'))


def regular_file(path, limit=None):
    """Whether `path` is a regular file, not a link, pipe or device (the only kind of a student's file ever read),
    of at most `limit` bytes if given."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and (limit is None or info.st_size <= limit)


def find_notebook(folder, name, expected_names, limit=None):
    """The file to grade as `name`: itself, or the only other notebook in the folder. (path, note). Only regular
    files count; one over `limit` bytes is not opened here."""
    exact = folder / name
    if regular_file(exact) and not copy_of(exact, limit):
        return exact, None
    others = sorted(p for p in folder.glob('*.ipynb') if p.name not in expected_names and regular_file(p))
    stem = pathlib.Path(name).stem
    alike = [p for p in others if p.stem.startswith(stem)]
    candidates = alike if len(alike) == 1 else others
    if len(candidates) == 1:
        return candidates[0], f'graded {candidates[0].name!r} as {name!r} (the only notebook submitted)'
    if candidates:
        return None, f'no {name!r}, and several other notebooks ({", ".join(p.name for p in candidates)}): not graded'
    return None, f'no notebook submitted (expected {name!r})'


def copy_of(path, limit=None):
    """The name of the student's notebook that `path` is the grader's copy of, if it is one and that notebook is
    still beside it; else None. Such a copy is set aside, so the student's own file is graded afresh. A file over
    `limit` bytes is not read (and is no copy: the grader copies only notebooks it could read)."""
    try:
        if limit is not None and path.stat().st_size > limit:
            return None
        raw = path.read_bytes()
        original = json.loads(raw)['metadata'][COPY_KEY]['graded_copy_of'] if b'graded_copy_of' in raw else None
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None
    if isinstance(original, str) and os.path.basename(original) == original != path.name \
            and (path.parent / original).is_file():
        return original
    return None


def read_notebook(path):
    """(notebook, notes) or (None, [reason]) for a file that cannot be read as a notebook."""
    raw = path.read_bytes()
    if not raw.strip():
        return None, [f'{path.name} is empty: not graded']
    try:
        data = json.loads(raw.decode('utf-8'))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        return None, [f'{path.name} is not a notebook (not valid JSON: {error}): not graded']
    except RecursionError:
        return None, [too_deep_note(path.name)]
    if not isinstance(data, dict) or 'cells' not in data and 'worksheets' not in data:
        return None, [f'{path.name} is JSON but not a notebook: not graded']
    too_big = too_deep(path.name, data) or over_a_limit(path.name, cell_count(data), 0)
    if too_big:
        return None, [too_big]
    missing = _fill_what_nbgrader_clears(data)
    notes = [f'added the metadata missing from {missing} place(s)'] if missing else []
    version = data.get('nbformat')
    text = json.dumps(data, ensure_ascii=False)
    try:
        text.encode('utf-8')
    except UnicodeEncodeError:          # a lone surrogate, given as an escape (\ud800): no file can hold it
        text = text.encode('utf-8', 'replace').decode('utf-8')
        notes.append('replaced characters that cannot be written (lone surrogates) with ?')
    try:
        nb = nbformat.reads(text, as_version=4)
    except Exception as error:  # nbformat raises many kinds for malformed input
        return None, [f'{path.name} could not be read as a notebook ({type(error).__name__}: {error}): not graded']
    too_big = over_a_limit(path.name, 0, code_chars(nb))
    if too_big:
        return None, [too_big]
    if version != 4:
        notes.append(f'converted from nbformat {version} to 4')
    try:
        changes, repaired = nbformat.validator.normalize(nb, strip_invalid_metadata=True)
        nb = nbformat.from_dict(repaired)
        seen = set()
        for cell in nb.cells:  # cell ids (nbformat 4.5 on) must be unique and well formed; copied cells may share one
            if 'id' not in cell:            # nbformat 4.0-4.4 has none, and must not get any
                continue
            if not (isinstance(cell.id, str) and CELL_ID.fullmatch(cell.id)) or cell.id in seen:
                cell.id = nbformat.corpus.words.generate_corpus_id()
                changes += 1
            seen.add(cell.get('id'))
        nbformat.validate(nb)
    except Exception as error:
        return None, [f'{path.name} is not a valid notebook ({type(error).__name__}: {error}): not graded']
    if changes:
        notes.append(f'repaired {changes} notebook format problem(s)')
    too_big, left_out = fit(path.name, nb, KEPT_METADATA)
    return (None, [too_big]) if too_big else (nb, notes + left_out)


def _fill_what_nbgrader_clears(data):
    """Clear the outputs and execution counts of an nbformat 4 notebook's code cells (the grader clears them and
    runs the cells again), so that their shape (an unknown output type, a count given as text) costs no notebook
    its marks, and put empty metadata where nbformat requires it. Returns how many were missing."""
    if not isinstance(data.get('cells'), list):
        return 0                    # nbformat 3 (worksheets): nbformat converts it and fills these itself
    missing = 0
    for holder in (data, *(cell for cell in data['cells'] if isinstance(cell, dict))):
        if not isinstance(holder.get('metadata'), dict):
            holder['metadata'], missing = {}, missing + 1
        if holder.get('cell_type') == 'code':
            holder['outputs'], holder['execution_count'] = [], None
    return missing


def _answered(cell, released_sources):
    return cell.source.strip() not in released_sources


def resolve_duplicate_grade_ids(nb, released_sources=frozenset()):
    """Keep one cell per grade_id; return notes. The kept copy is the last answered one, else the last one."""
    by_id = {}
    for index, cell in enumerate(nb.cells):
        grade_id = cell.metadata.get('nbgrader', {}).get('grade_id')
        if grade_id:
            by_id.setdefault(grade_id, []).append(index)
    notes = []
    for grade_id, indices in by_id.items():
        if len(indices) < 2:
            continue
        answered = [i for i in indices if _answered(nb.cells[i], released_sources)]
        keep = (answered or indices)[-1]
        for i in indices:
            if i != keep:
                nb.cells[i].metadata.pop('nbgrader', None)
                nb.cells[i].metadata.pop('editable', None)
                nb.cells[i].metadata.pop('deletable', None)
        notes.append(f'cell {grade_id!r} appeared {len(indices)} times (copied or split); graded copy {keep + 1}')
    return notes


def released_sources(course, assignment, name):
    """The sources of the released notebook's cells (read once per version of the file)."""
    path = pathlib.Path(course) / 'release' / assignment / name
    try:
        info = path.stat()
    except FileNotFoundError:
        return frozenset()
    key = (str(path), info.st_mtime_ns, info.st_size)
    if key not in _released:
        if len(_released) > 64:
            _released.clear()
        _released[key] = frozenset(cell.source.strip() for cell in nbformat.read(path, as_version=4).cells)
    return _released[key]


_released = {}


def stage(course, assignment, staging, students=None):
    """Copy every student's <assignment> folder into `staging`, repaired (or only `students`'): {student: notes}."""
    course, staging = pathlib.Path(course), pathlib.Path(staging)
    names = notebook_names(course, assignment)
    limits = size_limits(course)
    report = {}
    for stale in staging.glob(f'*/{assignment}'):       # a submission taken out of submitted/ is not graded again
        if stale.is_dir() and not (course / 'submitted' / stale.parent.name / assignment).is_dir():
            shutil.rmtree(stale)
    for student in Course(course).students(assignment):
        folder = course / 'submitted' / student / assignment
        if students is not None and student not in students:
            continue
        target = staging / student / assignment
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        notes, room = [], limits.submission
        for name in names:
            path, note = find_notebook(folder, name, names, limits.file)
            if note:
                notes.append(note)
            if path is None:
                continue
            size = path.stat().st_size
            if size > min(limits.file, room):
                notes.append(f'{path.name} is {size:,} bytes, over the {limits.describe(size, room)}: not graded')
                continue
            room -= size
            try:
                nb, read_notes = read_notebook(path)
                notes.extend(read_notes)
                if nb is None:
                    continue
                notes.extend(resolve_duplicate_grade_ids(nb, released_sources(course, assignment, name)))
                nbformat.write(nb, target / name)
            except Exception as error:      # whatever else a file can do, it stops no other student's grading
                (target / name).unlink(missing_ok=True)
                notes.append(f'{path.name} could not be staged ({type(error).__name__}: {error}): not graded')
        notes.extend(_copy_files_beside(folder, target, limits, room))
        report[student] = notes
    return report


def _copy_files_beside(folder, target, limits, room):
    """Copy the regular files beside the notebooks (timestamp.txt first, then by name) while they fit in `room`
    bytes and `limits`; notes for those left out."""
    beside = sorted((path for path in folder.iterdir() if regular_file(path) and path.suffix != '.ipynb'),
                    key=lambda path: (path.name != 'timestamp.txt', path.name))
    notes, copied = [], 0
    for number, path in enumerate(beside):
        size = path.stat().st_size
        if copied == MAX_FILES_BESIDE:
            notes.append(f'{len(beside) - number} file(s) from {path.name} on were left out: a submission may have '
                         f'{MAX_FILES_BESIDE} files beside its notebook')
            break
        if size > min(limits.file, room):
            notes.append(f'{path.name} ({size:,} bytes) was left out: over the {limits.describe(size, room)}')
            continue
        if path.name == 'timestamp.txt' and not _a_time_nbgrader_reads(path):
            notes.append('timestamp.txt holds no time nbgrader can read: left out, so no late penalty is worked out '
                         'for this submission (nbgrader had left it ungraded)')
            continue
        room -= size
        shutil.copy2(path, target / path.name)
        copied += path.name != 'timestamp.txt'
    return notes


def _a_time_nbgrader_reads(path):
    """Whether timestamp.txt holds a time nbgrader can read, or nothing (nbgrader's own 'no timestamp')."""
    text = _timestamp_text(path)
    return text == '' or _as_utc(text) is not None


def time_submitted(folder):
    """When the submission in `folder` was handed in, as nbgrader reads its timestamp.txt; None if it cannot."""
    return _as_utc(_timestamp_text(pathlib.Path(folder) / 'timestamp.txt'))


def _timestamp_text(path):
    """The stripped text of a regular timestamp.txt of at most 100 bytes; None for anything else."""
    with contextlib.suppress(OSError, UnicodeDecodeError):
        return path.read_text().strip() if regular_file(path, limit=100) else None


def _as_utc(text):
    with contextlib.suppress(ValueError, OverflowError, TypeError):
        return parse_utc(text).replace(tzinfo=datetime.timezone.utc) if text else None


@dataclass(frozen=True)
class SizeLimits:
    """Bytes a file and a whole submission may have, from the course's nbgrader settings."""
    file: int
    submission: int

    def describe(self, size, room):
        """Which limit a file of `size` bytes breaks when `room` bytes of the submission's are left."""
        if size > self.file:
            return f'{self.file:,} bytes a file may have (c.CourseDirectory.max_file_size)'
        return f'{self.submission:,} bytes a submission may have in all (c.CourseDirectory.max_dir_size)'


def size_limits(course):
    """The course's SizeLimits: nbgrader's `max_file_size` and `max_dir_size` (kilobytes of 1000 bytes, as its
    `submit` counts them)."""
    from coursetools.instructor.roster import course_config
    coursedir = CourseDirectory(config=course_config(course))
    return SizeLimits(file=coursedir.max_file_size * 1000, submission=coursedir.max_dir_size * 1000)


def grade_renamed_notebooks(course, assignment=None, student=None, notebooks=None):
    """nbgrader's `Autograde.pre_convert_hook`, bound to the course root in nbgrader_config.py.

    nbgrader grades only notebooks named as in the gradebook, so a notebook saved under another name (the only
    candidate, as `find_notebook` decides for `make grade`) gets a gradable copy under the expected name, written
    beside the student's file, which stays as it was; `notebooks`, the converter's own list, then names the copy.
    Nothing is written when every notebook has its name (`make grade` grades staged copies that do).
    """
    if not notebooks:
        return
    log = get_logger()
    folder = os.path.dirname(notebooks[0])
    try:
        _grade_renamed_notebooks(pathlib.Path(course), folder, notebooks, log)
    except Exception:
        log.warning('Could not look for renamed notebooks in %s', folder, exc_info=True)


def _grade_renamed_notebooks(course, listed_folder, notebooks, log):
    """`grade_renamed_notebooks` for the submission folder that nbgrader lists as `listed_folder`."""
    folder = pathlib.Path(listed_folder)
    names = notebook_names(course, folder.name)
    for name in names:
        target = folder / name
        path, note = find_notebook(folder, name, names)
        if path == target:
            continue
        notebooks[:] = [p for p in notebooks if os.path.basename(p) not in (name, getattr(path, 'name', None))]
        if path is None:
            if target.exists():
                log.warning('%s: %s; the copy %s that the grader wrote earlier is not graded either',
                            folder.parent.name, note, target.name)
            continue
        nb, notes = read_notebook(path)
        if nb is None:
            log.warning('%s: %s', folder.parent.name, '; '.join(notes))
            continue
        nb.metadata[COPY_KEY] = {'graded_copy_of': path.name}
        text = nbformat.writes(nb)
        if not target.exists() or target.read_text() != text:
            target.write_text(text)
        notebooks[:] = sorted(notebooks + [os.path.join(listed_folder, name)])
        shown = target.relative_to(course) if target.is_relative_to(course) else target
        log.warning('%s: %s, from a copy that the grader wrote beside it: %s (the student\'s file is unchanged)%s',
                    folder.parent.name, note, shown, ''.join(f'; {n}' for n in notes))


class NotGradable(Exception):
    """A notebook over a limit, refused by plain nbgrader's sanitize step before any of it runs."""


class ResolveDuplicateGradeIds(NbGraderPreprocessor):
    """Sanitize step: a notebook over a limit is refused (nbgrader logs why, grades the others and exits
    non-zero), and what is not graded is left out where it is over its limit, as `make grade`'s staging does; then
    one cell per grade_id, kept as `make grade` keeps it (`resolve_duplicate_grade_ids`).

    JupyterLab's copy/paste and split-cell copy a cell's grade_id. nbgrader's DeduplicateIds keeps the last copy
    even when the student answered in another one; this keeps the last answered copy, so plain nbgrader and
    formgrader grade the cell that `make grade` grades. A no-op on notebooks that `make grade` staged.
    """

    def preprocess(self, nb, resources):
        info = resources['nbgrader']
        too_big, left_out = fit(info['notebook'] + '.ipynb', nb, KEPT_METADATA)
        for note in left_out:
            self.log.warning('%s: %s', info['student'], note)
        if too_big:
            raise NotGradable(f"{info['student']}: {too_big}")
        course_root = CourseDirectory(config=self.config).root
        released = released_sources(course_root, info['assignment'], info['notebook'] + '.ipynb')
        for note in resolve_duplicate_grade_ids(nb, released):
            self.log.warning('%s: %s', info['student'], note)
        return nb, resources
