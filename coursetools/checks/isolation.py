"""Isolation in the instructor's own kernel: binding correct or memoized functions in a test cell's globals
until the cell ends, then putting back what was there. (In grading, the checker's session does the same in the
student's kernel.) Each assignment's `isolate` says what to bind; this module owns how, and the memo caches."""

from coursetools.sandbox.inside.kernel_agent import frozen

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
                key = (frozen(args), tuple(sorted(kwargs.items())))
                hash(key)
            except TypeError:
                return function(*args, **kwargs)
        if key not in cache:
            cache[key] = function(*args, **kwargs)
        return cache[key]

    remembering.__wrapped__ = function
    remembering.__name__ = getattr(function, '__name__', 'score')
    return remembering


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
