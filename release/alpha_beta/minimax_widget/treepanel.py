"""The tree half of the widget: builds the tree below the position shown, draws it for the view's width, font
and focus, fills the count and best-play panels, and turns clicks in the picture into actions."""
import threading

from .calls import Cancelled, FunctionError
from .drawing import draw_tree, parse_path
from .model import PositionGraph, build_tree
from .panels import counts_html, pv_html, root_summary
from .stepview import stepping_tree

STEPPING_HINT = 'Stepping through the search: values and windows appear as the steps back them up.'

DEFAULT_WIDTH = 760


class TreePanel:
    """Owns the last tree and its drawing; ``play_path(path, root)`` is how a click on a board is played."""

    def __init__(self, ui, call, worker, show_error, play_path):
        self.ui, self.call, self.worker = ui, call, worker
        self.show_error, self.play_path = show_error, play_path
        self.graph = PositionGraph()
        self.tree = self.drawing = None
        self.focus = ((), ())    # (root state, path of moves) the lecturer expanded
        self.stepping = None     # (root state, player, Outline, current path, asking path) while stepping
        self._drawing_lock = threading.RLock()
        ui.view.observe(lambda _change: self.redraw(), ['width', 'screen'])
        ui.view.on_action(self._on_action)

    def draw(self, state, player, cancel_check):
        """Ask the functions for the tree below (state, player) and show it; then count its positions."""
        self.call.cancel_check = cancel_check
        try:
            tree = build_tree(self.call, state, player, self.ui.depth.value)
        finally:
            self.call.cancel_check = None
        cancel_check()
        if self.focus[0] != state:
            self.focus = (state, ())
        self.tree = tree
        self.redraw()
        self.ui.counts.value = counts_html(tree, self.call.memoize)
        if tree.errors:
            self.show_error(tree.errors[0])
        self.worker.submit(self.count, tree, background=True)

    def count(self, tree):
        """Fill in how many positions a plain and a memoized minimax visit below the tree's root (a background job)."""
        self.call.cancel_check = self.worker.cancel_check(generation=self.worker.generation)
        try:
            tree.search = self.graph.counts(self.call, tree.root.state, tree.root.player)
        except FunctionError as error:
            tree.search = {'error': str(error)}
        except Cancelled:
            tree.search = {'stopped': True}   # not "…" for ever: counted again when this position is drawn
        finally:
            self.call.cancel_check = None
        if tree is self.tree:
            self.ui.counts.value = counts_html(tree, self.call.memoize)

    def follow_steps(self, stepping):
        """The step panel moved on: draw the tree as the steps have shown it (None: the whole tree again)."""
        self.stepping = stepping
        self.redraw()

    def _shown(self, tree):
        """The Tree to draw: while stepping through a search of this position, only what the steps have shown."""
        stepping = self.stepping
        if stepping is None or (tree.root.state, tree.root.player) != stepping[:2]:
            return tree, None
        outline, current, asking = stepping[2:]
        return stepping_tree(tree, outline, current, asking), current

    def redraw(self):
        """Draw the last tree again for the view's width, font and focus: no function is called. One drawing at a
        time (the background job that built a tree and the browser's new width both redraw), each reading the
        width as it is then, so the last picture shown is drawn for the last width reported."""
        with self._drawing_lock:
            tree = self.tree
            if tree is None:
                return
            shown, current = self._shown(tree)
            focus = self.focus[1] if self.focus[0] == tree.root.state else ()
            font = 20 if self.ui.lecture.value else 16
            if getattr(self.ui, 'presenter', False):       # as the presenter's text: 1.45vw, 16-40 px
                font = round(max(16, min(40, 0.0145 * (self.ui.view.screen or 1280))))
            self.drawing = draw_tree(shown, self.ui.view.width or DEFAULT_WIDTH, focus if current is None else
                                     current, font)
            self.ui.view.svg = self.drawing.svg
            self.ui.view.hint = root_summary(tree) if current is None else STEPPING_HINT
            self.ui.pv.value = pv_html(tree) if current is None else \
                '<b>Best play from here</b>: shown when the search is over.'

    def _on_action(self, action, text):
        tree = self.tree
        try:
            path = parse_path(text)
        except ValueError:
            return
        if tree is None or tree.find(path) is None:
            return
        if action == 'focus':
            self.focus = (tree.root.state, path)
            self.redraw()
        else:
            self.play_path(path, root=tree.root.state)
