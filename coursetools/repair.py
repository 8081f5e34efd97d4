"""Make every submission gradable before nbgrader sees it, without touching the student's files.

`stage()` copies submitted/ into a staging folder that nbgrader then grades, and on the way:

* finds a notebook saved under another name (a browser's `noughts_and_crosses (1).ipynb`) when it is the only
  candidate in the folder;
* converts older nbformat versions and repairs what nbformat can repair (duplicate cell ids, stray metadata);
* resolves duplicated nbgrader cells (JupyterLab's copy/paste and split-cell copy the `grade_id`): the last copy
  that the student answered keeps the id, the others become ordinary cells, so the whole class is not stopped;
* leaves out a file that is not a notebook at all (empty, truncated JSON), so nbgrader gives that student zero,
  and says why.

Deleted, edited and retyped test cells are put back by nbgrader itself (OverwriteCells, configured in
nbgrader_config.py). Each student gets a list of notes for the report.
"""
import json
import pathlib
import shutil

import nbformat


def notebook_names(course, assignment):
    return sorted(p.name for p in (pathlib.Path(course) / 'source' / assignment).glob('*.ipynb'))


def find_notebook(folder, name, expected_names):
    """The file to grade as `name`: itself, or the only other notebook in the folder. (path, note)."""
    exact = folder / name
    if exact.exists():
        return exact, None
    others = sorted(p for p in folder.glob('*.ipynb') if p.name not in expected_names)
    stem = pathlib.Path(name).stem
    alike = [p for p in others if p.stem.startswith(stem)]
    candidates = alike if len(alike) == 1 else others
    if len(candidates) == 1:
        return candidates[0], f'graded {candidates[0].name!r} as {name!r} (the only notebook submitted)'
    if candidates:
        return None, f'no {name!r}, and several other notebooks ({", ".join(p.name for p in candidates)}): not graded'
    return None, f'no notebook submitted (expected {name!r})'


def read_notebook(path):
    """(notebook, notes) or (None, [reason]) for a file that cannot be read as a notebook."""
    raw = path.read_bytes()
    if not raw.strip():
        return None, [f'{path.name} is empty: not graded']
    try:
        data = json.loads(raw.decode('utf-8'))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        return None, [f'{path.name} is not a notebook (not valid JSON: {error}): not graded']
    if not isinstance(data, dict) or 'cells' not in data and 'worksheets' not in data:
        return None, [f'{path.name} is JSON but not a notebook: not graded']
    notes = []
    version = data.get('nbformat')
    try:
        nb = nbformat.reads(json.dumps(data), as_version=4)
    except Exception as error:  # nbformat raises many kinds for malformed input
        return None, [f'{path.name} could not be read as a notebook ({type(error).__name__}: {error}): not graded']
    if version != 4:
        notes.append(f'converted from nbformat {version} to 4')
    try:
        changes, repaired = nbformat.validator.normalize(nb, strip_invalid_metadata=True)
        nb = nbformat.from_dict(repaired)
        seen = set()
        for cell in nb.cells:  # cell ids must be unique; copied cells may share one
            if cell.get('id') in seen:
                cell.id = nbformat.corpus.words.generate_corpus_id()
                changes += 1
            seen.add(cell.get('id'))
        nbformat.validate(nb)
    except Exception as error:
        return None, [f'{path.name} is not a valid notebook ({type(error).__name__}: {error}): not graded']
    if changes:
        notes.append(f'repaired {changes} notebook format problem(s)')
    return nb, notes


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
    path = pathlib.Path(course) / 'release' / assignment / name
    if not path.exists():
        return frozenset()
    return frozenset(cell.source.strip() for cell in nbformat.read(path, as_version=4).cells)


def stage(course, assignment, staging):
    """Copy submitted/*/<assignment>/ into `staging`, repaired; return {student: notes} for every student."""
    course, staging = pathlib.Path(course), pathlib.Path(staging)
    names = notebook_names(course, assignment)
    report = {}
    for student_folder in sorted((course / 'submitted').iterdir()):
        folder = student_folder / assignment
        if not folder.is_dir():
            continue
        target = staging / student_folder.name / assignment
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        notes = []
        for path in folder.iterdir():
            if path.is_file() and not path.is_symlink() and path.suffix != '.ipynb':
                shutil.copy2(path, target / path.name)
        for name in names:
            path, note = find_notebook(folder, name, names)
            if note:
                notes.append(note)
            if path is None:
                continue
            nb, read_notes = read_notebook(path)
            notes.extend(read_notes)
            if nb is None:
                continue
            notes.extend(resolve_duplicate_grade_ids(nb, released_sources(course, assignment, name)))
            nbformat.write(nb, target / name)
        report[student_folder.name] = notes
    return report
