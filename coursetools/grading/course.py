"""Facts about the course folder, in one place: where it is, its gradebook, its assignments, where submissions
and grading outputs go, and the errors a grading run writes into notebooks when a student needs attention."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

#: error outputs the executor writes that mean a student needs attention (the report lists them)
ATTENTION_ERRORS = {'CellTimeoutError': 'timeout', 'KernelDied': 'kernel death',
                    'GraderChannelError': 'a message the grader could not read (the kernel was stopped)',
                    'CheckerLimitError': 'checks stopped at their CPU limit'}

CONFIG = 'nbgrader_config.py'


def hand_marked(grade) -> str | None:
    """For a gradebook grade (nbgrader's `Grade`) that no person has marked: 'waiting' when only a person can mark it
    (a written answer that was answered), 'unanswered' for a written answer handed in as released (nbgrader scores it
    0 itself); None otherwise."""
    if grade.manual_score is not None:
        return None
    if grade.auto_score is None:
        return 'waiting'
    return 'unanswered' if grade.cell.cell_type == 'markdown' else None


def task_of(grade_id: str) -> str:
    """The task a test cell checks: a test cell's grade_id is `<function>-<check>` (`score_end-diagonals`), and
    the task is the function the student writes in the solution cell of that name."""
    return grade_id.split('-', 1)[0]


class NotACourse(SystemExit):
    """The folder is not a course folder."""


@dataclass(frozen=True)
class Course:
    root: Path

    @classmethod
    def at(cls, folder=None) -> 'Course':
        """The course in `folder`, else in $COURSE_ROOT, else in the current folder."""
        root = Path(folder or os.environ.get('COURSE_ROOT') or os.getcwd()).resolve()
        if not (root / CONFIG).is_file() or not (root / 'source').is_dir():
            raise NotACourse(f'{root} is not a course folder (it needs {CONFIG} and source/): run this in the '
                             'course folder, or name it with --course.')
        return cls(root)

    @property
    def db_url(self) -> str:
        return f'sqlite:///{self.root / "gradebook.db"}'

    @property
    def submitted(self) -> Path:
        return self.root / 'submitted'

    @property
    def staging(self) -> Path:
        """Repaired copies of the submissions, which nbgrader grades (coursetools.instructor.repair)."""
        return self.root / '.grading' / 'submitted'

    @property
    def autograded(self) -> Path:
        return self.root / 'autograded'

    def graded_students(self, assignment) -> list:
        """Students with an autograded folder for `assignment` (the ones generate_feedback converts)."""
        return _students_in(self.autograded, assignment)

    @property
    def reports(self) -> Path:
        return self.root / 'reports'

    def assignments(self) -> list:
        """Every assignment in source/ (a folder holding a notebook of its own name)."""
        return sorted(p.name for p in (self.root / 'source').iterdir() if (p / f'{p.name}.ipynb').is_file())

    def copy_widget_beside_notebooks(self) -> None:
        """source/<assignment>/minimax_widget/: a copy of the widget package (coursetools/widget/, its one place
        in git), which nbgrader's release then ships beside the student's notebook. Made, never committed."""
        import shutil
        package = Path(__file__).resolve().parent.parent / 'widget'       # its files, without importing ipywidgets
        wanted = _package_files(package)
        for assignment in self.assignments():
            target = self.root / 'source' / assignment / 'minimax_widget'
            if target.is_dir() and _package_files(target) == wanted:
                continue                    # already the widget's copy: nothing is removed under a reader
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(package, target, ignore=shutil.ignore_patterns('__pycache__', '*.pyc'))

    def students(self, assignment) -> list:
        """Students with a submission folder for `assignment` in submitted/ (named as a student id can be)."""
        return [name for name in _students_in(self.submitted, assignment) if is_student_id(name)]

    def not_students(self, assignment) -> list:
        """Folders of submitted/ holding `assignment` whose names no student id has: not graded."""
        return [name for name in _students_in(self.submitted, assignment) if not is_student_id(name)]

    def foreign_package(self):
        """The checkout that the imported `coursetools` comes from, when this course folder has a `coursetools`
        package of its own and it is not that one (a venv installed in another copy of the course); else None."""
        import coursetools
        imported = Path(coursetools.__file__).resolve().parent
        own = self.root / 'coursetools'
        return imported.parent if (own / '__init__.py').is_file() and own.resolve() != imported else None


#: modules of coursetools/checks that serve every assignment's checks rather than being one assignment's
CHECKS_HELPERS = {'calls', 'isolation', 'references', 'positions', 'boards'}


def _package_files(folder: Path) -> dict:
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob('*'))
            if p.is_file() and '__pycache__' not in p.parts and p.suffix != '.pyc'}


def checks_modules(assignment) -> list:
    """The checks module of `assignment` (`coursetools.checks.<assignment>`), for the checker to warm up; every
    assignment's when none has that name. An assignment's module is any in coursetools/checks except the helpers
    (`CHECKS_HELPERS`) and names starting with an underscore."""
    import pkgutil
    import coursetools.checks
    names = [m.name for m in pkgutil.iter_modules(coursetools.checks.__path__)
             if m.name not in CHECKS_HELPERS and not m.name.startswith('_')]
    return [f'coursetools.checks.{name}' for name in ([assignment] if assignment in names else names)]


STUDENT_ID_RULE = 'a student id holds no control character and none of < > " ` \\'


def is_student_id(name) -> bool:
    """Whether a folder's name can be a student id: no id holds a control character (a line break stops nbgrader
    for the whole class: its pattern for a submission's path does not match it) or markup (formgrader's pages show
    an id as it is: `<img onerror=...>` would run in the instructor's browser)."""
    return re.search(r'[\x00-\x1f\x7f-\x9f<>"`\\]', name) is None


def _students_in(folder: Path, assignment) -> list:
    """The student folders in `folder` (submitted/, autograded/) that hold `assignment`."""
    return sorted(p.name for p in folder.iterdir() if (p / assignment).is_dir()) if folder.is_dir() else []
