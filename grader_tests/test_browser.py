"""The classroom widget in a real browser: JupyterLab 4 and Notebook 7, driven by Debian's chromium.

The test copies source/noughts_and_crosses/ to a temporary directory (adding minimax_widget.py from
coursetools/widget.py and the widget cell if the notebook does not have them yet), starts its own
JupyterLab server there, runs every cell of the notebook, clicks a square and checks that the AI answered
on the board and that the tree picture changed. Screenshots go to grader_tests/artifacts/.

Set NAC_SCREENSHOT=path to also save a screenshot of the widget itself (used for docs/images/widget.png).
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
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / 'source' / 'noughts_and_crosses'
NOTEBOOK = 'noughts_and_crosses.ipynb'
WIDGET_MODULE = ROOT / 'coursetools' / 'widget.py'
ARTIFACTS = Path(__file__).resolve().parent / 'artifacts'
CHROMIUM = '/usr/bin/chromium'
CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
                 '--disable-sync', '--no-first-run', '--disable-dev-shm-usage']
WIDGET_CELL = ('from minimax_widget import GameTreeWidget\n'
               'GameTreeWidget(print_state=print_state, score_end=score_end, play=play, moves=moves, score=score)')

pytestmark = [
    pytest.mark.skipif(not os.path.exists(CHROMIUM),
                       reason=f'{CHROMIUM} is missing: install it with `apt-get install -y chromium` (make system-packages)'),
    pytest.mark.skipif(not (SOURCE / NOTEBOOK).exists(), reason=f'{SOURCE / NOTEBOOK} does not exist yet'),
]


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class Server:
    """A JupyterLab server of our own, on a free port with a random token, stopped by its own PID."""

    def __init__(self, root_dir, work):
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.base = f'http://127.0.0.1:{self.port}'
        env = dict(os.environ)
        env.pop('NBGRADER_EXECUTION', None)
        env.update(JUPYTER_CONFIG_DIR=str(work / 'config'), JUPYTER_RUNTIME_DIR=str(work / 'runtime'),
                   JUPYTERLAB_SETTINGS_DIR=str(work / 'settings'), JUPYTERLAB_WORKSPACES_DIR=str(work / 'workspaces'),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get('PYTHONPATH')])))
        # No "would you like news?" prompt.
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
    root = work / 'noughts_and_crosses'
    shutil.copytree(SOURCE, root, ignore=shutil.ignore_patterns('.ipynb_checkpoints', '__pycache__'))
    if not (root / 'minimax_widget.py').exists():
        shutil.copy(WIDGET_MODULE, root / 'minimax_widget.py')
    notebook = json.loads((root / NOTEBOOK).read_text())
    if not any('GameTreeWidget(' in ''.join(cell['source']) for cell in notebook['cells']):
        print('note: the notebook has no widget cell yet; the test appends one to its copy')
        notebook['cells'].append({'cell_type': 'code', 'execution_count': None, 'metadata': {}, 'outputs': [],
                                  'source': WIDGET_CELL})
        (root / NOTEBOOK).write_text(json.dumps(notebook))
    srv = Server(root, work)
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


RUN_ALL = """async () => {
    const app = window.jupyterapp;
    if (!app) { return 'window.jupyterapp is not exposed'; }
    const deadline = Date.now() + 90000;
    let panel = null;
    while (Date.now() < deadline) {
        panel = app.shell.currentWidget;
        if (panel && panel.sessionContext && panel.content && panel.content.widgets) break;
        await new Promise(r => setTimeout(r, 200));
    }
    if (!panel || !panel.sessionContext) { return 'no notebook panel'; }
    await panel.sessionContext.ready;
    // The toolbar may say "idle" before the kernel really answers: wait for a kernel_info_reply.
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

IMAGE_DIGEST = """async (selector) => {
    const img = document.querySelector(selector);
    if (!img || !img.src) return null;
    const data = await (await fetch(img.src)).arrayBuffer();
    const digest = await crypto.subtle.digest('SHA-256', data);
    return Array.from(new Uint8Array(digest)).map(b => b.toString(16).padStart(2, '0')).join('') + ':' + data.byteLength;
}"""

BOARD_MARKS = """() => {
    const marks = [];
    for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) {
        const b = document.querySelector(`.nac-cell-${r}-${c}`);
        marks.push(b ? b.textContent.trim() : '?');
    }
    return marks;
}"""


def dismiss_prompts(page):
    for name in ('No', 'Dismiss'):
        button = page.get_by_role('button', name=name, exact=True)
        try:
            if button.count() and button.first.is_visible():
                button.first.click(timeout=1000)
        except Exception:
            pass


def exercise(page, server, url, label):
    """Open `url`, run all cells, play one square and check the AI's answer and the new tree picture."""
    server.delete_sessions()
    errors = []
    page.on('pageerror', lambda error: errors.append(str(error)))
    started = time.perf_counter()
    page.goto(url, wait_until='domcontentloaded')
    page.wait_for_selector('.jp-Notebook', timeout=90_000)
    dismiss_prompts(page)
    run_started = time.perf_counter()
    result = page.evaluate(RUN_ALL)   # returns when the kernel has answered and every cell has run
    assert result.startswith('ok'), f'{label}: could not run all cells: {result}'
    try:
        page.wait_for_selector('.nac-cell-1-1', state='visible', timeout=180_000)
    except Exception:
        page.screenshot(path=str(ARTIFACTS / f'{label}-failed.png'), full_page=True)
        raise
    visible = time.perf_counter()
    # The first tree picture arrives from the widget's background thread.
    page.wait_for_function("() => { const i = document.querySelector('.nac-tree'); return i && i.src && i.naturalWidth > 0; }",
                           timeout=60_000)
    pictured = time.perf_counter()
    print(f'\n{label}: page load to widget visible {visible - started:.1f} s '
          f'(waiting for the kernel and running all cells {visible - run_started:.1f} s), first tree picture after {pictured - started:.1f} s')
    dismiss_prompts(page)

    before_marks = page.evaluate(BOARD_MARKS)
    assert before_marks == [''] * 9, f'{label}: the board should start empty, not {before_marks}'
    before_picture = page.evaluate(IMAGE_DIGEST, '.nac-tree')
    assert before_picture, f'{label}: no tree picture'

    page.locator('.nac-cell-1-1').first.click()
    # The AI (the notebook's score) answers: a second mark appears.
    page.wait_for_function(f"() => ({BOARD_MARKS})().filter(m => m === 'x' || m === 'o').length >= 2", timeout=60_000)
    marks = page.evaluate(BOARD_MARKS)
    assert marks[4] == 'x', f'{label}: the clicked square should hold x: {marks}'
    assert marks.count('o') == 1 and marks.count('x') == 1, f'{label}: expected one x and one o answer: {marks}'
    deadline = time.time() + 60
    after_picture = page.evaluate(IMAGE_DIGEST, '.nac-tree')
    while after_picture == before_picture and time.time() < deadline:
        page.wait_for_timeout(200)
        after_picture = page.evaluate(IMAGE_DIGEST, '.nac-tree')
    assert after_picture != before_picture, f'{label}: the tree picture did not change'
    status = page.locator('.nac-status').first.inner_text()
    assert 'x to move' in status.replace('\n', ' '), f'{label}: unexpected status {status!r}'
    assert not page.locator('.nac-error').first.inner_text().strip(), f'{label}: the widget shows an error'
    page.locator('.nac-widget').first.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / f'{label}.png'), full_page=False)
    return page


@pytest.fixture
def page(browser):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={'width': 1400, 'height': 1000})
    pg = context.new_page()
    try:
        yield pg
    finally:
        context.close()


def test_widget_in_jupyterlab(server, page):
    page = exercise(page, server, f'{server.base}/lab/tree/{NOTEBOOK}?token={server.token}', 'jupyterlab')
    target = os.environ.get('NAC_SCREENSHOT')
    if target:
        page.locator('.nac-widget').first.screenshot(path=target)
    # A perfect game from here, played move by move by the background thread, ends in a draw.
    start = time.perf_counter()
    page.locator('.nac-perfect').first.click()
    page.wait_for_function("() => /Game over: draw/.test(document.querySelector('.nac-status').textContent)",
                           timeout=60_000)
    print(f'jupyterlab: perfect game from move 2 took {time.perf_counter() - start:.1f} s')
    marks = page.evaluate(BOARD_MARKS)
    assert '' not in marks, marks
    slider = page.locator('.nac-history .widget-readout').first.inner_text()
    assert slider.strip() == '9', f'the move slider should reach move 9, not {slider!r}'
    page.screenshot(path=str(ARTIFACTS / 'jupyterlab-perfect-game.png'), full_page=False)


def test_widget_in_notebook7(server, page):
    page.goto(f'{server.base}/tree?token={server.token}', wait_until='domcontentloaded')
    page.wait_for_selector(f'text={NOTEBOOK}', timeout=60_000)
    exercise(page, server, f'{server.base}/notebooks/{NOTEBOOK}', 'notebook7')
