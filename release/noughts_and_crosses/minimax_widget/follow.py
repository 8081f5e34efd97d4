"""Keeping the current step in view: an invisible anywidget inside the step panel. Each time ``tick`` moves on (a
step, Back, the end), it scrolls the page (JupyterLab's notebook, Notebook 7, Voila) so that the board of the step
and the outline's current line are on screen, with the tree's current node, the text and the buttons when they fit
too, and scrolls the outline's own box to its current line. It also carries the step panel's stylesheet."""
import anywidget
import traitlets

from .presenter import CSS as PRESENTER_CSS

ESM = """
function render({ model, el }) {
  el.classList.add('nac-follow');
  let timers = [];
  const scroller = (start) => {
    for (let up = start.parentElement; up && up !== document.body; up = up.parentElement) {
      const s = getComputedStyle(up);
      if (/(auto|scroll)/.test(s.overflowY) && up.scrollHeight > up.clientHeight + 1) return up;
    }
    return null;
  };
  const follow = () => {
    const panel = el.closest('.nac-step-panel');
    const board = panel && panel.querySelector('.nac-step-board');
    if (!board || !board.getClientRects().length) return;
    const box = panel.querySelector('.nac-step-tree');
    const outer = scroller(panel);
    const view = outer ? outer.getBoundingClientRect() : { top: 0, bottom: innerHeight };
    const top0 = Math.max(view.top, 0), bottom0 = Math.min(view.bottom, innerHeight);
    const room = bottom0 - top0 - 16;
    let line = panel.querySelector('.nac-step-asking') || panel.querySelector('.nac-step-current');
    const into = (target, inside, m = 4) => {   // scroll the box ``inside`` until ``target`` is in it
      const l = target.getBoundingClientRect(), b = inside.getBoundingClientRect();
      if (l.top < b.top + m) inside.scrollTop -= b.top - l.top + m;
      else if (l.bottom > b.bottom - m) inside.scrollTop += Math.min(l.bottom - b.bottom + m, l.top - b.top - m);
    };
    const presenter = panel.classList.contains('nac-present-root');   // boxes sized by the layout
    if (box && !presenter) {   // the outline's box: no taller than what leaves the board and the box on screen
      const lineHeight = line ? line.getBoundingClientRect().height : 24;
      const above = Math.max(0, box.getBoundingClientRect().top - board.getBoundingClientRect().top);
      box.style.maxHeight = Math.max(3.2 * lineHeight, room - above) + 'px';
    }
    if (box && line) into(line, box);
    const treeBox = presenter && panel.querySelector('.nac-present-tree');
    const node = treeBox && treeBox.querySelector('.nac-tree .nac-current');
    if (node && node.getClientRects().length) into(node, treeBox, 40);     // its move label above it too
    if (presenter) return;            // the page itself never scrolls
    const rects = [board, line].filter(Boolean).map((e) => e.getBoundingClientRect());
    let top = Math.min(...rects.map((r) => r.top)), bottom = Math.max(...rects.map((r) => r.bottom));
    const widget = panel.closest('.nac-widget') || panel;
    for (const extra of [widget.querySelector('.nac-tree .nac-current'), panel.querySelector('.nac-step-text'),
                         panel.querySelector('.nac-buttons')]) {
      if (!extra || !extra.getClientRects().length) continue;
      const r = extra.getBoundingClientRect();
      if (Math.max(bottom, r.bottom) - Math.min(top, r.top) <= room) {
        top = Math.min(top, r.top); bottom = Math.max(bottom, r.bottom);
      }
    }
    let delta = 0;
    if (top < top0 + 8) delta = top - top0 - 8;
    else if (bottom > bottom0 - 8) delta = Math.min(bottom - bottom0 + 8, top - top0 - 8);
    if (delta && outer) outer.scrollTop += delta;
    else if (delta) window.scrollBy(0, delta);
  };
  const schedule = () => {
    timers.forEach(clearTimeout);
    timers = [30, 150, 450].map((ms) => setTimeout(follow, ms));
  };
  model.on('change:tick', schedule);
  return () => timers.forEach(clearTimeout);
}
export default { render };
"""

CSS = """
.nac-widget .nac-follow { width: 0; height: 0; overflow: hidden; margin: 0; }
.nac-widget .nac-step-stage { flex-flow: row wrap; align-items: flex-start; gap: 6px 14px; margin: 4px 0; }
.nac-widget .nac-step-stage > .nac-step-position { flex: 0 0 auto; width: auto; }
.nac-widget .nac-step-stage > .nac-step-tree { flex: 1 1 160px; min-width: 0; max-height: 45vh; overflow-y: auto;
  overflow-x: hidden; }
.nac-widget .nac-step-stage .widget-html-content, .nac-widget .nac-step-stage .jupyter-widget-html-content {
  height: auto; }
.nac-widget .nac-step-board { display: flex; flex-direction: column; align-items: flex-start; gap: 2px; }
.nac-widget .nac-board-svg { display: block; }
.nac-widget .nac-board-caption { line-height: 1.3; max-width: 12em; }
.nac-widget .nac-board-where, .nac-widget .nac-board-window { color: #333; }
.nac-widget .nac-board-asking .nac-board-value { color: #8a5a00; font-weight: bold; }
.nac-widget .nac-step-reveal { color: #1d5b2a; }
.nac-tree-view .nac-current .nac-frame { stroke-width: 5; }
"""


class Follower(anywidget.AnyWidget):
    """``follow()`` after the step panel has written a step: the browser scrolls the step into view."""
    _esm = ESM
    _css = CSS + PRESENTER_CSS
    tick = traitlets.Int(0).tag(sync=True)

    def follow(self):
        self.tick += 1
