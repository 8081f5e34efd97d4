"""The presenter layout (`make present`): the search fills the screen and nothing scrolls the page. At the top the
step buttons, a Settings button and the step's text; under them the board of the current step, the outline and
the tree side by side, each scrolling in its own box (follow.py keeps the current line and node in view); the
counts at the bottom. Every setting (the game's board and buttons, the prepared positions, sliders, checkboxes)
sits in one panel that the Settings button opens over the search. Type grows with the screen's width."""
import html

import ipywidgets as widgets

SETTINGS_TIP = 'the game, the prepared positions, the search and the tree (opens over the search)'

CSS = """
.nac-widget.nac-presenter { --nac-text: clamp(16px, 1.45vw, 40px); --nac-control-text: clamp(16px, 1.3vw, 36px);
  --nac-board: clamp(150px, 14vw, 340px); position: fixed; inset: 0; z-index: 50; background: #fff;
  padding: 6px 1.2vw 4px; box-sizing: border-box; overflow: hidden; }
.nac-presenter .nac-present-root { position: relative; height: 100%; flex-flow: column nowrap; gap: 2px; }
.nac-presenter .nac-present-root > * { flex: 0 0 auto; }
.nac-presenter .nac-present-bar { flex-flow: row wrap; align-items: center; gap: 4px 0.8vw; }
.nac-presenter .nac-present-title { font-weight: bold; margin-right: 1vw; }
@media (max-width: 1000px) { .nac-presenter .nac-present-title { display: none; } }
.nac-widget.nac-presenter .nac-present-root { border-top: none; padding-top: 0; margin: 0; }
.nac-widget.nac-presenter .nac-present-bar .nac-buttons .jupyter-button,
.nac-widget.nac-presenter .nac-present-bar .nac-buttons .widget-button,
.nac-widget.nac-presenter .nac-present-bar .nac-settings-toggle {
  font-size: var(--nac-control-text); height: 2.1em; line-height: 2.1em; padding: 0 0.6em; margin: 0 4px 0 0; }
.nac-presenter .nac-present-bar .nac-buttons { gap: 4px; }
.nac-widget.nac-presenter .nac-guess .jupyter-button, .nac-widget.nac-presenter .nac-guess .widget-button {
  font-size: var(--nac-control-text); height: 1.9em; line-height: 1.9em; padding: 0 0.5em; }
.nac-presenter .nac-guess, .nac-presenter .nac-choices { flex-wrap: wrap; gap: 4px; }
.nac-presenter .nac-present-bar .nac-settings-toggle { margin-left: auto; }
.nac-presenter .nac-step-text { max-height: 28vh; overflow-y: auto; min-height: 2.7em; }
.nac-presenter .nac-present-stage { flex: 1 1 0; min-height: 0; flex-flow: row nowrap; align-items: stretch;
  gap: 0 1.4vw; }
.nac-presenter .nac-present-stage > .nac-step-position { flex: 0 0 auto; width: auto; overflow-y: auto;
  overflow-x: hidden; }
.nac-presenter .nac-present-stage > .nac-step-tree { flex: 1 1 0; min-width: 12em; max-height: none;
  overflow-y: auto; overflow-x: hidden; }
.nac-presenter .nac-present-stage > .nac-present-tree { flex: 1.5 1 0; min-width: 0; overflow-y: auto;
  overflow-x: hidden; border-left: 1px solid #ddd; padding-left: 0.6vw; }
.nac-presenter .nac-present-tree > * { flex-shrink: 0; }
.nac-presenter .nac-present-tree .nac-counts, .nac-presenter .nac-present-tree .nac-legend { display: none; }
.nac-presenter .nac-step-board .nac-board-svg { width: var(--nac-board); height: auto; }
.nac-presenter .nac-board-caption { max-width: calc(var(--nac-board) + 4em); }
.nac-presenter .nac-step-counts { border-top: 1px solid #ddd; }
.nac-presenter .nac-present-settings { position: absolute; top: 3em; right: 0; z-index: 60; width: min(40em, 96%);
  max-height: calc(100% - 3.5em); overflow-y: auto; background: #fff; border: 2px solid #777; border-radius: 8px;
  box-shadow: 0 6px 24px rgba(0, 0, 0, 0.3); padding: 8px 14px; box-sizing: border-box; }
.nac-presenter .nac-present-settings .nac-board { width: clamp(160px, 14vw, 340px) !important;
  height: clamp(160px, 14vw, 340px) !important; }
.nac-presenter .nac-present-settings .nac-play { flex: 0 0 auto; max-width: 100%; }
.nac-presenter .nac-cell { font-size: clamp(36px, 3.2vw, 90px); }
"""


def arrange(widget, title=''):
    """The presenter layout of ``widget`` (a GameTreeWidget): its own controls, placed anew; returns the root."""
    ui, steps = widget.ui, widget.steps.ui
    toggle = widgets.ToggleButton(value=False, description='Settings', icon='cog', tooltip=SETTINGS_TIP,
                                  layout=widgets.Layout(width='auto'))
    toggle.add_class('nac-settings-toggle')
    heading = widgets.HTML(f'<span class="nac-present-title">{html.escape(title)}</span>' if title else '')
    bar = widgets.HBox([heading, steps.buttons, toggle], layout=widgets.Layout(width='100%'))
    bar.add_class('nac-present-bar')
    ui.tree_parts.add_class('nac-present-tree')
    stage = widgets.HBox([steps.position, steps.outline, ui.tree_parts], layout=widgets.Layout(width='100%'))
    stage.add_class('nac-present-stage')
    settings = widgets.VBox([ui.main, steps.settings, steps.live_depth], layout=widgets.Layout(display='none'))
    settings.add_class('nac-present-settings')
    ui.main.children = [ui.main.children[0], widgets.VBox([ui.depth, ui.tree_panel.children[1]])]
    toggle.observe(lambda change: setattr(settings.layout, 'display', None if change['new'] else 'none'), 'value')
    root = widgets.VBox([bar, steps.said, steps.guess_box, stage, steps.counts, settings, steps.follower],
                        layout=widgets.Layout(width='100%'))
    root.add_class('nac-present-root')
    root.add_class('nac-step-panel')      # follow.py finds the board, the outline and the text inside it
    widget.add_class('nac-presenter')
    ui.presenter = True                   # the tree's labels scale with the window (treepanel.py)
    widget.settings_toggle, widget.settings_panel = toggle, settings
    return root
