"""The package's one boundary, checked from its sources: the code a sandbox runs imports nothing of the course
(nor anything but the standard library and the kernel's own IPython), and no module of the course imports itself
back through others."""
import ast
import sys

from conftest import ROOT

PACKAGE = ROOT / 'coursetools'
IN_THE_SANDBOX = ('kernel_agent.py', 'forkserver_inside.py')
KERNEL_OWN = {'IPython', 'ipykernel'}          # what every Jupyter kernel already runs


def imports(path):
    """Every module a file imports, at its top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f'{node.module}.{alias.name}' for alias in node.names)
    return found


def course_module(path):
    return '.'.join(path.relative_to(ROOT).with_suffix('').parts).removesuffix('.__init__')


def test_the_code_a_sandbox_runs_imports_only_the_standard_library():
    for name in IN_THE_SANDBOX:
        outside = {module for module in imports(PACKAGE / name)
                   if module.split('.')[0] not in sys.stdlib_module_names | KERNEL_OWN}
        assert outside == set(), (name, outside)


def test_no_import_circle_in_the_course_package():
    modules = {course_module(path): path for path in PACKAGE.rglob('*.py') if '__pycache__' not in path.parts}
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
