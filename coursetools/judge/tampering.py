"""What a student's code does to the grader's machinery, read from the notebook in the grading process.

The notes are decided here, in the trusted grading process, from the sources of the student's code cells (the
code the kernel runs: every code cell but the locked ones the course wrote), so that nothing a student runs in
the kernel can hide them. `notes(nb, locked)` reads each cell with `ast` (IPython's magics translated first),
or, where a cell does not parse, searches its text; names built cheaply from literals (`'run_' + 'cell'`,
`''.join(...)`, `'...'[::-1]`, `chr`, base64 / hex, rot13) count as written, which catches
`getattr(shell, 'run' + '_cell')`, `__import__('course' + 'tools')`, `importlib.import_module(...)`,
`sys.modules[...]`, and code in such strings is read too (`exec(b64decode(...))`). `locked_cell_notes` compares
the submitted notebook's locked cells with the gradebook's.

A static scan can be evaded (names computed at run time, data read from files): these notes are a report for the
instructor to look at, never a mark. Marks are decided by the trusted checker (`coursetools.judge.checker`), which
judges plain values whatever the kernel did.
"""
from __future__ import annotations

import ast
import base64
import binascii
import codecs
import copy
import re

from coursetools.judge.checker_plan import parse

#: What a student's code may do to the machinery that runs and judges cells, and the names that show it. A name
#: with a dot matches the end of a dotted name in the code (`inspect.stack`, `self.session.send`); one without,
#: any part of it. 'file descriptor N' stands for a call such as os.write(1, ...) or os.dup2(fd, 2).
PATTERNS = (
    ("touched IPython's input transformers", ('input_transformers_post', 'input_transformers_cleanup',
                                              'input_transformer_manager', 'input_splitter')),
    ("touched IPython's AST transformers", ('ast_transformers',)),
    ('touched IPython shell methods', ('run_cell', 'run_cell_async', '_run_cell', 'transform_cell', 'transform_ast',
                                       'run_code', 'run_ast_nodes', 'should_run_async', 'showtraceback',
                                       '_showtraceback', 'showsyntaxerror', 'set_custom_exc', 'custom_exceptions',
                                       'pre_run_cell', 'post_run_cell', 'pre_execute', 'post_execute')),
    ("touched the kernel's methods", ('do_execute', 'execute_request', 'dispatch_shell', 'process_one',
                                      'send_response', 'shell_handlers', 'control_handlers')),
    ('set a trace or profile function', ('settrace', 'setprofile', 'settrace_all_threads', 'setprofile_all_threads',
                                         'f_trace', 'sys.monitoring')),
    ("touched the interpreter's hooks", ('excepthook', 'displayhook', 'unraisablehook', 'breakpointhook',
                                         'addaudithook')),
    ("tried to import the course's modules", ('coursetools',)),
    ("touched the grader's module in the kernel", ('_course_grader', 'kernel_agent')),
    ("wrote around the notebook's output", ('__stdout__', '__stderr__', 'fileno', 'file descriptor 1',
                                            'file descriptor 2', '/dev/stdout', '/dev/stderr', '/dev/fd/1',
                                            '/dev/fd/2', '/proc/self/fd/1', '/proc/self/fd/2')),
    ("read the interpreter's frames or objects", ('_getframe', '_current_frames', 'currentframe', 'f_back',
                                                  'f_globals', 'f_locals', 'tb_frame', 'inspect.stack',
                                                  'inspect.getouterframes', 'inspect.trace', 'get_objects',
                                                  'get_referrers', 'get_referents')),
    ("reached the kernel's messaging", ('comm_manager', 'create_comm', 'iopub_socket', 'iopub_thread',
                                        'shell_stream', 'shell_streams', 'control_stream', 'session.send', 'zmq',
                                        'jupyter_client')),
)
NAMES_SHOWN = 5
FD_CALLS = {'write', 'writev', 'pwrite', 'fdopen', 'open', 'dup', 'dup2', 'FileIO', 'sendfile'}
DECODERS = {'b64decode': base64.b64decode, 'urlsafe_b64decode': base64.urlsafe_b64decode,
            'decodebytes': base64.decodebytes, 'b32decode': base64.b32decode, 'b16decode': base64.b16decode,
            'a85decode': base64.a85decode, 'b85decode': base64.b85decode, 'unhexlify': binascii.unhexlify,
            'fromhex': bytes.fromhex}
STRING_METHODS = {'lower', 'upper', 'strip', 'lstrip', 'rstrip', 'casefold', 'swapcase', 'title', 'replace',
                  'encode', 'decode'}
DOTTED = re.compile(r'[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*')
MAX_STRING = 100_000
MAX_DEPTH = 3          # strings of code inside strings of code ...


# ---------------------------------------------------------------------------------------------------- notes

def notes(nb, locked=None) -> list:
    """'its code <did what> (<names>)' for each pattern the student's code cells of `nb` match.

    `locked`: {grade_id: source} of the course's locked cells (from the gradebook); a code cell is the course's,
    and not read, when its grade_id is there and its source is that one (or that one under comment lines, as
    nbgrader puts back a deleted cell). Without `locked`, the notebook's own nbgrader metadata says which cells
    are locked (a submitted notebook's metadata is the student's: pass `locked` where you can)."""
    facts = set()
    for cell in student_cells(nb, locked):
        facts |= scan(cell.source)
    return notes_of(facts)


def notes_of(facts) -> list:
    found = []
    for what, names in PATTERNS:
        hits = [name for name in names if _matches(name, facts)]
        if hits:
            shown = ', '.join(hits[:NAMES_SHOWN]) + (', ...' if len(hits) > NAMES_SHOWN else '')
            found.append(f'its code {what} ({shown})')
    return found


def student_cells(nb, locked=None):
    """The code cells of `nb` that the student wrote (every code cell but the course's locked ones)."""
    for cell in nb.cells:
        if cell.get('cell_type') != 'code':
            continue
        meta = cell.get('metadata', {}).get('nbgrader', {}) or {}
        if locked is None:
            if meta.get('locked') or meta.get('grade') and not meta.get('solution'):
                continue
        elif _is_course_cell(cell.get('source', ''), locked.get(meta.get('grade_id'))):
            continue
        yield cell


def _is_course_cell(source, course_source):
    if course_source is None or not source.endswith(course_source):
        return False
    above = source[:len(source) - len(course_source)]
    return all(not line.strip() or line.lstrip().startswith('#') for line in above.splitlines())


def _matches(name, facts):
    return name in facts or any(fact.endswith('.' + name) for fact in facts)


# ---------------------------------------------------------------------------------------------------- reading

def scan(source, depth=0) -> set:
    """The names (parts and dotted chains), strings and calls on file descriptors 1 and 2 in `source`."""
    try:
        tree = parse(_python(source))
        return _tree_facts(tree, depth)
    except (SyntaxError, ValueError, RecursionError, MemoryError, SystemError):
        return _text_facts(source)


def _python(source):
    """`source` with IPython's syntax (magics, `!shell`) translated into Python, as the kernel does."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        return TransformerManager().transform_cell(source)
    except Exception:
        return source


def _text_facts(source):
    """The fallback for a cell that does not parse: every dotted name in its text, and its quoted strings."""
    facts = set()
    for chain in DOTTED.findall(re.sub(r'\s*\.\s*', '.', source)):
        _add_name(facts, chain)
    facts.update(match[1] for match in re.findall(r'''(['"])(.{1,200}?)\1''', source))
    return facts


def _tree_facts(tree, depth):
    facts, memo = set(), {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            facts.add(node.id)
        elif isinstance(node, ast.Attribute):
            _add_name(facts, _dotted(node))
        elif isinstance(node, ast.alias):
            _add_name(facts, node.name)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                _add_name(facts, f'{node.module or ""}.{alias.name}'.lstrip('.'))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            facts.add(node.name)
        elif isinstance(node, ast.keyword) and node.arg:
            facts.add(node.arg)
        if isinstance(node, ast.Call):
            _add_fd_call(facts, node)
        if isinstance(node, ast.expr):
            value = _fold(node, memo)
            if isinstance(value, bytes):
                value = value.decode('utf-8', 'replace')
            if isinstance(value, str) and value:
                _add_string(facts, value, depth)
    return facts


def _add_name(facts, chain):
    facts.add(chain)
    facts.update(part for part in chain.split('.') if part)


def _add_string(facts, value, depth):
    if len(value) <= 200:
        facts.add(value)
    if DOTTED.fullmatch(value):
        _add_name(facts, value)
    elif depth < MAX_DEPTH and any(mark in value for mark in '.(=\n'):
        code = scan(value, depth + 1) if _parses(value) else set()
        facts |= code


def _parses(text):
    try:
        parse(text)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError, SystemError):
        return False


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    parts.append(node.id if isinstance(node, ast.Name) else '()')
    return '.'.join(reversed(parts))


def _add_fd_call(facts, call):
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, 'id', None)
    if name not in FD_CALLS:
        return
    args = call.args if name == 'dup2' else call.args[:1]
    for arg in args:
        if isinstance(arg, ast.Constant) and type(arg.value) is int and arg.value in (1, 2):
            facts.add(f'file descriptor {arg.value}')


def _fold(node, memo):
    """The str or bytes an expression built only from literals evaluates to, else None (memoized per node)."""
    if node not in memo:
        memo[node] = None
        try:
            value = _evaluate(node, memo)
        except Exception:       # a literal the operation rejects (bad base64, ...): not a name
            value = None
        memo[node] = value if isinstance(value, (str, bytes)) and len(value) <= MAX_STRING else None
    return memo[node]


def _evaluate(node, memo):
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, (str, bytes)) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _fold(node.left, memo), _fold(node.right, memo)
        return left + right if left is not None and type(left) is type(right) else None
    if isinstance(node, ast.JoinedStr):
        parts = [_fold(v.value if isinstance(v, ast.FormattedValue) else v, memo) for v in node.values]
        return ''.join(parts) if all(isinstance(p, str) for p in parts) else None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        value = _fold(node.value, memo)
        bounds = [_integer(b) for b in (node.slice.lower, node.slice.upper, node.slice.step)]
        return value[slice(*bounds)] if value is not None and all(b is not False for b in bounds) else None
    if not isinstance(node, ast.Call):
        return None
    func, args = node.func, node.args
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, 'id', None)
    if name == 'chr' and len(args) == 1 and _integer(args[0]) not in (None, False):
        return chr(_integer(args[0]))
    if name == 'join' and isinstance(func, ast.Attribute) and len(args) == 1:
        return _join(_fold(func.value, memo), args[0], memo)
    if name in DECODERS and args:
        value = _fold(args[0], memo)
        return DECODERS[name](value) if value is not None else None
    if name == 'decode' and isinstance(func, ast.Attribute) and _dotted(func.value) == 'codecs' and len(args) == 2:
        return codecs.decode(_fold(args[0], memo), _fold(args[1], memo))        # codecs.decode(text, 'rot13')
    if name in STRING_METHODS and isinstance(func, ast.Attribute):
        value = _fold(func.value, memo)
        arguments = [_fold(arg, memo) for arg in args]
        if value is not None and all(arg is not None for arg in arguments):
            return getattr(value, name)(*arguments)
    return None


def _join(separator, items, memo):
    if separator is None:
        return None
    if isinstance(items, ast.Call) and getattr(items.func, 'id', None) == 'reversed' and len(items.args) == 1:
        value = _fold(items.args[0], memo)
        return separator.join(reversed(value)) if isinstance(value, str) else None
    if isinstance(items, ast.Call) and getattr(items.func, 'id', None) == 'map' and len(items.args) == 2 \
            and getattr(items.args[0], 'id', None) == 'chr' and isinstance(items.args[1], (ast.List, ast.Tuple)):
        codes = [_integer(element) for element in items.args[1].elts]
        return separator.join(map(chr, codes)) if all(type(c) is int for c in codes) else None
    if isinstance(items, (ast.List, ast.Tuple)):
        parts = [_fold(element, memo) for element in items.elts]
        return separator.join(parts) if all(type(p) is type(separator) for p in parts) else None
    value = _fold(items, memo)
    return separator.join(value) if type(value) is type(separator) else None


def _integer(node):
    """An int literal's value; None for no node; False for anything else."""
    if node is None:
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _integer(node.operand)
        return -value if type(value) is int else False
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else False


# ---------------------------------------------------------------------------------------------------- locked cells

def locked_cell_notes(nb, expected) -> list:
    """'changed a locked cell (<grade_id>)' / 'deleted a locked cell (<grade_id>)' for the submitted notebook `nb`.

    `expected`: {grade_id: (checksum, sources)} of the course's locked cells, from the gradebook: nbgrader's
    checksum (cell type, source, grade / solution / locked flags, points), and the sources the cell may have: the
    gradebook's, and the released one (hidden tests removed), which counts as the gradebook's."""
    from nbgrader.utils import compute_checksum
    cells = {}
    for cell in nb.cells:
        grade_id = (cell.get('metadata', {}).get('nbgrader', {}) or {}).get('grade_id')
        cells.setdefault(grade_id, []).append(cell)
    changed, deleted = [], []
    for grade_id, (checksum, sources) in expected.items():
        if grade_id not in cells:
            deleted.append(grade_id)
            continue
        for cell in cells[grade_id]:
            candidate = copy.deepcopy(cell)
            if candidate.get('source') in sources:
                candidate['source'] = sources[0]
            try:
                same = compute_checksum(candidate) == checksum
            except Exception:       # nbgrader metadata the checksum cannot be computed from
                same = False
            if not same:
                changed.append(grade_id)
                break
    return [f'{what} a locked cell ({grade_id})' for what, ids in (('changed', changed), ('deleted', deleted))
            for grade_id in ids]
