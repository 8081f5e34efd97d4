"""The search so far as the class sees it while stepping: an outline of the positions on the path being searched,
each with its state (not yet, being searched, its value, pruned, failed), built by replaying the Steps of
stepping.Search, so that Back is simply a replay of one step fewer. Pure Python: HTML text, no widgets."""
import html

from .calls import format_bound, format_value
from .stepping import other

TINTS = {1: '#dbe7fb', 0: '#ececec', -1: '#fde3d3'}


class Line:
    """One position of the outline: the move that led to it, who is to move there and what is known of it."""
    __slots__ = ('path', 'player', 'status', 'value', 'best', 'window', 'kind', 'below', 'children', 'error', 'seen',
                 'cut', 'state')

    def __init__(self, path, player):
        self.path, self.player = path, player
        self.status = 'waiting'      # 'waiting', 'open', 'done', 'pruned', 'error'
        self.value = self.best = self.window = self.kind = self.below = self.error = self.state = None
        self.seen = []
        self.children = []
        self.cut = False             # alpha-beta stopped trying its moves: its value is only a bound


class Outline:
    """The outline after a number of Steps; ``apply(step)`` moves it on by one."""

    def __init__(self, player, alphabeta):
        self.alphabeta = alphabeta
        self.root = Line((), player)
        self.lines = {(): self.root}
        self.current = ()
        self.last = None
        self.visited = self.pruned = 0

    def line(self, path):
        """The Line at ``path``, made (as waiting) if the search has not listed it yet."""
        if path not in self.lines:
            parent = self.line(path[:-1])
            made = Line(path, other(parent.player))
            parent.children.append(made)
            self.lines[path] = made
        return self.lines[path]

    def apply(self, step):
        kind, line = step.kind, self.line(step.path)
        line.state = step.state if step.state is not None else line.state
        if kind == 'enter':
            line.status, line.window = 'open', step.window
            for move in step.options:
                self.line(step.path + (tuple(move),))
        elif kind in ('leaf', 'deep', 'backup'):
            line.status, line.value, line.kind, line.below, line.seen = 'done', step.value, kind, step.below, step.seen
            parent = self.line(step.path[:-1])
            parent.best = step.best
            if self.alphabeta and step.window is not None:
                parent.window = step.window
        elif kind == 'cutoff':
            line.cut = True
            for move in step.pruned_moves:
                self.line(step.path + (tuple(move),)).status = 'pruned'
        elif kind == 'error':
            line.status, line.error = 'error', step.error
        elif kind == 'done':
            line.status, line.value, line.kind = 'done', step.value, 'root'
            line.best = step.value
        self.current, self.last = step.path, step
        self.visited, self.pruned = step.visited, step.pruned

    def shown(self):
        """The Lines to show, in order, with their depth: the start, and the moves of every position being
        searched (the finished ones folded to their value)."""
        found = []

        def walk(line, depth):
            found.append((line, depth))
            if line.status == 'open' or line is self.root:
                for child in line.children:
                    walk(child, depth + 1)
        walk(self.root, 0)
        return found

    def html(self, asking=None):
        """The outline as HTML: one div per position, with class and data attributes the tests read.
        ``asking`` is the path of a position whose value the viewer is asked to predict."""
        rows = []
        for line, depth in self.shown():
            classes = f'nac-step-line nac-step-{line.status}'
            if line.path == self.current:
                classes += ' nac-step-current'
            if line.path == asking:
                classes += ' nac-step-asking'
            tint = TINTS.get(line.value, 'transparent') if line.status == 'done' else 'transparent'
            path = ';'.join(f'{row},{col}' for row, col in line.path)
            rows.append(f'<div class="{classes}" data-path="{path}" style="margin-left:{depth * 1.6:.1f}em;'
                        f'background:{tint}">{html.escape(self.describe(line, asking), quote=False)}</div>')
        return '<div class="nac-step-outline">' + ''.join(rows) + '</div>'

    def describe(self, line, asking=None):
        """The text of one line, by who is to move there, e.g. '0,2 · o to move · best so far 0 · α 0, β +∞' or
        '1,1 · x to move = −1 (x chose max)'."""
        if line.path:
            row, col = line.path[-1]
            label = f'{row},{col}'
        else:
            label = 'start'
        if line.status == 'done' and line.kind == 'leaf':
            return f'{label} = {format_value(line.value)} (game over)'
        label += f' · {line.player} to move'
        if line.path == asking:
            return f'{label} = ?  (predict: −1, 0 or +1)'
        if line.status == 'waiting':
            return f'{label} · not yet'
        if line.status == 'pruned':
            return f'{label} · pruned'
        if line.status == 'error':
            return f'{label} · stopped: {line.error}'
        if line.status == 'done':
            how = {'deep': f'searched at once, {line.below or 0:,} positions', 'backup': _chose(line),
                   'root': 'the value here'}.get(line.kind, '')
            return f'{label} = {format_value(line.value)} ({how})'
        text = f'{label} · best so far {_best(line.best)}'
        if line.window is not None:
            text += f' · α {format_bound(line.window[0])}, β {format_bound(line.window[1])}'
        return text


def _chose(line):
    """How a searched position got its value: 'o chose min', or after a cut 'o cut short: at most 0'."""
    if line.cut:
        bound = 'at least' if line.player == 'x' else 'at most'
        return f'{line.player} cut short: {bound} {format_value(line.value)}'
    return f'{line.player} chose {"max" if line.player == "x" else "min"}'


def _best(best):
    return '–' if best is None else format_value(best)


def replay(steps, player, alphabeta):
    """The Outline after ``steps``."""
    outline = Outline(player, alphabeta)
    for step in steps:
        outline.apply(step)
    return outline
