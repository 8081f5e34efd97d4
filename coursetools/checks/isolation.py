"""Isolation in the instructor's own kernel: binding correct or memoized functions in a test cell's globals
until the cell ends, then putting back what was there. (In grading, the checker's session does the same in the
student's kernel.) Each assignment's `isolate` says what to bind; this module owns how, and the memo caches."""

MISSING = object()

_score_caches = {}


def memoized(function, mode):
    """`function` with its results remembered per argument tuple (boards as lists or arrays included; other
    arguments that cannot be hashed pass through).

    One cache per (function, mode): results computed with reference helpers ('isolated') are never reused
    when the student's own helpers are in play ('own').
    """
    cache = _score_caches.setdefault((function, mode), {})

    def remembering(*args, **kwargs):
        try:
            key = (args, tuple(sorted(kwargs.items())))
            hash(key)
        except TypeError:
            try:
                key = (_frozen(args), tuple(sorted(kwargs.items())))
                hash(key)
            except TypeError:
                return function(*args, **kwargs)
        if key not in cache:
            cache[key] = function(*args, **kwargs)
        return cache[key]

    remembering.__wrapped__ = function
    remembering.__name__ = getattr(function, '__name__', 'score')
    return remembering


def _frozen(value):
    """A hashable stand-in for an argument that cannot be hashed, so that boards given as lists (or numpy
    arrays) are remembered too. Container types are part of it: it never equals a hashable argument's key."""
    if isinstance(value, (list, tuple)):
        return type(value).__name__, tuple(_frozen(item) for item in value)
    to_list = getattr(value, 'tolist', None)
    if callable(to_list) and not isinstance(value, (str, bytes)):
        return type(value).__name__, _frozen(to_list())
    return value


def clear_student_cache(function):
    """Empty the student's own cache (`functools.lru_cache` and the like), if `function` has one."""
    clear = getattr(function, 'cache_clear', None)
    if callable(clear):
        clear()


def replace_until_cell_ends(namespace, replacements, then=None):
    """Bind `replacements` in `namespace` until the current cell ends, then put back what was there (or
    nothing) and call `then`. Returns the undo function, for use outside IPython."""
    saved = {name: namespace.get(name, MISSING) for name in replacements}
    namespace.update(replacements)

    def restore(*_):
        for name, value in saved.items():
            if value is MISSING:
                namespace.pop(name, None)
            else:
                namespace[name] = value
        if then:
            then()

    _run_when_cell_ends(restore)
    return restore


def _run_when_cell_ends(action):
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return

    def once(*args):
        shell.events.unregister('post_run_cell', once)
        action()

    shell.events.register('post_run_cell', once)
