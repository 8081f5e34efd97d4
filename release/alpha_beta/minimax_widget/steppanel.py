"""The step panel: Step, Back, Play, Pause, Run to end through a minimax or alpha-beta search of the position
shown, the board of the current step beside the outline of the search so far, a line saying what just happened,
the counts, and predict-then-reveal (the question, then the reveal with its reason as a step of its own).

Every action is a job of the widget's background thread (worker.py), so the kernel is never blocked, and the
steps are kept: Back replays one step fewer, Step after Back replays the kept steps before asking for new ones."""
import html
import time

from .calls import FunctionError
from .outline import Outline, replay
from .panels import make_button
from .position import position_html
from .questions import question
from .stepcontrols import ORDER_LABELS, StepControls
from .stepping import ORDERS, Search

INTRO = 'Press Step to search the position shown, one event at a time.'


class StepPanel:
    """Steps through the search of ``position()`` (the (state, player) shown) with the functions behind ``call``.
    ``pace()`` is the seconds between steps while playing; ``on_change(stepping)`` hears what the tree may show:
    (state, player, Outline, current path, asking path) while stepping, None otherwise."""

    def __init__(self, call, worker, position, pace, alphabeta=False, depth=2, on_change=None):
        self.call, self.worker, self.position, self.pace = call, worker, position, pace
        self.on_change = on_change
        self.ui = StepControls(alphabeta, depth)
        self.alphabeta = alphabeta
        self.searches, self.tables = {}, {}
        self.key = self.generator = self.outline = None
        self.steps, self.index, self.answered = [], 0, {}
        self.right = self.asked = 0
        self.playing, self.reply = False, ''
        self.revealed = None           # the step index at which a prediction was just revealed
        self.choice_key = None         # the question whose answer buttons are shown
        self.warmed = None
        self._connect()
        self._show_settings()
        self.ui.said.value = INTRO
        self.ui.guess_box.layout.display = 'none'
        self.ui.pause.disabled = self.ui.back.disabled = True
        self.ui.position.value = position_html(None, *position(), alphabeta=alphabeta)

    def _connect(self):
        ui = self.ui
        ui.step.on_click(lambda _button: self.step())
        ui.back.on_click(lambda _button: self.back())
        ui.play.on_click(lambda _button: self.play())
        ui.pause.on_click(lambda _button: self.pause())
        ui.end.on_click(lambda _button: self.run_to_end())
        ui.restart.on_click(lambda _button: self.restart())
        for value, button in ui.guesses.items():
            button.on_click(lambda _button, value=value: self.guess(value))
        for control in (ui.kind, ui.order, ui.live_depth):
            control.observe(lambda _change: self._settings_changed(), 'value')
        for control in (ui.predict, ui.ask):
            control.observe(lambda _change: self.worker.submit(self._predict_job), 'value')

    # -- public actions: each queues a job ------------------------------------------------------------------
    def step(self):
        self.pause()
        self.worker.submit(self._step_job)

    def back(self):
        self.pause()
        self.worker.submit(self._back_job)

    def play(self):
        self.pause()
        self.worker.submit(self._play_job, self.worker.stops)

    def pause(self):
        """Stop playing (Stop and every game action do too)."""
        if self.playing:
            self.worker.stop()

    def toggle(self):
        """Play if paused, pause if playing (the space key)."""
        (self.pause if self.playing else self.play)()

    def run_to_end(self):
        self.pause()
        self.worker.submit(self._end_job, self.worker.stops)

    def restart(self):
        self.pause()
        self.key = None
        self.worker.submit(self._restart_job)

    def guess(self, value):
        """The viewer's prediction of the value about to back up: reveal it and keep the tally."""
        self.worker.submit(self._guess_job, value)

    def follow(self):
        """The position shown may have changed (called from a job): start again if it did, and prepare."""
        if self.key is not None and self.key[:2] != tuple(self.position()):
            self._restart_job()
        elif self.key is None:
            self.ui.position.value = position_html(None, *self.position(), alphabeta=self.ui.kind.value == 'alphabeta')
        if self.warmed != tuple(self.position()) and self.ui.box.layout.display != 'none':
            self.worker.submit(self._warm_job, background=True)

    def _warm_job(self):
        """Search the position shown once, in the background, before anyone steps: the values that order the
        moves and the counts shown at the end are then at hand, and every Step takes milliseconds."""
        position = tuple(self.position())
        self.call.cancel_check = self.worker.cancel_check(generation=self.worker.generation)
        try:
            if self.alphabeta:
                for order in ORDERS:
                    self._search(True, order).totals(*position)
            if self.call.has('score'):
                self._search(False, 'listed').totals(*position)
        except FunctionError:
            pass   # stepping will meet it, and show it at the position where it happens
        finally:
            self.call.cancel_check = None
        self.warmed = position

    # -- jobs (background thread) ----------------------------------------------------------------------------
    def _ensure(self):
        """A search of the position shown with the current settings, made if the last one was for another."""
        ui = self.ui
        state, player = self.position()
        key = (state, player, ui.kind.value, ui.order.value, ui.live_depth.value)
        if key == self.key:
            return
        alphabeta = ui.kind.value == 'alphabeta'
        search = self._search(alphabeta, ui.order.value)
        self.key, self.generator = key, search.steps(state, player, ui.live_depth.value)
        self.steps, self.index, self.answered = [], 0, {}
        self.revealed = None
        self.outline = Outline(player, alphabeta)

    def _search(self, alphabeta, order):
        """The Search for these settings, kept with what it has recorded of the notebook's search."""
        key = ('alphabeta' if alphabeta else 'minimax', order)
        if key not in self.searches:
            self.searches[key] = Search(self.call, alphabeta, order, self.tables)
        return self.searches[key]

    def _peek(self):
        """The next Step (asked of the search if it is not kept yet), or None after the last."""
        if self.index == len(self.steps) and self._more() is None:
            return None
        return self.steps[self.index]

    def _asking(self):
        """The Question the viewer is to answer before the next step (questions.py), or None."""
        if self.revealed == self.index or not self.ui.predict.value or self.outline is None or \
                self.index in self.answered:
            return None         # after a reveal, the next question comes with the next Step
        return question(self.ui.ask.value, self._peek(), self.outline, self._ahead)

    def _ahead(self):
        """The steps from the next one on, asked of the search as they are needed (and kept)."""
        index = self.index
        while index < len(self.steps) or self._more() is not None:
            yield self.steps[index]
            index += 1

    def _more(self):
        """The search's next step, kept; None after the last."""
        step = next(self.generator, None)
        if step is not None:
            self.steps.append(step)
        return step

    def _forward(self, ask=True):
        """Apply the next Step: it, or 'ask' when a prediction comes first, or None after the last step."""
        if ask and self._asking() is not None:
            return 'ask'
        step = self._peek()
        if step is not None:
            self.index += 1
            self.outline.apply(step)
        return step

    def _step_job(self):
        self._ensure()
        self.reply, self.revealed = '', None
        self._forward()   # before a prediction: nothing moves, the question stays
        self._render(follow=True)

    def _back_job(self):
        self._ensure()
        if self.index > 0:
            self.index -= 1
            self.outline = replay(self.steps[:self.index], self.key[1], self.key[2] == 'alphabeta')
        self.reply, self.revealed = '', None
        self._render(follow=True)

    def _play_job(self, stops):
        self._ensure()
        self.playing, self.reply, self.revealed = True, '', None
        self._render()
        try:
            while self.worker.stops == stops:
                started = time.monotonic()
                step = self._forward()
                self._render(follow=True)
                if step is None or step == 'ask' or step.kind in ('done', 'error'):
                    break
                self.worker.pause(max(0.05, self.pace() - (time.monotonic() - started)), stops)
        finally:
            self.playing = False
            self._render(follow=True)

    def _end_job(self, stops):
        self._ensure()
        self.reply, self.revealed, shown = '', None, time.monotonic()
        while self.worker.stops == stops:
            step = self._forward(ask=False)
            if step is None or step.kind in ('done', 'error'):
                break
            if time.monotonic() - shown > 0.5:
                self._render()
                shown = time.monotonic()
        self._render(follow=True)

    def _restart_job(self):
        self.key = None
        self._ensure()
        self.reply = ''
        self._render(follow=True)

    def _guess_job(self, value):
        asked = self._asking()
        if asked is None or value not in [each for _, each in asked.options]:
            return
        self.answered[self.index] = value
        self.asked += 1
        self.right += value == asked.value
        self.reply = asked.reveal(value)
        self._forward(ask=False)
        self.revealed = self.index     # the reveal is a step of its own
        self._render(follow=True)

    def _predict_job(self):
        self._ensure()     # the tree hides what is to be predicted from now on
        self._render()

    def _settings_changed(self):
        self._show_settings()
        self.pause()
        self.worker.submit(self._restart_job)

    # -- what is shown ---------------------------------------------------------------------------------------
    def _show_settings(self):
        self.ui.order.layout.display = None if self.ui.kind.value == 'alphabeta' else 'none'

    def _render(self, follow=False):
        """Write the board, the outline, the line of text, the counts and the buttons' states for the step reached;
        ``follow``: the browser then scrolls them into view."""
        ui, outline = self.ui, self.outline
        if outline is None:
            return
        asking = self._asking()
        last = outline.last
        alphabeta = self.key[2] == 'alphabeta'
        ui.position.value = position_html(last, *self.key[:2], asking=asking, alphabeta=alphabeta)
        ui.outline.value = outline.html(asking.path if asking is not None and asking.kind == 'value' else None)
        said = asking.text if asking is not None else last.text if last is not None else INTRO
        reveal = f'<div class="nac-step-reveal">{html.escape(self.reply, quote=False)}</div>' if self.reply else ''
        ui.said.value = reveal + html.escape(said, quote=False)
        ui.counts.value = self._counts_html(last)
        ui.guess_box.layout.display = None if ui.predict.value else 'none'
        for button in ui.guesses.values():
            button.disabled = asking is None or asking.kind != 'value'
            button.layout.display = None if ui.ask.value == 'value' else 'none'
        self._show_choices(asking)
        ui.tally.value = f'{self.right} of {self.asked} predicted right' if self.asked else ''
        finished = last is not None and last.kind in ('done', 'error')
        ui.step.disabled = ui.end.disabled = finished or self.playing
        ui.play.disabled = finished or self.playing
        ui.back.disabled = self.index == 0 or self.playing
        ui.pause.disabled = not self.playing
        if self.on_change is not None:
            stepping = not finished and (self.index > 0 or ui.predict.value)
            current = asking.path if asking is not None else outline.current
            self.on_change((*self.key[:2], outline, current, asking.path if asking is not None else None)
                           if stepping else None)
        if follow:
            ui.follower.follow()

    def _show_choices(self, asking):
        """The answer buttons of a question about a move or a cut (made again only for a new question)."""
        key = None if asking is None or asking.kind == 'value' else (asking.kind, tuple(asking.options))
        if key == self.choice_key:
            return
        self.choice_key, buttons = key, []
        for label, value in (asking.options if key else []):
            button = make_button(label, 'nac-choice', f'predict {label}')
            button.on_click(lambda _button, value=value: self.guess(value))
            buttons.append(button)
        for old in self.ui.choices.children:
            old.close()
        self.ui.choices.children = buttons

    def _counts_html(self, last):
        """Positions visited so far (and subtrees pruned); at the end, what pruning saved in each move order."""
        if last is None:
            return ''
        alphabeta = self.key[2] == 'alphabeta'
        text = f'<b>{last.visited:,}</b> positions visited so far'
        if alphabeta:
            text += f' · <b>{last.pruned:,}</b> subtrees pruned'
        text += f' · step {self.index}' + (f' of {len(self.steps)}' if self._finished() else '')
        if alphabeta and last.kind == 'done':
            try:
                saved = self._saved(last)
            except FunctionError as error:
                saved = f'(counts in other move orders: {error})'
            text += '<div class="nac-step-saved">' + html.escape(saved, quote=False) + '</div>'
        return text

    def _finished(self):
        return bool(self.steps) and self.steps[-1].kind in ('done', 'error')

    def _saved(self, last):
        """'Plain minimax visits 7,331 here. α-β visits: as listed 1,234 (saves 83%) · best first …'."""
        state, player = self.key[:2]
        parts = []
        for order in ORDERS:
            parts.append((ORDER_LABELS[order], self._search(True, order).totals(state, player)[0]))
        if not self.call.has('score'):
            return 'α-β visits ' + ' · '.join(f'{label} {visited:,}' for label, visited in parts) + '.'
        plain = self._search(False, 'listed').totals(state, player)[0]
        return f'Plain minimax visits {plain:,} positions here; α-β visits ' + ' · '.join(
            f'{label} {visited:,} (saves {100 * (plain - visited) / plain:.1f}%)' for label, visited in parts) + '.'
