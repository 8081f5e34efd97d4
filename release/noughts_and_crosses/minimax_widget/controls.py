"""GameTreeWidget: the board, the game's rules of engagement (who plays what, Stop, the perfect game) and the
jobs that call the notebook's functions in the background thread."""
import time

import ipywidgets as widgets

from .calls import Cancelled, FunctionCaller, FunctionError, as_state
from .grading import DisabledWidget, grading
from .keys import KeyBridge
from .model import EMPTY_STATE, build_tree, other, side_to_move
from .panels import Panels
from .presenter import arrange
from .rendering import Rendering
from .steppanel import StepPanel
from .treepanel import TreePanel
from .worker import Worker


class GameTreeWidget(Rendering, widgets.VBox):
    """Play noughts and crosses against ``score``, watch a perfect game and read the minimax tree. The five
    functions (and, optionally, ``alphabeta(state, player, alpha, beta)``) are the only source of game facts.
    Options: ``state`` (start position), ``human`` ('x' or 'o'), ``depth`` (1-3 plies drawn), ``pace`` (seconds per
    move of a perfect game), ``memoize``, ``tree`` (draw it), ``lecture`` (bigger type, fewer controls), ``steps``
    (the step panel), ``live_depth`` (its depth, 1-4), ``keys`` (keyboard keys), ``presenter`` (the layout of
    `make present`, presenter.py, with ``title``)."""

    def __new__(cls, *args, **kwargs):
        if grading():
            return DisabledWidget()
        return super().__new__(cls, *args, **kwargs)

    def __init__(self, print_state=None, score_end=None, play=None, moves=None, score=None, *, alphabeta=None,
                 state=None, human='x', depth=2, pace=0.6, memoize=True, tree=True, lecture=False, steps=True,
                 live_depth=2, keys=False, presenter=False, title=''):
        super().__init__()
        self.disabled_for_grading = False
        self.add_class('nac-widget')
        self.call = FunctionCaller(dict(print_state=print_state, score_end=score_end, play=play, moves=moves,
                                        score=score, alphabeta=alphabeta), memoize)
        start = EMPTY_STATE if state is None else as_state(state)
        self.history = [(start, side_to_move(start), None)]   # (state, player to move, move that led here)
        self.index = 0
        self.mode = 'play'           # 'perfect' while score plays both sides
        self.ended_as = {}           # finished position -> the side the viewer played when it was reached
        self.last_error = None
        self._quiet = False          # a control is being set by the widget, not the user
        self.ui = Panels(human, depth, pace, memoize, tree, lecture)
        self.cells = self.ui.cells
        self.worker = Worker(self._show_error, self.ui.show_busy, self._set_status)
        self.tree_panel = TreePanel(self.ui, self.call, self.worker, self._show_error, self.play_path)
        self.steps = StepPanel(self.call, self.worker, lambda: (self.state, self.player), lambda: self.ui.pace.value,
                               alphabeta is not None, live_depth, on_change=self.tree_panel.follow_steps)
        self.steps.ui.box.layout.display = None if steps else 'none'
        self.ui.tree_panel.children = (*self.ui.tree_panel.children, self.steps.ui.box)   # under the tree
        self.key_bridge = KeyBridge(enabled=keys)
        self.key_bridge.on_key(self._on_key)
        self.children = [arrange(self, title) if presenter else self.ui.main, self.key_bridge]
        self._connect()
        self._set_lecture(lecture)
        self.ui.tree_parts.layout.display = None if tree else 'none'
        self._render_board()
        self.worker.submit(self._start)

    def _connect(self):
        ui = self.ui
        for (row, col), cell in ui.cells.items():
            cell.on_click(lambda _button, row=row, col=col: self.click(row, col))
        ui.new_button.on_click(lambda _button: self.new_game())
        ui.undo_button.on_click(lambda _button: self.undo())
        ui.ai_button.on_click(lambda _button: self.ai_move())
        ui.perfect_button.on_click(lambda _button: self.perfect_game())
        ui.stop_button.on_click(lambda _button: self.stop())
        ui.side.observe(self._on_side, 'value')
        ui.start.observe(self._on_start, 'value')
        ui.history.observe(self._on_history, 'value')
        ui.depth.observe(lambda _change: self._refresh_tree(), 'value')
        ui.memo.observe(self._on_memo, 'value')
        ui.show_tree.observe(lambda _change: self._refresh_tree(), 'value')
        ui.lecture.observe(lambda change: self._set_lecture(change['new']), 'value')

    # -- what is shown -------------------------------------------------------------------------------------
    @property
    def state(self):
        return self.history[self.index][0]

    @property
    def player(self):
        return self.history[self.index][1]

    @property
    def human(self):
        return self.ui.side.value

    @property
    def ai(self):
        return other(self.ui.side.value)

    @property
    def status(self):
        return self.ui.status

    @property
    def last_tree(self):
        return self.tree_panel.tree

    @property
    def last_drawing(self):
        return self.tree_panel.drawing

    # -- public actions: each queues work for the background thread ------------------------------------------
    def click(self, row, col):
        """Play (row, col) for the side to move (which becomes your side), then the AI answers."""
        if self.mode == 'perfect':
            return self._note('A perfect game is being played: press Stop first.')
        if self.worker.busy is not None and self.worker.busy[0].startswith('score is choosing'):
            return self._note('Wait: the AI is still thinking (or press Stop).')
        self.worker.advance()
        self.worker.submit(self._moves_job, None, [(row, col)], self.worker.stops)

    def play_path(self, path, root=None):
        """Play the moves of ``path`` from the position shown (a board clicked in the tree), then the AI answers
        if it is its turn. ``root`` is the position the path starts from; nothing is played if it is not shown."""
        if self.mode == 'perfect':
            return self._note('A perfect game is being played: press Stop first.')
        self.worker.advance()
        self.worker.submit(self._moves_job, self.state if root is None else root, list(path), self.worker.stops)

    def ai_move(self):
        """score chooses the move of the side to move; then the AI answers if it is its turn."""
        self._interrupt()
        self.worker.submit(self._ai_move_job, self.worker.stops)

    def new_game(self, cells=None):
        """Start again from the empty board, or from ``cells``, a prepared position (9 characters row by row)."""
        state = tuple(tuple(cells[row * 3:row * 3 + 3]) for row in range(3)) if cells else EMPTY_STATE
        self._interrupt()
        self.worker.submit(self._new_game_job, state)

    def undo(self):
        """Take back moves until it is your turn again (at least one move)."""
        self._interrupt()
        self.worker.submit(self._undo_job)

    def stop(self):
        """Stop a perfect game or the AI's thinking, and skip pending tree drawing."""
        running = self.mode == 'perfect'
        self._interrupt()
        if not running:
            self.worker.submit(self._stopped_job)

    def perfect_game(self, pace=None):
        """score plays both sides from the position shown, one move every ``pace`` seconds (the speed slider)."""
        if pace is not None:
            self.ui.pace.value = pace
        self._interrupt()
        self.mode = 'perfect'
        self._set_status()
        self.worker.submit(self._perfect_job, self.worker.stops)

    def wait(self, timeout=60):
        """Block until the widget has finished all queued work (for tests and scripts)."""
        return self.worker.wait(timeout)

    def tree(self, state=None, player=None, depth=None):
        """The Tree below ``state`` (default: the position shown), computed now on the calling thread."""
        state = self.state if state is None else as_state(state)
        if player is None:
            player = self.player if state == self.state else side_to_move(state)
        return build_tree(self.call, state, player, self.ui.depth.value if depth is None else depth)

    def search_counts(self, state=None, player=None):
        """{'plain': positions a plain minimax visits from ``state``, 'distinct': distinct positions}, now."""
        state = self.state if state is None else as_state(state)
        player = (self.player if state == self.state else side_to_move(state)) if player is None else player
        return self.tree_panel.graph.counts(self.call, state, player)

    def close(self):
        self.worker.close()
        super().close()

    # -- jobs (background thread) ----------------------------------------------------------------------------
    def _start(self):
        self._guarded(self._ai_answers, self.worker.stops)
        self._after_change()

    def _moves_job(self, root, path, stops):
        self._clear_messages()
        first = self.player
        if root is not None and root != self.state:
            self._note('That tree was drawn for another position: nothing played.')
        elif path and self._guarded(self._play_line, path):
            if first != self.human:
                self._take_side(first)
            self._guarded(self._ai_answers, stops)
        self._after_change()

    def _play_line(self, path):
        for move in path:
            if not self._play_move(tuple(move)):
                return False
        return True

    def _ai_move_job(self, stops):
        self._clear_messages()
        if self._guarded(self._game_over):
            self._note('The game is over: press New game, Undo or move the slider.')
        elif self._guarded(self._ai_plays, self.player, stops):
            self._guarded(self._ai_answers, stops)
        self._after_change()

    def _new_game_job(self, state=EMPTY_STATE):
        self._clear_messages()
        self.ended_as.clear()
        self.history, self.index = [(state, side_to_move(state), None)], 0
        if state != EMPTY_STATE:
            self._take_side(self.player)     # a prepared position: the side to move is yours, the AI waits
        self._sync_history()
        self._render_board()
        self._start()

    def _undo_job(self):
        self._clear_messages()
        index = self.index - 1
        while index > 0 and self.history[index][1] != self.human:
            index -= 1
        if index < 0:
            self._note('Nothing to undo.')
        else:
            del self.history[index + 1:]
            self.index = index
            self._sync_history()
            self._render_board()
        self._after_change()

    def _stopped_job(self):
        self._stopped_note()
        self._set_status()
        self.worker.submit(self._draw_job, background=True)   # counts that Stop interrupted are counted again

    def _perfect_job(self, stops):
        self._clear_messages()
        if self._guarded(self._game_over):
            self._note('The game is over: press New game, Undo or move the slider.')
        self.ui.perfect_button.disabled = True
        try:
            while self.worker.stops == stops and not self._game_over():
                started = time.monotonic()
                self._ai_plays(self.player, stops)
                self._update_text()
                self._set_status()
                if self.ui.show_tree.value:
                    self.tree_panel.draw(self.state, self.player, self.worker.cancel_check(stops=stops))
                if not self._game_over():
                    self.worker.pause(self.ui.pace.value - (time.monotonic() - started), stops)
        except Cancelled:
            pass
        except FunctionError as error:
            self._show_error(str(error))
        finally:
            self.mode = 'play'
            self.ui.perfect_button.disabled = False
        if self.worker.stops != stops:
            self._stopped_note()
        self._after_change()

    def _refresh_job(self):
        self._update_text()
        self._set_status()
        self.steps.follow()
        self._draw_job()

    def _draw_job(self, again=False):
        """Draw the tree of the position shown, unless it is drawn already (``again``: even then)."""
        tree = self.tree_panel.tree
        if not self.ui.show_tree.value:
            return
        if (not again and tree is not None and tree.depth == self.ui.depth.value
                and (tree.root.state, tree.root.player) == (self.state, self.player)):
            if tree.search is None or 'stopped' in tree.search:   # drawn, but its counting was cut short
                self.worker.submit(self.tree_panel.count, tree, background=True)
            return
        self.worker.set_busy('score is evaluating the tree below this position')
        self.tree_panel.draw(self.state, self.player, self.worker.cancel_check(generation=self.worker.generation))
        self.worker.set_busy(None)

    # -- playing ---------------------------------------------------------------------------------------------
    def _guarded(self, step, *args):
        """Run one step; a FunctionError is shown as one line and the job goes on (the result is then None)."""
        try:
            return step(*args)
        except FunctionError as error:
            self.worker.set_busy(None)
            self._show_error(str(error))
            return None
        except Cancelled:
            self.worker.set_busy(None)
            self._stopped_note()
            return None

    def _game_over(self):
        return self.call('score_end', self.state) is not None

    def _play_move(self, move):
        """Play ``move`` for the side to move, through play, if moves(state) lists it; else say why not."""
        state, player = self.state, self.player
        if self._game_over():
            self._note('The game is over: press New game, Undo or move the slider.')
            return False
        if move not in self.call('moves', state):
            taken = state[move[0]][move[1]] if 0 <= move[0] < 3 and 0 <= move[1] < 3 else ' '
            where = f'{move[0]},{move[1]}' + (f' already holds {taken}' if taken != ' ' else '')
            self._note(f'Not a legal move: {where} (moves(state) does not list it).')
            return False
        board = self.call('play', state, move[0], move[1], player)
        del self.history[self.index + 1:]
        self.history.append((board, other(player), move))
        self.index = len(self.history) - 1
        self.worker.advance()
        self._sync_history()
        self._render_board()
        return True

    def _ai_plays(self, player, stops):
        self.worker.set_busy(f'score is choosing a move for {player}')
        self._set_status(thinking=player)
        self.call.cancel_check = self.worker.cancel_check(stops=stops)
        try:
            _, move = self.call('score', self.state, player)
            self.call.check_cancel()
        finally:
            self.call.cancel_check = None
            self.worker.set_busy(None)
        if move is None:
            raise FunctionError(f'score returned no move for {player} although score_end says the game goes on')
        return self._play_move(move)

    def _ai_answers(self, stops):
        if self.player == self.ai and not self._game_over():
            self._ai_plays(self.ai, stops)

    def _take_side(self, side, control=None, value=None):   # not the user's action: no observer acts
        self._quiet = True
        try:
            self.ui.side.value = side
            if control is not None:
                control.value = value
        finally:
            self._quiet = False

    def _interrupt(self):
        self.worker.stop()
        self.worker.advance()

    def _after_change(self):
        self._update_text()
        self._set_status()
        self.steps.follow()
        self.worker.submit(self._draw_job, background=True)

    def _refresh_tree(self, again=False):
        self.ui.tree_parts.layout.display = None if self.ui.show_tree.value else 'none'
        self.worker.advance()
        self.worker.submit(self._draw_job, again, background=True)

    # -- observers ---------------------------------------------------------------------------------------------
    def _on_side(self, _change):
        if not self._quiet:
            self._interrupt()
            self.worker.submit(self._start)

    def _on_start(self, change):
        if change['new'] and not self._quiet:
            self.new_game(change['new'])
            self._take_side(self.human, self.ui.start, '')

    def _on_history(self, change):
        if self._quiet:
            return
        self._interrupt()
        self.index = max(0, min(change['new'], len(self.history) - 1))
        self._render_board()
        self.worker.submit(self._refresh_job)

    def _on_memo(self, change):
        self.call.memoize = change['new']
        if not change['new']:
            self.call.cache.clear()
        self._refresh_tree(again=True)

    def _on_key(self, action):
        """A key pressed on the page (keys=True): the step panel's buttons, and n for a new game."""
        steps = self.steps
        actions = {'step': steps.step, 'back': steps.back, 'toggle': steps.toggle, 'end': steps.run_to_end,
                   'restart': steps.restart, 'new': self.new_game, 'guess-1': lambda: steps.guess(-1),
                   'guess0': lambda: steps.guess(0), 'guess1': lambda: steps.guess(1)}
        actions[action]()

    def _set_lecture(self, on):
        (self.add_class if on else self.remove_class)('nac-lecture')
        self.tree_panel.redraw()
