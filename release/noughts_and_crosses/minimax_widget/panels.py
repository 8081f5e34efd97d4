"""The widget's controls and the HTML of its text panels: built here, driven by controls.GameTreeWidget."""
import html

import ipywidgets as widgets

from .calls import format_bound, format_value
from .drawing import TEXT_COLOURS, TINTS
from .model import VALUE_WORDS
from .view import TreeView

# Prepared starting positions for a lecture: mid-game, 3-5 empty squares (row by row, ' ' empty).
POSITIONS = (('A: x to move, 5 empty', 'xo  x o  '), ('B: o to move, 4 empty', 'xx o o  x'),
             ('C: x to move, 3 empty', 'xoxoo x  '))
MEMO_TOOLTIP = ('Remember every answer of your functions by their arguments, e.g. score by (state, player), recursive '
                'calls included. Untick to call your functions afresh every time and feel how slow plain minimax is.')


def make_button(text, css_class, tooltip, icon=''):
    button = widgets.Button(description=text, tooltip=tooltip, icon=icon, layout=widgets.Layout(width='auto'))
    button.add_class(css_class)
    return button


def _slider(kind, css_class, description, tooltip, **options):
    slider = kind(description=description, tooltip=tooltip, continuous_update=False,
                  layout=widgets.Layout(width='100%'), **options)
    slider.add_class(css_class)
    return slider


def _checkbox(description, css_class, tooltip, value):
    box = widgets.Checkbox(value=value, description=description, tooltip=tooltip, indent=False,
                           layout=widgets.Layout(width='auto'))
    box.add_class(css_class)
    return box


def make_html(css_class):
    text = widgets.HTML('', layout=widgets.Layout(width='100%'))
    text.add_class(css_class)
    return text


class Panels:
    """Every control of the widget, laid out in two columns that wrap: the game on the left, the tree on the right."""

    def __init__(self, human, depth, pace, memoize, tree, lecture):
        self.cells = {}
        for row in range(3):
            for col in range(3):
                cell = widgets.Button(description=' ', tooltip=f'play {row},{col}',
                                      layout=widgets.Layout(width='100%', height='100%'))
                cell.add_class('nac-cell')
                cell.add_class(f'nac-cell-{row}-{col}')
                self.cells[row, col] = cell
        self.board = widgets.GridBox(list(self.cells.values()), layout=widgets.Layout(
            grid_template_columns='repeat(3, 1fr)', grid_template_rows='repeat(3, 1fr)', grid_gap='4px',
            width='204px', height='204px'))
        self.board.add_class('nac-board')
        self.status, self.note, self.error, self.text = (make_html(name) for name in
                                                         ('nac-status', 'nac-note', 'nac-error', 'nac-text'))
        self.text.add_class('nac-secondary')
        self.new_button = make_button('New game', 'nac-new', 'start again from the empty board', 'refresh')
        self.undo_button = make_button('Undo', 'nac-undo', 'take back moves until it is your turn again', 'undo')
        self.ai_button = make_button('AI move', 'nac-ai', 'let score choose the move of the side to move', 'magic')
        self.perfect_button = make_button('Perfect game', 'nac-perfect', 'score plays both sides from here', 'play')
        self.stop_button = make_button('Stop', 'nac-stop', 'stop the perfect game or the thinking', 'stop')
        buttons = widgets.HBox([self.new_button, self.undo_button, self.ai_button, self.perfect_button,
                                self.stop_button])
        buttons.add_class('nac-buttons')
        self.side = widgets.ToggleButtons(options=[('play x', 'x'), ('play o', 'o')], value=human,
                                          tooltips=['you play x, who moves first', 'you play o: the AI opens as x'],
                                          style={'button_width': 'auto'}, layout=widgets.Layout(width='auto'))
        self.side.add_class('nac-side')
        self.start = widgets.Dropdown(options=[('start from…', ''), ('the empty board', ' ' * 9), *POSITIONS],
                                      value='', description='position', tooltip='a prepared position to search',
                                      layout=widgets.Layout(width='auto', max_width='100%'))
        self.start.add_class('nac-start')
        self.pace = _slider(widgets.FloatSlider, 'nac-pace', 'speed (s)', 'seconds per move of a perfect game',
                            value=pace, min=0.0, max=3.0, step=0.1, readout_format='.1f')
        self.history = _slider(widgets.IntSlider, 'nac-history', 'move', 'scrub through the game', value=0, min=0,
                               max=0)
        self.history.add_class('nac-secondary')
        self.depth = _slider(widgets.IntSlider, 'nac-depth', 'tree depth', 'plies of the tree below this position',
                             value=max(1, min(3, depth)), min=1, max=3)
        self.memo = _checkbox('memoize calls', 'nac-memo', MEMO_TOOLTIP, memoize)   # shown in lecture mode too
        self.show_tree = _checkbox('draw tree', 'nac-show-tree', 'untick while your score is slow', tree)
        self.lecture = _checkbox('lecture mode', 'nac-lecture-mode', 'bigger type, fewer controls', lecture)
        self.view = TreeView(layout=widgets.Layout(width='100%'))
        self.view.add_class('nac-tree')
        self.counts, self.pv, self.legend = (make_html(name) for name in ('nac-counts', 'nac-pv', 'nac-legend'))
        self.legend.value = legend_html()
        toolbar = widgets.HBox([self.show_tree, self.memo, self.lecture])
        toolbar.add_class('nac-toolbar')
        play = widgets.VBox([self.status, self.note, self.error, self.board, buttons, self.side, self.start,
                             self.pace, self.history, self.text])
        play.add_class('nac-play')
        self.tree_parts = widgets.VBox([self.view, self.counts, self.pv, self.legend],
                                       layout=widgets.Layout(width='100%'))
        self.tree_panel = widgets.VBox([self.depth, toolbar, self.tree_parts])
        self.tree_panel.add_class('nac-tree-panel')
        self.main = widgets.HBox([play, self.tree_panel], layout=widgets.Layout(width='100%'))
        self.main.add_class('nac-main')

    def show_board(self, state, last):
        """The stored position's marks on the buttons, the last move in yellow."""
        for (row, col), cell in self.cells.items():
            mark = state[row][col]
            cell.description = mark
            cell.style.text_color = '#1f4e9c' if mark == 'x' else '#b23c0a'
            cell.style.button_color = '#ffe680' if (row, col) == last else '#f7f7f7'
            (cell.add_class if (row, col) == last else cell.remove_class)('nac-last')

    def show_history(self, index, last):
        self.history.max = last
        self.history.value = index

    def show_busy(self, what, seconds):
        turn = self.status.value.split('<div class="nac-detail">')[0]
        self.status.value = turn + f'<div class="nac-detail">{busy_html(what, seconds)}</div>'


def status_lines(end, player, human, mode, thinking, index, last, pace):
    """(whose turn and what happens next, detail): never 'your turn' unless a click now plays your side."""
    if end is not None:
        verdict = '' if end == 0 else (' You win!' if end == (1 if human == 'x' else -1) else ' The AI wins.')
        turn = f'Game over: {VALUE_WORDS.get(end, end)}.{verdict}'
    elif mode == 'perfect':
        turn = f'Perfect game: score plays both sides · {player} to move'
    elif thinking is not None:
        turn = f'{player} to move · the AI is thinking'
    elif player == human:
        turn = f'{player} to move · your turn'
    else:
        turn = f'{player} to move · click a square to play {player} yourself, or press AI move'
    if mode == 'perfect':
        detail = f'move {index} of {last} · {pace:.1f} s per move'
    elif index < last:
        detail = f'viewing move {index} of {last}: a move played here starts a new line'
    else:
        detail = f'move {index} of {last}'
    return turn, detail


def status_html(turn, detail=''):
    return f'<div class="nac-turn">{turn}</div><div class="nac-detail">{detail}</div>'


def busy_html(what, seconds):
    return f'<span class="nac-spinner"></span>thinking… {html.escape(what)} ({seconds:.1f} s)'


def message_html(text):
    return f'⚠ {html.escape(text)}' if text else ''


def printed_html(printed):
    body = html.escape(printed.rstrip('\n')) if printed.strip() else '(print_state printed nothing)'
    return f'<div style="color:#555;font-size:13px">print_state(state):</div><pre>{body}</pre>'


def counts_html(tree, memoize):
    """The two search counts side by side, then what this tree cost and the alpha-beta summary."""
    search = tree.search or {}
    if 'error' in search:
        pair = f'<div>Counting positions stopped: {html.escape(search["error"])}</div>'
    elif 'stopped' in search:
        pair = '<div>Counting positions was interrupted; it starts again by itself.</div>'
    else:
        plain = f'{search["plain"]:,}' if 'plain' in search else '…'
        distinct = f'{search["distinct"]:,}' if 'distinct' in search else '…'
        pair = ('<div class="nac-count-pair">'
                f'<div class="nac-count nac-count-plain"><b>{plain}</b> positions searched by plain minimax</div>'
                f'<div class="nac-count nac-count-memo"><b>{distinct}</b> distinct positions with memoization</div>'
                '</div>')
    counts = tree.counts
    remembered = f', {counts["hits"]:,} answers remembered' if memoize else ' (memoize off: nothing remembered)'
    cost = (f'<div>Drawing this tree called score {counts["score_calls"]:,} times{remembered}; '
            f'{counts["seconds"]:.2f} s.</div>')
    alphabeta = ''
    if tree.alphabeta is not None:
        info = tree.alphabeta
        alphabeta = (f'<div>alphabeta from here with α −∞, β +∞ visited {info["visited"]:,} positions; '
                     f'{info["pruned"]} of the {len(tree.nodes())} boards built were pruned (grey).</div>'
                     if not info['error'] else f'<div>alphabeta: {html.escape(info["error"])}</div>')
    return pair + cost + alphabeta


def pv_html(tree):
    """Best play from the position, as score's moves, and how it ends."""
    steps = [f'{player} {move[0]},{move[1]}' for move, player, _ in tree.pv]
    if tree.pv_error:
        ending = f'stopped: {html.escape(tree.pv_error)}'
    elif tree.pv_end is not None:
        colour = TEXT_COLOURS.get(tree.pv_end, '#333333')
        ending = f'<b style="color:{colour}">{VALUE_WORDS.get(tree.pv_end, tree.pv_end)}</b>'
    else:
        ending = ''
    line = ' · '.join(steps) if steps else 'the game is over'
    return f'<b>Best play from here</b> (score\'s moves): {html.escape(line)} → {ending}'


def legend_html():
    swatches = ''.join(f'<span class="nac-swatch" style="background:{TINTS[value]}"></span>{VALUE_WORDS[value]}'
                       for value in (1, 0, -1))
    return (f'Values are score\'s, from x\'s point of view:{swatches}. Thick black edge: score\'s best move; '
            f'gold: best play. Click a board to play to it; click a value with ▾ to show that board\'s moves.')


def root_summary(tree):
    root = tree.root
    text = f'{root.player} to move, score {format_value(root.value)}'
    if root.best is not None:
        text += f', best move {root.best[0]},{root.best[1]}'
    if root.window is not None:
        text += f'; alphabeta window α {format_bound(root.window[0])}, β {format_bound(root.window[1])}'
    return text + '. Hover over a board to see its value and best move.'
