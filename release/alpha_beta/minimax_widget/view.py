"""The tree view in the browser: an anywidget that shows the SVG the Python side draws, reports the width it is
shown at (so the tree is redrawn for it), says what a hovered board is worth and sends clicks back."""
import anywidget
import traitlets

from .style import CSS

ESM = """
function render({ model, el }) {
  el.classList.add('nac-tree-view');
  const picture = document.createElement('div');
  picture.className = 'nac-tree-picture';
  const info = document.createElement('div');
  info.className = 'nac-tree-info';
  info.setAttribute('aria-live', 'polite');
  el.append(picture, info);

  const showHint = () => { info.textContent = model.get('hint'); };
  const draw = () => { picture.innerHTML = model.get('svg'); showHint(); };
  model.on('change:svg', draw);
  model.on('change:hint', showHint);
  draw();

  let timer = null;
  const measure = () => {
    const width = Math.floor(el.getBoundingClientRect().width);
    if (width > 0 && (width !== model.get('width') || innerWidth !== model.get('screen'))) {
      model.set('screen', innerWidth);
      model.set('width', width);
      model.save_changes();
    }
  };
  const observer = new ResizeObserver(() => { clearTimeout(timer); timer = setTimeout(measure, 80); });
  observer.observe(el);
  addEventListener('resize', measure);
  measure();

  picture.addEventListener('click', (event) => {
    const expand = event.target.closest('[data-focus]');
    const board = event.target.closest('[data-path]');
    if (expand) {
      model.send({ action: 'focus', path: expand.dataset.focus });
    } else if (board) {
      info.textContent = 'playing to this board…';
      model.send({ action: 'play', path: board.dataset.path });
    }
  });
  picture.addEventListener('mouseover', (event) => {
    const target = event.target.closest('[data-info]');
    if (target) { info.textContent = target.dataset.info; }
  });
  picture.addEventListener('mouseleave', showHint);
  return () => { observer.disconnect(); clearTimeout(timer); removeEventListener('resize', measure); };
}
export default { render };
"""


class TreeView(anywidget.AnyWidget):
    """Shows ``svg``; ``width`` is the CSS width the browser gives it; ``on_action(callback)`` hears clicks as
    ``callback(action, path)`` with action 'play' (a board) or 'focus' (its ▾ label)."""
    _esm = ESM
    _css = CSS
    svg = traitlets.Unicode('').tag(sync=True)
    hint = traitlets.Unicode('').tag(sync=True)
    width = traitlets.Int(0).tag(sync=True)
    screen = traitlets.Int(0).tag(sync=True)     # the window's width in CSS px (the presenter scales type by it)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._callbacks = []
        self.on_msg(self._received)

    def on_action(self, callback):
        self._callbacks.append(callback)

    def _received(self, _widget, content, _buffers):
        if isinstance(content, dict) and content.get('action') in ('play', 'focus'):
            for callback in self._callbacks:
                callback(content['action'], str(content.get('path', '')))
