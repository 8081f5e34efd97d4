"""Calling the student's functions from the hidden checks, in both places the checks run.

While grading, the checks run in the trusted checker and a function is a `coursetools.judge.checker.Proxy`: calls
travel to the student's kernel in batches and come back as plain data. In the instructor's own Jupyter (the
source notebook) the checks run in the kernel with the real functions. These helpers hide the difference.
"""
import contextlib
import inspect
import io

from coursetools.judge import answers
from coursetools.judge import checker
from coursetools.sandbox.inside.call_trace import Trace

_recorded = {}


class Outcome:
    """One call: `value` or `error`, what was printed, and (counted) its count and trace."""

    def __init__(self, value=None, error=None, printed='', records=None):
        self.value, self.error, self.printed, self.records = value, error, printed, records or {}
        self.count = self.trace = None


def is_proxy(function):
    return callable(getattr(function, 'each', None)) and callable(getattr(function, 'counted', None))


QUICK = 512     # the first batch for calls that answer at once (a board's lines, its empty squares, a move)


def outcomes(function, name, calls, shared=None, count=False, first=8):
    """(arguments, outcome) for each argument tuple in `calls`, computed as they are consumed.

    `shared`: a dict that receives the final contents of the `answers.Shared` arguments (one object for all the
    calls, such as a memo table). `count`: each outcome's `count` is the number of calls made through the
    global `name` (the function's recursion), the first one included. `first`: how many calls the first batch
    sent to the kernel holds (then 4 times as many each time): small where one call may search a whole game
    tree, `QUICK` where every call answers at once, since each batch is a round trip (then all the rest)."""
    calls = [tuple(arguments) for arguments in calls]
    if is_proxy(function):
        yield from zip(calls, function.each(calls, shared=shared, count=count, first=first,
                                            rest_at_once=first >= QUICK))
        return
    require_function(function, name)
    local_shared = {}
    for arguments in calls:
        arguments = tuple(local_shared.setdefault(a.name, {'dict': dict, 'list': list, 'set': set}[a.kind]())
                          if isinstance(a, answers.Shared) else a for a in arguments)
        printed = io.StringIO()
        trace = Trace()
        trace.begin()
        try:
            with contextlib.redirect_stdout(printed), _counting(function, name, trace, count) as target:
                value = target(*arguments)
            outcome = Outcome(value=value, printed=printed.getvalue())
        except Exception as error:
            outcome = Outcome(error=error, printed=printed.getvalue())
        if count:
            counted = trace.end()
            outcome.count, outcome.trace = counted['count'], counted.get('trace')
        if shared is not None:
            shared.clear()
            shared.update(local_shared)
        yield arguments, outcome


@contextlib.contextmanager
def _counting(function, name, trace, count):
    """`function` itself, or (with `count`) a wrapper bound to its global name that counts and traces every
    call (`call_trace.Trace`, as the kernel agent does)."""
    if not count:
        yield function
        return
    namespace = getattr(inspect.unwrap(function), '__globals__', None)
    counted = trace.wrap(function)
    swapped = isinstance(namespace, dict) and namespace.get(name) is function
    if swapped:
        namespace[name] = counted
    try:
        yield counted
    finally:
        if swapped and namespace.get(name) is counted:
            namespace[name] = function


def value(outcome, name, arguments, picture):
    """The outcome's value, or an AssertionError that says which call failed and how."""
    error = outcome.error
    if error is None:
        return outcome.value
    if isinstance(error, (answers.NotPlainData, answers.NotAFunction)):
        raise AssertionError(str(error)) from None
    if isinstance(error, NameError) and not isinstance(error, answers.StudentError):
        raise AssertionError(str(error)) from None
    shown = ', '.join(repr(a) for a in arguments)
    raise AssertionError(f'{name}({shown}) raised {type(error).__name__}: {error}\nThe board was:\n'
                         f'{picture(arguments[0])}') from error


def require_not_a_stub(name, outcomes, normal=None, what='board'):
    """Fail with a clear AssertionError if `outcomes` look like those of a function that is still a stub; returns
    `outcomes` as a list otherwise, for the caller's own checks.

    `outcomes`: (arguments, outcome) pairs of `name` on several different argument tuples (as `outcomes` gives
    them), chosen by the caller so that no correct answer could look like a stub on all of them: None is never
    the right answer for every one, neither is one and the same value, nor the first argument unchanged. A stub
    is a function that, on *every* call, raised NotImplementedError, or returned None, or returned its first
    argument unchanged, or (on two calls or more) returned one same value; one call that answered otherwise is
    enough to pass, and a call that failed otherwise is left for the caller's checks to report. `normal`: what
    values are compared as (a board given back as lists still counts as the board itself). `what`: what the
    first argument is, for the message."""
    outcomes = list(outcomes)
    if not outcomes:
        return outcomes
    errors = [outcome.error for _, outcome in outcomes]
    unfinished = f'`{name}` looks unfinished: '
    if all(_not_implemented(error) for error in errors):
        raise AssertionError(f'{unfinished}it still raises NotImplementedError. Replace the line '
                             f'`raise NotImplementedError()` with your code, then re-run the cell.')
    if any(error is not None for error in errors):
        return outcomes
    normal = normal or (lambda value: value)
    values = [normal(outcome.value) for _, outcome in outcomes]
    if all(value is None for value in values):
        raise AssertionError(f'{unfinished}it returned None for every {what} it was given. It must return its '
                             f'answer: is its `return` statement missing, or still `return None`?')
    if all(arguments and _equal(value, normal(arguments[0])) for (arguments, _), value in zip(outcomes, values)):
        raise AssertionError(f'{unfinished}it returned its first argument unchanged for every {what} it was '
                             f'given. It must return its answer, which is never simply the {what} it was given.')
    if len(values) > 1 and all(_equal(value, values[0]) for value in values[1:]):
        shown = repr(values[0])
        shown = shown if len(shown) <= 120 else shown[:117] + '...'
        raise AssertionError(f'{unfinished}it returned the same value, {shown}, for every {what} it was given, '
                             f'but the right answers differ from one {what} to another.')
    return outcomes


def _not_implemented(error):
    """Whether `error` is a NotImplementedError, raised here or (standing for it, `answers.StudentError`) in the
    student's kernel."""
    return error is not None and any(kind.__name__ == 'NotImplementedError' for kind in type(error).__mro__)


def _equal(first, second):
    """`first == second` as a plain truth value; False when the comparison fails or is not a truth value (the
    elements of numpy arrays)."""
    try:
        same = first == second
        return bool(same) if isinstance(same, bool) or type(same).__name__ == 'bool_' else False
    except Exception:
        return False


def call(function, name, picture, *arguments):
    """One call of the student's function; its value, or an AssertionError naming the call."""
    (_, outcome), = outcomes(function, name, [arguments])
    return value(outcome, name, arguments, picture)


def count_calls(function, name, picture, *arguments):
    """(result, calls) of one top-level call, the calls made through the global `name` (its recursion)
    included."""
    outcome = counted_call(function, name, picture, *arguments)
    return outcome.value, outcome.count


def counted_call(function, name, picture, *arguments):
    """The outcome of one top-level call, its calls through the global `name` counted and traced; an
    AssertionError naming the call if it failed."""
    if is_proxy(function):
        try:
            outcome = function.counted_outcome(*arguments)
        except (answers.StudentError, answers.NotPlainData, answers.NotAFunction, NameError) as error:
            outcome = Outcome(error=error)
    else:
        (_, outcome), = outcomes(function, name, [arguments], count=True)
    value(outcome, name, arguments, picture)
    return outcome


def require_function(function, name):
    if not callable(function):
        raise AssertionError(
            f'`{name}` is not a function any more (it is a {type(function).__name__}). '
            f'Did a line like `{name} = {name}(...)` replace it? Rename that variable and re-run the notebook.')
    return function


def recorded(name, namespace=None):
    """The argument tuples of the calls of `name` recorded during the last call of the function under test
    (the boards `perfect_game` passed to `print_state`); None if nothing was recorded."""
    session = checker.session_in(namespace) if namespace is not None else checker.current()
    if session is not None:
        calls = session.records.get(name)
        return None if calls is None else [tuple(c) if isinstance(c, list) else c for c in calls]
    calls = _recorded.pop(name, None)
    return None if calls is None else list(calls)


def recording(name, function, during):
    """(recorder, caller), kernel mode: `function` recording its arguments, and `during` forgetting what was
    recorded before each of its calls, so that `recorded(name)` gives the calls made during the last one."""
    calls, active = [], [False]

    def recorder(*arguments):
        if active[0]:
            calls.append(arguments)
        return function(*arguments)

    def caller(*arguments, **keywords):
        calls.clear()
        active[0] = True
        try:
            return during(*arguments, **keywords)
        finally:
            active[0] = False

    recorder.__wrapped__, caller.__wrapped__ = function, during
    _recorded[name] = calls
    return recorder, caller
