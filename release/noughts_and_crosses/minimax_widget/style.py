"""The widget's stylesheet: a layout that wraps instead of clipping, and type big enough for a lecture hall.
ipywidgets 8 renders both the old (widget-*) and some new (jupyter-widget-*) class names; both are matched."""

CSS = """
/* control labels: 16 px at 1280 px wide, in proportion on wider screens (1.25vw) */
.nac-widget { --nac-text: 16px; --nac-control-text: clamp(16px, 1.25vw, 32px); font-size: var(--nac-text); }
.nac-widget.nac-lecture { --nac-text: 20px; --nac-control-text: clamp(18px, 1.4vw, 36px); }
.nac-widget .widget-box, .nac-widget .jupyter-widget-box { overflow: visible; }
.nac-widget .nac-main { flex-flow: row wrap; align-items: flex-start; gap: 8px 24px; }
.nac-widget .nac-play { flex: 0 1 300px; min-width: 0; max-width: 100%; }
.nac-widget .nac-tree-panel { flex: 1 1 380px; min-width: 0; max-width: 100%; }
.nac-widget .nac-buttons, .nac-widget .nac-toolbar { flex-flow: row wrap; align-items: center; gap: 4px 6px; }
.nac-widget .nac-buttons .widget-button, .nac-widget .nac-side .widget-toggle-button,
.nac-widget .nac-buttons .jupyter-button, .nac-widget .nac-side .jupyter-button {
  flex: 0 0 auto; width: auto; max-width: 100%; overflow: visible; font-size: 15px; height: 32px; line-height: 32px;
  padding: 0 9px; margin: 0 4px 0 0; }
.nac-widget .nac-side .widget-toggle-buttons, .nac-widget .nac-side { flex-wrap: wrap; width: auto; max-width: 100%; }
.nac-widget .widget-html > .widget-html-content, .nac-widget .jupyter-widget-html > .jupyter-widget-html-content {
  white-space: normal; line-height: 1.35; font-size: var(--nac-text); }
.nac-widget .widget-checkbox, .nac-widget .jupyter-widget-checkbox { width: auto; max-width: 100%; margin-right: 12px; }
.nac-widget .widget-checkbox label, .nac-widget .widget-label, .nac-widget .widget-readout {
  font-size: var(--nac-control-text); }
.nac-widget .widget-hslider, .nac-widget .jupyter-widget-hslider, .nac-widget .widget-checkbox {
  height: auto; min-height: 28px; line-height: 1.4; }
.nac-widget .widget-hslider, .nac-widget .jupyter-widget-hslider { width: 100%; max-width: 20em; min-width: 0;
  font-size: var(--nac-control-text); }
.nac-widget .widget-hslider > .widget-label, .nac-widget .jupyter-widget-hslider > .jupyter-widget-label {
  width: auto; min-width: 5em; line-height: 1.4; }
.nac-widget .widget-hslider > .widget-readout { min-width: 2.4em; height: auto; line-height: 1.4; }
.nac-widget .nac-board { margin: 4px 0 8px 0; padding: 1px; }
.nac-widget .nac-cell { width: 100%; height: 100%; margin: 0; padding: 0; font-size: 36px; font-weight: bold;
  line-height: 1; border: 1px solid #9a9a9a; }
.nac-widget.nac-lecture .nac-cell { font-size: 44px; }
.nac-widget .nac-turn { font-weight: bold; font-size: calc(var(--nac-text) + 2px); }
.nac-widget .nac-detail { color: #555; min-height: 1.35em; }
.nac-widget .nac-note .widget-html-content { color: #8a5a00; }
.nac-widget .nac-error .widget-html-content { color: #c00000; }
.nac-widget .nac-text pre { margin: 0; font-size: 15px; line-height: 1.15; }
.nac-widget.nac-lecture .nac-secondary { display: none !important; }
.nac-spinner { display: inline-block; width: 0.8em; height: 0.8em; border: 2px solid #999;
  border-top-color: transparent; border-radius: 50%; animation: nac-spin 0.8s linear infinite;
  vertical-align: -0.1em; margin-right: 0.4em; }
@keyframes nac-spin { to { transform: rotate(360deg); } }
.nac-tree-view { display: block; width: 100%; min-width: 0; }
.nac-tree-view .nac-tree-picture svg { display: block; max-width: 100%; height: auto; }
.nac-tree-view .nac-node { cursor: pointer; }
.nac-tree-view .nac-node:hover .nac-frame { stroke: #111111; stroke-width: 4; }
.nac-tree-view .nac-expand { cursor: pointer; text-decoration: underline; }
.nac-tree-view .nac-tree-info { font-size: var(--nac-text, 16px); line-height: 1.35; min-height: 2.7em; color: #222;
  border-top: 1px solid #dddddd; padding-top: 4px; }
.nac-widget .nac-count-pair { display: flex; flex-wrap: wrap; gap: 6px 12px; margin-bottom: 4px; }
.nac-widget .nac-count { flex: 1 1 170px; border: 1px solid #d0d0d0; border-radius: 6px; padding: 2px 10px; }
.nac-widget .nac-count b { display: block; font-size: calc(var(--nac-text) + 8px); }
.nac-widget .nac-step-panel { border-top: 1px solid #d0d0d0; padding-top: 6px; margin: 6px 0; }
.nac-widget .nac-step-text { min-height: 2.7em; }
.nac-widget .nac-step-text .widget-html-content { font-weight: 600; }
.nac-widget .nac-step-outline { font-size: var(--nac-text); line-height: 1.3; }
.nac-widget .nac-step-line { padding: 1px 6px; border-left: 4px solid transparent; border-radius: 3px; }
.nac-widget .nac-step-current { border-left-color: #111111; font-weight: bold; }
.nac-widget .nac-step-asking { outline: 2px dashed #8a5a00; }
.nac-widget .nac-step-waiting { color: #6b6b6b; }
.nac-widget .nac-step-pruned { color: #8a8a8a; text-decoration: line-through; }
.nac-widget .nac-step-error { color: #c00000; }
.nac-widget .nac-guess .jupyter-button, .nac-widget .nac-guess .widget-button { min-width: 56px; font-weight: bold; }
.nac-widget .nac-step-saved { margin-top: 4px; }
.nac-widget.nac-lecture .nac-buttons .widget-button, .nac-widget.nac-lecture .nac-buttons .jupyter-button,
.nac-widget.nac-lecture .widget-toggle-button, .nac-widget.nac-lecture .widget-toggle-buttons .jupyter-button {
  font-size: 18px; height: 40px; line-height: 40px; padding: 0 12px; }
.nac-widget .nac-swatch { display: inline-block; width: 0.9em; height: 0.9em; vertical-align: -0.1em;
  border: 1px solid #777; margin: 0 0.25em 0 0.6em; }
"""
