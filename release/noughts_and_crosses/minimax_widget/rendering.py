"""What GameTreeWidget shows of its game: the board, the history slider, the printed board, the status line, notes
and errors. A mixin of GameTreeWidget (controls.py), reading the widget's ``ui``, ``call``, ``history``, ``index``."""
from .calls import FunctionError
from .model import other
from .panels import message_html, printed_html, status_html, status_lines


class Rendering:
    """GameTreeWidget's methods that write its state into the panels."""

    def _sync_history(self):
        self._quiet = True
        try:
            self.ui.show_history(self.index, len(self.history) - 1)
        finally:
            self._quiet = False

    def _render_board(self):
        self.ui.show_board(self.state, self.history[self.index][2])

    def _update_text(self):
        try:
            self.ui.text.value = printed_html(self.call('print_state', self.state))
        except FunctionError as error:
            self.ui.text.value = printed_html(str(error))

    def _set_status(self, thinking=None):
        try:
            end = self.call('score_end', self.state)
        except FunctionError as error:
            self._show_error(str(error))
            end = None
        # the verdict of a finished game is the one of the side the viewer played then: switching sides later
        # does not turn "You win!" into "The AI wins."
        side = self.ended_as.setdefault(self.state, self.human) if end is not None else self.human
        self.ui.status.value = status_html(*status_lines(
            end, self.player, side, self.mode, thinking, self.index, len(self.history) - 1, self.ui.pace.value))

    def _show_error(self, message):
        self.last_error = message or None
        self.ui.error.value = message_html(message)

    def _note(self, text):
        self.ui.note.value = message_html(text)

    def _stopped_note(self):
        player = self.player
        if self.call('score_end', self.state) is not None or player == self.human:
            self._note(f'Stopped at move {self.index}.')
        else:
            self._note(f'Stopped at move {self.index}: {player} to move. Click a square to play {player} yourself '
                       f'(the AI then answers as {other(player)}), or press AI move.')

    def _clear_messages(self):
        self._note('')
        self._show_error('')
