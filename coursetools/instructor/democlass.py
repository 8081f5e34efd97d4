"""Build the bundled demo class in submitted/ from the made-up students' answers in demo_class/.

submitted/ is where real students' work goes, so it is never committed: `make grade` builds the demo class there
when it finds submitted/ empty (a fresh clone), and leaves real submissions alone.

Each student is one Python file, demo_class/<assignment>/<student>.py, split into sections by lines
`# %% <grade_id>`; each section replaces the released solution cell with that grade_id, as if the student had
typed it there. The release's other files (the widget module) are submitted alongside, as students do. Lines before the first section (imports, say) go at the top of the first answered cell. Cells the
student did not answer keep the released stub. `python -m coursetools.instructor.democlass` (`make demo-class`) builds it.
"""
import pathlib
import re
import shutil
import sys

import nbformat

SECTION = re.compile(r'^# %% (\S+)\s*$', re.MULTILINE)
TIMESTAMP = '2026-11-20 17:00:00.000000 UTC'


def read_answers(path):
    """(preamble, {grade_id: source}) from one student's answer file."""
    text = pathlib.Path(path).read_text()
    parts = SECTION.split(text)
    preamble = '\n'.join(line for line in parts[0].splitlines() if not line.startswith('#')).strip()
    answers = {grade_id: source.strip('\n') for grade_id, source in zip(parts[1::2], parts[2::2])}
    return preamble, answers


def fill(release_notebook, preamble, answers):
    """A copy of the released notebook with the student's answers in its solution cells."""
    nb = nbformat.from_dict(release_notebook)
    unknown = set(answers) - {cell.metadata.get('nbgrader', {}).get('grade_id') for cell in nb.cells}
    if unknown:
        raise ValueError(f'answers for cells that are not in the notebook: {sorted(unknown)}')
    for cell in nb.cells:
        grade_id = cell.metadata.get('nbgrader', {}).get('grade_id')
        if cell.metadata.get('nbgrader', {}).get('solution') and grade_id in answers:
            cell.source = answers[grade_id]
            if preamble:
                cell.source = preamble + '\n\n\n' + cell.source
                preamble = ''
    return nb


def build_class(root='.', students=None):
    """Write submitted/<student>/<assignment>/ for every answer file under demo_class/ (only `students`, if
    given)."""
    root = pathlib.Path(root)
    written = []
    (root / 'submitted').mkdir(exist_ok=True)
    for answer_file in sorted((root / 'demo_class').glob('*/*.py')):
        assignment, student = answer_file.parent.name, answer_file.stem
        if students is not None and student not in students:
            continue
        release = root / 'release' / assignment / f'{assignment}.ipynb'
        nb = fill(nbformat.read(release, as_version=4), *read_answers(answer_file))
        folder = root / 'submitted' / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, folder / f'{assignment}.ipynb')
        for extra in release.parent.iterdir():  # students download the whole release folder
            if extra.is_dir() and extra.name != '__pycache__':
                shutil.copytree(extra, folder / extra.name, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns('__pycache__'))
            elif extra.is_file() and extra.suffix != '.ipynb':
                shutil.copy(extra, folder / extra.name)
        (folder / 'timestamp.txt').write_text(TIMESTAMP + '\n')
        written.append(folder)
    copy_roster(root)
    return written


def copy_roster(root):
    """The demo class's made-up roster (names, LMS ids, an extension) as the course's roster.csv, unless the
    course has one already (a real roster is never overwritten)."""
    demo, roster = root / 'demo_class' / 'roster.csv', root / 'roster.csv'
    if demo.exists() and not roster.exists():
        shutil.copy(demo, roster)


def has_submissions(root='.'):
    """Whether submitted/ holds any student's folder."""
    submitted = pathlib.Path(root) / 'submitted'
    return submitted.is_dir() and any(p.is_dir() for p in submitted.iterdir())


if __name__ == '__main__':
    for folder in build_class(sys.argv[1] if len(sys.argv) > 1 else '.'):
        print('wrote', folder)
