"""The grader's helper inside a student's kernel: it calls one of the notebook's functions and sends back what
it returned and printed, as plain data. The grader sends this text once per kernel (module `_course_grader`, a comm
target; a call is one message each way). Nothing here decides a mark: the checker reads its answers as untrusted.
A request asks for one function to be called on a list of argument tuples, optionally while
* `replace`: other global names answer from tables of correct answers the checker sent (values, never code),
* `memoize`: the global names listed remember their answers (a slow search runs once per position),
* `record`: calls of the global names listed are recorded (the boards `perfect_game` passed to `print_state`),
* `count`: calls of the function through its own global name are counted (its recursion) and traced: the
  checker believes a count only with the trace that shows it (coursetools.checks.evidence).
Everything is put back before the answer is sent. Each test cell's calls run in a child forked from the kernel
(`cell_fork`, given to `install`), so nothing one test cell's calls change outlives that cell."""
import base64
import contextlib
import json
import math
import numbers
import sys
import traceback
import zlib

call_trace = sys.modules.get('_course_grader_call_trace')       # in the kernel: sent as text just before this
if call_trace is None:
    from coursetools.sandbox.inside import call_trace

TARGET = 'course_grader'
FILENAME = '<course grader>'
MAX_NODES = 3_000_000               # values in one answer
_PLAIN = (int, float, str, tuple, list, set, frozenset, dict)
_SCALARS = frozenset((str, int, bool))
_MISSING = object()
_memos = {}                         # (name, mode) -> (function, {arguments: answer})
_shared = {}                        # name -> an object many calls of one test cell share
_tables = {}                        # name -> {table_key(arguments): the answer as JSON text, or once used, `_again`}
_last_cell = [None]


class Refused(Exception):
    """A value that is not plain data (numbers, strings, and tuples, lists, sets or dicts of them)."""


def encode(value, budget):
    """`value` as JSON-ready data, with tuples, sets, dicts and non-finite floats tagged; numpy values become
    their plain equivalents. Raises Refused for anything else."""
    budget[0] -= 1
    if budget[0] < 0:
        raise Refused('a value with more than %d parts' % MAX_NODES)
    kind = type(value)
    if value is None or kind in _SCALARS:
        return value
    if kind is float:
        return value if math.isfinite(value) else {'f': repr(value)}
    if kind is list:
        return _items(value, budget)
    if kind is tuple:
        if value and type(value[0]) is tuple:
            grid = _grid(value)
            if grid is not None:
                return {'g': grid}
        return {'t': _items(value, budget)}
    if kind is set or kind is frozenset:
        return {'s' if kind is set else 'fs': [encode(item, budget) for item in value]}
    if kind is dict:
        return {'d': [[encode(k, budget), encode(v, budget)] for k, v in value.items()]}
    if kind.__module__.split('.')[0] == 'numpy' and hasattr(value, 'tolist'):
        return encode(value.tolist(), budget)
    for base in _PLAIN:
        if issubclass(kind, base):
            return {'sub': kind.__name__, 'of': base.__name__, 'v': encode(_as_base(value, base), budget)}
    if isinstance(value, numbers.Number) and not isinstance(value, complex):      # Fraction, Decimal
        with contextlib.suppress(Exception):
            return float(value)
    raise Refused(kind.__name__)


def _items(values, budget):
    """The items of a list or tuple, encoded; strings, ints and None (most items) are taken as they are."""
    budget[0] -= len(values)
    if budget[0] < 0:
        raise Refused('a value with more than %d parts' % MAX_NODES)
    return [item if item is None or type(item) in _SCALARS else encode(item, budget) for item in values]


def _grid(value):
    """A tuple of tuples of one-character strings (a board) as a list of strings, one per row; else None.
    The common case in both directions, and five times shorter than the general form."""
    rows = []
    for row in value:
        if type(row) is not tuple or set(map(type, row)) != {str}:
            return None
        text = ''.join(row)
        if len(text) != len(row):
            return None
        rows.append(text)
    return rows if rows else None


def _as_base(value, base):
    """The value a subclass instance holds, read with the base type's own methods (not the subclass's)."""
    read = _BASE_READERS.get(base)
    return read(value) if read else base(base.__iter__(value))


_BASE_READERS = {int: int.__int__, float: float.__float__, str: str.__str__, dict: lambda v: dict(dict.items(v))}


def _untag(obj):
    if len(obj) == 1:
        (tag, items), = obj.items()
        if tag in _UNTAG:
            return _UNTAG[tag](items)
    return obj


def table_key(arguments):
    """The key of a call in a table of answers, the same for a board given as tuples, lists, strings or an array:
    each argument as text (a board as its nine squares), joined; None if an argument has no such form."""
    parts = []
    for argument in arguments:
        if isinstance(argument, str):
            parts.append(argument)
            continue
        if getattr(argument, '__index__', None) is not None:       # a number (an array has one that refuses)
            with contextlib.suppress(TypeError):
                parts.append(str(argument.__index__()))
                continue
        try:
            parts.append(''.join(map(''.join, argument)))
        except TypeError:
            return None
    return '|'.join(parts)


class _Shared:
    """Stands for one object created in the kernel for a whole request (a dictionary many calls fill in)."""

    def __init__(self, spec):
        self.name, self.kind = spec


_UNTAG = {'t': tuple, 'g': lambda rows: tuple(map(tuple, rows)), 's': set, 'fs': frozenset, 'f': float,
          'd': lambda items: {tuple(k) if isinstance(k, list) else k: v for k, v in items}, 'shared': _Shared}
decode = json.JSONDecoder(object_hook=_untag).decode        # JSON with the tags `encode` writes


def install(cell_fork=None):
    """Register the comm target the grader opens (once per kernel); with `cell_fork`, each test cell's calls
    are served in a child of the kernel."""
    from IPython import get_ipython
    shell = get_ipython()
    respond = lambda text: answer(shell.user_ns, text)
    if cell_fork is not None:
        cells = cell_fork.CellProcesses(respond, lambda: cell_fork.quiet_kernel(shell), take_tables)
        respond = cells.respond
        cell_fork.end_before_shutdown(shell.kernel, cells)

    def opened(comm, open_message):
        comm.on_msg(lambda message: comm.send({'answer': respond(message['content']['data']['request'])}))

    shell.kernel.comm_manager.register_target(TARGET, opened)


def read_table(sent):
    """A table as the checker sends it (JSON text, compressed, in base64): {key: the answer as JSON text}."""
    return json.loads(zlib.decompress(base64.b64decode(sent)).decode('utf-8'))


def take_tables(sent):
    """Keep the tables of a request ({name: table as sent}); the names kept."""
    _tables.update({name: read_table(table) for name, table in sent.items()})
    return list(sent)


def answer(user_ns, request_text):
    """Serve one request; the answer as JSON text."""
    try:
        reply = serve(user_ns, decode(request_text))
    except KeyboardInterrupt:
        reply = {'interrupted': True, 'results': []}
    except BaseException as error:          # the request itself failed (the grader's fault or tampering)
        reply = {'failed': '%s: %s' % (type(error).__name__, error)}
    return json.dumps(reply, allow_nan=True)


def serve(user_ns, request):
    """Call the function on each argument tuple. The reply's `results` hold, per call, the encoded value, or
    {'!': outcome} when there is more to say (an error, a refusal, printed text, a count, records)."""
    name = request['function']
    take_tables(request.get('tables') or {})
    needed = [table for table in request.get('replace', ()) if table not in _tables]
    if needed:
        return {'need_tables': needed}
    function = user_ns.get(name, _MISSING)
    if function is _MISSING:
        return {'missing': name}
    if not callable(function):
        return {'not_callable': name, 'type': type(function).__name__}
    if request.get('cell') != _last_cell[0]:
        _last_cell[0] = request.get('cell')
        _shared.clear()
        for memoized in request.get('memoize', {}):
            with contextlib.suppress(Exception):
                user_ns.get(memoized).cache_clear()
    saved = {}
    printed = stdout = None
    records = {record: [] for record in request.get('record', ())}
    trace = call_trace.Trace()

    def bind(global_name, wrap, always=False):
        own = user_ns.get(global_name, _MISSING)
        if always or callable(own):
            saved.setdefault(global_name, own)
            user_ns[global_name] = wrap(own)

    try:
        for replaced in request.get('replace', ()):
            bind(replaced, lambda own, replaced=replaced: _answering(replaced, _tables[replaced], own), always=True)
        for memoized, mode in request.get('memoize', {}).items():
            bind(memoized, lambda own, memoized=memoized, mode=mode: _memoizing(memoized, mode, own))
        for recorded, calls in records.items():
            bind(recorded, lambda own, calls=calls: call_trace.watching(
                own, lambda arguments: calls.append(_noted(arguments))))
        if request.get('count'):
            bind(name, trace.wrap)
        target = user_ns[name]
        results, interrupted, stdout, printed = [], False, sys.stdout, call_trace.Printed()
        for arguments in request['calls']:
            arguments = [_shared.setdefault(argument.name, {'dict': dict, 'list': list, 'set': set}[argument.kind]())
                         if isinstance(argument, _Shared) else argument for argument in arguments]
            trace.begin()
            for calls in records.values():
                calls.clear()
            outcome = call(target, arguments, printed)
            interrupted = outcome.pop('interrupted', False)
            if request.get('count'):
                outcome.update(trace.end())
            if records:
                outcome['records'] = {recorded: list(calls) for recorded, calls in records.items()}
            if request.get('sync'):
                outcome['after'] = [_encode_or_none(argument) for argument in arguments]
            results.append(outcome['value'] if len(outcome) == 1 and 'value' in outcome else {'!': outcome})
            if interrupted:
                break
    finally:
        if printed is not None:
            sys.stdout = stdout
        for restored, value in saved.items():
            if value is _MISSING:
                user_ns.pop(restored, None)
            else:
                user_ns[restored] = value
    reply = {'results': results, 'interrupted': interrupted}
    if request.get('want_shared'):
        reply['shared'] = {key: _encode_or_none(value) for key, value in _shared.items()}
    return reply


def call(function, arguments, printed):
    """Call the function once: {'value' | 'error' | 'refused', 'printed'}."""
    outcome = {}
    printed.start()
    try:
        sys.stdout = printed        # again for each call: a call may have changed it
        result = function(*arguments)
        outcome['value'] = result if result is None or type(result) in _SCALARS else encode(result, [MAX_NODES])
    except Refused as refused:
        outcome['refused'] = str(refused)
    except KeyboardInterrupt:
        outcome['interrupted'] = True
        outcome['error'] = {'type': 'KeyboardInterrupt', 'message': '', 'traceback': ''}
    except BaseException as error:
        outcome['error'] = _described(error)
    text = printed.text()
    if text:
        outcome['printed'] = text
    return outcome


def _described(error):
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename != FILENAME]
    lines = traceback.format_list(frames[-12:])
    try:
        message = str(error)
    except BaseException:
        message = '(the message could not be read)'
    return {'type': type(error).__name__, 'message': message[:2000], 'traceback': ''.join(lines)[-6000:]}


def _encode_or_none(value):
    with contextlib.suppress(Refused, RecursionError):
        return encode(value, [MAX_NODES])


class NotInTable(LookupError):
    """A call of a function the course gave for this test, on arguments it has no answer for."""


def _answering(name, table, own):
    """Stands for `name` while another function is tested: answers come from the checker's table, each decoded
    once (the table keeps it, also under the arguments themselves), a fresh value for every call where a caller
    could change it (a list). Arguments by keyword go where the student's own `name` takes them; a call with
    fewer arguments than the table's (the student's own defaults fill in the rest) is the student's own."""
    width = next((key.count('|') + 1 for key in table if type(key) is str), 0)

    def answering(*arguments, **keywords):
        if keywords:
            arguments, keywords = call_trace.in_order(own, arguments, keywords)
        if len(arguments) < width and callable(own):
            return own(*arguments, **keywords)
        with contextlib.suppress(KeyError, TypeError):      # not asked yet, or arguments no key can hold (lists)
            return table[arguments]()                       # asked before with these very arguments
        key = table_key(arguments) if not keywords else None
        answer = table.get(key) if key is not None else None
        if answer is None:
            raise NotInTable('%s(%s): no game reaches this. The grader gives a correct %s for this test, which '
                             'answers for every position of a real game, so the search that asked has left them '
                             '(has the same player moved twice?)' % (name, ', '.join(map(repr, arguments)), name))
        if type(answer) is str:
            answer = table[key] = _again(decode(answer), answer)
        with contextlib.suppress(TypeError):
            table[arguments] = answer
        return answer()

    answering.__name__ = name
    return answering


def _again(value, text):     # what gives the answer again: itself if nothing in it can change, else a copy
    if _unchangeable(value):
        return lambda: value
    return value.copy if type(value) is list and all(map(_unchangeable, value)) else lambda: decode(text)


def _unchangeable(value):
    return value is None or type(value) in _SCALARS or type(value) is tuple and all(map(_unchangeable, value))


def _memoizing(name, mode, function):
    if _memos.get((name, mode), (None,))[0] is not function:
        _memos[name, mode] = (function, {})
    cache = _memos[name, mode][1]

    def remembering(*arguments, **keywords):
        if keywords:
            arguments, keywords = call_trace.in_order(function, arguments, keywords)
        key = _key(arguments + tuple(keywords.items()))
        if key is None:
            return function(*arguments, **keywords)
        if key not in cache:
            cache[key] = function(*arguments, **keywords)
        return cache[key]

    remembering.__wrapped__ = function
    remembering.__name__ = getattr(function, '__name__', name)
    return remembering


def _key(arguments):
    """`arguments` if hashable, else a frozen stand-in (lists, arrays); None if neither."""
    for make in (tuple, frozen):
        with contextlib.suppress(TypeError, RecursionError):
            hash(key := make(arguments))
            return key
    return None


def frozen(value):
    """A hashable stand-in for a list or array argument; container types are part of it."""
    if isinstance(value, (list, tuple)):
        return type(value).__name__, tuple(frozen(item) for item in value)
    to_list = getattr(value, 'tolist', None)
    if callable(to_list) and not isinstance(value, (str, bytes)):
        return type(value).__name__, frozen(to_list())
    return value


def _noted(arguments):
    try:
        return [encode(argument, [10_000]) for argument in arguments]
    except (Refused, RecursionError) as refused:
        return {'refused': str(refused)}
