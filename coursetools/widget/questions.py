"""What predict-then-reveal asks before a step: the value that backs up, the move the side to move chooses, or
(alpha-beta) whether the moves left are cut, the window (α, β) a position is searched with, and which of its moves
will be pruned. Read off the Steps and the Outline: the answer is what the notebook's search did next (or, for the
pruned moves, later: the steps ahead are asked of the same kept search). Pure Python."""
from .calls import format_bound, format_value

ASK = (('values', 'value'), ('moves chosen', 'move'), ('cuts (α-β)', 'cut'), ('α and β (α-β)', 'window'),
       ('moves pruned (α-β)', 'prune'))
INF = float('inf')
BOUNDS = (-INF, -1, 0, 1, INF)
WINDOWS = tuple((a, b) for a in BOUNDS for b in BOUNDS if a < b)      # the ten a search can pass down
VALUED = ('backup', 'deep')      # the steps whose value can be asked


def where(path):
    return 'after ' + ' then '.join(f'{row},{col}' for row, col in path) if path else 'at the start'


class Question:
    """A question about the board at ``path`` (``player`` to move, ``state``): its ``text``, ``options`` [(label,
    value)], the right ``value``, the ``reason`` shown with the reveal, and ``words`` for the board drawn."""
    __slots__ = ('kind', 'path', 'player', 'state', 'searched_with', 'text', 'options', 'value', 'reason', 'words')

    def __init__(self, kind, at, text, options, value, reason, words):
        self.kind, self.text, self.options, self.value, self.reason, self.words = \
            kind, text, options, value, reason, words
        self.path, self.player, self.state, self.searched_with = at.path, at.player, at.state, at.searched_with

    def label(self, value):
        return next((label for label, each in self.options if each == value), str(value))

    def reveal(self, said):
        """The reveal of an answer ``said``: right or not, and why."""
        if self.kind == 'value':
            return (f'You said {self.label(said)}: right. {self.reason}.' if said == self.value else
                    f'You said {self.label(said)}, but it is {self.reason}.')
        verdict = 'right' if said == self.value else f'no: {self.label(self.value)}'
        return f'You said {self.label(said)}: {verdict}. {self.reason}.'


def question(kind, step, outline, ahead=None):
    """The question of ``kind`` ('value', 'move', 'cut', 'window', 'prune') to ask before ``step`` is applied to
    ``outline``, or None; ``ahead()`` iterates over the steps from ``step`` on (needed for 'prune')."""
    if step is None:
        return None
    if kind == 'value' and step.kind in VALUED:
        return Question('value', step, f'Predict: the board drawn ({where(step.path)}), {step.player} to move: what '
                        f'value backs up from it? Press −1, 0 or +1.', [(format_value(v), v) for v in (-1, 0, 1)],
                        step.value, step.reason, 'value = ?')
    if kind == 'move' and step.kind == 'backup' and step.move is not None:
        line = outline.lines.get(step.path)
        moves = [child.path[-1] for child in line.children if child.status == 'done'] if line else []
        if tuple(step.move) in moves and len(moves) > 1:
            return Question('move', step, f'Predict: the board drawn ({where(step.path)}), {step.player} to move: '
                            f'which move does {step.player} choose?', [(f'{r},{c}', (r, c)) for r, c in moves],
                            tuple(step.move), step.reason, 'move = ?')
    if kind == 'cut' and outline.alphabeta:
        return _cut_question(step, outline)
    if kind == 'window' and outline.alphabeta and step.kind == 'enter' and step.path:
        return _window_question(step, outline)
    if kind == 'prune' and outline.alphabeta and ahead is not None and step.path:
        return _prune_question(step, outline, ahead)
    return None


def _prune_question(step, outline, ahead):
    """Before the first move of a position just entered is searched: which of its moves will be pruned (a cut
    prunes the moves after the one that closed the window), or none. The answer is the search's own cut there."""
    parent = outline.lines.get(step.path[:-1])
    if parent is None or parent.status != 'open' or parent.window is None or len(parent.children) < 2 or \
            step.path != parent.children[0].path or any(child.status != 'waiting' for child in parent.children):
        return None
    before, cut = None, None
    for each in ahead():
        if each.kind == 'error':
            return None
        if each.path == parent.path:
            cut = each if each.kind == 'cutoff' else None
            break
        if len(each.path) == len(parent.path) + 1 and each.kind in ('leaf', 'deep', 'backup'):
            before = each      # the last value to reach the position before it stops
    else:
        return None
    moves = [child.path[-1] for child in parent.children]
    answer = tuple(tuple(move) for move in cut.pruned_moves) if cut else ()
    options = [()] + [tuple(moves[k:]) for k in range(len(moves) - 1, 0, -1)]     # none, the last, the last two…
    options += [answer] if answer not in options else []
    alpha, beta = (format_bound(bound) for bound in parent.window)
    at = f'{where(parent.path)}, {parent.player} to move,'
    if cut is not None and before is not None:
        reason = (f'{at[0].upper()}{at[1:]} was searched with α {alpha}, β {beta}; {_name(before.path[-1])} backed up '
                  f'{format_value(before.value)} and closed the window. {cut.text.rstrip(".")}')
    else:
        limit = f'≥ β ({beta})' if parent.player == 'x' else f'≤ α ({alpha})'
        reason = (f'none: {at} was searched with α {alpha}, β {beta} and no move backed up a value {limit}, so '
                  f'{parent.player} tried all {len(moves)}')
    text = (f'Predict: the board drawn ({where(parent.path)}), {parent.player} to move, searched with α {alpha}, '
            f'β {beta}: which of its moves ({", ".join(_name(move) for move in moves)}) will be pruned?')
    return Question('prune', _At(parent, parent.window), text, [(_names(option), option) for option in options],
                    answer, reason, 'pruned: ?')


def _name(move):
    return f'{move[0]},{move[1]}'


def _names(moves):
    """A button's label: 'none', '2,2', '2,1 · 2,2', '1,0 … 2,2 (5)' (a run of the last moves, listed in the text)."""
    if len(moves) > 2:
        return f'{_name(moves[0])} … {_name(moves[-1])} ({len(moves)})'
    return ' · '.join(_name(move) for move in moves) if moves else 'none'


def _window_question(step, outline):
    """Before a position is entered: the window (α, β) the notebook's search calls it with."""
    told = step.searched_with if step.searched_with is not None else step.window
    if told is None:
        return None
    answer = tuple(told)
    options = list(WINDOWS) + ([answer] if answer not in WINDOWS else [])
    parent = outline.lines.get(step.path[:-1])
    move = f'{step.path[-1][0]},{step.path[-1][1]}'
    alpha, beta = (format_bound(bound) for bound in answer)
    if parent is not None and parent.window is not None and tuple(parent.window) == answer:
        best = '' if parent.best is None else f' (its best so far: {format_value(parent.best)})'
        reason = (f'α {alpha}, β {beta}: the window {parent.player} to move has {where(parent.path)} when it tries '
                  f'{move}{best}, passed down as it is')
    else:
        reason = f'α {alpha}, β {beta}: what the notebook\'s alphabeta passed when it searched {move}'
    text = (f'Predict: the board drawn ({where(step.path)}), {step.player} to move, is searched next: what are α '
            f'and β here?')
    return Question('window', _At(step), text, [(f'α {format_bound(a)}, β {format_bound(b)}', (a, b)) for a, b in options],
                    answer, reason, 'α = ?, β = ?')


def _cut_question(step, outline):
    """After a value backs up: are the moves not yet searched where it backed up to cut now?"""
    last = outline.last
    if last is None or last.kind not in ('leaf', 'deep', 'backup') or not last.path:
        return None
    parent = outline.lines.get(last.path[:-1])
    waiting = [child for child in parent.children if child.status == 'waiting'] if parent else []
    if not waiting or parent.window is None or last.searched_with is None:
        return None
    cut = step.kind == 'cutoff' and step.path == parent.path
    alpha, beta = (format_bound(bound) for bound in parent.window)
    reason = step.text.rstrip('.') if cut else (f'no cut: now α {alpha} < β {beta}, so {parent.player} tries its '
                                               f'next move')
    before = ', β '.join(format_bound(bound) for bound in last.searched_with)
    text = (f'Predict: {where(parent.path)}, {parent.player} to move: {last.path[-1][0]},{last.path[-1][1]} (searched '
            f'with α {before}) backed up {format_value(last.value)}, so the best so far is '
            f'{format_value(parent.best)}. Are the {len(waiting)} moves not yet searched cut now?')
    return Question('cut', _At(parent), text, [('cut', 'cut'), ('not cut', 'no cut')],
                    'cut' if cut else 'no cut', reason, 'cut?')


class _At:
    """Where a cut, window or prune question is asked: a line or step, its window left out unless given (it may be
    the answer)."""

    def __init__(self, line, window=None):
        self.path, self.player, self.state, self.searched_with = line.path, line.player, line.state, window
