"""Build the bundled demo class in submitted/ from the made-up students' answers in demo_class/.

submitted/ is where real students' work goes, so it is never committed: `make grade` builds the demo class there
when it finds submitted/ empty (a fresh clone), and leaves real submissions alone.

Each student is one Python file, demo_class/<assignment>/<student>.py, split into sections by lines
`# %% <grade_id>`; each section replaces the released solution cell with that grade_id, as if the student had
typed it there. The release's other files (the widget module) are submitted alongside, as students do. Lines before the first section (imports, say) go at the top of the first answered cell. Cells the
student did not answer keep the released stub. `python -m coursetools.instructor.democlass` (`make demo-class`) builds it;
`--remove` (`make demo-class-remove`) takes it out of a course again (`remove_class`).
"""
import pathlib
import re
import shutil

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


def demo_submissions(root):
    """{(student, assignment): the notebook the demo class builds for them}."""
    root = pathlib.Path(root)
    found = {}
    for answer_file in sorted((root / 'demo_class').glob('*/*.py')):
        assignment = answer_file.parent.name
        release = root / 'release' / assignment / f'{assignment}.ipynb'
        found[answer_file.stem, assignment] = fill(nbformat.read(release, as_version=4), *read_answers(answer_file))
    return found


def _as_built(path, notebook):
    """Whether the file at `path` is still the demo notebook as it was built: anything else, a file that cannot
    be read included, is a real student's work."""
    from coursetools.instructor.repair import regular_file
    if not regular_file(path):
        return False
    try:
        return nbformat.read(path, as_version=4) == notebook
    except Exception:       # not JSON, not a notebook, nested past what Python's reader follows
        return False


def remove_class(root='.', db_url=None):
    """Remove the demo class from a course: each demo submission still as the demo class built it (a real
    student who shares a demo name, with work of their own, is kept), its grading outputs and its gradebook
    rows, the demo students left with no submission, and the demo roster. Returns (removed, kept) as lists of
    'student/assignment'."""
    from nbgrader.api import Gradebook, MissingEntry
    root = pathlib.Path(root)
    removed, kept = [], []
    with Gradebook(db_url or f'sqlite:///{root / "gradebook.db"}') as gradebook:
        for (student, assignment), notebook in demo_submissions(root).items():
            submitted = root / 'submitted' / student / assignment / f'{assignment}.ipynb'
            if not submitted.exists():
                continue
            if not _as_built(submitted, notebook):
                kept.append(f'{student}/{assignment}')
                continue
            for outputs in ('submitted', 'autograded', 'feedback', '.grading/submitted'):
                shutil.rmtree(root / outputs / student / assignment, ignore_errors=True)
            try:
                gradebook.remove_submission(assignment, student)
            except MissingEntry:
                pass
            removed.append(f'{student}/{assignment}')
        for student in sorted({entry.split('/')[0] for entry in removed}):
            for outputs in ('submitted', 'autograded', 'feedback', '.grading/submitted'):
                folder = root / outputs / student
                if folder.is_dir() and not any(folder.iterdir()):
                    folder.rmdir()
            try:
                if not gradebook.find_student(student).submissions:
                    gradebook.remove_student(student)
            except MissingEntry:
                pass
    roster, demo = root / 'roster.csv', root / 'demo_class' / 'roster.csv'
    if roster.exists() and demo.exists() and roster.read_bytes() == demo.read_bytes():
        roster.unlink()
    return removed, kept


def main(argv=None):
    import argparse
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('root', nargs='?', default='.', help='the course folder (default: the current one)')
    parser.add_argument('--remove', action='store_true', help='remove the demo class instead (make demo-class-remove)')
    args = parser.parse_args(argv)
    if not args.remove:
        for folder in build_class(args.root):
            print('wrote', folder)
        return
    removed, kept = remove_class(args.root)
    print(f'Removed the demo class: {len(removed)} submissions (their submitted, autograded and feedback folders and '
          'gradebook rows), the demo students left without any, and the demo roster.')
    if kept:
        print(f'Kept, as they are not the demo class\'s work: {", ".join(kept)}')
    print('Run `make grade` again to rewrite grades.csv, the LMS files and the reports without them.')


if __name__ == '__main__':
    main()
