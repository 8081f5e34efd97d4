"""The search tree below a position, built only from the answers of the notebook's functions: the tree of values
and best moves, the principal variation, the alpha-beta trace and how many positions a search visits."""
import math
import threading
import time

from .calls import Cancelled, FunctionError, as_state, raised, shorten

EMPTY_STATE = ((' ', ' ', ' '), (' ', ' ', ' '), (' ', ' ', ' '))
VALUE_WORDS = {1: 'x wins', 0: 'draw', -1: 'o wins'}


def other(player):
    """The opponent's mark."""
    return 'o' if player == 'x' else 'x'


def side_to_move(state):
    """Whose turn it is, by counting marks (x always starts): bookkeeping, not game logic."""
    marks = [cell for row in state for cell in row]
    return 'x' if marks.count('x') <= marks.count('o') else 'o'


class Node:
    """One position of the tree. ``end``, ``value`` and ``best`` are what score_end and score answered;
    ``path`` is the moves from the root; ``window`` and ``ab_value`` what alphabeta was called with and answered."""
    __slots__ = ('state', 'player', 'move', 'path', 'end', 'value', 'best', 'children', 'error', 'below',
                 'window', 'ab_value', 'pruned')

    def __init__(self, state, player, move=None, path=()):
        self.state, self.player, self.move, self.path = state, player, move, path
        self.end = self.value = self.best = self.error = None
        self.window = self.ab_value = None
        self.pruned = False
        self.children = []
        self.below = None   # how many moves follow a position of the deepest level built

    @property
    def depth(self):
        return len(self.path)

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()

    def child(self, move):
        return next((child for child in self.children if child.move == move), None)


class Tree:
    """The tree ``depth`` plies below a position, its principal variation and what building it cost."""

    def __init__(self, root, depth, pv, pv_end, pv_error, counts):
        self.root, self.depth, self.counts = root, depth, counts
        self.pv, self.pv_end, self.pv_error = pv, pv_end, pv_error
        self.alphabeta = None   # {'visited': calls of alphabeta, 'pruned': built positions not visited, 'error': ...}
        self.search = None      # {'plain': positions a plain minimax visits, 'distinct': distinct ones}, when counted

    def levels(self):
        levels = [[self.root]]
        while any(node.children for node in levels[-1]):
            levels.append([child for node in levels[-1] for child in node.children])
        return levels

    def nodes(self):
        return list(self.root.walk())

    def find(self, path):
        """The node reached from the root by the moves of ``path``, or None."""
        node = self.root
        for move in path:
            node = node.child(tuple(move))
            if node is None:
                return None
        return node

    @property
    def errors(self):
        found = [node.error for node in self.root.walk() if node.error]
        found += [self.pv_error, (self.alphabeta or {}).get('error')]
        return list(dict.fromkeys(error for error in found if error))


def build_tree(call, state, player, depth):
    """Ask the given functions (through ``call``, a FunctionCaller) for the tree ``depth`` plies below ``state``."""
    score_calls, all_calls, hits, function_seconds = call.snapshot()
    start = time.perf_counter()
    root = Node(state, player)
    _fill(call, root, depth)
    pv, pv_end, pv_error = principal_variation(call, state, player)
    after = call.snapshot()
    counts = {'score_calls': after[0] - score_calls, 'calls': after[1] - all_calls, 'hits': after[2] - hits,
              'function_seconds': after[3] - function_seconds, 'seconds': time.perf_counter() - start}
    tree = Tree(root, depth, pv, pv_end, pv_error, counts)
    if call.has('alphabeta'):
        tree.alphabeta = trace_alphabeta(call, tree)
    return tree


def _fill(call, node, depth):
    try:
        node.end = call('score_end', node.state)
        node.value, node.best = call('score', node.state, node.player)
        if node.end is not None:
            return
        options = call('moves', node.state)
        if depth == 0:
            node.below = len(options)
            return
        for move in options:
            board = call('play', node.state, move[0], move[1], node.player)
            child = Node(board, other(node.player), move, node.path + (move,))
            node.children.append(child)
            _fill(call, child, depth - 1)
    except FunctionError as error:
        node.error = str(error)


def principal_variation(call, state, player, limit=9):
    """Follow score's best move to the end of the game: ([(move, player, state after), ...], end, error)."""
    line = []
    try:
        for _ in range(limit + 1):
            end = call('score_end', state)
            if end is not None:
                return line, end, None
            _, move = call('score', state, player)
            if move is None:
                return line, None, f'score returned no move for {player} although score_end says the game goes on'
            if move not in call('moves', state):
                return line, None, f'score suggested {move} for {player}, which moves() does not list'
            state = call('play', state, move[0], move[1], player)
            line.append((move, player, state))
            player = other(player)
        return line, None, 'score_end never ended the game'
    except FunctionError as error:
        return line, None, str(error)


class _Visit:
    """One traced call of alphabeta: its window, its answer and the calls it made (down to the built depth)."""
    __slots__ = ('state', 'alpha', 'beta', 'value', 'children')

    def __init__(self, state, alpha, beta):
        self.state, self.alpha, self.beta = state, alpha, beta
        self.value = None
        self.children = []


def trace_alphabeta(call, tree):
    """Call alphabeta on the root with the window (−∞, +∞), recording the calls it makes through its own global
    name; mark each node of the tree with the window it was searched with and the answer, or as pruned."""
    fn = call.functions['alphabeta']
    top, stack = [], []
    visited = 0
    owner = threading.get_ident()

    def traced(state, player, alpha, beta):
        nonlocal visited
        if threading.get_ident() != owner:
            return fn(state, player, alpha, beta)
        visited += 1
        if visited % 256 == 0:
            call.check_cancel()
        visit = _Visit(as_state(state), alpha, beta)
        if len(stack) <= tree.depth:
            (stack[-1].children if stack else top).append(visit)
        stack.append(visit)
        try:
            result = fn(state, player, alpha, beta)
        finally:
            stack.pop()
        try:
            visit.value = result[0]
        except Exception:
            raise FunctionError(shorten(f'alphabeta returned {result!r}; expected a pair (value, move)', 200)) from None
        return result

    info = {'visited': 0, 'pruned': 0, 'error': None}
    namespace = getattr(fn, '__globals__', None)
    swap = isinstance(namespace, dict) and namespace.get('alphabeta') is fn
    if swap:
        namespace['alphabeta'] = traced
    try:
        traced(tree.root.state, tree.root.player, -math.inf, math.inf)
    except Cancelled:
        raise
    except FunctionError as error:
        info['error'] = str(error)
    except Exception as error:
        info['error'] = raised('alphabeta', error)
    finally:
        if swap and namespace.get('alphabeta') is traced:
            namespace['alphabeta'] = fn
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


class PositionGraph:
    """The positions that can follow a position, as score_end, moves and play say, each asked about once.

    It answers how many positions a plain minimax visits below a position (every path counted: 549,946 from the
    empty board) and how many distinct positions a memoized one visits (5,478), whatever the student's score does.
    """

    LIMIT = 40_000

    def __init__(self):
        self.next = {}   # (state, player) -> [(state, player) after each move]; [] when the game is over

    def expand(self, call, state, player):
        """Ask the functions about every position below (state, player) not yet known."""
        pending = [(state, player)]
        while pending:
            key = pending.pop()
            if key in self.next:
                continue
            if len(self.next) > self.LIMIT:
                raise FunctionError(f'more than {self.LIMIT:,} positions follow: do play and score_end look right?')
            board, mover = key
            if call('score_end', board) is not None:
                self.next[key] = []
                continue
            followers = [(call('play', board, row, col, mover), other(mover)) for row, col in call('moves', board)]
            self.next[key] = followers
            pending.extend(follower for follower in followers if follower not in self.next)

    def counts(self, call, state, player):
        """{'plain': positions a plain minimax visits from here, root included; 'distinct': distinct positions}."""
        self.expand(call, state, player)
        sizes, open_positions = {}, set()
        stack = [((state, player), False)]
        while stack:
            key, finished = stack.pop()
            if finished:
                sizes[key] = 1 + sum(sizes[follower] for follower in self.next[key])
                open_positions.discard(key)
                continue
            if key in sizes:
                continue
            if key in open_positions:
                raise FunctionError('play and score_end never end the game: a position comes back after moves')
            open_positions.add(key)
            stack.append((key, True))
            stack.extend((follower, False) for follower in self.next[key] if follower not in sizes)
        return {'plain': sizes[(state, player)], 'distinct': len(sizes)}
