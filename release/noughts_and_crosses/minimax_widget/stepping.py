"""Step-through search: minimax or alpha-beta from a position, as a sequence of small events a class can follow.

The search is the procedure the workbooks teach, run over the notebook's own ``score_end``, ``moves`` and
``play`` (through a FunctionCaller): every winner, move and board comes from the student's code; only the
bookkeeping (who chooses, the window, what is pruned) is the widget's, because that bookkeeping is what it
teaches. Below the live depth a subtree is searched in one step, so every count is still exact.

Events (``Step.kind``):
  'enter'   a position is entered: its moves are listed (and, for alpha-beta, its window shown);
  'leaf'    a position where score_end says the game is over: its value backs up to its parent;
  'deep'    a position at the live depth, searched in one step: its value backs up;
  'backup'  a searched position's value backs up, x taking the largest, o the smallest;
  'cutoff'  alpha >= beta at a position: its remaining moves are pruned, and why;
  'error'   a function raised or answered nonsense: the search stops at that position;
  'done'    the search is over: the value at the start and the counts.
"""
import math

from .calls import FunctionError, format_bound, format_value, raised

INF = math.inf
ORDERS = ('listed', 'best', 'worst')    # moves as moves() lists them, best first, worst first
PREDICTED = ('backup', 'deep')          # the steps whose value predict-then-reveal hides


def other(player):
    """The opponent's mark."""
    return 'o' if player == 'x' else 'x'


def better(player, value, than):
    """True if ``value`` is strictly better than ``than`` for ``player`` (x wants more, o less)."""
    return value > than if player == 'x' else value < than


def where(path):
    """Where a position is, as words: 'at the start' or 'after 1,1 then 0,2'."""
    return 'after ' + ' then '.join(f'{row},{col}' for row, col in path) if path else 'at the start'


class Step:
    """One event of the search at the position reached by ``path`` (``player`` to move there, board ``state``).
    ``visited`` and ``pruned`` are the running totals after it. A step where a value backs up ('leaf', 'deep',
    'backup') carries ``value``, the child ``seen`` values, and the parent's ``best`` so far and ``window`` after it;
    an 'enter' step the position's own ``window`` and ``options``; a 'cutoff' the ``pruned_moves``."""
    __slots__ = ('kind', 'path', 'player', 'state', 'value', 'move', 'window', 'options', 'seen', 'best',
                 'pruned_moves', 'below', 'text', 'error', 'visited', 'pruned')

    def __init__(self, kind, path, player, text, **fields):
        for name in self.__slots__:
            setattr(self, name, fields.get(name))
        self.kind, self.path, self.player, self.text = kind, path, player, text

    def __repr__(self):
        return f'Step({self.kind!r}, {self.path!r}, {self.text!r})'


class _Result:
    """What a position's search hands back to its parent: its value and how it was reached."""
    __slots__ = ('value', 'move', 'kind', 'seen', 'below', 'state')

    def __init__(self, value, move, kind, seen=(), below=0, state=None):
        self.value, self.move, self.kind, self.seen, self.below, self.state = value, move, kind, seen, below, state


class Search:
    """Searches through ``call`` (a FunctionCaller). ``order`` is how moves are tried ('listed', 'best',
    'worst'); ``alphabeta`` prunes with the workbook's convention (first strictly better move kept, α or β
    updated after each move, cut when α ≥ β). Whole subtrees searched at once are remembered by position (and
    window), which is exact: the same search from the same position does the same work. ``tables`` (a dict) lets
    searches in other orders over the same functions share what does not depend on the order."""

    def __init__(self, call, alphabeta=False, order='listed', tables=None):
        if order not in ORDERS:
            raise ValueError(f'order must be one of {ORDERS}')
        self.call, self.alphabeta, self.order = call, alphabeta, order
        tables = {} if tables is None else tables
        self._plain, self._listed = tables.setdefault('plain', {}), tables.setdefault('listed', {})
        self._pruning, self._children = {}, {}
        self.visited = self.pruned = 0

    # -- the functions of the notebook -----------------------------------------------------------------------
    def children(self, state, player):
        """[(move, board after it)] in the search's order, or None when score_end says the game is over."""
        key = (state, player)
        if key not in self._children:
            options = self.listed(state, player)
            self._children[key] = None if options is None else self._sorted(options, player)
        return self._children[key]

    def listed(self, state, player):
        """[(move, board after it)] as moves() lists them, or None when score_end says the game is over."""
        key = (state, player)
        if key not in self._listed:
            if self.call('score_end', state) is not None:
                self._listed[key] = None
            else:
                self._listed[key] = [(move, self.call('play', state, move[0], move[1], player))
                                     for move in self.call('moves', state)]
        return self._listed[key]

    def _sorted(self, options, player):
        """The moves in the search's order: values for sorting come from a full search of each child."""
        if self.order == 'listed':
            return options
        sign = (-1 if player == 'x' else 1) * (1 if self.order == 'best' else -1)
        return sorted(options, key=lambda option: sign * self.plain(option[1], other(player))[0])

    # -- whole subtrees, searched at once --------------------------------------------------------------------
    def plain(self, state, player):
        """(value, positions a plain minimax visits from here, the position included)."""
        key = (state, player)
        if key not in self._plain:
            options = self.listed(state, player)
            if options is None:
                self._plain[key] = (self.call('score_end', state), 1)
            else:
                best, visited = None, 1
                for _, child in options:
                    value, below = self.plain(child, other(player))
                    visited += below
                    if best is None or better(player, value, best):
                        best = value
                self._plain[key] = (best, visited)
        return self._plain[key]

    def pruning(self, state, player, alpha, beta):
        """(value, positions alpha-beta visits from here, subtrees it prunes) with the window (alpha, beta)."""
        key = (state, player, alpha, beta)
        if key not in self._pruning:
            options = self.children(state, player)
            if options is None:
                self._pruning[key] = (self.call('score_end', state), 1, 0)
            else:
                best, visited, pruned = (-INF if player == 'x' else INF), 1, 0
                for number, (_, child) in enumerate(options):
                    value, below, cut = self.pruning(child, other(player), alpha, beta)
                    visited, pruned = visited + below, pruned + cut
                    if better(player, value, best):
                        best = value
                    alpha, beta = (best if player == 'x' and best > alpha else alpha,
                                   best if player == 'o' and best < beta else beta)
                    if alpha >= beta:
                        pruned += len(options) - number - 1
                        break
                self._pruning[key] = (best, visited, pruned)
        return self._pruning[key]

    # -- the search, step by step ----------------------------------------------------------------------------
    def steps(self, state, player, depth=2):
        """Yield the Steps of the search from (state, player); positions ``depth`` moves down are searched in
        one step each. Ends with a 'done' Step, or an 'error' Step where a function failed."""
        self.visited = self.pruned = 0
        try:
            result = yield from self._visit(state, player, (), -INF, INF, depth)
        except _Failed as failed:
            yield self._step('error', failed.path, failed.player, f'Stopped {where(failed.path)}: {failed}',
                             error=str(failed), state=failed.state)
            return
        move = f', best move {result.move[0]},{result.move[1]}' if result.move else ''
        pruned = f'; {self.pruned:,} subtrees pruned' if self.alphabeta else ''
        yield self._step('done', (), player, f'The search is over: the value here is {format_value(result.value)}'
                         f'{move}. {self.visited:,} positions visited{pruned}.', value=result.value,
                         move=result.move, state=state)

    def _step(self, kind, path, player, text, **fields):
        return Step(kind, path, player, text, visited=self.visited, pruned=self.pruned, **fields)

    def _ask(self, what, path, player, state):
        """Run ``what()`` (a call of the notebook's functions); a failure becomes _Failed at this position."""
        try:
            return what()
        except FunctionError as error:
            raise _Failed(str(error), path, player, state) from None
        except Exception as error:   # a caller that does not check its functions
            raise _Failed(raised('a function', error), path, player, state) from None

    def _visit(self, state, player, path, alpha, beta, depth):
        """Search one position; yields the Steps inside it, returns a _Result for its parent to report."""
        self.visited += 1
        options = self._ask(lambda: self.children(state, player), path, player, state)
        if options is None:
            end = self._ask(lambda: self.call('score_end', state), path, player, state)
            return _Result(end, None, 'leaf', state=state)
        if len(path) >= depth:
            return self._at_once(state, player, path, alpha, beta)
        window = (alpha, beta) if self.alphabeta else None
        listed = ', '.join(f'{row},{col}' for (row, col), _ in options)
        yield self._step('enter', path, player, f'{player} to move {where(path)}{_window_words(window)}: '
                         f'{len(options)} moves to try ({listed}).', window=window, state=state,
                         options=[move for move, _ in options])
        best, best_move, seen = (-INF if player == 'x' else INF), None, []
        for number, (move, child) in enumerate(options):
            result = yield from self._visit(child, other(player), path + (move,), alpha, beta, depth)
            seen.append(result.value)
            if better(player, result.value, best):
                best, best_move = result.value, move
            if self.alphabeta:
                alpha, beta = (best if player == 'x' and best > alpha else alpha,
                               best if player == 'o' and best < beta else beta)
            yield self._child_step(result, path + (move,), player, best, (alpha, beta))
            if self.alphabeta and alpha >= beta and number + 1 < len(options):
                yield self._cutoff(path, player, state, alpha, beta, [m for m, _ in options[number + 1:]])
                break
        return _Result(best, best_move, 'backup', seen, state=state)

    def _at_once(self, state, player, path, alpha, beta):
        """A position at the live depth: the search below it in one step (its counts added)."""
        if self.alphabeta:
            value, visited, pruned = self._ask(lambda: self.pruning(state, player, alpha, beta), path, player, state)
        else:
            (value, visited), pruned = self._ask(lambda: self.plain(state, player), path, player, state), 0
        self.visited += visited - 1
        self.pruned += pruned
        return _Result(value, None, 'deep', below=visited, state=state)

    def _cutoff(self, path, player, state, alpha, beta, skipped):
        """The cut: alpha >= beta at a position of ``player``; ``skipped`` moves are never tried."""
        self.pruned += len(skipped)
        names = ', '.join(f'{row},{col}' for row, col in skipped)
        if player == 'x':
            why = (f'α ≥ β ({format_bound(alpha)} ≥ {format_bound(beta)}): o already has {format_bound(beta)} '
                   f'elsewhere, so x\'s {format_bound(alpha)} here cannot matter')
        else:
            why = (f'β ≤ α ({format_bound(beta)} ≤ {format_bound(alpha)}): x already has {format_bound(alpha)} '
                   f'elsewhere, so o\'s {format_bound(beta)} here cannot matter')
        text = f'Cut {where(path)}: {why}. {len(skipped)} moves pruned ({names}).'
        return self._step('cutoff', path, player, text, window=(alpha, beta), pruned_moves=skipped, state=state)

    def _child_step(self, result, path, parent, best, window):
        """The step where a child's value reaches its parent (whose mover is ``parent``)."""
        mover = other(parent)
        value = format_value(result.value)
        if result.kind == 'leaf':
            what = f'{parent} plays {_move(path[-1])}: score_end says {value}'
        elif result.kind == 'deep':
            what = f'{parent} plays {_move(path[-1])}: searched below in one step ({result.below:,} positions): {value}'
        else:
            chooser = 'max' if mover == 'x' else 'min'
            what = (f'{mover}\'s turn {where(path)}: {chooser}({", ".join(format_value(v) for v in result.seen)})'
                    f' = {value}')
        text = f'{what}, so {value} backs up; {parent}\'s best so far: {format_value(best)}'
        if self.alphabeta:
            text += f' (α {format_bound(window[0])}, β {format_bound(window[1])})'
        return self._step(result.kind, path, mover, text + '.', value=result.value, move=result.move,
                          seen=list(result.seen), best=best, below=result.below, window=window if self.alphabeta else None,
                          state=result.state)


class _Failed(Exception):
    """A function failed at ``path``: the search stops there."""

    def __init__(self, message, path, player, state):
        super().__init__(message)
        self.path, self.player, self.state = path, player, state


def _window_words(window):
    return '' if window is None else f', window (α {format_bound(window[0])}, β {format_bound(window[1])})'


def _move(move):
    return f'{move[0]},{move[1]}'
