"""The trusted checker: where a notebook's test cells run while it is graded.

No student code ever runs in this process. The student's cells run in their sandboxed kernel; the test cells
(visible asserts and hidden checks alike) run here, in a namespace built from the instructor's own locked cells
(the gradebook's copies), where each of the notebook's graded functions is a `Proxy`: calling it asks the
kernel to call the student's function and brings back what it returned and printed, as plain data
(`coursetools.judge.answers`). So a student's code can change anything in its own process, IPython included, and
still only answer questions; the marks are decided here.

Nothing a student touched is reused: the process started by the host (`checker_host.CheckerServer`) imports
the checks and computes their tables once, then forks one child per notebook (a `Session`), which serves that
notebook alone under CPU-time and memory limits and is killed when the notebook is done or anything unexpected
happens.

The process itself (warm-up, a session per connection, limits) is `checker_server`; the frames on the socket
are `frames`.
"""
import builtins
import contextlib
import io
import json
import sys
import traceback

from coursetools.judge import answers, failures
from coursetools.judge.checker_plan import answer_table, needed_tables, tested_function
from coursetools.judge.frames import receive, send

SESSION_KEY = '__course_checker_session__'
STREAM_LIMIT = 200 * 1024        # characters of a test cell's printed output kept


# --- what the test cells call ----------------------------------------------------------------------------------

class Outcome:
    """One call of a student's function: its value or error, and what it printed."""

    def __init__(self, value=None, error=None, printed='', count=None, records=None, after=None, trace=None):
        self.value, self.error, self.printed = value, error, printed
        self.count, self.records, self.after, self.trace = count, records or {}, after, trace

    def result(self):
        """The value, or raise the error the call ended with."""
        if self.error is not None:
            raise self.error
        return self.value


class Proxy:
    """Stands for one of the notebook's graded functions: a call runs the student's function in the kernel."""

    def __init__(self, session, name):
        self._session, self.__name__ = session, name

    def __repr__(self):
        return f'<the notebook\'s function {self.__name__}>'

    def __call__(self, *arguments):
        outcome, = self._session.call(self.__name__, [arguments], sync=True)
        _update_in_place(arguments, outcome.after)
        sys.stdout.write(outcome.printed)
        return outcome.result()

    def each(self, calls, shared=None, count=False, first=8, rest_at_once=False):
        """Outcomes of many calls, fetched from the kernel in batches growing from `first` while they are
        consumed (a check that stops at the first wrong answer does not pay for the rest); with `rest_at_once`
        (calls that answer at once) all the calls after the first batch are the second. Arguments that are
        `answers.Shared` are one object in the kernel for all the calls (and for the batches after); `shared`
        receives them."""
        calls = [tuple(arguments) for arguments in calls]
        start, size = 0, max(1, first)
        while start < len(calls):
            last = start + size >= len(calls)
            yield from self._session.call(self.__name__, calls[start:start + size], count=count,
                                          shared=shared if last else None)
            start += size
            size = len(calls) if rest_at_once else min(size * 4, 2048)

    def counted(self, *arguments):
        """(result, calls): one call, counting the calls made through the function's global name."""
        outcome = self.counted_outcome(*arguments)
        return outcome.result(), outcome.count

    def counted_outcome(self, *arguments):
        """The outcome of one call, its count and trace (coursetools.checks.evidence) included."""
        outcome, = self._session.call(self.__name__, [arguments], sync=True, count=True)
        _update_in_place(arguments, outcome.after)
        sys.stdout.write(outcome.printed)
        return outcome


def _memo_key(name, mode, arguments, encoded):
    """The key a call is remembered under: its arguments with their types (so True and 1 differ), or their JSON
    form when they cannot be hashed."""
    try:
        key = (name, mode, tuple(type(a) for a in arguments), arguments)
        hash(key)
        return key
    except TypeError:
        return name, mode, json.dumps(encoded)


def _update_in_place(arguments, after):
    """Mutable arguments the student's function changed in the kernel are changed here too (a memo table)."""
    for argument, new in zip(arguments, after or ()):
        if isinstance(argument, dict) and isinstance(new, dict):
            argument.clear()
            argument.update(new)
        elif isinstance(argument, list) and isinstance(new, list):
            argument[:] = new
        elif isinstance(argument, set) and isinstance(new, (set, frozenset)):
            argument.clear()
            argument.update(new)


_current = [None]


def current():
    """The session of the notebook being checked in this process, or None (not in the checker)."""
    return _current[0]


def session_in(namespace):
    """The checker session a test cell's globals belong to, or None outside the checker."""
    session = namespace.get(SESSION_KEY) if isinstance(namespace, dict) else None
    return session if isinstance(session, Session) else None


class Session:
    """One notebook being graded: the test cells' namespace and the link to the host for kernel calls."""

    def __init__(self, host_in, host_out, notebook):
        self.host_in, self.host_out = host_in, host_out
        self.graded = list(notebook['graded'])
        self.namespace = {'__name__': '__main__', '__builtins__': builtins, SESSION_KEY: self}
        self.cell = None
        self.cell_stdout, self.cell_stderr = _Capped(), _Capped()
        self.testing = None
        self.context = {}
        self.records = {}
        self.remembered = {}
        self.notes = []
        self.errors = []
        self.tests = dict(notebook.get('tests') or {})
        self.tested_by = {cell: tested_function(source) for cell, source in self.tests.items()}
        self.done = set(notebook.get('done') or ())
        self.tables = {}
        for cell_id, source in notebook['helpers']:
            try:
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                    exec(compile(source, f'<{cell_id}>', 'exec'), self.namespace)
            except Exception as error:
                self.errors.append(f'locked cell {cell_id} failed in the checker: {type(error).__name__}: {error}')
        self.overrides = {}
        self.bind_defaults()

    def bind_defaults(self):
        for name in self.graded:
            self.namespace[name] = Proxy(self, name)
        self.namespace.update(self.overrides)
        self.testing, self.context, self.counts_remembered = None, {}, False

    def tested(self, function):
        """True once every test cell of `function` has run in this notebook."""
        cells = [cell for cell, tested in self.tested_by.items() if tested == function]
        return bool(cells) and all(cell in self.done for cell in cells)

    def isolate(self, testing, context, kernel_answers, local_references):
        """While this cell runs, calls of `testing` run in the kernel with `context` (see kernel_agent), and the
        notebook's other graded functions are the checker's own correct versions.

        The functions `testing` may use are given to the kernel as answers only (`kernel_answers`: name ->
        (reference, the argument tuples to answer)), never as code, and a graded function's answers only once
        its own test cells have run, so that they cannot be turned into its marks; until then the student's
        own version stays."""
        self.testing = testing
        given = []
        for name in context.get('replace', ()):
            if name in self.graded and not self.tested(name):
                self.notes.append(f'{name} was not replaced while {testing} was tested: its own tests had not run')
                continue
            self.tables[name] = answer_table(*kernel_answers[name])
            given.append(name)
        self.context = {
            'replace': given,
            'memoize': dict(context.get('memoize', {})),
            'record': list(context.get('record', ())),
        }
        self.counts_remembered = bool(context.get('remember_counted'))
        for name in self.graded:
            if name != testing and name in local_references:
                self.namespace[name] = local_references[name]

    def override(self, names):
        """Replace names the locked cells defined with versions that work on proxies (kept for every cell)."""
        self.overrides.update(names)
        self.namespace.update(names)

    def call(self, name, calls, *, sync=False, count=False, shared=None):
        """Outcomes of calling the student's `name` on each argument tuple, in the kernel."""
        encoded = answers.encode_calls(calls)
        context = self.context if name == self.testing else {}
        mode = context.get('memoize', {}).get(name)
        remember = mode is not None and not (sync or count) and shared is None
        if context and self.counts_remembered and shared is None:
            mode, count, remember = 'counted', True, True
        if not remember:
            return self._call(name, calls, encoded, context, sync=sync, count=count, shared=shared)
        # The function's answers are remembered while it is tested (it is pure by the task's definition), so
        # a call already made in this notebook is answered from here, as the kernel's memo would answer it.
        # With `remember_counted` (a search whose calls are counted, never memoized in the kernel), every
        # top-level search is counted and remembered: the checks of a task, visible and hidden, share one
        # search per position.
        keys = [_memo_key(name, mode, arguments, sent) for arguments, sent in zip(calls, encoded)]
        missing = [i for i, key in enumerate(keys) if key not in self.remembered]
        if missing:
            fresh = self._call(name, [calls[i] for i in missing], [encoded[i] for i in missing], context,
                               sync=sync, count=count)
            for i, outcome in zip(missing, fresh):
                self.remembered[keys[i]] = outcome
        return [self.remembered[key] for key in keys]

    def _call(self, name, calls, encoded, context, *, sync=False, count=False, shared=None):
        request = {'function': name, 'calls': encoded, 'cell': self.cell,
                   'sync': sync, 'count': count, 'want_shared': shared is not None, **context}
        text = json.dumps(request, allow_nan=True, separators=(',', ':'))
        payload = self.exchange(text)
        needed = needed_tables(payload, context.get('replace', ()))
        if needed:          # a new kernel: the answers it may use go with the request, once per kernel
            payload = self.exchange(text[:-1] + ',"tables":{' + ','.join(
                f'{json.dumps(table)}:"{self.tables[table]}"' for table in needed) + '}}')
        for stream, text in payload.get('streams', ()):     # warnings, logging, stray output: shown, never judged
            (self.cell_stderr if stream == 'stderr' else self.cell_stdout).write(text)
        if 'gone' in payload:
            message = str(payload.get('message', ''))
            if payload['gone'] == 'CellTimeoutError':
                message = message.rstrip('.') + answers.still_running(name, payload.get('text'))
            raise answers.KernelGone(payload['gone'], message)
        try:
            reply = answers.decode(payload.get('text'))
            outcomes = self._outcomes(name, reply, len(calls))
        except answers.AnswerError as error:
            self.notes.append(f'the kernel did not answer a call of {name} properly: {error}')
            raise answers.AnswerError(f'{name}: no answer came back from your kernel ({error}). Does the call '
                                      'end? A loop that never stops, or prints without end, looks like this.') from None
        if shared is not None:
            shared.clear()
            contents = reply.get('shared') if isinstance(reply.get('shared'), dict) else {}
            shared.update(contents)
        if outcomes and outcomes[-1].records:
            self.records = outcomes[-1].records
        return outcomes

    def exchange(self, request):
        """Send one request (JSON text, made here so that the host only passes it on) to the host, which
        performs it in the kernel; its answer: {'text': the kernel's answer} or {'gone': why there is none},
        and 'streams'."""
        send(self.host_out, ('call', request))
        kind, payload = receive(self.host_in)
        if kind != 'answer':
            raise RuntimeError(f'unexpected message from the host: {kind}')
        return payload

    def _outcomes(self, name, reply, expected):
        if not isinstance(reply, dict):
            raise answers.AnswerError('not an answer')
        if 'missing' in reply:
            raise NameError(f'name {name!r} is not defined: the notebook has no function {name}. '
                            f'Did you run its cell, and keep its name?')
        if 'not_callable' in reply:
            kind = reply.get('type') if isinstance(reply.get('type'), str) else 'value'
            raise answers.NotAFunction(f'`{name}` is not a function any more (it is a {kind}). Did a line like '
                            f'`{name} = {name}(...)` replace it? Rename that variable and re-run the notebook.')
        if 'failed' in reply:
            raise answers.AnswerError(str(reply['failed'])[:300])
        results = reply.get('results')
        if not isinstance(results, list) or len(results) > expected:
            raise answers.AnswerError('no results')
        outcomes = [self._outcome(name, result) for result in results]
        if reply.get('interrupted') or len(outcomes) < expected:
            raise answers.KernelGone('CellTimeoutError', 'interrupted')
        return outcomes

    def _outcome(self, name, entry):
        if not (isinstance(entry, dict) and len(entry) == 1 and '!' in entry):
            return Outcome(value=entry)
        result = entry['!']
        if not isinstance(result, dict):
            raise answers.AnswerError('a result that is not a record')
        printed = result.get('printed') if isinstance(result.get('printed'), str) else ''
        records = result.get('records') if isinstance(result.get('records'), dict) else {}
        after = result.get('after') if isinstance(result.get('after'), list) else None
        count = result.get('count') if type(result.get('count')) is int else None
        trace = result.get('trace') if isinstance(result.get('trace'), list) else None
        if 'value' in result:
            return Outcome(value=result['value'], printed=printed, count=count, records=records, after=after,
                           trace=trace)
        if 'refused' in result:
            kind = str(result['refused'])[:80]
            self.notes.append(f'{name} returned an object that is not plain data ({kind})')
            error = answers.NotPlainData(f'{name} returned an object of type {kind}; return numbers, strings, '
                                         'tuples or lists')
            return Outcome(error=error, printed=printed, count=count, records=records, after=after)
        return Outcome(error=answers.student_error(result.get('error')), printed=printed, count=count,
                       records=records, after=after, trace=trace)

    # --- running a test cell

    def run(self, cell_id, source):
        """Run one test cell; its outputs as nbformat dicts."""
        self.cell = cell_id
        stdout, stderr = self.cell_stdout, self.cell_stderr = _Capped(), _Capped()
        error = None
        try:
            code = compile(source, f'<{cell_id}>', 'exec')
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                exec(code, self.namespace)
        except answers.KernelGone as gone:
            error = _error_output(gone.ename, gone.message, [])
        except CheckerLimit as limit:
            error = _error_output('CheckerLimitError', str(limit), [])
        except Exception as raised:
            error = self._error(raised, source)
        finally:
            self.bind_defaults()
            self.done.add(cell_id)
        outputs = []
        for name, stream in (('stdout', stdout), ('stderr', stderr)):
            if stream.getvalue():
                outputs.append({'output_type': 'stream', 'name': name, 'text': stream.text()})
        if error:
            outputs.append(error)
        return outputs

    def _error(self, raised, source):
        ename = type(raised).__name__
        evalue = str(raised)
        lines = []
        student = getattr(raised, 'student_traceback', '') or getattr(raised.__cause__, 'student_traceback', '')
        if student:
            lines.append('In your code:\n' + student.rstrip('\n'))
        where = failures.where_it_failed(raised, f'<{self.cell}>', source)
        if where:
            lines.append(where)
        internal = not isinstance(raised, (AssertionError, answers.StudentError, answers.NotPlainData,
                                           answers.NotAFunction, NameError, answers.AnswerError))
        if internal:      # a defect of the checks themselves: its whole traceback goes to the grader's log
            print(f'checker: cell {self.cell} raised\n{"".join(traceback.format_exception(raised))}',
                  file=sys.stderr, flush=True)
        return _error_output(ename, evalue, lines)


ERROR_LIMIT = 4000          # characters of an error message, and of each traceback entry, shown


def _error_output(ename, evalue, lines):
    evalue = _cut(str(evalue), ERROR_LIMIT)
    ename = ename[:100]
    lines = [_cut(line, ERROR_LIMIT) for line in lines[-20:]]
    return {'output_type': 'error', 'ename': ename, 'evalue': evalue,
            'traceback': lines + [f'\x1b[0;31m{ename}\x1b[0m: {evalue}']}


def _cut(text, limit):
    return text if len(text) <= limit else text[:limit] + f'... [{len(text) - limit} more characters cut]'


class _Capped(io.StringIO):
    def write(self, text):
        if self.tell() < STREAM_LIMIT:
            return super().write(str(text)[:STREAM_LIMIT - self.tell()])
        self.cut = True
        return len(text)

    cut = False

    def text(self):
        return self.getvalue() + ('\n[output cut by the grader]\n' if self.cut else '')


class CheckerLimit(Exception):
    """The checks of a test cell used more CPU time than they may (an answer built to make them slow)."""
