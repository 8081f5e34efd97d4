"""Recording the notebook's own search: ``score(state, player)`` or ``alphabeta(state, player, alpha, beta)`` is run
once from a position with its global name bound to a recorder (through FunctionCaller.rebinding), so that every
recursive call is seen: its arguments, its depth, what it returned, the moves ``moves()`` listed inside it and how
many of them it searched. The widget decides nothing: every value is one the notebook's function returned.

Calls fewer than ``depth`` moves down keep their children (a tree the step panel walks); deeper ones keep only
counts (calls inside, moves left unsearched), so the record stays small however big the search. A call repeated
with the same arguments is answered from the record (the functions are pure), its counts added again: the counts
are those of the search without any memory. Move orders other than 'listed' bind ``moves`` to a wrapper that
reorders its list by the values the notebook's ``score`` (or ``alphabeta`` with the full window) gives the boards
after each move."""
import math
import threading

from .calls import Cancelled, FunctionError, as_state, check_result, raised

INF = math.inf
ORDERS = ('listed', 'best', 'worst')    # moves as moves() lists them, best first, worst first
HELPERS = ('score_end', 'play', 'moves')


class Call:
    """One recorded call: ``args``, the ``result`` it returned (raw) and checked (``value``, ``move``); ``listed``
    the list moves() returned inside it (as handed to the notebook); ``children`` the recorded calls it made (only
    above the live depth, else None); ``calls`` the calls in its subtree (itself included); ``pruned`` the listed
    moves never searched in its subtree; ``bests`` what it returns when moves() lists only its first 1, 2, …
    searched moves (its own best so far, asked of the notebook); ``done`` False while (or if never) returned."""
    __slots__ = ('args', 'result', 'value', 'move', 'listed', 'children', 'searched', 'calls', 'pruned', 'bests',
                 'done')

    def __init__(self, args, detail):
        self.args, self.children = args, [] if detail else None
        self.result = self.value = self.move = self.listed = self.bests = None
        self.searched, self.calls, self.pruned, self.done = 0, 1, 0, False

    @property
    def state(self):
        return self.args[0]

    @property
    def player(self):
        return self.args[1]

    @property
    def window(self):
        return tuple(self.args[2:4]) if len(self.args) >= 4 else None

    def count(self, child):
        """A call made from here has returned: its counts are this call's too."""
        self.searched += 1
        self.calls += child.calls
        self.pruned += child.pruned


class Stop(BaseException):
    """A function failed: the recording stops (a BaseException: a student's ``except Exception`` lets it by)."""


class Tracer:
    """Records the search of ``name`` ('score' or 'alphabeta') through ``call`` (a FunctionCaller) with moves in
    ``order``. Its memory (by arguments) is kept from one recording to the next."""

    def __init__(self, call, name, order='listed'):
        if order not in ORDERS:
            raise ValueError(f'order must be one of {ORDERS}')
        self.call, self.name, self.order = call, name, order
        self.memory, self.values = {}, {}
        self.stack, self.mode, self.error = [], 'trace', None
        self.depth, self.owner, self.root, self.replaying = 0, None, None, None

    # -- a recording -----------------------------------------------------------------------------------------
    def record(self, state, player, depth):
        """The root Call of the notebook's search from (state, player), children kept ``depth`` moves down.
        ``self.error`` is then (message, path) if a function failed (the root, or a Call below it, not done)."""
        fn = self.call.functions.get(self.name)
        if fn is None:
            raise FunctionError(f'{self.name} was not given to the widget')
        self.target = fn.__wrapped__ if hasattr(fn, 'cache_info') and hasattr(fn, '__wrapped__') else fn
        args = (state, player) if self.name == 'score' else (state, player, -INF, INF)
        self.depth, self.stack, self.error, self.mode = depth, [], None, 'trace'
        self.owner = threading.get_ident()
        recorder = self._recorder()
        wrappers = {self.name: recorder, **{helper: self._helper(helper) for helper in HELPERS}}
        self.root = None
        with self.call.rebinding(fn, wrappers):
            try:
                self._enter(args, recorder)
            except Stop:
                pass
            if self.error is None:
                self._replay_all(self.root, recorder, set())
        return self.root

    def _recorder(self):
        def recorded(*args, **kwargs):
            if threading.get_ident() != self.owner or kwargs:
                return self.target(*args, **kwargs)
            if self.mode == 'order':   # values that order moves: each asked of the notebook once
                try:
                    if args not in self.values:
                        self.values[args] = self.target(*args)
                    return self.values[args]
                except TypeError:
                    return self.target(*args)
            if self.mode == 'replay':
                known = self._known(args, detail=False)
                return known.result if known is not None else self.target(*args)
            return self._enter(args, recorded)
        return recorded

    def _known(self, args, detail):
        try:
            known = self.memory.get(args)
        except TypeError:   # unhashable arguments: no memory
            return None
        return known if known is not None and (known.children is not None or not detail) else None

    def _enter(self, args, recorder):
        """One call of the notebook's function (or its answer from the record), added to the calling frame."""
        self.call.check_cancel()
        detail = len(self.stack) < self.depth
        known = self._known(args, detail)
        parent = self.stack[-1] if self.stack else None
        node = known if known is not None else Call(args, detail)
        if parent is None:
            self.root = node
        elif parent.children is not None:
            parent.children.append(node)     # at once: a call that fails stays on the path to the failure
        if known is not None:
            if parent is not None:
                parent.count(known)
            return known.result
        self.stack.append(node)
        recorder.__dict__ = {}                # score.known = {...} starts empty: the whole search is seen
        try:
            result, (node.value, node.move) = self._checked(self.name, self.target, args)
        finally:
            self.stack.pop()
        node.result, node.done = result, True
        if node.listed is not None and node.searched < len(node.listed):
            node.pruned += len(node.listed) - node.searched
        try:
            self.memory[args] = node
        except TypeError:
            pass
        if parent is not None:
            parent.count(node)
        return result

    def _checked(self, name, function, args, kwargs=None):
        """(what function(*args) returned, check_result's reading of it); a raise or an unusable answer ends the
        trace here, with the message kept for the step panel."""
        try:
            result = function(*args, **(kwargs or {}))
            return result, check_result(name, result)
        except (Cancelled, Stop):
            raise
        except FunctionError as error:
            self._failed(str(error))
            raise Stop() from None
        except Exception as error:
            self._failed(raised(name, error))
            raise Stop() from None

    def _failed(self, message):
        if self.error is None:
            path = []
            for above, below in zip(self.stack, self.stack[1:]):
                path.append(move_between(above.state, below.state))
            self.error = (message, tuple(path))

    # -- the notebook's score_end, play and moves, seen from inside the search -------------------------------
    def _helper(self, name):
        given = self.call.functions[name]

        def helper(*args, **kwargs):
            if threading.get_ident() != self.owner or self.mode == 'order':
                return given(*args, **kwargs)
            if self.mode == 'replay':
                if name == 'moves' and args and args[0] == self.replaying[0]:
                    return list(self.replaying[1])
                return given(*args, **kwargs)
            result, _ = self._checked(name, given, args, kwargs)
            if name == 'moves' and self.stack and args and args[0] == self.stack[-1].state:
                result = self._ordered(self.stack[-1], list(result))
                if self.stack[-1].listed is None:
                    self.stack[-1].listed = result
            return result
        return helper

    def _ordered(self, frame, listed):
        """The list moves() returned, in the Tracer's order: by the notebook's value of the board after each move
        (stable, so equal values keep the listed order)."""
        if self.order == 'listed':
            return listed
        state, player = frame.state, frame.player
        opponent = 'o' if player == 'x' else 'x'
        self.mode = 'order'
        try:
            after = []
            for move in check_result('moves', listed):
                board = self.call('play', state, move[0], move[1], player)
                answer = (self.call('score', board, opponent) if self.call.has('score')
                          else self.call('alphabeta', board, opponent, -INF, INF))
                after.append(answer[0])
        except FunctionError as error:
            self._failed(str(error))
            raise Stop() from None
        finally:
            self.mode = 'trace'
        sign = (-1 if player == 'x' else 1) * (1 if self.order == 'best' else -1)
        ranked = sorted(range(len(listed)), key=lambda index: sign * after[index])
        return [listed[index] for index in ranked]

    # -- best so far, asked of the notebook ------------------------------------------------------------------
    def _replay_all(self, node, recorder, seen):
        """For every Call with children: what the notebook's function returns there when moves() lists only the
        first 1, 2, … of the moves it searched (the children come from the record): its best so far."""
        if node.children is None or id(node) in seen:
            return
        seen.add(id(node))
        for child in node.children:
            self._replay_all(child, recorder, seen)
        if node.bests is not None:
            return
        bests = []
        for count in range(1, len(node.children)):
            bests.append(self._replay(node, count, recorder))
        node.bests = bests + [node.value]

    def _replay(self, node, count, recorder):
        if node.listed is None:
            return None
        self.mode, self.replaying = 'replay', (node.state, node.listed[:count])
        recorder.__dict__ = {}
        try:
            self.call.check_cancel()
            return check_result(self.name, self.target(*node.args))[0]
        except Exception:
            return None
        finally:
            self.mode = 'trace'


def move_between(before, after):
    """The square where two boards differ, as (row, col), or None when that is not exactly one square."""
    before, after = as_state(before), as_state(after)
    try:
        changed = [(row, col) for row in range(3) for col in range(3) if before[row][col] != after[row][col]]
    except Exception:
        return None
    return changed[0] if len(changed) == 1 else None
