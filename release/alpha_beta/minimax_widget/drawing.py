"""The search tree as SVG, drawn for the width it is shown at, so that text keeps its size in CSS pixels.

One row per ply: the root, its children, then the children of one *focused* board per row (score's best move
unless the lecturer picked another), so even depth 3 from the empty board is four readable rows instead of a comb
of 504 boards. A row too wide for the space wraps onto more lines.
"""
import html
import math
from dataclasses import dataclass, field

from .calls import format_bound, format_value
from .model import VALUE_WORDS, other
from .stepview import stepping_info

FONT_FAMILY = "'DejaVu Sans', 'Liberation Sans', Arial, Helvetica, sans-serif"
TINTS = {1: '#d6e4fb', 0: '#ebebeb', -1: '#fbdccc', None: '#ffffff'}
TEXT_COLOURS = {1: '#1d5bbf', 0: '#4d4d4d', -1: '#b04210', None: '#c00000'}
MARK_COLOURS = {'x': '#1f4e9c', 'o': '#b23c0a'}
PV_COLOUR = '#e0a100'
LAST_MOVE = '#ffe57a'
# Advance widths of DejaVu Sans (a wide font, so estimates err on the safe side), in em.
GLYPH_WIDTHS = {' ': 0.32, ',': 0.32, '.': 0.32, '+': 0.84, '−': 0.84, '-': 0.36, '∞': 0.84, '▾': 0.78,
                '?': 0.54, 'α': 0.66, 'β': 0.64, 'i': 0.28, 'l': 0.28, 'r': 0.42, 't': 0.40, 'f': 0.36}


def text_width(text, size, bold=False):
    """An upper estimate of the width of ``text`` at font size ``size`` (CSS px)."""
    width = sum(GLYPH_WIDTHS.get(char, 0.66) for char in text) * size
    return width * (1.1 if bold else 1.0)


@dataclass
class Label:
    text: str
    x: float
    y: float          # baseline
    size: float
    colour: str = '#333333'
    bold: bool = False
    kind: str = 'move'
    focus: tuple = None   # a path: clicking the label shows that board's moves

    @property
    def box(self):
        """(left, top, right, bottom), estimated."""
        half = text_width(self.text, self.size, self.bold) / 2
        return (self.x - half, self.y - 0.95 * self.size, self.x + half, self.y + 0.25 * self.size)


@dataclass
class Placed:
    node: object
    x: float
    y: float          # top of the board
    size: float
    top: float        # top of the label above
    bottom: float     # bottom of the labels below
    labels: list = field(default_factory=list)


@dataclass
class Drawing:
    svg: str
    width: float
    height: float
    rows: list        # [[Placed, ...], ...]
    labels: list      # every Label
    focus: tuple      # the focused path actually drawn


def focused_rows(tree, focus=()):
    """The nodes drawn, row by row: the root, its children, then the children of the focused node of each row.
    The focused child is the one ``focus`` names at that ply, else score's best move, else the first."""
    rows, chosen = [[tree.root]], []
    node = tree.root
    while node.children:
        rows.append(node.children)
        ply = len(chosen)
        pick = node.child(tuple(focus[ply])) if ply < len(focus) else None
        node = pick or node.child(node.best) or node.children[0]
        chosen.append(node.move)
    return rows, tuple(chosen)


def on_principal_variation(node, tree):
    moves = [move for move, _, _ in tree.pv]
    return list(node.path) == moves[:len(node.path)]


def node_info(node, tree):
    """What hovering a board says: who moved, score's value and best move, and what a click does."""
    if getattr(tree, 'stepping', False):
        return stepping_info(node, tree)
    parts = []
    if node.path:
        mover = other(node.player)
        parts.append(f'{mover} plays {node.move[0]},{node.move[1]}')
    else:
        parts.append(f'this position, {node.player} to move')
    if node.error:
        parts.append(node.error)
    elif node.end is not None:
        parts.append(f'game over: {VALUE_WORDS.get(node.end, node.end)} (score_end {format_value(node.end)})')
    else:
        parts.append(f'score: {format_value(node.value)} ({VALUE_WORDS.get(node.value, "?")})')
        if node.best is not None:
            parts.append(f'best move for {node.player}: {node.best[0]},{node.best[1]}')
    if node.below:
        parts.append(f'{node.below} moves follow (raise the tree depth to see them)')
    if node.pruned:
        parts.append('alphabeta pruned it (never visited)')
    elif node.window is not None:
        parts.append(f'alphabeta searched it with α {format_bound(node.window[0])}, β {format_bound(node.window[1])} '
                     f'and answered {format_bound(node.ab_value)}')
    if node.path:
        parts.append('click to play to this board')
    return ' · '.join(parts)


class _Row:
    """The measurements of one row: how many boards per line, their size and the label lines under them."""

    def __init__(self, nodes, width, font, with_window, max_board):
        self.nodes = nodes
        self.font = font
        self.line = round(1.3 * font)
        widest = max(text_width(text, font, bold) for node in nodes for text, bold in _texts(node, with_window))
        self.slot_min = max(widest, 34) + 12
        fits = max(1, int(width // self.slot_min))
        line_count = math.ceil(len(nodes) / fits)
        self.per_line = math.ceil(len(nodes) / line_count)
        self.slot = min(width / self.per_line, max(self.slot_min, 2.6 * max_board))
        self.board = max(30.0, min(max_board, 0.7 * self.slot, self.slot - 12))
        self.lines_below = 1 + (2 if with_window else 0)
        self.node_height = self.line + self.board + 6 + self.lines_below * self.line
        self.wrapped = line_count > 1
        self.line_count = line_count
        self.caption = None


def _texts(node, with_window):
    """(text, bold) of every label of a node, to size its slot."""
    yield _move_text(node), False
    yield _value_text(node, expandable=True), True
    if with_window:
        yield from ((text, False) for text in _window_texts(node))


def _move_text(node):
    if not node.path:
        return 'game over' if node.end is not None else f'{node.player} to move'
    if getattr(node, 'move_only', False):
        return f'{node.move[0]},{node.move[1]}'
    return f'{other(node.player)} {node.move[0]},{node.move[1]}'


def _value_text(node, expandable):
    if node.error:
        return 'error'
    text = format_value(node.value)
    if node.end is not None:
        text += ' end'
    elif expandable and node.children:
        text += ' ▾'
    return text


def _window_texts(node):
    if node.pruned:
        return ['pruned']
    if node.window is None:
        return []
    return [f'α {format_bound(node.window[0])}', f'β {format_bound(node.window[1])}']


def layout(tree, width, focus=(), font=16, max_board=None):
    """Place the rows of the focused tree in ``width`` CSS px with labels of ``font`` px."""
    width = max(float(width), 120.0)
    max_board = max_board or 5 * font
    rows, chosen = focused_rows(tree, focus)
    with_window = tree.alphabeta is not None and not tree.alphabeta.get('error')
    gap = max(26, round(1.7 * font))
    y = 8.0
    placed_rows = []
    for ply, nodes in enumerate(rows):
        row = _Row(nodes, width, font, with_window, max_board)
        if ply and placed_rows[-1][0].wrapped:
            parent = tree.find(chosen[:ply - 1])
            row.caption = Label(f'moves after {_move_text(parent)}', width / 2, y + 0.98 * font, font, kind='caption')
            y += row.line
        placed = []
        for index, node in enumerate(nodes):
            line, column = divmod(index, row.per_line)
            in_line = min(row.per_line, len(nodes) - line * row.per_line)
            left = (width - in_line * row.slot) / 2
            cx = left + (column + 0.5) * row.slot
            top = y + line * (row.node_height + 0.6 * font)
            board_top = top + row.line
            item = Placed(node, cx, board_top, row.board, top, top + row.node_height)
            focused = ply == 0 or (ply <= len(chosen) and chosen[ply - 1] == node.move)
            _add_labels(item, row, with_window, expandable=not focused)
            placed.append(item)
        placed_rows.append((row, placed))
        y += row.line_count * row.node_height + (row.line_count - 1) * 0.6 * font + gap
    return placed_rows, chosen, y - gap + 8


def _add_labels(item, row, with_window, expandable):
    node, font, line = item.node, row.font, row.line
    colour = '#c00000' if node.error else '#6b6b6b' if node.value is None else TEXT_COLOURS.get(node.value, '#c00000')
    item.labels.append(Label(_move_text(node), item.x, item.top + 0.98 * font, font, '#333333', kind='move'))
    below = item.y + item.size + 6
    value = Label(_value_text(node, expandable), item.x, below + 0.98 * font, font, colour, bold=True, kind='value')
    if expandable and node.children and node.path:
        value.focus = node.path
    item.labels.append(value)
    if with_window:
        for k, text in enumerate(_window_texts(node)):
            item.labels.append(Label(text, item.x, below + line * (k + 1) + 0.98 * font, font,
                                     '#8a8a8a' if node.pruned else '#333333', kind='window'))


def draw_tree(tree, width, focus=(), font=16):
    """The Drawing (SVG text and its layout) of ``tree`` for a view ``width`` CSS px wide."""
    placed_rows, chosen, height = layout(tree, width, focus, font)
    width = max(float(width), 120.0)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="nac-tree-svg" width="{width:.0f}" height="{height:.0f}" '
             f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="{html.escape(FONT_FAMILY)}" role="img" '
             f'aria-label="search tree">']
    for (row, placed), (_, previous) in zip(placed_rows[1:], placed_rows):
        parent = next(item for item in previous if item.node.children is row.nodes)
        parts.extend(_edges(parent, placed, row, tree))
    labels = [row.caption for row, _ in placed_rows if row.caption is not None]
    for _, placed in placed_rows:
        for item in placed:
            parts.append(_board(item, tree))
            labels.extend(item.labels)
    parts.extend(_label_svg(label) for label in labels)
    parts.append('</svg>')
    return Drawing(''.join(parts), width, height, [placed for _, placed in placed_rows], labels, chosen)


def _edges(parent, placed, row, tree):
    """Lines from the focused parent to each child; a wrapped row gets a frame and one line to it instead, and a
    row whose parent row wrapped gets a caption naming its parent instead of lines."""
    start = (parent.x, parent.bottom + 3)
    parts = []
    if row.wrapped:
        left = min(item.x for item in placed) - row.slot / 2 + 2
        right = max(item.x for item in placed) + row.slot / 2 - 2
        top = (row.caption.y - 1.1 * row.font if row.caption else placed[0].top) - 6
        bottom = max(item.bottom for item in placed) + 4
        parts.append(f'<rect class="nac-group" x="{left:.1f}" y="{top:.1f}" width="{right - left:.1f}" '
                     f'height="{bottom - top:.1f}" rx="8" fill="#f6f6f6" stroke="#c8c8c8"/>')
        if row.caption is None:
            parts.append(_line(start, (parent.x, top), '#555555', 2))
        return parts
    if row.caption is not None:
        return parts
    for item in sorted(placed, key=lambda item: _edge_rank(parent.node, item.node, tree)):
        colour, stroke, dash = _edge_style(parent.node, item.node, tree)
        parts.append(_line(start, (item.x, item.top - 3), colour, stroke, dash))
    return parts


def _edge_rank(parent, child, tree):
    return (on_principal_variation(child, tree), child.move == parent.best)


def _edge_style(parent, child, tree):
    if child.pruned:
        return '#c4c4c4', 1.5, '5 4'
    current = getattr(tree, 'current', None)
    if current is not None and tuple(current[:len(child.path)]) == child.path:
        return '#111111', 4, None     # the path to the current step
    if on_principal_variation(child, tree):
        return PV_COLOUR, 4.5, None
    if child.move == parent.best:
        return '#222222', 3, None
    return '#a6a6a6', 1.5, None


def _line(start, end, colour, stroke, dash=None):
    dashes = f' stroke-dasharray="{dash}"' if dash else ''
    return (f'<line x1="{start[0]:.1f}" y1="{start[1]:.1f}" x2="{end[0]:.1f}" y2="{end[1]:.1f}" stroke="{colour}" '
            f'stroke-width="{stroke}" stroke-linecap="round"{dashes}/>')


def _board(item, tree):
    """One small board: tinted by score's value, the last move in yellow, framed by its role."""
    node, size = item.node, item.size
    x0, y0, cell = item.x - size / 2, item.y, size / 3
    value = None if node.error else node.value
    role = ' nac-current' if getattr(tree, 'current', None) == node.path else ''
    role += ' nac-asking' if getattr(tree, 'asking', None) == node.path else ''
    if node.error:
        frame, stroke = '#d00000', 3
    elif role:
        frame, stroke = ('#8a5a00', 5) if 'asking' in role else ('#111111', 5)
    elif node.path and on_principal_variation(node, tree):
        frame, stroke = PV_COLOUR, 4
    elif node.end is not None:
        frame, stroke = '#333333', 2.5
    else:
        frame, stroke = '#666666', 1.2
    kind = ('nac-node nac-pruned' if node.pruned else 'nac-node') + role
    attributes = f'class="{kind}" data-info="{html.escape(node_info(node, tree))}"'
    if node.path:
        attributes += f' data-path="{path_text(node.path)}"'
    parts = [f'<g {attributes}>',
             f'<rect class="nac-frame" x="{x0:.1f}" y="{y0:.1f}" width="{size:.1f}" height="{size:.1f}" rx="3" '
             f'fill="{TINTS.get(value, "#ffffff")}" stroke="{frame}" stroke-width="{stroke}"/>']
    if node.move is not None:
        row, col = node.move
        parts.append(f'<rect x="{x0 + col * cell + 1:.1f}" y="{y0 + row * cell + 1:.1f}" width="{cell - 2:.1f}" '
                     f'height="{cell - 2:.1f}" fill="{LAST_MOVE}"/>')
    for k in (1, 2):
        parts.append(f'<path d="M{x0 + k * cell:.1f} {y0 + 3:.1f}V{y0 + size - 3:.1f}M{x0 + 3:.1f} {y0 + k * cell:.1f}'
                     f'H{x0 + size - 3:.1f}" stroke="#8c8c8c" stroke-width="1"/>')
    width = max(1.6, size / 20)
    for r, marks in enumerate(node.state):
        for c, mark in enumerate(marks):
            cx, cy, d = x0 + (c + 0.5) * cell, y0 + (r + 0.5) * cell, 0.28 * cell
            if mark == 'x':
                parts.append(f'<path d="M{cx - d:.1f} {cy - d:.1f}L{cx + d:.1f} {cy + d:.1f}M{cx - d:.1f} {cy + d:.1f}'
                             f'L{cx + d:.1f} {cy - d:.1f}" stroke="{MARK_COLOURS["x"]}" stroke-width="{width:.1f}" '
                             f'stroke-linecap="round"/>')
            elif mark == 'o':
                parts.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{d:.1f}" fill="none" '
                             f'stroke="{MARK_COLOURS["o"]}" stroke-width="{width:.1f}"/>')
            elif mark != ' ':
                parts.append(f'<text x="{cx:.1f}" y="{cy + 0.35 * cell:.1f}" font-size="{cell:.0f}" fill="#d00000" '
                             f'text-anchor="middle">{html.escape(str(mark)[:1])}</text>')
    if node.pruned:
        parts.append(f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{size:.1f}" height="{size:.1f}" fill="#f4f4f4" '
                     f'fill-opacity="0.7" stroke="#b0b0b0" stroke-dasharray="4 3"/>')
    parts.append('</g>')
    return ''.join(parts)


def _label_svg(label):
    weight = ' font-weight="bold"' if label.bold else ''
    focus = f' data-focus="{path_text(label.focus)}"' if label.focus else ''
    kind = f'nac-label nac-{label.kind}' + (' nac-expand' if label.focus else '')
    return (f'<text class="{kind}" x="{label.x:.1f}" y="{label.y:.1f}" font-size="{label.size:g}" '
            f'fill="{label.colour}" text-anchor="middle"{weight}{focus}>{html.escape(label.text)}</text>')


def path_text(path):
    """A path of moves as the view sends it back: '1,1;0,2'."""
    return ';'.join(f'{row},{col}' for row, col in path)


def parse_path(text):
    """The moves of a path written by ``path_text``."""
    return tuple(tuple(int(part) for part in move.split(',')) for move in text.split(';') if move)
