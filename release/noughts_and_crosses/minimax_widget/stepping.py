"""Step-through search: the notebook's own minimax (``score``) or alpha-beta (``alphabeta``) from a position, as a
sequence of small events a class can follow.

The search is not the widget's: tracing.Tracer runs the notebook's function once from the position, its recursive
calls recorded, and the Steps retell that record. Every value, best move, window and cut is what the notebook's
code did; the widget only compares the numbers it returned to put them into words (and says so when the code did
not return the max or min of what it saw). Below the live depth a whole subtree is one step, its counts exact.

Events (``Step.kind``):
  'enter'   a call of the notebook's function: the moves its moves() listed (and, for alpha-beta, its window);
  'leaf'    a call on a finished board (score_end is not None): what it returned backs up to its parent;
  'deep'    a call at the live depth, retold in one step: what it returned backs up, with the calls inside it;
  'backup'  a searched call's answer backs up: what it returned from the values it saw;
  'cutoff'  the call stopped before trying every move moves() listed there: those are pruned, and why;
  'error'   a function raised or answered nonsense: the steps stop at that call;
  'done'    the search is over: the value at the start and the counts.
"""
from .calls import FunctionError, check_result, format_bound, format_value
from .model import VALUE_WORDS
from .tracing import ORDERS, Tracer, move_between

PREDICTED = ('backup', 'deep')          # the steps whose value predict-then-reveal hides


def other(player):
    """The opponent's mark."""
    return 'o' if player == 'x' else 'x'


def where(path):
    """Where a position is, as words: 'at the start' or 'after 1,1 then 0,2'."""
    return 'after ' + ' then '.join(f'{row},{col}' for row, col in path) if path else 'at the start'


class Step:
    """One event of the search at the position reached by ``path`` (``player`` to move there, board ``state``).
    ``visited`` and ``pruned`` are the running totals after it. A step where a value backs up ('leaf', 'deep',
    'backup') carries ``value``, the child ``seen`` values, and the parent's ``best`` so far and ``window`` after it;
    an 'enter' step the position's own ``window`` and ``options``; a 'cutoff' the ``pruned_moves``. ``searched_with``
    is the window the position at ``path`` was called with (alpha-beta); ``reason`` why its value is what it is."""
    __slots__ = ('kind', 'path', 'player', 'state', 'value', 'move', 'window', 'options', 'seen', 'best',
                 'pruned_moves', 'below', 'text', 'error', 'visited', 'pruned', 'searched_with', 'reason')

    def __init__(self, kind, path, player, text, **fields):
        for name in self.__slots__:
            setattr(self, name, fields.get(name))
        self.kind, self.path, self.player, self.text = kind, path, player, text

    def __repr__(self):
        return f'Step({self.kind!r}, {self.path!r}, {self.text!r})'


class Search:
    """The notebook's ``alphabeta`` (or ``score``) traced through ``call`` (a FunctionCaller), moves in ``order``
    ('listed', 'best', 'worst'). What it records is kept by arguments, so a second search costs little.
    ``tables`` is accepted for compatibility and unused."""

    def __init__(self, call, alphabeta=False, order='listed', tables=None):
        self.alphabeta = alphabeta
        self.tracer = Tracer(call, 'alphabeta' if alphabeta else 'score', order)
        self.call, self.order = call, order
        self.visited = self.pruned = 0

    def totals(self, state, player):
        """(calls the notebook's search makes from here, moves it leaves unsearched); FunctionError if it fails."""
        root = self.tracer.record(state, player, 0)
        if self.tracer.error is not None:
            raise FunctionError(self.tracer.error[0])
        return root.calls, root.pruned

    # -- the search, step by step ----------------------------------------------------------------------------
    def steps(self, state, player, depth=2):
        """Yield the Steps of the notebook's search from (state, player); calls ``depth`` moves down are told in
        one step each. Ends with a 'done' Step, or an 'error' Step where a function failed."""
        self.visited = self.pruned = 0
        try:
            root = self.tracer.record(state, player, depth)
        except FunctionError as error:
            yield self._step('error', (), player, f'Stopped {where(())}: {error}', error=str(error), state=state)
            return
        self.error, self.depth = self.tracer.error, depth
        try:
            yield from self._visit(root, ())
        except _Failed as failed:
            yield self._step('error', failed.path, failed.player, f'Stopped {where(failed.path)}: {failed}',
                             error=str(failed), state=failed.state)
            return
        move = f', best move {root.move[0]},{root.move[1]}' if root.move else ''
        pruned = f'; {self.pruned:,} subtrees pruned' if self.alphabeta else ''
        yield self._step('done', (), player, f'The search is over: the value here is {format_value(root.value)}'
                         f'{move}. {self.visited:,} positions visited{pruned}.', value=root.value,
                         move=root.move, state=state, searched_with=root.window if self.alphabeta else None)

    def _step(self, kind, path, player, text, **fields):
        return Step(kind, path, player, text, visited=self.visited, pruned=self.pruned, **fields)

    def _kind(self, node, path):
        """'leaf' (score_end says the game is over), 'deep' (told in one step) or 'backup' (its calls shown)."""
        if not node.searched:
            try:
                end = self.call('score_end', node.state)
            except FunctionError as error:
                raise _Failed(str(error), path, node.player, node.state) from None
            return 'leaf' if end is not None else 'deep'
        return 'deep' if node.children is None or len(path) >= self.depth else 'backup'

    def _visit(self, node, path):
        """Retell one recorded call; yields the Steps inside it, returns its kind for its parent's step."""
        if not node.done:    # the failure is here or below: show the way to it
            self.visited += 1
            if node.children is not None and node.listed is not None and len(path) < self.depth:
                yield self._enter(node, path)
                yield from self._children(node, path)
            raise _Failed(self.error[0], path, node.player, node.state)
        kind = self._kind(node, path)
        if kind != 'backup':
            self.visited += node.calls
            self.pruned += node.pruned
            return kind
        self.visited += 1
        yield self._enter(node, path)
        yield from self._children(node, path)
        return kind

    def _enter(self, node, path):
        options = self._listed(node)
        window = node.window if self.alphabeta else None
        listed = ', '.join(f'{row},{col}' for row, col in options)
        return self._step('enter', path, node.player, f'{node.player} to move {where(path)}{_window_words(window)}: '
                          f'{len(options)} moves to try ({listed}).', window=window, state=node.state, options=options,
                          searched_with=window)

    def _listed(self, node):
        try:
            return check_result('moves', node.listed) if node.listed is not None else \
                [move_between(node.state, child.state) for child in node.children]
        except FunctionError:
            return []

    def _children(self, node, path):
        searched, listed = [], self._listed(node)
        for number, child in enumerate(node.children):
            move = move_between(node.state, child.state) or (listed[number] if number < len(listed) else (-1, -1))
            kind = yield from self._visit(child, path + (move,))
            searched.append(move)
            last = number + 1 == len(node.children)
            best = node.value if last and node.done else (node.bests[number] if node.bests else None)
            following = None if last else node.children[number + 1].window
            yield self._child_step(child, kind, path + (move,), node.player, best, following)
        skipped = [move for move in listed if move not in searched]
        if node.done and skipped:
            yield self._cutoff(node, path, skipped)

    def _cutoff(self, node, path, skipped):
        """The call stopped trying moves: ``skipped`` were never searched. Why, in the words of its window."""
        self.pruned += len(skipped)
        names = ', '.join(f'{row},{col}' for row, col in skipped)
        window, value, player = node.children[-1].window, node.value, node.player
        if window is None:
            why = f'score returned without trying every move'
        elif player == 'x' and value >= window[1]:
            why = (f'α ≥ β ({format_bound(value)} ≥ {format_bound(window[1])}): o already has '
                   f'{format_bound(window[1])} elsewhere, so x\'s {format_bound(value)} here cannot matter')
        elif player == 'o' and value <= window[0]:
            why = (f'β ≤ α ({format_bound(value)} ≤ {format_bound(window[0])}): x already has '
                   f'{format_bound(window[0])} elsewhere, so o\'s {format_bound(value)} here cannot matter')
        else:
            why = (f'{player}\'s alphabeta stopped with {format_value(value)} (window α {format_bound(window[0])}, '
                   f'β {format_bound(window[1])})')
        text = f'Cut {where(path)}: {why}. {len(skipped)} moves pruned ({names}).'
        return self._step('cutoff', path, player, text, window=window, pruned_moves=skipped, state=node.state,
                          searched_with=node.window if self.alphabeta else None)

    def _child_step(self, child, kind, path, parent, best, window):
        """The step where a child's answer reaches its parent (whose side to move is ``parent``)."""
        mover, value = child.player, format_value(child.value)
        values = [each.value for each in child.children if each.done] if kind == 'backup' else []
        if kind == 'leaf':
            what = f'{where(path)[0].upper()}{where(path)[1:]}: the game is over, score_end says {value}'
        elif kind == 'deep':
            what = f'{mover} to move {where(path)}: searched below in one step ({child.calls:,} positions): {value}'
        else:
            what = f'{mover} to move {where(path)}: {_chose(mover, child.value, values, child.listed is not None)}'
        text = f'{what}, so {value} backs up; {parent}\'s best so far: {format_value(best)}'
        if self.alphabeta and window is not None:
            text += f' (α {format_bound(window[0])}, β {format_bound(window[1])})'
        return self._step(kind, path, mover, text + '.', value=child.value, move=child.move, seen=values,
                          best=best, below=child.calls if kind == 'deep' else 0,
                          window=window if self.alphabeta else None, state=child.state,
                          searched_with=child.window if self.alphabeta else None,
                          reason=self._reason(child, kind, values))

    def _reason(self, child, kind, values):
        """Why the value is what it is, in a few words: '+1: x wins at once with 2,0'."""
        value, mover, move = format_value(child.value), child.player, child.move
        if kind == 'leaf':
            return f'{value}: the game is over here ({VALUE_WORDS.get(child.value, value)})'
        end = self._ends(child)
        if end is not None:
            if end == (1 if mover == 'x' else -1):
                return f'{value}: {mover} wins at once with {_move(move)}'
            return f'{value}: {mover} plays {_move(move)} and the game ends ({VALUE_WORDS.get(end, end)})'
        with_move = f', playing {_move(move)}' if move else ''
        if kind == 'deep':
            return f'{value}: the search below ({child.calls:,} positions) finds {value} for {mover}{with_move}'
        if child.listed is not None and child.searched < len(child.listed):
            bound = 'at least' if mover == 'x' else 'at most'
            return f'{value}: {mover} stopped early (a cut): {bound} {value}, enough to decide above'
        return f'{value}: {mover} to move takes {_chose(mover, child.value, values)}{with_move}'

    def _ends(self, child):
        """score_end of the board after the child's chosen move, or None (also when that cannot be asked)."""
        if not child.move:
            return None
        try:
            board = self.call('play', child.state, child.move[0], child.move[1], child.player)
            return self.call('score_end', board)
        except FunctionError:
            return None


class _Failed(Exception):
    """A function failed at ``path``: the search stops there."""

    def __init__(self, message, path, player, state):
        super().__init__(message)
        self.path, self.player, self.state = path, player, state


def _window_words(window):
    return '' if window is None else f', window (α {format_bound(window[0])}, β {format_bound(window[1])})'


def _move(move):
    return f'{move[0]},{move[1]}'


def _chose(player, value, values, listed=True):
    """'max(+1, 0) = +1' when the call returned the largest (x) or smallest (o) of the values it saw; otherwise
    what it returned, as it is."""
    shown = ', '.join(format_value(each) for each in values)
    word = 'max' if player == 'x' else 'min'
    chosen = value in values and all((value >= each) if player == 'x' else (value <= each) for each in values)
    if chosen:
        return f'{word}({shown}) = {format_value(value)}'
    return f'the code returned {format_value(value)} from ({shown}), not the {word}'
