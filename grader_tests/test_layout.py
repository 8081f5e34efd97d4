"""The package's layout is its architecture: one folder per job, imports pointing one way down the stack, and
the code a sandbox runs importing nothing of the trusted side. Checked from the sources (every import, at the
top or inside a function) and by importing in a fresh interpreter."""
import ast
import json
import subprocess
import sys

from conftest import ROOT

PACKAGE = ROOT / 'coursetools'
KERNEL_OWN = {'IPython', 'ipykernel'}          # what every Jupyter kernel already runs
# What each folder may import of the course, besides itself: the stack, top to bottom.
MAY_IMPORT = {
    # the grading service (`make serve`) on top: it grades with the instructor's engine, and nothing imports it
    'service': {'instructor', 'grading', 'judge', 'checks', 'sandbox', 'game', 'widget'},
    'instructor': {'grading', 'judge', 'checks', 'sandbox', 'game', 'widget'},
    'grading': {'judge', 'checks', 'sandbox', 'game', 'widget'},   # widget: only to copy it beside notebooks
    'checks': {'judge', 'sandbox', 'game'},
    'judge': {'sandbox'},
    'sandbox': set(),
    'game': set(),
    'widget': set(),                              # it ships to students as minimax_widget/: course-free
}


def imports(path):
    """Every module a file imports, at its top or inside a function (relative imports made absolute)."""
    package = '.'.join(path.relative_to(ROOT).parent.parts)
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ''
            if node.level:
                base = package.split('.')[:len(package.split('.')) - node.level + 1]
                module = '.'.join(base + ([module] if module else []))
            found.add(module)
            found.update(f'{module}.{alias.name}' for alias in node.names)
    return found


def course_modules():
    return {'.'.join(path.relative_to(ROOT).with_suffix('').parts).removesuffix('.__init__'): path
            for path in PACKAGE.rglob('*.py') if '__pycache__' not in path.parts}


def folder(module):
    parts = module.split('.')
    return parts[1] if len(parts) > 1 else None


def test_every_module_lives_in_a_folder_that_says_what_it_owns():
    top = sorted(p.name for p in PACKAGE.glob('*.py'))
    assert top == ['__init__.py'], top
    folders = sorted(p.name for p in PACKAGE.iterdir() if (p / '__init__.py').is_file())
    assert folders == sorted(MAY_IMPORT), folders
    for name in folders:
        docstring = ast.get_docstring(ast.parse((PACKAGE / name / '__init__.py').read_text()))
        assert docstring and len(docstring) > 80, f'{name}/__init__.py needs a docstring saying what it owns'


def test_imports_point_one_way_down_the_stack():
    wrong = []
    for name, path in course_modules().items():
        here = folder(name)
        for module in imports(path):
            there = folder(module) if module.startswith('coursetools.') else None
            if here and there and there != here and there not in MAY_IMPORT[here]:
                wrong.append(f'{name} imports {module}')
    assert wrong == []


def test_the_code_a_sandbox_runs_imports_only_the_standard_library_and_ipython():
    """sandbox/inside/ runs in the student's sandbox: nothing of the host side, nothing trusted, no third party."""
    found = list((PACKAGE / 'sandbox' / 'inside').glob('*.py'))
    assert {p.name for p in found} >= {'launcher.py', 'kernel_agent.py'}
    for path in found:
        outside = {module for module in imports(path) if module and not module.startswith('coursetools.sandbox.inside')
                   and module.split('.')[0] not in sys.stdlib_module_names | KERNEL_OWN}
        assert outside == set(), (path.name, outside)


def test_the_host_side_of_the_sandbox_imports_only_the_standard_library():
    """sandbox/host/ is the grading process's side: the standard library, and the inside's files to bind them."""
    for path in (PACKAGE / 'sandbox' / 'host').glob('*.py'):
        outside = {module for module in imports(path) if module and not module.startswith('coursetools.sandbox')
                   and module.split('.')[0] not in sys.stdlib_module_names}
        assert outside == set(), (path.name, outside)


def test_only_the_host_side_of_the_sandbox_touches_a_sandbox_folder():
    """The grading process's operations on a sandbox's files live in sandbox/host/files.py: no other module of the
    package makes a kernel's folder, chowns for a sandbox, or names the sockets folder."""
    owners = {'files.py'}
    for path in PACKAGE.rglob('*.py'):
        text = path.read_text()
        if path.name in owners or 'tests' in path.parts:
            continue
        for sign in ('os.fchown(', 'os.chown(', 'os.lchown(', "'sockets'", 'KernelFolder('):
            assert sign not in text or path.parts[-3:-1] == ('sandbox', 'inside') or \
                (sign == 'os.chown(' and path.name == 'checker_host.py'), (path.name, sign)


def loaded_by(*modules):
    """The course modules a fresh interpreter holds after importing `modules`."""
    code = ('import importlib, json, sys\n'
            f'for name in {list(modules)!r}: importlib.import_module(name)\n'
            'print(json.dumps(sorted(m for m in sys.modules if m.startswith("coursetools"))))')
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, cwd=ROOT, check=True)
    return set(json.loads(result.stdout.splitlines()[-1]))


def test_importing_the_sandbox_loads_nothing_trusted():
    sandbox = [m for m in course_modules() if folder(m) == 'sandbox']
    assert {folder(m) for m in loaded_by(*sandbox)} <= {None, 'sandbox'}


def test_importing_the_checks_loads_nothing_of_the_grading_run():
    checks = [m for m in course_modules() if folder(m) == 'checks']
    assert {folder(m) for m in loaded_by(*checks)} <= {None, 'checks', 'judge', 'sandbox', 'game'}


def test_no_import_circle_in_the_course_package():
    modules = course_modules()
    graph = {name: {module for module in imports(path) if module in modules and module != name}
             for name, path in modules.items()}
    state = {}

    def visit(name, trail):
        if state.get(name) == 'done':
            return
        assert state.get(name) != 'open', ' -> '.join(trail + [name])
        state[name] = 'open'
        for other in sorted(graph[name]):
            visit(other, trail + [name])
        state[name] = 'done'

    for name in sorted(graph):
        visit(name, [])


def test_no_name_is_used_that_is_not_defined():
    """A moved function leaves no caller behind (pyflakes' undefined names over the whole package)."""
    import pyflakes.api
    import pyflakes.messages
    import pyflakes.reporter

    class Collect(pyflakes.reporter.Reporter):
        def __init__(self):
            super().__init__(None, None)
            self.found = []

        def flake(self, message):
            if isinstance(message, (pyflakes.messages.UndefinedName, pyflakes.messages.UndefinedExport,
                                    pyflakes.messages.UndefinedLocal)):
                self.found.append(str(message))

        def unexpectedError(self, filename, message):
            self.found.append(f'{filename}: {message}')

        def syntaxError(self, filename, message, *rest):
            self.found.append(f'{filename}: {message}')

    reporter = Collect()
    pyflakes.api.checkRecursive([str(PACKAGE)], reporter)
    assert reporter.found == []


ENGINE = ('grading', 'judge', 'sandbox', 'game')   # the grading engine: all but checks/, widget/, instructor/
MODULE_LINES = 400
# 4,500 until issue 42 put each test cell's calls in a child of the kernel (sandbox/inside/cell_fork, about 110 lines)
# and issue 43 added the one mark every output reads (grading/mark, 39 lines); both offset in part by trimming.
# 4,600 until issue 42's sixth pass forked `make grade`'s kernels from a warm zygote (sandbox/*/zygote.py, about
# 240 lines), which saves 6 of the varied class's 88 CPU-s (docs/parallel.md)
ENGINE_CODE_LINES = 4900


def code_lines(source):
    """Lines of code as cloc counts Python: no blank lines, comments or docstrings."""
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, 'body', None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            docstrings.update(range(body[0].lineno, body[0].end_lineno + 1))
    return sum(1 for number, line in enumerate(source.splitlines(), 1)
               if line.strip() and not line.strip().startswith('#') and number not in docstrings)


def test_code_lines_are_counted_as_cloc_counts_them():
    source = '"""Module\ndocstring."""\n\n# a comment\nimport os\n\n\ndef f():\n    """One."""\n    return 1  # two\n'
    assert code_lines(source) == 3


def test_no_module_is_over_400_lines():
    long = {name: n for name, path in course_modules().items()
            if (n := len(path.read_text().splitlines())) > MODULE_LINES}
    assert long == {}


def test_the_grading_engine_stays_small_enough_to_hold_in_mind():
    lines = {name: code_lines(path.read_text()) for name, path in course_modules().items() if folder(name) in ENGINE}
    print(f'engine: {sum(lines.values())} lines of code in {len(lines)} modules')
    assert sum(lines.values()) <= ENGINE_CODE_LINES, sorted(lines.items(), key=lambda item: -item[1])[:10]


def test_no_merge_left_half_done():
    """No file in git keeps a merge's conflict markers (one stood in docs/architecture.md once)."""
    listed = subprocess.run(['git', 'grep', '-l', '-E', '^(<<<<<<< |>>>>>>> )', '--', '.'], cwd=ROOT,
                            capture_output=True, text=True)
    assert listed.returncode in (0, 1), listed.stderr
    assert listed.stdout == ''
