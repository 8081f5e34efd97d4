"""Counting and tracing the calls a function makes through its own global name (its recursion), and keeping what
a call prints, for the kernel agent (sent into the kernel as text before it) and for the checks run in the
instructor's own kernel. Standard library only. The checker believes a count only with its trace
(coursetools.checks.evidence)."""
import contextlib
import inspect
import io
import numbers

TRACE_LIMIT = 300_000               # traced calls kept per request: more than any count that earns a mark
PRINTED_LIMIT = 256 * 1024          # characters kept of what one call prints: its first and last half


class Trace:
    """Counts the calls made through a function's global name during one call of it, and keeps their trace:
    one row `caller;arguments;value` per call, `caller` being the row of the call it was made from (-1 for the
    first). The rows of one request are kept up to TRACE_LIMIT in all; a count past that goes without."""

    def __init__(self):
        self.rows, self.stack, self.calls, self.kept = [], [], 0, 0

    def begin(self):
        self.rows, self.stack, self.calls = [], [], 0

    def end(self):
        outcome = {'count': self.calls}
        if len(self.rows) == self.calls:
            outcome['trace'] = [';'.join(row) for row in self.rows]
        return outcome

    def wrap(self, function):
        try:
            width = sum(parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
                        for parameter in inspect.signature(function).parameters.values())
        except (TypeError, ValueError):
            width = 0

        def traced(*arguments, **keywords):
            self.calls += 1
            row = None
            if self.kept < TRACE_LIMIT:
                self.kept += 1
                shown = arguments
                if keywords or len(arguments) < width:        # the student's own defaults filled in
                    with contextlib.suppress(TypeError):
                        shown = in_order(function, arguments, keywords)[0]
                row = [str(self.stack[-1] if self.stack else -1)] + [_shown(argument) for argument in shown]
                self.rows.append(row)
            self.stack.append(len(self.rows) - 1 if row is not None else -2)
            try:
                result = function(*arguments, **keywords)
            except BaseException:
                if row is not None:
                    row.append('!')
                raise
            finally:
                self.stack.pop()
            if row is not None:
                row.append(_shown(result[0] if type(result) in (tuple, list) and result else result))
            return result

        traced.__wrapped__ = function
        return traced


def _shown(value):
    """A traced argument or value as short text: a board as its nine squares, a player or number as written;
    '*' for anything else (a memo table), '?' for a value that is not a number."""
    if isinstance(value, str):
        return value if ';' not in value else '?'
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    if isinstance(value, (dict, set, frozenset)) or value is None:
        return '*' if value is not None else '?'
    with contextlib.suppress(Exception):
        cells = ''.join(''.join(row) for row in value)
        if len(cells) == 9:
            return cells
    return '*'


def in_order(function, arguments, keywords):
    """A call's arguments where the function's own parameters take them: (positional, keyword-only)."""
    bound = inspect.signature(function).bind(*arguments, **keywords)
    bound.apply_defaults()
    return bound.args, bound.kwargs


def watching(function, note):
    """`function`, calling `note` with its arguments first (to count or record its calls)."""
    def watched(*arguments, **keywords):
        note(arguments + tuple(keywords.values()))
        return function(*arguments, **keywords)

    watched.__wrapped__ = function
    return watched


class Printed(io.TextIOBase):
    """stdout while the calls of a request run: of what a call prints, the first and last PRINTED_LIMIT / 2
    characters (a result announced after pages of debugging output is still read)."""
    half = PRINTED_LIMIT // 2

    def start(self):
        self.head, self.tail, self.size, self.in_tail = [], [], 0, 0

    def write(self, text):
        text = str(text)
        head = text[:max(self.half - self.size, 0)]
        self.head.append(head)
        self.tail.append(text[len(head):])
        self.size, self.in_tail = self.size + len(text), self.in_tail + len(text) - len(head)
        if self.in_tail > 4 * self.half:
            self.tail, self.in_tail = [''.join(self.tail)[-self.half:]], self.half
        return len(text)

    def writable(self):
        return True

    def text(self):
        head, tail = ''.join(self.head), ''.join(self.tail)[-self.half:]
        cut = self.size - len(head) - len(tail)
        return head + ('\n[%d characters cut by the grader]\n' % cut if cut else '') + tail
