"""The step panel's controls: buttons, the search's settings, the texts, the board of the current step beside the
outline, and the Follower that keeps them in view; ``box`` holds them all."""
import ipywidgets as widgets

from .calls import format_value
from .follow import Follower
from .panels import make_button, make_html
from .questions import ASK
from .tracing import ORDERS

ORDER_LABELS = {'listed': 'as listed', 'best': 'best first', 'worst': 'worst first'}


class StepControls:
    """The panel's ipywidgets: buttons, the search's settings, the texts; ``box`` holds them all."""

    def __init__(self, alphabeta, depth):
        self.step = make_button('Step', 'nac-step', 'the next event of the search (key: → or s)', 'step-forward')
        self.back = make_button('Back', 'nac-back', 'one event back (key: ← or b)', 'step-backward')
        self.play = make_button('Play', 'nac-step-play', 'one event every "speed" seconds (key: space)', 'play')
        self.pause = make_button('Pause', 'nac-step-pause', 'stop playing (key: space)', 'pause')
        self.end = make_button('Run to end', 'nac-step-end', 'every remaining event at once (key: e)', 'fast-forward')
        self.restart = make_button('Restart', 'nac-step-restart', 'search the position shown from the beginning', 'undo')
        self.buttons = buttons = widgets.HBox([self.step, self.back, self.play, self.pause, self.end, self.restart])
        buttons.add_class('nac-buttons')
        self.kind = widgets.ToggleButtons(options=[('minimax', 'minimax'), ('α-β', 'alphabeta')],
                                          value='alphabeta' if alphabeta else 'minimax',
                                          style={'button_width': 'auto'}, layout=widgets.Layout(width='auto'))
        self.kind.add_class('nac-step-kind')
        self.order = widgets.ToggleButtons(options=[(ORDER_LABELS[o], o) for o in ORDERS], value='listed',
                                           tooltips=['moves in the order moves() lists them',
                                                     'the best move for the side to move first: the most pruning',
                                                     'the worst move first: the least pruning'],
                                           style={'button_width': 'auto'}, layout=widgets.Layout(width='auto'))
        self.order.add_class('nac-step-order')
        self.live_depth = widgets.IntSlider(value=max(1, min(4, depth)), min=1, max=4, description='live depth',
                                            tooltip='moves shown one by one; deeper subtrees are searched in one step',
                                            continuous_update=False, layout=widgets.Layout(width='100%'))
        self.live_depth.add_class('nac-step-depth')
        self.predict = widgets.Checkbox(value=False, description='predict, then reveal', indent=False,
                                        tooltip='hide each value that backs up until you guess it',
                                        layout=widgets.Layout(width='auto'))
        self.predict.add_class('nac-predict')
        self.guesses = {value: make_button(format_value(value), f'nac-guess-{"minus" if value < 0 else value}',
                                       f'predict {format_value(value)}') for value in (-1, 0, 1)}
        self.ask = widgets.Dropdown(options=ASK if alphabeta else ASK[:2], value='value', description='ask',
                                    tooltip='what to predict', layout=widgets.Layout(width='auto'))
        self.ask.add_class('nac-ask')
        self.choices = widgets.HBox([])      # the answers of a question about a move or a cut
        self.choices.add_class('nac-choices')
        self.tally = make_html('nac-tally')
        self.guess_box = widgets.HBox([*self.guesses.values(), self.choices, self.tally])
        self.guess_box.add_class('nac-buttons')
        self.guess_box.add_class('nac-guess')
        self.said, self.counts, self.outline = make_html('nac-step-text'), make_html('nac-step-counts'), make_html('nac-step-tree')
        self.position = widgets.HTML('', layout=widgets.Layout(width='auto'))
        self.position.add_class('nac-step-position')
        stage = widgets.HBox([self.position, self.outline], layout=widgets.Layout(width='100%'))
        stage.add_class('nac-step-stage')
        self.follower = Follower()
        title = widgets.HTML('<b>Step through the search</b> of the position shown')
        self.settings = settings = widgets.HBox([self.kind, self.order, self.predict, self.ask] if alphabeta else
                                                [self.predict, self.ask])
        settings.add_class('nac-toolbar')
        self.box = widgets.VBox([title, buttons, self.said, self.guess_box, stage, self.counts, settings,
                                 self.live_depth, self.follower], layout=widgets.Layout(width='100%'))
        self.box.add_class('nac-step-panel')
