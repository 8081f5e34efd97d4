"""What the trusted checker decides from the instructor's cells before any test cell runs: which locked cells the
test cells need, which function each test cell tests, the order the test cells run in, and the tables of correct
answers a kernel may be given (values, never code). Pure functions of the gradebook's sources and the checks
modules; nothing here sees a student's answer."""
import ast
import base64
import importlib
import json
import zlib


def parse(source):
    """`ast.parse`, once more on CPython 3.11's spurious SystemError ("AST constructor recursion depth
    mismatch", python/cpython#106905: a count shared by the threads of a process, as the grading process's)."""
    try:
        return ast.parse(source)
    except SystemError:
        return ast.parse(source)


# --- which locked cells the test cells need ------------------------------------------------------------------

def defined_names(source):
    """Top-level names a cell binds (def, class, assignment, import)."""
    names = set()
    for node in parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split('.')[0] for alias in node.names)
    return names


def used_names(source):
    return {node.id for node in ast.walk(parse(source)) if isinstance(node, ast.Name)}


def function_names(source):
    return {node.name for node in parse(source).body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


# --- the order test cells run in, and what the kernel may be given -------------------------------------------

def tested_function(source):
    """The function a test cell tests: the `testing=` of its `isolate(...)` call, or None."""
    for node in ast.walk(parse(source)):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg == 'testing' and isinstance(keyword.value, ast.Constant):
                    return keyword.value.value
    return None


def _needs(source, function):
    """The graded functions whose correct answers the kernel is given while `function` is tested."""
    needed = set()
    for node in ast.walk(parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module == 'coursetools.checks':
            for alias in node.names:
                module = importlib.import_module(f'coursetools.checks.{alias.name}')
                needed.update(getattr(module, 'KERNEL_CONTEXT', {}).get(function, {}).get('replace', ()))
    return needed


def order_of_tests(tests, graded):
    """The test cells' grade ids in the order they are run: the order of the assignment as released, except that
    a cell whose tests give the kernel answers of graded functions waits until every cell that gives none has
    run, and until the cells testing those functions have: answers the kernel was given (and may keep) never
    help a function that has not been judged yet, the integration task included."""
    function = {cell: tested_function(source) for cell, source in tests.items()}
    gives = {cell: _needs(source, function[cell]) & set(graded) if function[cell] else set()
             for cell, source in tests.items()}
    plain = [cell for cell in tests if not gives[cell]]
    waits_for = {cell: set(plain) | {other for other in tests if function[other] in gives[cell] and other != cell}
                 if gives[cell] else set() for cell in tests}
    order, waiting = [], []
    for cell in plain + [cell for cell in tests if gives[cell]]:
        waiting.append(cell)
        ready = next((pending for pending in waiting if waits_for[pending] <= set(order)), None)
        while ready is not None:
            order.append(ready)
            waiting.remove(ready)
            ready = next((pending for pending in waiting if waits_for[pending] <= set(order)), None)
    return order + waiting


_TABLES = {}            # (reference, arguments) -> a table as sent, computed once per checker process


def answer_table(reference, arguments):
    """A table of correct answers as the kernel is sent it: {the kernel agent's key of a call: JSON text of the
    correct answer} for each argument tuple `arguments()` gives, computed by `reference`, as JSON text compressed
    and in base64 (`kernel_agent.read_table` reads it): a tenth of the bytes to pass on and check for each kernel."""
    if (reference, arguments) not in _TABLES:
        from coursetools.sandbox.inside import kernel_agent
        text = json.JSONEncoder(separators=(',', ':')).encode         # one encoder for the whole table
        table = {kernel_agent.table_key(args): text(kernel_agent.encode(reference(*args), [kernel_agent.MAX_NODES]))
                 for args in arguments()}
        _TABLES[reference, arguments] = base64.b64encode(zlib.compress(text(table).encode(), 6)).decode('ascii')
    return _TABLES[reference, arguments]


def needed_tables(payload, given):
    """The tables a kernel's reply says it lacks, of those the request gives it."""
    text = payload.get('text') if 'gone' not in payload else None
    if not isinstance(text, str) or not text.startswith('{"need_tables"'):
        return []
    try:
        asked = json.loads(text).get('need_tables')
    except (ValueError, AttributeError):
        return []
    return [name for name in asked if name in given] if isinstance(asked, list) else []
