"""Keys for a lecturer at the projector: an invisible anywidget that listens to the page's keyboard and sends the
keys it knows to Python. Only while ``enabled`` (the widget's ``keys=True``, which `make present` uses): inside
JupyterLab the same keys belong to the notebook. Only a text field (a text input, a textarea, contenteditable)
keeps the keys it is typed into; a checkbox, slider or button that has the focus never does."""
import json

import anywidget
import traitlets

KEYS = {'ArrowRight': 'step', 's': 'step', 'ArrowLeft': 'back', 'b': 'back', ' ': 'toggle', 'p': 'toggle',
        'e': 'end', 'n': 'new', 'r': 'restart', '-': 'guess-1', '0': 'guess0', '+': 'guess1', '=': 'guess1',
        '1': 'guess1'}
# <input> types one types text into; every other type (checkbox, range, button, ...) leaves the keys to us
TEXT_INPUTS = ['text', 'search', 'email', 'number', 'password', 'tel', 'url', 'date', 'datetime-local', 'month',
               'time', 'week']

ESM = """
function render({ model, el }) {
  el.classList.add('nac-keys');
  const keys = %s, textInputs = %s;
  const typing = (target) => !!target && (target.isContentEditable || target.tagName === 'TEXTAREA' ||
    (target.tagName === 'INPUT' && textInputs.includes((target.type || 'text').toLowerCase())));
  const ours = (event) => model.get('enabled') && keys[event.key] && !event.ctrlKey && !event.metaKey &&
    !event.altKey && !typing(event.target);
  const down = (event) => {
    if (!ours(event)) return;
    event.preventDefault();        // a focused checkbox or button is not toggled, a slider not moved
    event.stopPropagation();
    model.send({ key: keys[event.key] });
  };
  const up = (event) => { if (ours(event)) { event.preventDefault(); event.stopPropagation(); } };
  document.addEventListener('keydown', down, true);
  document.addEventListener('keyup', up, true);
  return () => {
    document.removeEventListener('keydown', down, true);
    document.removeEventListener('keyup', up, true);
  };
}
export default { render };
"""


class KeyBridge(anywidget.AnyWidget):
    """``on_key(callback)``: ``callback(action)`` with an action of KEYS ('step', 'back', 'toggle', ...)."""
    _esm = ESM % (json.dumps(KEYS), json.dumps(TEXT_INPUTS))
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
