"""Keys for a lecturer at the projector: an invisible anywidget that listens to the page's keyboard and sends the
keys it knows to Python. Only while ``enabled`` (the widget's ``keys=True``, which `make present` uses): inside
JupyterLab the same keys belong to the notebook."""
import json

import anywidget
import traitlets

KEYS = {'ArrowRight': 'step', 's': 'step', 'ArrowLeft': 'back', 'b': 'back', ' ': 'toggle', 'p': 'toggle',
        'e': 'end', 'n': 'new', 'r': 'restart', '-': 'guess-1', '0': 'guess0', '+': 'guess1', '=': 'guess1',
        '1': 'guess1'}

ESM = """
function render({ model, el }) {
  el.classList.add('nac-keys');
  const keys = %s;
  const typing = (target) => target && (target.isContentEditable ||
    ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));
  const listener = (event) => {
    const action = keys[event.key];
    if (!model.get('enabled') || !action || event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) {
      return;
    }
    event.preventDefault();
    event.stopPropagation();
    model.send({ key: action });
  };
  document.addEventListener('keydown', listener, true);
  return () => document.removeEventListener('keydown', listener, true);
}
export default { render };
"""


class KeyBridge(anywidget.AnyWidget):
    """``on_key(callback)``: ``callback(action)`` with an action of KEYS ('step', 'back', 'toggle', ...)."""
    _esm = ESM % json.dumps(KEYS)
    enabled = traitlets.Bool(False).tag(sync=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._callbacks = []
        self.on_msg(self._received)

    def on_key(self, callback):
        self._callbacks.append(callback)

    def _received(self, _widget, content, _buffers):
        if isinstance(content, dict) and content.get('key') in KEYS.values():
            for callback in self._callbacks:
                callback(content['key'])
