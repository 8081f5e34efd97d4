"""Calling the notebook's functions: every call checked, optionally remembered by its arguments, counted, and
turned into a one-line FunctionError when the function raises or returns something unusable."""
import contextlib
import inspect
import io
import math
import threading
import time

FUNCTION_NAMES = ('print_state', 'score_end', 'play', 'moves', 'score', 'alphabeta')
CANCEL_EVERY = 256


class FunctionError(Exception):
    """A given function raised or returned something unusable; ``str()`` is a one-line message."""


class Cancelled(BaseException):
    """The work in progress is no longer wanted. A BaseException, so a student's ``except Exception`` lets it by."""


def shorten(text, limit=160):
    """One line of at most ``limit`` characters."""
    text = ' '.join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + '…'


def raised(name, error):
    """The one-line message for an exception raised by the function ``name``."""
    if isinstance(error, RecursionError):
        return f'{name} raised RecursionError (does it ever stop recursing?)'
    message = str(error)
    return shorten(f'{name} raised {type(error).__name__}' + (f': {message}' if message else ''))


def format_value(value):
    """A minimax value as the tree writes it: +1, 0, -1 or ? when unknown."""
    if value is None:
        return '?'
    return {1: '+1', 0: '0', -1: '−1'}.get(value, str(value))


def format_bound(bound):
    """An alpha or beta bound as a short label: −∞, +∞, +1, 0, −1 or the number."""
    if isinstance(bound, (int, float)) and math.isinf(bound):
        return '+∞' if bound > 0 else '−∞'
    if isinstance(bound, (int, float)) and not isinstance(bound, bool) and bound in (1, 0, -1):
        return format_value(int(bound))
    return f'{bound:g}' if isinstance(bound, (int, float)) else str(bound)


def as_state(board):
    """A board as nested tuples (hashable), or unchanged when it cannot be."""
    try:
        return tuple(tuple(row) for row in board)
    except TypeError:
        return board


def check_result(name, result):
    """The result of a given function in the form the widget uses, or a FunctionError saying what is wrong."""
    def bad(expected):
        return FunctionError(shorten(f'{name} returned {result!r}; expected {expected}', 200))

    if name == 'score_end':
        if result is None or (not isinstance(result, bool) and result in (1, 0, -1)):
            return None if result is None else int(result)
        raise bad('1, 0, -1 or None')
    if name == 'moves':
        try:
            pairs = [(int(row), int(col)) for row, col in result]
        except Exception:
            raise bad('a list of (row, col) pairs') from None
        if any(not (0 <= row < 3 and 0 <= col < 3) for row, col in pairs):
            raise bad('(row, col) pairs with row and col in 0..2')
        return pairs
    if name == 'play':
        try:
            board = tuple(tuple(row) for row in result)
            ok = len(board) == 3 and all(len(row) == 3 and all(isinstance(cell, str) for cell in row) for row in board)
        except Exception:
            ok = False
        if not ok:
            raise bad('a board: three tuples of three one-character strings')
        return board
    if name in ('score', 'alphabeta'):
        try:
            value, move = result
        except Exception:
            raise bad('a pair (value, move)') from None
        if isinstance(value, bool) or value not in (1, 0, -1):
            raise bad('a pair (value, move) with value 1, 0 or -1')
        if move is not None:
            try:
                row, col = move
                move = (int(row), int(col))
            except Exception:
                raise bad('a pair (value, move) with move a (row, col) pair or None') from None
        return (int(value), move)
    return result


class FunctionCaller:
    """The one way the widget calls the notebook's functions: ``caller('score', state, player)``.

    With ``memoize`` on, answers are remembered by their arguments, and while ``score`` runs, the name ``score`` in
    the notebook points at a wrapper that remembers and counts its recursive calls too: a plain minimax then visits
    each position once. ``calls['score']`` counts every call that reached the student's ``score``, recursive ones
    included; ``hits`` the answers served from memory. ``cancel_check`` (if set) is asked now and then and may raise
    Cancelled to abandon the work. It belongs to the thread that set it: a button's handler calling ``score_end`` on
    the kernel's main thread is never cancelled by the background job running meanwhile.
    """

    def __init__(self, functions, memoize=True):
        self.functions = {name: fn for name, fn in functions.items() if fn is not None}
        self.memoize = memoize
        self.cache = {}
        self._per_thread = threading.local()
        self.reset_counts()

    @property
    def cancel_check(self):
        return getattr(self._per_thread, 'cancel_check', None)

    @cancel_check.setter
    def cancel_check(self, check):
        self._per_thread.cancel_check = check

    def reset_counts(self):
        self.calls = dict.fromkeys(FUNCTION_NAMES, 0)
        self.hits = 0
        self.seconds = 0.0

    def snapshot(self):
        """(calls of score, all calls, hits, seconds) now, to measure one piece of work by difference."""
        return self.calls['score'], sum(self.calls.values()), self.hits, self.seconds

    def has(self, name):
        return name in self.functions

    def check_cancel(self):
        check = self.cancel_check
        if check is not None:
            check()

    def __call__(self, name, *args):
        self.check_cancel()
        key = (name, *args)
        remember = self.memoize and name != 'print_state'
        if remember and key in self.cache:
            self.hits += 1
            return self.cache[key]
        fn = self.functions.get(name)
        if fn is None:
            raise FunctionError(f'{name} was not given to the widget')
        start = time.perf_counter()
        try:
            if name == 'print_state':
                self.calls[name] += 1
                buffer = io.StringIO()
                with contextlib.redirect_stdout(buffer):
                    fn(*args)
                result = buffer.getvalue()
            elif name == 'score':
                with self._recursion_through(name, fn) as counted:
                    result = counted(*args)
            else:
                self.calls[name] += 1
                result = fn(*args)
        except (Cancelled, FunctionError):
            raise
        except Exception as error:
            raise FunctionError(raised(name, error)) from None
        finally:
            self.seconds += time.perf_counter() - start
        result = check_result(name, result)
        if remember:
            self.cache[key] = result
        return result

    @contextlib.contextmanager
    def _recursion_through(self, name, fn):
        """Point the notebook's global ``name`` at a counting (and, with memoize, remembering) wrapper. A call
        from another thread (a notebook cell running meanwhile) goes straight to the function."""
        owner = threading.get_ident()

        def counted(*args, **kwargs):
            if threading.get_ident() != owner:
                return fn(*args, **kwargs)
            if kwargs or not self.memoize:
                key = None
            else:
                key = (name, *args)
                try:
                    if key in self.cache:
                        self.hits += 1
                        return self.cache[key]
                except TypeError:
                    key = None
            self.calls[name] += 1
            if self.calls[name] % CANCEL_EVERY == 0:
                self.check_cancel()
            result = fn(*args, **kwargs)
            if key is not None:
                try:
                    self.cache[key] = check_result(name, result)
                except FunctionError:
                    pass
            return result

        if inspect.isfunction(fn):
            counted.__dict__ = fn.__dict__     # score.known = {...} keeps working
        for attribute in ('cache_info', 'cache_clear', 'cache_parameters', '__wrapped__'):
            if hasattr(fn, attribute) and not hasattr(counted, attribute):
                setattr(counted, attribute, getattr(fn, attribute))
        with self.rebinding(fn, {name: counted}):
            yield counted

    @contextlib.contextmanager
    def rebinding(self, fn, wrappers):
        """While the block runs, point names in the notebook (the globals of ``fn``) at ``wrappers`` ({name:
        wrapper}), each only where the name is bound to the function the widget was given; yields the names
        rebound. Afterwards each is put back (unless the notebook redefined it meanwhile)."""
        namespace = getattr(inspect.unwrap(fn), '__globals__', None)
        swapped = {}
        if isinstance(namespace, dict):
            for name, wrapper in wrappers.items():
                given = self.functions.get(name)
                if given is not None and namespace.get(name) is given:
                    swapped[name] = given
                    namespace[name] = wrapper
        try:
            yield set(swapped)
        finally:
            for name, given in swapped.items():
                if namespace.get(name) is wrappers[name]:
                    namespace[name] = given
