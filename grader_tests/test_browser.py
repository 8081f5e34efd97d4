"""The classroom widget in a real browser: JupyterLab 4 and Notebook 7, driven by Debian's chromium.

Each test builds its own folder: a copy of a workbook whose `score` is a plain (unmemoized) minimax, and the
package coursetools/widget/ copied beside it as minimax_widget/, as `make release` ships it. It starts its own
Jupyter server there, runs every cell, and checks what a lecturer sees at a projector's sizes: no control clipped
or hidden, tree labels at least 16 CSS px and never overlapping or cut off, a click on a tree board playing to it,
Stop leaving a clear state, the perfect game drawing. Browser zoom is emulated as the browser does it: a viewport
of fewer CSS pixels with a higher device pixel ratio. Screenshots go to grader_tests/artifacts/.

Set NAC_SCREENSHOT=path to also save the widget at 1280x720 (used for docs/images/widget.png).
"""
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from urllib.parse import urlsplit
from pathlib import Path

import pytest

from coursetools.game import oracle

pytestmark = pytest.mark.serial        # a live browser: after the grading tests, beside other browsers only
ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / 'source'
WIDGET_PACKAGE = ROOT / 'coursetools' / 'widget'
ARTIFACTS = Path(__file__).resolve().parent / 'artifacts'
CHROMIUM = '/usr/bin/chromium'
CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
                 '--disable-sync', '--no-first-run', '--disable-dev-shm-usage']
NAMES = 'print_state=print_state, score_end=score_end, play=play, moves=moves, score=score'
WIDGET_CELL = f'from minimax_widget import GameTreeWidget\n\nGameTreeWidget({NAMES})'
ALPHA_BETA_CELL = f'from minimax_widget import GameTreeWidget\n\nGameTreeWidget({NAMES}, alphabeta=alphabeta)'
PLAIN_SCORE = '''def score(state, player):
    """Minimax: return (value from x's point of view, best move for player or None when the game is over)."""
    end = score_end(state)
    if end is not None:
        return end, None
    opponent = 'o' if player == 'x' else 'x'
    options = [(score(play(state, row, col, player), opponent)[0], (row, col)) for row, col in moves(state)]
    return (max if player == 'x' else min)(options, key=lambda option: option[0])
'''
MIN_LABEL_PX = 16


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def code_cell(source):
    return {'cell_type': 'code', 'execution_count': None, 'metadata': {}, 'outputs': [], 'source': source}


def workbook_folder(folder):
    """noughts_and_crosses.ipynb with a plain minimax as score, and alpha_beta.ipynb made of the second workbook's
    given cell, its alphabeta solution and the widget cell; the widget package beside them as minimax_widget/."""
    folder.mkdir(parents=True)
    notebook = json.loads((SOURCE / 'noughts_and_crosses' / 'noughts_and_crosses.ipynb').read_text())
    for cell in notebook['cells']:
        if cell.get('metadata', {}).get('nbgrader', {}).get('grade_id') == 'score':
            cell['source'] = PLAIN_SCORE
        if 'GameTreeWidget(' in ''.join(cell['source']):
            cell['source'] = WIDGET_CELL
    if not any('GameTreeWidget(' in ''.join(cell['source']) for cell in notebook['cells']):
        notebook['cells'].append(code_cell(WIDGET_CELL))
    (folder / 'noughts_and_crosses.ipynb').write_text(json.dumps(notebook))

    second = json.loads((SOURCE / 'alpha_beta' / 'alpha_beta.ipynb').read_text())
    kept = [cell for cell in second['cells'] if cell.get('id') == 'given' or
            cell.get('metadata', {}).get('nbgrader', {}).get('grade_id') == 'alphabeta']
    assert len(kept) == 2, 'the alpha_beta workbook should have a given cell and an alphabeta solution'
    second['cells'] = [dict(cell, outputs=[], execution_count=None) if cell['cell_type'] == 'code' else cell
                       for cell in kept] + [code_cell(PLAIN_SCORE), code_cell(ALPHA_BETA_CELL)]
    (folder / 'alpha_beta.ipynb').write_text(json.dumps(second))
    shutil.copytree(WIDGET_PACKAGE, folder / 'minimax_widget', ignore=shutil.ignore_patterns('__pycache__'))
    return folder


class Server:
    """A Jupyter server of our own, on a free port with a random token, stopped by its own PID."""

    def __init__(self, root_dir, work):
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.base = f'http://127.0.0.1:{self.port}'
        env = dict(os.environ)
        env.pop('NBGRADER_EXECUTION', None)
        env.update(JUPYTER_CONFIG_DIR=str(work / 'config'), JUPYTER_RUNTIME_DIR=str(work / 'runtime'),
                   JUPYTERLAB_SETTINGS_DIR=str(work / 'settings'), JUPYTERLAB_WORKSPACES_DIR=str(work / 'workspaces'),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get('PYTHONPATH')])))
        settings = work / 'settings' / '@jupyterlab' / 'apputils-extension'
        settings.mkdir(parents=True, exist_ok=True)
        (settings / 'notification.jupyterlab-settings').write_text(json.dumps({'fetchNews': 'false'}))
        self.log = open(work / 'server.log', 'w')
        self.process = subprocess.Popen(
            [sys.executable, '-m', 'jupyter', 'lab', '--no-browser', '--ServerApp.ip=127.0.0.1',
             f'--ServerApp.port={self.port}', '--ServerApp.port_retries=0', f'--IdentityProvider.token={self.token}',
             f'--ServerApp.root_dir={root_dir}', '--LabApp.expose_app_in_browser=True',
             '--JupyterNotebookApp.expose_app_in_browser=True', '--LabApp.news_url=None',
             *(['--allow-root'] if hasattr(os, 'geteuid') and os.geteuid() == 0 else [])],
            stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd=root_dir)
        deadline = time.time() + 60
        while True:
            try:
                self.api('GET', '/api/status')
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                if self.process.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f'jupyter lab did not start; see {work / "server.log"}')
                time.sleep(0.25)

    def api(self, method, path):
        request = urllib.request.Request(self.base + path, method=method,
                                         headers={'Authorization': f'token {self.token}'})
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def delete_sessions(self):
        """A reopened notebook would reuse its old kernel: delete every session (and so its kernel)."""
        for session in self.api('GET', '/api/sessions'):
            self.api('DELETE', f'/api/sessions/{session["id"]}')

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.log.close()


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    work = tmp_path_factory.mktemp('browser')
    srv = Server(workbook_folder(work / 'course'), work)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope='module')
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


def off_machine(url):
    """Whether a page's request leaves this machine: such requests fail at once, as in a classroom offline."""
    return urlsplit(url).hostname not in (None, '127.0.0.1', 'localhost')


@pytest.fixture
def open_page(browser, request):
    """open_page(width, height, zoom=1): a page with a CSS viewport of width/zoom x height/zoom, as zoom makes it."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    contexts = []

    def make(width, height, zoom=1.0):
        context = browser.new_context(viewport={'width': round(width / zoom), 'height': round(height / zoom)},
                                      device_scale_factor=zoom)
        contexts.append(context)
        context.route(off_machine, lambda route: route.abort())     # a CDN that hangs would hold up window 'load'
        page = context.new_page()
        page.errors = []
        page.on('pageerror', lambda error: page.errors.append(f'{error.message} {error.stack}'))
        return page
    try:
        yield make
    finally:
        for context in contexts:
            for page in context.pages:
                try:   # where the test ended, passed or failed
                    page.screenshot(path=str(ARTIFACTS / f'{request.node.name}-end.png'))
                except Exception:
                    pass
            context.close()


RUN_ALL = """async (name) => {
    const app = window.jupyterapp;
    if (!app) { return 'window.jupyterapp is not exposed'; }
    const deadline = Date.now() + 90000;
    let panel = null;
    while (Date.now() < deadline) {
        panel = app.shell.currentWidget;
        if (panel && panel.sessionContext && panel.content && panel.content.widgets && panel.context
            && panel.context.path.endsWith(name)) break;
        await new Promise(r => setTimeout(r, 200));
    }
    if (!panel || !panel.sessionContext) { return 'no notebook panel'; }
    await panel.sessionContext.ready;
    while (Date.now() < deadline) {
        const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
        if (kernel) {
            try {
                const reply = await Promise.race([kernel.requestKernelInfo(),
                                                  new Promise((_, no) => setTimeout(() => no('timeout'), 5000))]);
                if (reply && reply.content && reply.content.status === 'ok') break;
            } catch (e) { /* not yet */ }
        }
        await new Promise(r => setTimeout(r, 300));
    }
    for (const id of ['notebook:run-all-cells', 'runmenu:run-all']) {
        if (app.commands.hasCommand(id) && app.commands.isEnabled(id)) {
            await app.commands.execute(id);
            return 'ok ' + id;
        }
    }
    return 'no run-all command';
}"""

BOARD_MARKS = """() => {
    const marks = [];
    for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) {
        const b = document.querySelector(`.nac-cell-${r}-${c}`);
        marks.push(b ? b.textContent.trim() : '?');
    }
    return marks;
}"""

# Every control a lecturer uses: visible, not cut off by any ancestor, not covered, its text not truncated.
CONTROLS = ['.nac-status', '.nac-board', *[f'.nac-cell-{r}-{c}' for r in range(3) for c in range(3)],
            '.nac-new', '.nac-undo', '.nac-ai', '.nac-perfect', '.nac-stop', '.nac-side', '.nac-pace',
            '.nac-pace .widget-readout', '.nac-history', '.nac-history .widget-readout', '.nac-depth',
            '.nac-depth .widget-readout', '.nac-show-tree', '.nac-memo', '.nac-lecture-mode', '.nac-tree',
            '.nac-counts', '.nac-pv']
CONTROL_PROBLEMS = """(selectors) => {
    const problems = [];
    const widget = document.querySelector('.nac-widget');
    if (!widget) return ['no widget'];
    const area = widget.closest('.jp-OutputArea-output') || widget.parentElement;
    const outer = area.getBoundingClientRect();
    for (const selector of selectors) {
        const el = widget.querySelector(selector);
        if (!el) { problems.push(`${selector}: missing`); continue; }
        el.scrollIntoView({block: 'center', inline: 'nearest'});
        const rect = el.getBoundingClientRect();
        const style = getComputedStyle(el);
        if (rect.width < 2 || rect.height < 2 || style.visibility === 'hidden' || style.display === 'none') {
            problems.push(`${selector}: hidden (${rect.width}x${rect.height})`); continue;
        }
        if (rect.left < outer.left - 1 || rect.right > outer.right + 1) {
            problems.push(`${selector}: outside the output area (${rect.left}-${rect.right}, ` +
                          `not ${outer.left}-${outer.right})`);
        }
        for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
            const s = getComputedStyle(up);
            if (s.overflowX !== 'visible' || s.overflowY !== 'visible') {
                const box = up.getBoundingClientRect();
                if (rect.left < box.left - 1 || rect.right > box.right + 1 ||
                    (s.overflowY !== 'visible' && up.scrollHeight > up.clientHeight + 1 && up.closest('.nac-widget'))) {
                    problems.push(`${selector}: cut off by ${up.className}`);
                    break;
                }
            }
            if (up === area) break;
        }
        const truncated = [el, ...el.querySelectorAll('button, label, .widget-readout')]
            .filter(e => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible');
        if (truncated.length) problems.push(`${selector}: text truncated in ${truncated[0].tagName}`);
        let scroller = el.parentElement;
        while (scroller && scroller !== document.body && !/(auto|scroll)/.test(getComputedStyle(scroller).overflowY)) {
            scroller = scroller.parentElement;
        }
        const port = scroller && scroller !== document.body ? scroller.getBoundingClientRect()
                                                            : {top: 0, bottom: innerHeight};
        const top = Math.max(rect.top, port.top, 0), bottom = Math.min(rect.bottom, port.bottom, innerHeight);
        if (bottom - top < 2) { problems.push(`${selector}: cannot be scrolled into view`); continue; }
        const x = Math.min(Math.max(rect.left + rect.width / 2, 0), innerWidth - 1);
        const hit = document.elementFromPoint(x, (top + bottom) / 2);
        if (!hit || !(el.contains(hit) || hit.contains(el))) {
            problems.push(`${selector}: covered by ${hit ? hit.className || hit.tagName : 'nothing'}`);
        }
    }
    return problems;
}"""

# The tree's labels as the page renders them: CSS font size, and overlaps or clipping of their boxes.
TREE_LABELS = """() => {
    const svg = document.querySelector('.nac-tree svg');
    if (!svg) return null;
    const box = svg.getBoundingClientRect();
    const view = svg.closest('.nac-tree').getBoundingClientRect();
    const scale = box.width / svg.viewBox.baseVal.width;
    const labels = [...svg.querySelectorAll('text.nac-label')].map(t => {
        const r = t.getBoundingClientRect();
        return {text: t.textContent, px: parseFloat(getComputedStyle(t).fontSize) * scale,
                left: r.left, right: r.right, top: r.top, bottom: r.bottom};
    });
    const overlaps = [];
    for (let i = 0; i < labels.length; i++) for (let j = i + 1; j < labels.length; j++) {
        const a = labels[i], b = labels[j];
        if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
            overlaps.push(`${a.text} / ${b.text}`);
    }
    const left = Math.max(box.left, view.left) - 0.5, right = Math.min(box.right, view.right) + 0.5;
    const clipped = labels.filter(l => l.left < left || l.right > right || l.top < box.top - 0.5
                                       || l.bottom > box.bottom + 0.5).map(l => l.text);
    const rows = new Set([...svg.querySelectorAll('.nac-node')].map(n => Math.round(n.getBoundingClientRect().top)));
    return {count: labels.length, smallest: Math.min(...labels.map(l => l.px)), overlaps, clipped,
            windows: labels.filter(l => /^[αβ] /.test(l.text)).length, width: box.width, boards: rows.size,
            viewWidth: view.width, svgWidth: svg.viewBox.baseVal.width};
}"""


EVERY_CELL_RUN = """() => {
    const panel = window.jupyterapp.shell.currentWidget;
    const kernel = panel && panel.sessionContext.session && panel.sessionContext.session.kernel;
    return !!kernel && kernel.status === 'idle' && panel.content.widgets.every(
        cell => cell.model.type !== 'code' || cell.model.executionState !== 'running');
}"""


def open_notebook(page, server, url, label):
    """Open `url`, run all cells and wait for the widget's first tree, then for every cell to have run (on a busy
    machine the last ones still run after the tree shows, and a click on the widget meanwhile waits behind them)."""
    server.delete_sessions()
    started = time.perf_counter()
    page.goto(url, wait_until='domcontentloaded')
    page.wait_for_selector('.jp-Notebook', timeout=90_000)
    dismiss_prompts(page)
    result = page.evaluate(RUN_ALL, url.split('?')[0].rsplit('/', 1)[-1])
    assert result.startswith('ok'), f'{label}: could not run all cells: {result}'
    try:
        page.wait_for_selector('.nac-cell-1-1', state='visible', timeout=180_000)
        page.wait_for_selector('.nac-tree svg .nac-node', timeout=60_000)
        page.wait_for_function(EVERY_CELL_RUN, timeout=180_000)
    except Exception:
        page.screenshot(path=str(ARTIFACTS / f'{label}-failed.png'), full_page=True)
        raise
    dismiss_prompts(page)
    print(f'\n{label}: widget and tree shown {time.perf_counter() - started:.1f} s after the page load')
    return page


def dismiss_prompts(page):
    for name in ('No', 'Dismiss'):
        button = page.get_by_role('button', name=name, exact=True)
        try:
            if button.count() and button.first.is_visible():
                button.first.click(timeout=1000)
        except Exception:
            pass


def widget_errors(page):
    """Errors thrown in the page by the widget's own code (anywidget loads it from a blob: URL), not by Jupyter."""
    return [error for error in page.errors if 'blob:' in error or 'anywidget' in error or 'nac-' in error]


def status(page):
    return ' '.join(page.locator('.nac-status').first.inner_text().split())


def marks(page):
    return page.evaluate(BOARD_MARKS)


def wait_for_tree_width(page, tolerance=4):
    """Wait until the tree has been redrawn for the width its view has now."""
    page.wait_for_function(f"""() => {{
        const svg = document.querySelector('.nac-tree svg');
        const view = document.querySelector('.nac-tree');
        return svg && view && Math.abs(svg.viewBox.baseVal.width - view.getBoundingClientRect().width) <= {tolerance};
    }}""", timeout=20_000)


def check_layout(page, label, windows=False, controls=CONTROLS, min_label=MIN_LABEL_PX):
    """No control clipped, hidden, covered or truncated; tree labels big enough, apart and inside the picture."""
    wait_for_tree_width(page)
    # the counts and the principal variation are written when the kernel's search of the position answers
    page.wait_for_function("() => [...document.querySelectorAll('.nac-counts, .nac-pv')]"
                           ".every(element => element.textContent.trim())", timeout=60_000)
    problems = page.evaluate(CONTROL_PROBLEMS, controls)
    page.evaluate("() => document.querySelector('.nac-widget').scrollIntoView({block: 'start'})")
    page.screenshot(path=str(ARTIFACTS / f'{label}.png'))
    page.evaluate("() => document.querySelector('.nac-tree').scrollIntoView({block: 'end'})")
    page.screenshot(path=str(ARTIFACTS / f'{label}-tree.png'))
    assert not problems, f'{label}: {problems}'
    labels = page.evaluate(TREE_LABELS)
    assert labels and labels['count'] >= 20, f'{label}: tree labels {labels}'
    assert labels['smallest'] >= min_label - 0.01, f'{label}: smallest tree label {labels["smallest"]:.1f} px'
    assert not labels['overlaps'], f'{label}: overlapping labels {labels["overlaps"][:5]}'
    assert not labels['clipped'], f'{label}: labels cut off {labels["clipped"][:5]}'
    if windows:
        assert labels['windows'] >= 10, f'{label}: expected α and β labels, found {labels["windows"]}'
    assert not page.locator('.nac-error').first.inner_text().strip(), f'{label}: the widget shows an error'
    return labels


def check_board_and_tree_together(page, label):
    """With the widget scrolled to its top, the whole board and the tree's first two rows are on screen."""
    page.evaluate("() => document.querySelector('.nac-widget').scrollIntoView({block: 'start'})")
    page.wait_for_timeout(200)
    seen = page.evaluate("""() => {
        const inside = r => r.top >= 0 && r.bottom <= innerHeight && r.left >= 0 && r.right <= innerWidth;
        const board = document.querySelector('.nac-board').getBoundingClientRect();
        const rows = [...new Set([...document.querySelectorAll('.nac-tree svg .nac-node')]
            .map(n => n.getBoundingClientRect()).filter(r => r.width > 0).map(r => JSON.stringify([r.top, r.bottom])))]
            .map(JSON.parse).sort((a, b) => a[0] - b[0]);
        return {board: inside(board), rows: rows.slice(0, 2).map(([top, bottom]) => top >= 0 && bottom <= innerHeight)};
    }""")
    page.screenshot(path=str(ARTIFACTS / f'{label}-together.png'))
    assert seen['board'] and seen['rows'] == [True, True], f'{label}: board and tree not visible together: {seen}'


def save_widget_picture(page, path):
    """The widget as the screen shows it, scrolled to its top: what fits of it in the window."""
    page.evaluate("() => document.querySelector('.nac-widget').scrollIntoView({block: 'start'})")
    page.wait_for_timeout(300)
    box = page.evaluate("""() => {
        const r = document.querySelector('.nac-widget').getBoundingClientRect();
        const area = document.querySelector('.nac-widget').closest('.jp-WindowedPanel-outer, .jp-Notebook');
        const bottom = Math.min(r.bottom, area ? area.getBoundingClientRect().bottom : innerHeight, innerHeight);
        return {x: r.left - 8, y: r.top - 8, width: r.width + 16, height: bottom - r.top + 8};
    }""")
    page.screenshot(path=path, clip=box)


def click_tree_board(page, path):
    page.locator(f'.nac-tree svg [data-path="{path}"]').first.click()


def test_jupyterlab_at_projector_sizes(server, open_page):
    """1280x720: layout, board and tree together, hover, a tree click, a cell click, Stop, a perfect game; then
    1024x768 and 1920x1080, depth 3."""
    page = open_page(1280, 720)
    url = f'{server.base}/lab/tree/noughts_and_crosses.ipynb?reset&token={server.token}'
    open_notebook(page, server, url, 'lab-1280x720')
    assert marks(page) == [''] * 9
    assert 'x to move' in status(page) and 'your turn' in status(page)
    page.wait_for_function("() => /549,946/.test(document.querySelector('.nac-counts').textContent)", timeout=30_000)
    counts = page.locator('.nac-counts').first.inner_text()
    assert '5,478' in counts, counts
    check_layout(page, 'lab-1280x720')
    check_board_and_tree_together(page, 'lab-1280x720')
    page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
    check_layout(page, 'lab-1280x720-no-side-panel')
    check_board_and_tree_together(page, 'lab-1280x720-no-side-panel')

    page.locator('.nac-tree svg [data-path="1,1"]').first.hover()
    info = page.locator('.nac-tree-info').first.inner_text()
    assert 'x plays 1,1' in info and 'score: 0' in info and 'best move for o' in info, info

    started = time.perf_counter()
    click_tree_board(page, '0,0;1,1')   # a board two plies down: x at 0,0, then o at 1,1
    page.wait_for_function(f"() => ({BOARD_MARKS})().join('') === 'xo'", timeout=30_000)
    page.wait_for_function("() => /x to move · your turn\\s*move 2 of 2/"
                           ".test(document.querySelector('.nac-status').textContent)")
    assert marks(page) == ['x', '', '', '', 'o', '', '', '', ''], marks(page)
    print(f'tree click to position shown: {time.perf_counter() - started:.2f} s')

    page.locator('.nac-cell-0-1').first.click()     # x threatens the top row; the AI (plain minimax) blocks at 0,2
    page.wait_for_function(f"() => ({BOARD_MARKS})().join('').length === 4", timeout=30_000)
    assert marks(page)[:3] == ['x', 'x', 'o'], marks(page)
    board = oracle.nested('xxo o    ')
    page.wait_for_function(f"() => document.querySelector('.nac-counts').textContent.includes("
                           f"'{oracle.search_tree_size(board, 'x'):,} positions searched')", timeout=30_000)
    target = os.environ.get('NAC_SCREENSHOT')
    if target:
        page.locator('.nac-tree svg [data-path="2,2"]').first.hover()
        save_widget_picture(page, target)
    page.locator('.nac-cell-0-0').first.click()
    page.wait_for_selector('.nac-note >> text=Not a legal move', timeout=10_000)

    # Stop in the middle of a perfect game, when o is to move: the status says so, and a click then plays o. On a
    # busy machine Stop can land after x's next move instead: then the status must say x is to move, and the game
    # is tried again.
    for attempt in range(5):
        page.locator('.nac-new').first.click()
        page.wait_for_function(f"() => ({BOARD_MARKS})().join('') === ''"
                               " && !/Stopped/.test((document.querySelector('.nac-note') || {}).textContent || '')")
        page.locator('.nac-perfect').first.click()
        seen = set()
        deadline = time.time() + 30
        while time.time() < deadline:
            text = status(page)
            seen.add(text.split(' move ')[0])
            filled = len(''.join(marks(page)))
            if filled in (3, 5):
                page.locator('.nac-stop').first.click()
                break
            page.wait_for_timeout(50)
        page.wait_for_selector('.nac-note >> text=Stopped', timeout=10_000)
        assert not any('your turn' in text or 'thinking' in text for text in seen if 'Perfect game' in text), seen
        after_stop = marks(page)
        page.wait_for_timeout(1500)
        assert marks(page) == after_stop, 'the AI moved after Stop'
        if len(''.join(after_stop)) % 2:
            break
        assert 'x to move' in status(page) and 'your turn' in status(page), status(page)
    assert 'o to move' in status(page) and 'click a square to play o yourself' in status(page), (attempt, status(page))
    empty = after_stop.index('')
    page.locator(f'.nac-cell-{empty // 3}-{empty % 3}').first.click()
    page.wait_for_function(f"() => ({BOARD_MARKS})().join('').length === {len(''.join(after_stop)) + 2}"
                           f" && /your turn/.test(document.querySelector('.nac-status').textContent)"
                           f" || /Game over/.test(document.querySelector('.nac-status').textContent)", timeout=30_000)
    assert marks(page)[empty] == 'o', marks(page)     # (the board shows the AI's move a moment before the status)
    assert 'your turn' in status(page) or 'Game over' in status(page), status(page)

    # A whole perfect game, at the fastest speed, ends in a draw.
    page.locator('.nac-side button', has_text='play x').first.click()
    page.locator('.nac-new').first.click()
    page.wait_for_function(f"() => ({BOARD_MARKS})().join('') === ''")
    page.locator('.nac-pace .noUi-handle, .nac-pace .slider-handle, .nac-pace [role=slider]').first.focus()
    page.keyboard.press('Home')
    page.wait_for_function("() => document.querySelector('.nac-pace .widget-readout').textContent.trim() === '0.0'",
                           timeout=10_000)
    started = time.perf_counter()
    page.locator('.nac-perfect').first.click()
    page.wait_for_function("() => /Game over: draw/.test(document.querySelector('.nac-status').textContent)",
                           timeout=60_000)
    print(f'perfect game at speed 0: {time.perf_counter() - started:.1f} s')
    assert '' not in marks(page)
    assert page.locator('.nac-history .widget-readout').first.inner_text().strip() == '9'
    page.screenshot(path=str(ARTIFACTS / 'lab-perfect-game.png'))

    page.locator('.nac-new').first.click()
    page.wait_for_function(f"() => ({BOARD_MARKS})().join('') === ''")
    page.evaluate("() => window.jupyterapp.shell.expandLeft()")
    for width, height in ((1024, 768), (1920, 1080)):
        page.set_viewport_size({'width': width, 'height': height})
        check_layout(page, f'lab-{width}x{height}')
    page.set_viewport_size({'width': 1280, 'height': 720})
    page.locator('.nac-depth .noUi-handle, .nac-depth .slider-handle, .nac-depth [role=slider]').first.focus()
    page.keyboard.press('End')
    page.wait_for_function("() => document.querySelectorAll('.nac-tree svg .nac-node').length === 1 + 9 + 8 + 7",
                           timeout=30_000)
    labels = check_layout(page, 'lab-1280x720-depth3')
    assert labels['boards'] >= 4, labels
    assert not widget_errors(page), widget_errors(page)


def test_alpha_beta_at_zoom_with_the_file_browser_open(server, open_page):
    """The alpha_beta widget at 150% zoom with JupyterLab's file browser open, then at 1024x768 150% and
    1280x720 200%: α and β labels readable, nothing clipped."""
    page = open_page(1280, 720, zoom=1.5)
    open_notebook(page, server, f'{server.base}/lab/tree/alpha_beta.ipynb?reset&token={server.token}', 'lab-alpha-beta')
    page.evaluate("() => window.jupyterapp.commands.execute('filebrowser:activate')")
    page.wait_for_selector('.jp-FileBrowser', state='visible', timeout=10_000)
    check_layout(page, 'lab-alpha-beta-1280x720-150pct-file-browser', windows=True)
    for width, height, zoom in ((1024, 768, 1.5), (1280, 720, 2.0), (1920, 1080, 2.0)):
        page.set_viewport_size({'width': round(width / zoom), 'height': round(height / zoom)})
        check_layout(page, f'lab-alpha-beta-{width}x{height}-{zoom * 100:.0f}pct-file-browser', windows=True)
    assert not widget_errors(page), widget_errors(page)


def test_notebook7(server, open_page):
    """Notebook 7 at 1280x720 and 1024x768: layout, a cell click and the AI's answer, a tree click."""
    page = open_page(1280, 720)
    page.goto(f'{server.base}/tree?token={server.token}', wait_until='domcontentloaded')
    page.wait_for_selector('text=noughts_and_crosses.ipynb', timeout=60_000)
    open_notebook(page, server, f'{server.base}/notebooks/noughts_and_crosses.ipynb', 'notebook7-1280x720')
    check_layout(page, 'notebook7-1280x720')
    check_board_and_tree_together(page, 'notebook7-1280x720')
    page.locator('.nac-cell-1-1').first.click()
    page.wait_for_function(f"() => ({BOARD_MARKS})().join('').length === 2", timeout=30_000)
    assert marks(page)[4] == 'x' and marks(page).count('o') == 1
    page.wait_for_function("() => /x to move · your turn/.test(document.querySelector('.nac-status').textContent)")
    wait_for_tree_width(page)
    empty = marks(page).index('')       # a move of the position shown, whether or not the tree is redrawn yet
    click_tree_board(page, f'{empty // 3},{empty % 3}')
    page.wait_for_function(f"() => ({BOARD_MARKS})().join('').length >= 3", timeout=30_000)
    page.set_viewport_size({'width': 1024, 'height': 768})
    check_layout(page, 'notebook7-1024x768')
    # Lecture mode: bigger type, the secondary controls (move slider, print_state) hidden; memoize stays.
    page.locator('.nac-lecture-mode input').first.check()
    page.wait_for_function("() => document.querySelector('.nac-tree svg text').getAttribute('font-size') === '20'",
                           timeout=10_000)
    assert not page.locator('.nac-history').first.is_visible() and page.locator('.nac-memo').first.is_visible()
    lecture_controls = [c for c in CONTROLS if not c.startswith('.nac-history')]
    check_layout(page, 'notebook7-1024x768-lecture', controls=lecture_controls, min_label=20)
    assert not widget_errors(page), widget_errors(page)
