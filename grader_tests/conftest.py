"""Shared fixtures: the course folder, copies of it to grade in, and the reference functions."""
import os
import pathlib
import shutil
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = pathlib.Path(__file__).resolve().parent.parent

# The sandbox tests fail, not skip, when the sandbox cannot start: `make test` installs bubblewrap, so a
# sandbox that does not start is a defect. On a machine without user namespaces, opt out explicitly.
needs_sandbox = pytest.mark.skipif(os.environ.get('COURSE_TESTS_WITHOUT_SANDBOX') == '1',
                                   reason='COURSE_TESTS_WITHOUT_SANDBOX=1: the sandbox cannot run on this machine')
COURSE_FILES = ('source', 'release', 'demo_class', 'exchange', 'nbgrader_config.py')


def pytest_report_header(config):
    import nbconvert
    import nbgrader
    return f'course tested with nbgrader {nbgrader.__version__}, nbconvert {nbconvert.__version__}'


def copy_course(destination, students=None):
    """A copy of the course (source, release, config) with the demo class built in submitted/ (only `students`,
    if given), as `make grade` builds it on a fresh clone; no grading outputs."""
    from coursetools.instructor import democlass
    destination = pathlib.Path(destination)
    destination.mkdir(parents=True, exist_ok=True)
    for name in COURSE_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, destination / name, ignore=shutil.ignore_patterns('__pycache__',
                                                                                      '.ipynb_checkpoints'))
        else:
            shutil.copy2(source, destination / name)
    from coursetools.grading.course import Course
    Course(destination).copy_widget_beside_notebooks()
    democlass.build_class(destination, students=students)
    return destination


@pytest.fixture(scope='module', autouse=True)
def no_checker_server_outlives_its_module():
    """Executors made in this process share a checker server per assignment; a module's tests stop theirs."""
    yield
    from coursetools.judge.checker_host import CheckerServer
    CheckerServer.close_shared()


# `make test` runs the modules in parallel (pytest-xdist, --dist loadscope): a module's tests stay on one worker,
# so that its module fixtures are made once; a session fixture two modules share is made once for all the test
# processes (`made_once`).


def made_once(tmp_path_factory, name, make):
    """`make(folder)` run by the first test process that asks, under a lock; the others wait and reuse the folder.
    Returns (folder, what make returned, read back from a file beside it)."""
    import fcntl
    import json
    shared = tmp_path_factory.getbasetemp().parent if os.environ.get('PYTEST_XDIST_WORKER') else \
        tmp_path_factory.getbasetemp()
    folder, result = shared / name, shared / f'{name}.json'
    with open(shared / f'{name}.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not result.exists():
            folder.mkdir()
            result.write_text(json.dumps(make(folder)))
    return folder, json.loads(result.read_text())


@pytest.fixture(scope='session', autouse=True)
def widget_beside_the_source_notebooks():
    """source/<assignment>/minimax_widget/ is made (by `make release`, `make grade`, here), never committed; one
    test process at a time makes it (the others wait for it)."""
    import fcntl
    from coursetools.grading.course import Course
    with open(ROOT / '.widget-copy.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        Course(ROOT).copy_widget_beside_notebooks()


def descendants(pid=None) -> set:
    """Pids of the processes below `pid` (this test process by default): what a test started, not what another
    test process (pytest-xdist runs several) did."""
    parents = {}
    for entry in os.listdir('/proc'):
        try:
            stat = open(f'/proc/{entry}/stat').read()
            parents[int(entry)] = int(stat[stat.rindex(')') + 2:].split()[1])
        except (OSError, ValueError):
            continue
    found, more = set(), {pid or os.getpid()}
    while more:
        more = {child for child, parent in parents.items() if parent in more} - found
        found |= more
    return found


def grade_env(course):
    """The environment `make grade` runs in for a course copy: its own folder, this venv first on PATH."""
    env = dict(os.environ, COURSE_ROOT=str(course))
    env['PATH'] = os.path.join(sys.prefix, 'bin') + os.pathsep + env.get('PATH', '')
    return env


def run_grade(course, *args):
    """`python -m coursetools.instructor.grade` on a course copy, as `make grade` runs it; returns the completed process."""
    return subprocess.run([sys.executable, '-m', 'coursetools.instructor.grade', *args], cwd=course,
                          env=grade_env(course), capture_output=True, text=True)


def processes_marked(marker):
    """[(pid, command line)] of the processes on this machine whose command line holds `marker`."""
    found = []
    for entry in pathlib.Path('/proc').iterdir():
        try:
            if entry.name.isdigit() and marker in (line := (entry / 'cmdline').read_bytes().decode(errors='replace')):
                found.append((int(entry.name), line))
        except OSError:
            pass
    return found


def run_all(source_folder, notebook, workdir):
    """Restart & Run All of a copy of `source_folder/notebook` in `workdir`; returns (notebook, error outputs)."""
    shutil.copytree(source_folder, workdir)
    nb = nbformat.read(pathlib.Path(workdir) / notebook, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name='python3', resources={'metadata': {'path': str(workdir)}}).execute()
    errors = [(cell.id, output.ename, output.evalue) for cell in nb.cells if cell.cell_type == 'code'
              for output in cell.outputs if output.output_type == 'error']
    return nb, errors


def failed_test_cells(folder, notebook, printed=None):
    """{grade_id: error message} of the test cells that fail when the student runs `folder/notebook` top to bottom
    (Restart & Run All), in a plain kernel. `printed`: a dict that receives {grade_id: what the cell printed}."""
    nb = nbformat.read(pathlib.Path(folder) / notebook, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name='python3', allow_errors=True,
                   resources={'metadata': {'path': str(folder)}}).execute()
    if printed is not None:
        printed.update({cell.metadata['nbgrader']['grade_id']: ''.join(
            output.text for output in cell.get('outputs', []) if output.output_type == 'stream')
            for cell in nb.cells if cell.metadata.get('nbgrader', {}).get('grade')})
    return {cell.metadata['nbgrader']['grade_id']: output.evalue for cell in nb.cells
            if cell.metadata.get('nbgrader', {}).get('grade') for output in cell.get('outputs', [])
            if output.output_type == 'error'}


def solution_functions(assignment='noughts_and_crosses'):
    """The reference solutions: the source notebook's read-only and solution cells, run in a fresh namespace."""
    nb = nbformat.read(ROOT / 'source' / assignment / f'{assignment}.ipynb', as_version=4)
    namespace = {'__name__': '__reference__'}
    for cell in nb.cells:
        meta = cell.metadata.get('nbgrader', {})
        if cell.cell_type == 'code' and not meta.get('grade') and (meta.get('solution') or meta.get('locked')):
            if 'import' in cell.source and 'minimax_widget' in cell.source:
                continue
            exec(compile(cell.source, f'<{meta.get("grade_id")}>', 'exec'), namespace)
    return namespace


@pytest.fixture(scope='session')
def reference():
    return solution_functions()


@pytest.fixture(scope='session')
def graded_class(tmp_path_factory):
    """The whole demo class graded once by `make grade`'s code path, as on a fresh clone (no submitted/: `make
    grade` builds the demo class itself), in a copy of the course (once for every test process): (course
    folder, the run's returncode, stdout and stderr)."""
    def grade(folder):
        course = copy_course(folder / 'course', students=[])
        shutil.rmtree(course / 'submitted')
        (course / 'roster.csv').unlink(missing_ok=True)
        result = run_grade(course)
        return {'returncode': result.returncode, 'stdout': result.stdout, 'stderr': result.stderr}

    folder, result = made_once(tmp_path_factory, 'graded-demo-class', grade)
    result = subprocess.CompletedProcess([], result['returncode'], result['stdout'], result['stderr'])
    assert result.returncode == 0, result.stdout + result.stderr
    return folder / 'course', result


# The longest modules first, so that no long one starts last and runs on alone (`make test` passes
# --no-loadscope-reorder, which keeps this order); test_demo_class first, as it grades the shared class that
# others wait for.
LONGEST_FIRST = ('test_demo_class', 'test_hostile', 'test_trust', 'test_evidence', 'test_nbgrader_tools',
                 'test_contract', 'test_fairness', 'test_cluster', 'test_stubs', 'test_corpus', 'test_one_mark',
                 'test_execute', 'test_namespaces', 'test_stopping', 'test_service', 'test_varied_class')


def pytest_collection_modifyitems(items):
    rank = {name: number for number, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.module.__name__, len(rank)))
