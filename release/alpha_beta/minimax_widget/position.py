"""The position being searched at a step, drawn: the board the step is about, the moves of its path numbered in
order from the start of the search, who is to move there, the window (alpha-beta) and what is known of its value.
Pure Python: HTML text with an inline SVG, no widgets."""
import html

from .calls import format_bound, format_value
from .drawing import LAST_MOVE, MARK_COLOURS, TINTS, path_text

CELL = 46
START_MARK = '#8c8c8c'      # marks already on the board when the search started


def where_words(path):
    return 'after ' + ' then '.join(f'{row},{col}' for row, col in path) if path else 'the position searched'


def step_position(step, root_state, root_player, asking=None):
    """(path, state, player to move, window, value words) of the position a step is about; ``asking`` is the step
    whose value the viewer is asked to predict (then its value is '?')."""
    shown = asking if asking is not None else step
    if shown is None:
        return (), root_state, root_player, None, 'not searched yet'
    state = shown.state if shown.state is not None else root_state
    if asking is not None:
        return shown.path, state, shown.player, shown.searched_with, getattr(asking, 'words', 'value = ?')
    kind = shown.kind
    if kind == 'enter':
        words = 'being searched'
    elif kind == 'leaf':
        words = f'game over: {format_value(shown.value)}'
    elif kind in ('deep', 'backup', 'done'):
        words = f'value {format_value(shown.value)}'
    elif kind == 'cutoff':
        words = f'cut: {len(shown.pruned_moves)} moves pruned'
    else:
        words = 'stopped: ' + (shown.error or '')
    return shown.path, state, shown.player, shown.searched_with, words


def position_html(step, root_state, root_player, asking=None, alphabeta=False):
    """The board a step is about, as HTML: marks of ``step.state``, the path's moves numbered 1, 2, … and the last
    one in yellow; under it who is to move, the window and the value (or '?')."""
    path, state, player, window, words = step_position(step, root_state, root_player, asking)
    value = None if asking is not None or step is None else step.value
    tint = TINTS.get(value, '#ffffff') if step is not None and step.kind in ('leaf', 'deep', 'backup', 'done') \
        else '#ffffff'
    over = asking is None and step is not None and step.kind == 'leaf'
    turn = 'game over' if over else f'{player} to move'
    caption = [f'<div class="nac-board-turn"><b>{html.escape(turn)}</b></div>',
               f'<div class="nac-board-where">{html.escape(where_words(path))}</div>']
    if alphabeta and window is not None:
        caption.append(f'<div class="nac-board-window" title="the window it was searched with">'
                       f'α {format_bound(window[0])}, β {format_bound(window[1])}</div>')
    caption.append(f'<div class="nac-board-value">{html.escape(words)}</div>')
    asked = ' nac-board-asking' if asking is not None else ''
    return (f'<div class="nac-step-board{asked}" data-path="{path_text(path)}" data-player="{html.escape(str(player))}"'
            f' data-state="{html.escape(_flat(state))}">{board_svg(root_state, state, path, tint)}'
            f'<div class="nac-board-caption">{"".join(caption)}</div></div>')


def board_svg(root_state, state, path, tint='#ffffff'):
    """A 3x3 board: marks of ``state`` (those of ``root_state`` in grey), each move of ``path`` numbered."""
    size = 3 * CELL
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="nac-board-svg" width="{size + 4}" height="{size + 4}" '
             f'viewBox="-2 -2 {size + 4} {size + 4}" role="img" aria-label="the position searched">',
             f'<rect x="0" y="0" width="{size}" height="{size}" rx="4" fill="{tint}" stroke="#555" stroke-width="2"/>']
    numbers = {tuple(move): number for number, move in enumerate(path, 1)}
    if path:
        row, col = path[-1]
        parts.append(f'<rect x="{col * CELL + 2}" y="{row * CELL + 2}" width="{CELL - 4}" height="{CELL - 4}" '
                     f'fill="{LAST_MOVE}"/>')
    for k in (1, 2):
        parts.append(f'<path d="M{k * CELL} 4V{size - 4}M4 {k * CELL}H{size - 4}" stroke="#8c8c8c" '
                     'stroke-width="1.5"/>')
    for row in range(3):
        for col in range(3):
            mark = _mark(state, row, col)
            if mark == ' ':
                continue
            cx, cy, d = (col + 0.5) * CELL, (row + 0.5) * CELL, 0.27 * CELL
            new = (row, col) in numbers
            colour = MARK_COLOURS.get(mark, '#d00000') if new or _mark(root_state, row, col) != mark else START_MARK
            if mark == 'x':
                parts.append(f'<path class="nac-mark-x" d="M{cx - d:.1f} {cy - d:.1f}L{cx + d:.1f} {cy + d:.1f}'
                             f'M{cx - d:.1f} {cy + d:.1f}L{cx + d:.1f} {cy - d:.1f}" stroke="{colour}" '
                             f'stroke-width="4" stroke-linecap="round"/>')
            elif mark == 'o':
                parts.append(f'<circle class="nac-mark-o" cx="{cx:.1f}" cy="{cy:.1f}" r="{d:.1f}" fill="none" '
                             f'stroke="{colour}" stroke-width="4"/>')
            else:
                parts.append(f'<text x="{cx:.1f}" y="{cy + 8:.1f}" font-size="24" fill="#d00000" '
                             f'text-anchor="middle">{html.escape(str(mark)[:1])}</text>')
            if new:
                parts.append(f'<text class="nac-move-number" data-move="{row},{col}" x="{col * CELL + 5}" '
                             f'y="{row * CELL + 17}" font-size="16" font-weight="bold" fill="#111">'
                             f'{numbers[row, col]}</text>')
    parts.append('</svg>')
    return ''.join(parts)


def _mark(state, row, col):
    try:
        return str(state[row][col])
    except Exception:
        return ' '


def _flat(state):
    return ''.join(_mark(state, row, col) for row in range(3) for col in range(3))
