"""Reading a student's kernel's answers in the trusted checker: plain data only.

The kernel is the student's process, so its answers are untrusted text. They are parsed here, in the checker,
into values of the checker's own types: None, bool, int, float, str, and tuples, lists, sets, frozensets and
dicts of those. Nothing the student defined can reach a comparison: an object whose `__eq__` says yes to
everything arrives as a refusal, and a subclass of a plain type (a `str` subclass, a namedtuple) arrives as an
instance of a class made here with the same name and no methods of its own, holding what the value really
held. Its comparisons are the base type's.
"""
import contextlib
import json
import keyword

from coursetools.sandbox.inside import kernel_agent

MAX_ANSWER_CHARS = 16 * 1024 ** 2     # also refused on arrival, by the executor
_BASES = {base.__name__: base for base in (int, float, str, tuple, list, set, frozenset, dict)}
_subclasses = {}


class AnswerError(Exception):
    """The kernel's answer could not be read as plain data (a broken or tampered kernel)."""


class NotPlainData(TypeError):
    """A function returned something other than plain data."""


class NotAFunction(TypeError):
    """A name the tests call is not a function in the notebook any more (`score = score(...)`)."""


class StudentError(Exception):
    """Base of the exceptions that stand for an error raised by the student's code in the kernel. Each has the
    name of the student's exception type, and the student's traceback in `student_traceback`."""

    student_traceback = ''


class KernelGone(BaseException):
    """The kernel died or had to be stopped during a call: the test cell ends with this error (`ename`)."""

    def __init__(self, ename, message):
        super().__init__(message)
        self.ename, self.message = ename, message


def encode_calls(calls):
    """The argument tuples of a request, as JSON text for the kernel."""
    budget = [kernel_agent.MAX_NODES]
    return [[_encode_argument(argument, budget) for argument in arguments] for arguments in calls]


_grids = {}


def _encode_argument(argument, budget):
    if type(argument) is tuple:         # a board: the same few thousand are sent for every notebook
        encoded = _grids.get(argument)
        if encoded is None:
            encoded = kernel_agent.encode(argument, budget)
            if 'g' in encoded and len(_grids) < 100_000:
                _grids[argument] = encoded
        return encoded
    if isinstance(argument, Shared):
        return {'shared': [argument.name, argument.kind]}
    return kernel_agent.encode(argument, budget)


class Shared:
    """An argument that is one object in the kernel for a whole batch of calls, such as the `known` dictionary
    that every call of a memoizing search fills in; its final contents come back once, as `shared[name]`."""

    def __init__(self, name, kind='dict'):
        self.name, self.kind = name, kind


def decode(text):
    """An answer's JSON text as the checker's own values. Raises AnswerError."""
    if not isinstance(text, str) or len(text) > MAX_ANSWER_CHARS:
        raise AnswerError('the answer is missing or too large')
    try:
        return json.loads(text, object_hook=_untag)
    except (ValueError, TypeError, RecursionError) as error:
        raise AnswerError(f'the answer could not be read ({type(error).__name__}: {error})') from None


_TAGS = {'t': tuple, 's': set, 'fs': frozenset, 'd': dict, 'f': float, 'g': tuple}


def _untag(obj):
    if len(obj) == 1 and next(iter(obj)) in _TAGS:
        (tag, items), = obj.items()
        if tag == 't' and type(items) is list:
            return tuple(items)
        if tag in ('s', 'fs') and type(items) is list:
            _spread(items)
            return _TAGS[tag](items)
        if tag == 'd' and type(items) is list and all(type(pair) is list and len(pair) == 2 for pair in items):
            _spread([key for key, _ in items])
            return {_hashable(key): value for key, value in items}
        if tag == 'f' and items in ('inf', '-inf', 'nan'):
            return float(items)
        if tag == 'g' and type(items) is list and items and all(type(row) is str for row in items):
            return tuple(tuple(row) for row in items)
        raise ValueError(f'a malformed value ({tag})')
    if len(obj) == 3 and set(obj) == {'sub', 'of', 'v'}:
        return _subclass_instance(obj['sub'], obj['of'], obj['v'])
    return obj


def _hashable(key):
    hash(key)
    return key


def _spread(keys):
    """Refuse the keys of a set or dict whose hashes collide by the thousand: built to make the checker spend
    quadratic time (a plain answer's keys are distinct values with spread hashes)."""
    if len(keys) > 1000 and len({hash(key) for key in keys}) < len(keys) // 2:
        raise ValueError('a set or dictionary whose values were built to have equal hashes')


def _subclass_instance(name, base_name, value):
    base = _BASES.get(base_name)
    if base is None or type(name) is not str or not name.isidentifier() or keyword.iskeyword(name) or len(name) > 80:
        raise ValueError('an unknown kind of value')
    if base is float and type(value) is int:
        value = float(value)
    if type(value) is not base:
        raise ValueError(f'a {base_name} subclass holding a {type(value).__name__}')
    cls = _subclasses.get((name, base))
    if cls is None:
        cls = _subclasses[name, base] = type(name, (base,), {'__module__': 'student'})
    return cls(value)


def student_error(description):
    """An exception instance standing for the error the student's code raised."""
    name = description.get('type') if isinstance(description, dict) else None
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name) or len(name) > 80:
        name = 'Error'
    cls = _subclasses.get((name, StudentError))
    if cls is None:
        cls = _subclasses[name, StudentError] = type(name, (StudentError,), {'__module__': 'student'})
    message = description.get('message', '') if isinstance(description, dict) else ''
    error = cls(message if isinstance(message, str) else '')
    trace = description.get('traceback', '') if isinstance(description, dict) else ''
    error.student_traceback = trace if isinstance(trace, str) else ''
    return error


def still_running(name, text, lines=12):
    """The end of a timeout's first line, then the first lines the stopped call of `name` printed, read from the
    kernel's answer to the interrupt when it gave one: what a student needs to recognise a loop that never ends."""
    printed = ''
    with contextlib.suppress(Exception):       # no answer, or not one to read: the timeout is told without it
        last = decode(text)['results'][-1]['!']
        printed = last['printed'] if isinstance(last.get('printed'), str) else ''
    said = f': {name} was still running (a loop that never ends?).'
    shown = [line[:200] for line in printed.splitlines() if line.strip()][:lines]
    if shown:
        said += ' The first lines it printed:\n' + '\n'.join('    ' + line for line in shown)
    return said
