"""A classroom widget for noughts and crosses: play against your own minimax, watch a perfect game,
and look at the search tree below any position.

    from minimax_widget import GameTreeWidget
    GameTreeWidget(print_state=print_state, score_end=score_end, play=play, moves=moves, score=score)

The widget drives ONLY the five functions it is given. It never decides a winner (it asks
``score_end``), never lists moves (``moves``), never computes a minimax value (``score``) and never
builds a board itself (``play``); the text under the board is what ``print_state`` printed. So with a
student's functions it shows what *their* code does, mistakes included. An exception raised by one of
their functions is shown as a one-line message inside the widget.

Every call to a given function runs in one background thread, so the notebook stays responsive and the
widget shows "thinking..." while a slow ``score`` works. Answers are remembered by their arguments
(``(state, player)`` for ``score``) while the "memoize calls" box is ticked.

Given an ``alphabeta(state, player, alpha, beta)`` as well (optional), the tree view also traces the calls it
makes from the shown position with the window ``(-inf, inf)``: each drawn position it visited is labelled with its
window (alpha and beta), and the drawn positions it never visited, the pruned ones, are greyed out.

When the environment variable NBGRADER_EXECUTION is set (nbgrader autograde / validate) the
constructor does nothing but show a one-line label.

This module deliberately imports only the standard library, ipywidgets and (lazily) matplotlib, so it can
be copied verbatim next to a notebook.
"""
import contextlib
import html
import inspect
import io
import math
import os
import queue
import threading
import time

if os.environ.get('NBGRADER_EXECUTION'):
    widgets = None  # graded runs never draw the widget: skip even the import (it costs ~0.1 s)
else:
    import ipywidgets as widgets

__all__ = ['GameTreeWidget', 'FunctionError']

EMPTY_STATE = ((' ', ' ', ' '), (' ', ' ', ' '), (' ', ' ', ' '))
FUNCTION_NAMES = ('print_state', 'score_end', 'play', 'moves', 'score')

# Colours by minimax value (from x's point of view); None = unknown (an error, or not computed).
COLOURS = {1: '#4a86e8', 0: '#a0a0a0', -1: '#e8743b', None: '#ffffff'}
TINTS = {1: '#d2e2fb', 0: '#e6e6e6', -1: '#fadccd', None: '#ffffff'}
VALUE_WORDS = {1: 'x wins', 0: 'draw', -1: 'o wins'}
PV_COLOUR = '#f2b01e'


def other(player):
    """The opponent's mark."""
    return 'o' if player == 'x' else 'x'


def side_to_move(state):
    """Whose turn it is, by counting marks (x always starts). This is bookkeeping, not game logic."""
    marks = [cell for row in state for cell in row]
    return 'x' if marks.count('x') <= marks.count('o') else 'o'


def _fmt_value(value):
    if value is None:
        return '?'
    return '+1' if value == 1 else ('-1' if value == -1 else '0')


def _fmt_bound(bound):
    """alpha or beta as a short label: -∞, +∞, +1, 0, -1, or the number."""
    if isinstance(bound, (int, float)) and math.isinf(bound):
        return '+∞' if bound > 0 else '-∞'
    if bound in (1, 0, -1):
        return _fmt_value(bound)
    return f'{bound:g}' if isinstance(bound, (int, float)) else str(bound)


def _short(text, limit=160):
    text = ' '.join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + '…'


class FunctionError(Exception):
    """A given function raised or returned something unusable; ``str()`` is a one-line message."""


class _Cancelled(Exception):
    """The job's position is no longer shown, so its remaining calls are skipped."""


class _Calls:
    """Calls the given functions: checks what they return, remembers answers, counts calls.

    ``positions`` counts every call of ``score`` including its recursive calls: while one of our
    calls runs, the name ``score`` in the function's own module is pointed at a counting wrapper
    (and put back afterwards), so a recursive minimax is counted position by position.
    """

    def __init__(self, functions):
        self.functions = dict(functions)
        self.memoize = True
        self.cache = {}
        self.cancel_check = None
        self.reset_counts()

    def reset_counts(self):
        self.calls = dict.fromkeys(FUNCTION_NAMES, 0)   # calls that reached the function
        self.hits = 0                                   # answers served from the cache
        self.positions = 0                              # score calls including recursive ones
        self.seconds = 0.0                              # time spent inside the functions

    def clear(self):
        self.cache.clear()

    # -- counting recursive calls ------------------------------------------------------------
    @contextlib.contextmanager
    def _counting_recursion(self, name, fn):
        module_globals = getattr(inspect.unwrap(fn), '__globals__', None)
        if not isinstance(module_globals, dict) or module_globals.get(name) is not fn:
            yield False
            return

        def counted(*args, **kwargs):
            self.positions += 1
            return fn(*args, **kwargs)

        # Look like the original to code that uses function attributes (score.known = {...}) or lru_cache's.
        if isinstance(getattr(fn, '__dict__', None), dict) and inspect.isfunction(fn):
            counted.__dict__ = fn.__dict__
        for attribute in ('cache_info', 'cache_clear', 'cache_parameters', '__wrapped__'):
            if hasattr(fn, attribute) and not hasattr(counted, attribute):
                setattr(counted, attribute, getattr(fn, attribute))
        module_globals[name] = counted
        try:
            yield True
        finally:
            if module_globals.get(name) is counted:   # the notebook may have redefined it meanwhile
                module_globals[name] = fn

    # -- the one way in ----------------------------------------------------------------------
    def __call__(self, name, *args):
        if self.cancel_check is not None:
            self.cancel_check()
        key = (name,) + args
        if self.memoize and name != 'print_state' and key in self.cache:
            self.hits += 1
            return self.cache[key]
        fn = self.functions.get(name)
        if fn is None:
            raise FunctionError(f'{name} was not given to the widget')
        self.calls[name] += 1
        start = time.perf_counter()
        try:
            if name == 'print_state':
                buffer = io.StringIO()
                with contextlib.redirect_stdout(buffer):
                    fn(*args)
                result = buffer.getvalue()
            elif name == 'score':
                self.positions += 1
                with self._counting_recursion(name, fn):
                    result = fn(*args)
            else:
                result = fn(*args)
        except (_Cancelled, KeyboardInterrupt):
            raise
        except RecursionError:
            raise FunctionError(f'{name} raised RecursionError (does it ever stop recursing?)') from None
        except Exception as error:  # the student's code: report, never a traceback wall
            message = str(error)
            raise FunctionError(_short(f'{name} raised {type(error).__name__}' + (f': {message}' if message else ''))) from None
        finally:
            self.seconds += time.perf_counter() - start
        result = self._check(name, args, result)
        if self.memoize and name != 'print_state':
            self.cache[key] = result
        return result

    @staticmethod
    def _check(name, args, result):
        def bad(expected):
            return FunctionError(_short(f'{name} returned {result!r}; expected {expected}', 200))

        if name == 'score_end':
            if result is None or (not isinstance(result, bool) and result in (1, 0, -1)):
                return result
            raise bad('1, 0, -1 or None')
        if name == 'moves':
            try:
                out = [(int(r), int(c)) for r, c in result]
            except Exception:
                raise bad('a list of (row, col) pairs') from None
            if any(not (0 <= r < 3 and 0 <= c < 3) for r, c in out):
                raise bad('(row, col) pairs with row and col in 0..2')
            return out
        if name == 'play':
            try:
                board = tuple(tuple(row) for row in result)
                ok = len(board) == 3 and all(len(row) == 3 and all(isinstance(x, str) for x in row) for row in board)
            except Exception:
                ok = False
            if not ok:
                raise bad('a board: three tuples of three one-character strings')
            return board
        if name == 'score':
            try:
                value, move = result
            except Exception:
                raise bad('a pair (value, move)') from None
            if isinstance(value, bool) or value not in (1, 0, -1):
                raise bad('a pair (value, move) with value 1, 0 or -1')
            if move is not None:
                try:
                    r, c = move
                    move = (int(r), int(c))
                except Exception:
                    raise bad('a pair (value, move) with move a (row, col) pair or None') from None
            return (int(value), move)
        return result


class Node:
    """One position of the drawn tree. ``value`` and ``best`` are what ``score`` answered."""
    __slots__ = ('state', 'player', 'move', 'end', 'value', 'best', 'children', 'error', 'below', 'x', 'y', 'size', 'depth',
                 'window', 'ab_value', 'pruned')

    def __init__(self, state, player, move=None, depth=0):
        self.state, self.player, self.move, self.depth = state, player, move, depth
        self.end = self.value = self.best = self.error = None
        self.window = self.ab_value = None   # alphabeta's (alpha, beta) and answer, if it visited this position
        self.pruned = False                  # True if alphabeta was traced and never visited this position
        self.children = []
        self.below = None   # number of positions one ply further down (for the last drawn level)

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()


class Tree:
    """The search tree below a position, as answered by the given functions."""

    def __init__(self, root, depth, pv, pv_end, pv_error, counts):
        self.root, self.depth, self.pv, self.pv_end, self.pv_error, self.counts = root, depth, pv, pv_end, pv_error, counts
        self.alphabeta = None   # {'visited': calls of alphabeta, 'pruned': drawn positions not visited, 'error': ...}

    def levels(self):
        levels = [[self.root]]
        while levels[-1] and any(n.children for n in levels[-1]):
            levels.append([c for n in levels[-1] for c in n.children])
        return levels

    def nodes(self):
        return list(self.root.walk())

    @property
    def errors(self):
        seen = []
        for node in self.root.walk():
            if node.error and node.error not in seen:
                seen.append(node.error)
        if self.pv_error and self.pv_error not in seen:
            seen.append(self.pv_error)
        if self.alphabeta and self.alphabeta.get('error') and self.alphabeta['error'] not in seen:
            seen.append(self.alphabeta['error'])
        return seen


def build_tree(call, state, player, depth):
    """Ask the given functions (through ``call``) for the tree ``depth`` plies below ``state``."""
    before = (dict(call.calls), call.hits, call.positions, call.seconds)
    start = time.perf_counter()
    root = Node(state, player)
    _fill(call, root, depth)
    pv, pv_end, pv_error = principal_variation(call, state, player)
    counts = {
        'positions': call.positions - before[2],
        'score_calls': call.calls['score'] - before[0]['score'],
        'calls': sum(call.calls.values()) - sum(before[0].values()),
        'hits': call.hits - before[1],
        'function_seconds': call.seconds - before[3],
        'seconds': time.perf_counter() - start,
    }
    tree = Tree(root, depth, pv, pv_end, pv_error, counts)
    if call.functions.get('alphabeta') is not None:
        tree.alphabeta = trace_alphabeta(call, tree)
    return tree


class _Visit:
    """One call of alphabeta as traced: its arguments, its answer and the calls it made (to the drawn depth)."""
    __slots__ = ('state', 'player', 'alpha', 'beta', 'value', 'children')

    def __init__(self, state, player, alpha, beta):
        self.state, self.player, self.alpha, self.beta = state, player, alpha, beta
        self.value = None
        self.children = []


def _as_state(state):
    try:
        return tuple(tuple(row) for row in state)
    except TypeError:
        return state


def trace_alphabeta(call, tree):
    """Call the given alphabeta on the tree's root with the window (-inf, inf), recording every call it makes
    through its own global name; mark the tree's nodes with their window and answer, or as pruned."""
    fn = call.functions['alphabeta']
    limit = tree.depth
    top, stack = [], []
    visited = 0

    def traced(state, player, alpha, beta):
        nonlocal visited
        visited += 1
        if call.cancel_check is not None and visited % 512 == 0:
            call.cancel_check()
        visit = _Visit(_as_state(state), player, alpha, beta)
        if len(stack) <= limit:
            (stack[-1].children if stack else top).append(visit)
        stack.append(visit)
        try:
            result = fn(state, player, alpha, beta)
        finally:
            stack.pop()
        try:
            visit.value = result[0]
        except Exception:
            raise FunctionError(_short(f'alphabeta returned {result!r}; expected a pair (value, move)', 200)) from None
        return result

    info = {'visited': 0, 'pruned': 0, 'error': None}
    module_globals = getattr(inspect.unwrap(fn), '__globals__', None)
    swap = isinstance(module_globals, dict) and module_globals.get('alphabeta') is fn
    if swap:
        module_globals['alphabeta'] = traced
    try:
        traced(tree.root.state, tree.root.player, -math.inf, math.inf)
    except (_Cancelled, KeyboardInterrupt):
        raise
    except FunctionError as error:
        info['error'] = str(error)
    except RecursionError:
        info['error'] = 'alphabeta raised RecursionError (does it ever stop recursing?)'
    except Exception as error:
        message = str(error)
        info['error'] = _short(f'alphabeta raised {type(error).__name__}' + (f': {message}' if message else ''))
    finally:
        if swap and module_globals.get('alphabeta') is traced:
            module_globals['alphabeta'] = fn
    info['visited'] = visited
    if top and info['error'] is None:
        _mark_visits(tree.root, top[0])
        info['pruned'] = sum(1 for node in tree.root.walk() if node.pruned)
    return info


def _mark_visits(node, visit):
    node.window, node.ab_value = (visit.alpha, visit.beta), visit.value
    by_state = {child.state: child for child in visit.children}
    for child in node.children:
        if child.state in by_state:
            _mark_visits(child, by_state[child.state])
        else:
            for below in child.walk():
                below.pruned = True


def _fill(call, node, depth):
    try:
        node.end = call('score_end', node.state)
        node.value, node.best = call('score', node.state, node.player)
        if node.end is not None:
            return
        if depth == 0:
            node.below = len(call('moves', node.state))
            return
        for move in call('moves', node.state):
            child = Node(call('play', node.state, move[0], move[1], node.player), other(node.player), move, node.depth + 1)
            node.children.append(child)
            _fill(call, child, depth - 1)
    except FunctionError as error:
        node.error = str(error)


def principal_variation(call, state, player, limit=9):
    """Follow score's best move to the end of the game: ([(move, player, state_after), ...], end, error)."""
    line = []
    try:
        for _ in range(limit + 1):
            end = call('score_end', state)
            if end is not None:
                return line, end, None
            value, move = call('score', state, player)
            if move is None:
                return line, None, _short(f'score returned no move for {player} although score_end says the game goes on')
            if move not in call('moves', state):
                return line, None, _short(f'score suggested {move} for {player}, which moves() does not list')
            state = call('play', state, move[0], move[1], player)
            line.append((move, player, state))
            player = other(player)
        return line, None, 'score_end never ended the game'
    except FunctionError as error:
        return line, None, str(error)


# ---------------------------------------------------------------------------------------------
# Drawing (matplotlib, Agg, no pyplot: safe in a background thread)

def _layout(tree, max_width=16.0):
    """Tidy layered layout: leaves get slots left to right, parents sit over their children."""
    levels = tree.levels()
    slots = []

    def place(node):
        if node.children:
            for child in node.children:
                place(child)
            node.x = (node.children[0].x + node.children[-1].x) / 2
        else:
            node.x = float(len(slots))
            slots.append(node)
    place(tree.root)
    n_slots = max(len(slots), 1)
    slot = min(1.35, max_width / n_slots)
    width = max(n_slots * slot, 6.0)
    offset = (width - n_slots * slot) / 2 + slot / 2
    for node in tree.root.walk():
        node.x = offset + node.x * slot
    y = 0.0
    for depth, level in enumerate(levels):
        xs = sorted(n.x for n in level)
        gap = min((b - a for a, b in zip(xs, xs[1:])), default=width)
        size = 1.25 if depth == 0 else min(1.0, 0.86 * gap)
        label = size >= 0.42
        y -= size / 2 + (0.45 if label or depth == 0 else 0.15)
        for node in level:
            node.y, node.size = y, size
        y -= size / 2 + (0.55 if label else 0.25)
    return levels, width, y


def draw_tree(tree, title=None):
    """A matplotlib Figure of the tree (root, children, ..., principal variation)."""
    from matplotlib.collections import LineCollection, PatchCollection
    from matplotlib.figure import Figure
    from matplotlib.patches import Circle, Rectangle

    levels, width, bottom = _layout(tree)
    pv = tree.pv
    pv_size = 0.85
    pv_gap = 1.25
    pv_top = bottom - 0.7
    pv_y = pv_top - 0.35 - pv_size / 2
    lowest = pv_y - pv_size / 2 - 0.9
    content = max(width, (len(pv) + 1) * pv_gap + 0.5)
    width = max(content, 14.0)    # one scale for every tree: small trees are not blown up
    shift = (width - content) / 2
    if shift:
        for node in tree.root.walk():
            node.x += shift
    top = 0.75
    inches = 11.0
    fig = Figure(figsize=(inches, inches * (top - lowest) / width), dpi=80)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(lowest, top)
    ax.set_aspect('equal')
    ax.axis('off')

    backgrounds, bg_colours, bg_edges, bg_widths = [], [], [], []
    grid, crosses, cross_widths, noughts, nought_widths, marked = [], [], [], [], [], []
    greyed = []   # boards alphabeta never visited, veiled in grey
    texts = []

    def board(state, cx, cy, size, value, move=None, edge='#555555', edge_width=0.8, show_marks=True):
        x0, y0 = cx - size / 2, cy - size / 2
        backgrounds.append(Rectangle((x0, y0), size, size))
        bg_colours.append(TINTS.get(value, '#ffffff'))
        bg_edges.append(edge)
        bg_widths.append(edge_width)
        if not show_marks:
            bg_colours[-1] = COLOURS.get(value, '#ffffff')
            return
        cell = size / 3
        if move is not None:
            r, c = move
            marked.append(Rectangle((x0 + c * cell, y0 + (2 - r) * cell), cell, cell))
        for k in (1, 2):
            grid.append([(x0 + k * cell, y0 + 0.04 * size), (x0 + k * cell, y0 + 0.96 * size)])
            grid.append([(x0 + 0.04 * size, y0 + k * cell), (x0 + 0.96 * size, y0 + k * cell)])
        lw = max(0.6, 2.6 * size)
        for r, row in enumerate(state):
            for c, mark in enumerate(row):
                mx, my = x0 + (c + 0.5) * cell, y0 + (2.5 - r) * cell
                d = 0.3 * cell
                if mark == 'x':
                    crosses.extend([[(mx - d, my - d), (mx + d, my + d)], [(mx - d, my + d), (mx + d, my - d)]])
                    cross_widths.extend([lw, lw])
                elif mark == 'o':
                    noughts.append(Circle((mx, my), d))
                    nought_widths.append(lw)
                elif mark != ' ':
                    texts.append((mx, my, mark, dict(ha='center', va='center', fontsize=6 + 8 * size, color='red')))

    # edges
    on_pv = set()
    node, k = tree.root, 0
    while k < len(pv) and node.children:
        nxt = next((ch for ch in node.children if ch.move == pv[k][0]), None)
        if nxt is None:
            break
        on_pv.add(id(nxt))
        node, k = nxt, k + 1
    plain, strong, golden = [], [], []
    pruned_edges = []
    for parent in tree.root.walk():
        for child in parent.children:
            seg = [(parent.x, parent.y - parent.size / 2), (child.x, child.y + child.size / 2)]
            if child.pruned:
                pruned_edges.append(seg)
            elif id(child) in on_pv:
                golden.append(seg)
            elif parent.best is not None and child.move == parent.best:
                strong.append(seg)
            else:
                plain.append(seg)
    ax.add_collection(LineCollection(plain, colors='#b8b8b8', linewidths=0.7, zorder=1))
    ax.add_collection(LineCollection(pruned_edges, colors='#d8d8d8', linewidths=0.7, linestyles='dashed', zorder=1))
    ax.add_collection(LineCollection(strong, colors='#222222', linewidths=2.0, zorder=2))
    ax.add_collection(LineCollection(golden, colors=PV_COLOUR, linewidths=3.4, zorder=2))

    for level in levels:
        for n in level:
            value = n.value if n.error is None else None
            is_pv = id(n) in on_pv or n is tree.root
            edge = '#d00000' if n.error else (PV_COLOUR if is_pv and n is not tree.root else '#555555')
            ew = 2.2 if (is_pv or n.error) else (1.6 if n.end is not None else 0.7)
            board(n.state, n.x, n.y, n.size, value, n.move, edge, ew, show_marks=n.size >= 0.22)
            if n.pruned:
                greyed.append(Rectangle((n.x - n.size / 2, n.y - n.size / 2), n.size, n.size))
            if n.size >= 0.42:
                above = '' if n.move is None else f'{n.move[0]},{n.move[1]}'
                if n.window is not None:
                    above += ('   ' if above else '') + f'α {_fmt_bound(n.window[0])}  β {_fmt_bound(n.window[1])}'
                elif n.pruned:
                    above += '   pruned'
                if above:
                    texts.append((n.x, n.y + n.size / 2 + 0.05, above,
                                  dict(ha='center', va='bottom', fontsize=7.5 if n.window is None else 6.5,
                                       color='#aaaaaa' if n.pruned else '#444444')))
                below = _fmt_value(value)
                if n.end is not None and not n.error:
                    below += ' end'
                elif n.below:
                    below += f' ({n.below})'
                if n.error:
                    below = 'error'
                texts.append((n.x, n.y - n.size / 2 - 0.05, below,
                              dict(ha='center', va='top', fontsize=9 if n.depth <= 1 else 7.5,
                                   color=COLOURS.get(value, '#d00000') if value != 0 else '#555555',
                                   fontweight='bold', bbox=dict(boxstyle='square,pad=0.05', fc='white', ec='none'))))
    root = tree.root
    head = f'{root.player} to move   value {_fmt_value(root.value)}'
    if root.best is not None:
        head += f'   best move {root.best[0]},{root.best[1]}'
    if root.end is not None:
        head += f'   game over ({VALUE_WORDS.get(root.end, root.end)})'
    texts.append((0.15, top - 0.12, title or head, dict(ha='left', va='top', fontsize=10, fontweight='bold')))
    texts.append((width - 0.15, top - 0.12, 'blue: x wins   grey: draw   orange: o wins   black edge: best move   gold: principal variation',
                  dict(ha='right', va='top', fontsize=8, color='#555555')))

    # deeper levels summarised as counts
    last = levels[-1]
    below = sum(n.below or 0 for n in last)
    ply = len(levels)
    summary = f'ply {ply}: {below} positions not drawn (the numbers in brackets count them)' if below else \
        'every line below this position is drawn to the end of the game'
    c = tree.counts
    summary += f'   ·   {c["positions"]} positions searched by score ({c["score_calls"]} top-level calls, {c["hits"]} answers remembered, {c["seconds"]:.2f} s)'
    if tree.alphabeta is not None:
        ab = tree.alphabeta
        summary += (f'\nalphabeta from here with α -∞, β +∞: {ab["visited"]} positions visited; '
                    f'{ab["pruned"]} of the boards drawn were pruned (grey)' if not ab['error'] else
                    '\nalphabeta: ' + _short(ab['error'], 120))
    texts.append((0.15, bottom - 0.15, summary, dict(ha='left', va='top', fontsize=8, color='#333333')))

    # principal variation strip
    label = 'principal variation:'
    texts.append((0.15, pv_top - 0.05, label, dict(ha='left', va='top', fontsize=8.5, fontweight='bold')))
    for i, (move, player, state) in enumerate(pv):
        cx = 0.25 + pv_gap * (i + 0.5)
        board(state, cx, pv_y, pv_size, None, move, PV_COLOUR, 1.2)
        texts.append((cx, pv_y - pv_size / 2 - 0.05, f'{player} {move[0]},{move[1]}',
                      dict(ha='center', va='top', fontsize=7.5, color='#444444')))
    end_x = 0.25 + pv_gap * len(pv) + 0.1
    if tree.pv_error:
        end_text = 'stopped: ' + _short(tree.pv_error, 70)
    elif tree.pv_end is not None:
        end_text = '→ ' + VALUE_WORDS.get(tree.pv_end, str(tree.pv_end))
    else:
        end_text = ''
    texts.append((end_x, pv_y, end_text, dict(ha='left', va='center', fontsize=9, fontweight='bold',
                                                color=COLOURS.get(tree.pv_end, '#d00000') if tree.pv_end != 0 else '#555555')))
    if tree.errors:
        texts.append((0.15, lowest + 0.1, 'errors: ' + _short(' | '.join(tree.errors), 150),
                      dict(ha='left', va='bottom', fontsize=8, color='#d00000')))

    ax.add_collection(PatchCollection(backgrounds, facecolors=bg_colours, edgecolors=bg_edges, linewidths=bg_widths, zorder=3))
    ax.add_collection(PatchCollection(marked, facecolors='#fff3a8', edgecolors='none', zorder=4))
    ax.add_collection(LineCollection(grid, colors='#777777', linewidths=0.6, zorder=5))
    ax.add_collection(LineCollection(crosses, colors='#1f4e9c', linewidths=cross_widths, zorder=6, capstyle='round'))
    ax.add_collection(PatchCollection(noughts, facecolors='none', edgecolors='#b23c0a', linewidths=nought_widths, zorder=6))
    ax.add_collection(PatchCollection(greyed, facecolors='#f4f4f4', edgecolors='#cccccc', alpha=0.8, zorder=6.5))
    for x, y, s, kw in texts:
        ax.text(x, y, s, zorder=7, **kw)
    return fig


def figure_png(fig):
    """PNG bytes of a Figure made by draw_tree."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format='png')
    return buffer.getvalue()


# ---------------------------------------------------------------------------------------------
# The widget

_CSS = """
<style>
.nac-widget .nac-cell button, .nac-widget button.nac-cell { font-size: 30px; font-weight: bold; }
.nac-widget .nac-tree img, .nac-widget img.nac-tree { max-width: 100%; height: auto; }
.nac-widget .nac-text pre { margin: 0; font-size: 15px; line-height: 1.15; }
@keyframes nac-spin { to { transform: rotate(360deg); } }
.nac-spinner { display: inline-block; width: 0.8em; height: 0.8em; border: 2px solid #999; border-top-color: transparent;
               border-radius: 50%; animation: nac-spin 0.8s linear infinite; vertical-align: -0.1em; margin-right: 0.4em; }
</style>
"""

MEMO_TOOLTIP = ('Memoize calls: remember every answer of your functions by their arguments, e.g. score by (state, player), '
                'so the widget asks each question only once. Untick to call your functions afresh every time '
                '(and see how fast your own score is).')


class GameTreeWidget(widgets.VBox if widgets else object):
    """Play noughts and crosses against ``score``, watch a perfect game, and see the minimax tree.

    Arguments (the notebook's functions; only these are used to play and to evaluate):
        print_state, score_end, play, moves, score
    Keyword options:
        state:   the starting position (default: the empty board)
        human:   the side the user plays, 'x' or 'o' (default 'x'); the AI plays the other side
        depth:   plies of the tree drawn, 1..3 (default 2); deeper levels are summarised as counts
        pace:    seconds per move of a perfect game (default 0.4)
        memoize: remember answers by their arguments (default True)
        tree:    draw the search tree (default True)
        alphabeta: optional alphabeta(state, player, alpha, beta) -> (value, move); when given, the tree shows
                 the window alphabeta searched each drawn position with, and greys the positions it pruned
    """

    def __repr__(self):
        if widgets is None:
            return 'Game-tree widget disabled during grading.'
        return super().__repr__()

    def __init__(self, print_state=None, score_end=None, play=None, moves=None, score=None, *, alphabeta=None,
                 state=None, human='x', depth=2, pace=0.4, memoize=True, tree=True):
        self.disabled_for_grading = bool(os.environ.get('NBGRADER_EXECUTION'))
        if self.disabled_for_grading and widgets is None:
            return
        if self.disabled_for_grading:
            super().__init__([widgets.HTML('Game-tree widget disabled during grading.')])
            self.add_class('nac-widget')
            self.add_class('nac-disabled')
            return
        super().__init__()
        self.add_class('nac-widget')
        self.call = _Calls(dict(print_state=print_state, score_end=score_end, play=play, moves=moves, score=score,
                                alphabeta=alphabeta))
        self.call.memoize = memoize
        self.pace = pace
        start = EMPTY_STATE if state is None else tuple(tuple(row) for row in state)
        # history: list of (state, player to move, move that led here); index: the entry shown
        self.history = [(start, side_to_move(start), None)]
        self.index = 0
        self.last_tree = None
        self.last_png = None
        self.last_error = None
        self._generation = 0
        self._stop = threading.Event()
        self._jobs = queue.Queue()
        self._busy = None          # (text, since) while a job that matters to the user runs
        self._lock = threading.RLock()
        self._setting_slider = False
        self._build_ui(human, depth, tree)
        self._worker = threading.Thread(target=self._work, name='nac-widget-worker', daemon=True)
        self._worker.start()
        self._ticker = threading.Thread(target=self._tick, name='nac-widget-ticker', daemon=True)
        self._ticker.start()
        self._render_board()
        self._submit(self._start)

    # -- UI ------------------------------------------------------------------------------------
    def _build_ui(self, human, depth, tree):
        self.cells = {}
        grid = []
        for r in range(3):
            for c in range(3):
                b = widgets.Button(description=' ', layout=widgets.Layout(width='64px', height='64px'))
                b.add_class('nac-cell')
                b.add_class(f'nac-cell-{r}-{c}')
                b.style.font_weight = 'bold'
                b.style.font_size = '28px'
                b.on_click(lambda _b, r=r, c=c: self.click(r, c))
                self.cells[r, c] = b
                grid.append(b)
        self.board = widgets.GridBox(grid, layout=widgets.Layout(grid_template_columns='repeat(3, 66px)', grid_gap='2px'))
        self.board.add_class('nac-board')

        self.side = widgets.ToggleButtons(options=[('play x', 'x'), ('play o', 'o')], value=human,
                                          tooltips=['you play x (x moves first)', 'you play o (the AI opens as x)'],
                                          style={'button_width': '70px'})
        self.side.add_class('nac-side')
        self.side.observe(self._on_side, 'value')

        def button(text, cls, handler, tooltip, icon=''):
            b = widgets.Button(description=text, tooltip=tooltip, icon=icon, layout=widgets.Layout(width='auto'))
            b.add_class(cls)
            b.on_click(lambda _b: handler())
            return b
        self.new_button = button('New game', 'nac-new', self.new_game, 'start again from the empty board', 'refresh')
        self.undo_button = button('Undo', 'nac-undo', self.undo, 'take back your last move (and the AI answer)', 'undo')
        self.ai_button = button('AI moves for me', 'nac-ai', self.ai_move, 'let score choose your move', 'magic')
        self.perfect_button = button('Perfect game', 'nac-perfect', self.perfect_game,
                                     'score plays both sides from here, one move at a time', 'play')
        self.stop_button = button('Stop', 'nac-stop', self.stop, 'stop the perfect game / skip pending work', 'stop')

        self.history_slider = widgets.IntSlider(value=0, min=0, max=0, description='move', continuous_update=True,
                                                layout=widgets.Layout(width='330px'))
        self.history_slider.add_class('nac-history')
        self.history_slider.observe(self._on_slider, 'value')

        self.status = widgets.HTML('')
        self.status.add_class('nac-status')
        self.error = widgets.HTML('')
        self.error.add_class('nac-error')
        self.text = widgets.HTML('')
        self.text.add_class('nac-text')

        self.depth = widgets.IntSlider(value=max(1, min(3, depth)), min=1, max=3, description='tree depth',
                                       continuous_update=False, layout=widgets.Layout(width='260px'),
                                       tooltip='plies drawn below the current position; deeper plies are counted')
        self.depth.add_class('nac-depth')
        self.depth.observe(lambda _c: self._submit(self._draw_tree_job, user=False), 'value')
        self.memo = widgets.Checkbox(value=self.call.memoize, description='memoize calls (remember answers)',
                                     tooltip=MEMO_TOOLTIP, indent=False, layout=widgets.Layout(width='auto'))
        self.memo.add_class('nac-memo')
        self.memo.observe(self._on_memo, 'value')
        self.show_tree = widgets.Checkbox(value=bool(tree), description='draw tree', indent=False,
                                          tooltip='untick while your score is slow', layout=widgets.Layout(width='auto'))
        self.show_tree.add_class('nac-show-tree')
        self.show_tree.observe(lambda _c: self._submit(self._draw_tree_job, user=False), 'value')

        self.tree_image = widgets.Image(format='png', layout=widgets.Layout(max_width='100%'))
        self.tree_image.add_class('nac-tree')
        self.children_box = widgets.HBox(layout=widgets.Layout(flex_flow='row wrap'))
        self.children_box.add_class('nac-children')

        left = widgets.VBox([self.board, self.text], layout=widgets.Layout(margin='0 16px 0 0'))
        right = widgets.VBox([
            self.side,
            widgets.HBox([self.new_button, self.undo_button, self.ai_button]),
            widgets.HBox([self.perfect_button, self.stop_button]),
            self.history_slider,
            widgets.HBox([self.memo, self.show_tree]),
            self.depth,
            self.status,
            self.error,
        ])
        css = widgets.HTML(_CSS)
        self.children = [css, widgets.HBox([left, right]),
                         widgets.HTML('<b>Moves from here</b> (click to play; value from score):'),
                         self.children_box, self.tree_image]

    # -- state -------------------------------------------------------------------------------
    @property
    def state(self):
        return self.history[self.index][0]

    @property
    def player(self):
        return self.history[self.index][1]

    @property
    def human(self):
        return self.side.value

    @property
    def ai(self):
        return other(self.side.value)

    def wait(self, timeout=60):
        """Block until the widget has finished all queued work (for tests and scripts)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self._jobs.unfinished_tasks == 0:
                return True
            time.sleep(0.01)
        return False

    # -- background work --------------------------------------------------------------------
    def _submit(self, job, *args, user=True):
        if self.disabled_for_grading:
            return
        self._jobs.put((job, args, self._generation if not user else None))

    def _work(self):
        while True:
            job, args, generation = self._jobs.get()
            try:
                if generation is not None and generation != self._generation:
                    continue    # a background job for a position no longer shown
                job(*args)
            except _Cancelled:
                pass
            except FunctionError as error:
                self._show_error(str(error))
            except Exception as error:   # a bug in the widget itself: still one line
                self._show_error(_short(f'widget error: {type(error).__name__}: {error}'))
            finally:
                self._set_busy(None)
                self._jobs.task_done()

    def _tick(self):
        while True:
            time.sleep(0.5)
            busy = self._busy
            if busy is not None:
                text, since = busy
                elapsed = time.time() - since
                if elapsed > 0.4:
                    self.status.value = f'<span class="nac-spinner"></span><b>thinking…</b> {html.escape(text)} ({elapsed:.1f} s)'

    def _set_busy(self, text):
        if text is None:
            if self._busy is not None:
                self._busy = None
                self._update_status()
        else:
            self._busy = (text, time.time())

    def _show_error(self, message):
        self.last_error = message
        self.error.value = f'<span style="color:#c00000">⚠ {html.escape(message)}</span>' if message else ''

    def _cancel_if_moved(self, generation):
        def check():
            if generation != self._generation or self._stop.is_set():
                raise _Cancelled()
        return check

    # -- moves --------------------------------------------------------------------------------
    def _push(self, state, player, move):
        with self._lock:
            del self.history[self.index + 1:]
            self.history.append((state, player, move))
            self.index = len(self.history) - 1
            self._generation += 1
        self._sync_slider()
        self._render_board()

    def _sync_slider(self):
        self._setting_slider = True
        try:
            self.history_slider.max = len(self.history) - 1
            self.history_slider.value = self.index
        finally:
            self._setting_slider = False

    def _game_over(self):
        return self.call('score_end', self.state) is not None

    def _play_move(self, move):
        """Play ``move`` for the side to move (through play), after checking moves() lists it."""
        state, player = self.state, self.player
        if self.call('score_end', state) is not None:
            self._show_error('')
            self._update_status('The game is over: start a new game or undo.')
            return False
        if tuple(move) not in self.call('moves', state):
            self._update_status(f'{move[0]},{move[1]} is not among moves(state).')
            return False
        new = self.call('play', state, move[0], move[1], player)
        self._push(new, other(player), tuple(move))
        return True

    def _ai_plays(self, player):
        self._set_busy(f'score(state, {player!r}) is choosing a move')
        self._update_status()
        value, move = self.call('score', self.state, player)
        if move is None:
            raise FunctionError(f'score returned no move for {player!r} although the game is not over')
        self._set_busy(None)
        return self._play_move(move)

    def _user_move(self, move):
        self._show_error('')
        try:
            if self._play_move(move):
                self._ai_answers()
        except FunctionError as error:
            self._show_error(str(error))
        self._after_position_change()

    def _ai_answers(self):
        """If it is the AI's turn, let score choose its move. An error is shown, and the rest of the job goes on."""
        try:
            if self.player == self.ai and not self._game_over():
                self._ai_plays(self.ai)
        except FunctionError as error:
            self._set_busy(None)
            self._show_error(str(error))

    def _start(self):
        self._ai_answers()
        self._after_position_change()

    def _after_position_change(self):
        self._update_text()
        self._update_status()
        self._draw_tree_job()

    # public actions (thread-safe: they queue work for the background thread)
    def click(self, row, col):
        """Play (row, col) for the side to move, then let the AI answer."""
        if self._busy is not None and self._busy[0].startswith('score(state'):
            self._update_status('Wait: the AI is still thinking.')
            return
        self._generation += 1
        self._submit(self._user_move, (row, col))

    def ai_move(self):
        """Let score choose the move of the side to move (normally yours), then the AI answers."""
        self._generation += 1

        def job():
            self._show_error('')
            try:
                if not self._game_over() and self._ai_plays(self.player):
                    self._ai_answers()
            except FunctionError as error:
                self._set_busy(None)
                self._show_error(str(error))
            self._after_position_change()
        self._submit(job)

    def new_game(self):
        self._generation += 1

        def job():
            self._show_error('')
            with self._lock:
                self.history = [(EMPTY_STATE, 'x', None)]
                self.index = 0
                self._generation += 1
            self._sync_slider()
            self._render_board()
            self._ai_answers()
            self._after_position_change()
        self._stop.set()
        self._submit(lambda: self._stop.clear())
        self._submit(job)

    def undo(self):
        """Take back moves until it is the user's turn again (at least one move)."""
        self._generation += 1

        def job():
            self._show_error('')
            i = self.index - 1
            while i > 0 and self.history[i][1] != self.human:
                i -= 1
            if i < 0:
                return
            with self._lock:
                del self.history[i + 1:]
                self.index = i
                self._generation += 1
            self._sync_slider()
            self._render_board()
            self._after_position_change()
        self._submit(job)

    def stop(self):
        """Stop a perfect game in progress and skip pending tree drawing."""
        self._stop.set()
        self._generation += 1
        self._submit(lambda: self._stop.clear())

    def perfect_game(self, pace=None):
        """score plays both sides from the current position, one move every ``pace`` seconds."""
        pace = self.pace if pace is None else pace
        self._generation += 1

        def job():
            self._show_error('')
            self._stop.clear()
            self.perfect_button.disabled = True
            try:
                while not self._stop.is_set() and not self._game_over():
                    started = time.time()
                    self._ai_plays(self.player)
                    self._update_text()
                    self._update_status()
                    if self.show_tree.value:
                        generation = self._generation
                        try:
                            self._draw_tree(generation)
                        except _Cancelled:
                            pass
                    rest = pace - (time.time() - started)
                    if rest > 0 and not self._game_over():
                        self._stop.wait(rest)
            finally:
                self.perfect_button.disabled = False
            self._after_position_change()
        self._submit(job)

    # -- observers ------------------------------------------------------------------------------
    def _on_slider(self, change):
        if self._setting_slider:
            return
        with self._lock:
            self.index = max(0, min(change['new'], len(self.history) - 1))
            self._generation += 1
        self._render_board()
        self._submit(self._after_position_change, user=False)

    def _on_side(self, change):
        self._generation += 1

        self._submit(self._start)

    def _on_memo(self, change):
        self.call.memoize = change['new']
        if not change['new']:
            self.call.clear()
        self._submit(self._draw_tree_job, user=False)

    # -- rendering ---------------------------------------------------------------------------------
    def _render_board(self):
        """Show the stored state on the buttons (no game logic: just the marks)."""
        state = self.state
        last = self.history[self.index][2]
        for (r, c), b in self.cells.items():
            mark = state[r][c]
            b.description = mark if mark != ' ' else ' '
            b.style.text_color = '#1f4e9c' if mark == 'x' else '#b23c0a'
            if (r, c) == last:
                b.style.button_color = '#ffe680'
                b.add_class('nac-last')
            else:
                b.style.button_color = '#f5f5f5'
                b.remove_class('nac-last')

    def _update_text(self):
        try:
            printed = self.call('print_state', self.state)
            body = html.escape(printed.rstrip('\n')) if printed.strip() else '(print_state printed nothing)'
        except FunctionError as error:
            body = html.escape(str(error))
        self.text.value = f'<div style="color:#555;font-size:11px">print_state(state):</div><pre>{body}</pre>'

    def _update_status(self, note=None):
        if self._busy is not None:
            return
        parts = []
        try:
            end = self.call('score_end', self.state)
        except FunctionError as error:
            self._show_error(str(error))
            end = None
        if end is not None:
            word = VALUE_WORDS.get(end, str(end))
            human_value = 1 if self.human == 'x' else -1
            verdict = 'You win!' if end == human_value else ('' if end == 0 else 'The AI wins.')
            parts.append(f'<b style="font-size:15px">Game over: {word}. {verdict}</b>')
        else:
            whose = 'your' if self.player == self.human else "the AI's"
            parts.append(f'<b>{self.player}</b> to move ({whose} turn)')
        if self.index < len(self.history) - 1:
            parts.append(f'<i>viewing move {self.index} of {len(self.history) - 1}</i>')
        if note:
            parts.append(html.escape(note))
        self.status.value = ' · '.join(parts)

    def _draw_tree_job(self):
        if not self.show_tree.value:
            self.tree_image.layout.display = 'none'
            self.children_box.children = []
            return
        self.tree_image.layout.display = None
        self._draw_tree(self._generation)

    def _draw_tree(self, generation):
        state, player = self.state, self.player
        self._set_busy(f'score is evaluating the tree below this position')
        self.call.cancel_check = self._cancel_if_moved(generation)
        try:
            tree = build_tree(self.call, state, player, self.depth.value)
        finally:
            self.call.cancel_check = None
        fig = draw_tree(tree)
        png = figure_png(fig)
        if generation != self._generation:
            raise _Cancelled()
        self.last_tree = tree
        self.last_png = png
        self.tree_image.value = png
        self._set_child_buttons(tree)
        self._set_busy(None)
        if tree.errors:
            self._show_error(tree.errors[0])

    def _set_child_buttons(self, tree):
        buttons = []
        for child in tree.root.children:
            r, c = child.move
            value = child.value if child.error is None else None
            b = widgets.Button(description=f'{r},{c}: {_fmt_value(value)}',
                               tooltip=f'play {r},{c}; score says {VALUE_WORDS.get(value, "?")}',
                               layout=widgets.Layout(width='auto'))
            b.style.button_color = TINTS.get(value, '#ffffff')
            if tree.root.best == child.move:
                b.style.font_weight = 'bold'
                b.add_class('nac-best')
            b.add_class('nac-child')
            b.add_class(f'nac-child-{r}-{c}')
            b.on_click(lambda _b, r=r, c=c: self.click(r, c))
            buttons.append(b)
        self.children_box.children = buttons

    # -- for tests, scripts and benchmarks ---------------------------------------------------------
    def tree(self, state=None, player=None, depth=None):
        """The Tree (values from score) below ``state`` (default: the position shown), computed now."""
        state = self.state if state is None else state
        player = (side_to_move(state) if state is not self.state else self.player) if player is None else player
        return build_tree(self.call, state, player, self.depth.value if depth is None else depth)

    def tree_figure(self, state=None, player=None, depth=None):
        """A matplotlib Figure of that tree."""
        return draw_tree(self.tree(state, player, depth))
