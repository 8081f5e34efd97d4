"""`make present`: the widget alone on a Voilà page, driven by the keyboard, in a real browser (Debian's chromium).

The test runs `make present` itself (with PRESENT_ARGS=--no-browser and a free port) in a fresh copy of the course
made with `git clone` of this checkout plus its uncommitted changes to the files `make present` uses, so it starts as
on a fresh clone (no .present/ folder, no widget copied beside the notebooks); the venv is this checkout's.
"""
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from coursetools.game import oracle
from test_browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, free_port, off_machine

pytestmark = pytest.mark.serial        # a live browser: after the grading tests, beside other browsers only
ROOT = __import__('conftest').ROOT
USED = ('Makefile', 'requirements.txt', 'pyproject.toml', 'coursetools', 'source', 'nbgrader_config.py')


def fresh_copy(folder):
    """A clone of this checkout, with the working tree's versions of the files `make present` uses."""
    subprocess.run(['git', 'clone', '--quiet', '--no-hardlinks', str(ROOT), str(folder)], check=True)
    for name in USED:
        source, target = ROOT / name, folder / name
        if source.is_dir():
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(source, target, ignore=shutil.ignore_patterns('__pycache__', 'minimax_widget'))
        else:
            shutil.copy2(source, target)
    os.symlink(ROOT / '.venv', folder / '.venv')   # the venv and its stamp: make does not reinstall
    return folder


@pytest.fixture(scope='module')
def presented(tmp_path_factory):
    """`make present ASSIGNMENT=alpha_beta` serving on a free port: (url, folder)."""
    folder = fresh_copy(tmp_path_factory.mktemp('present') / 'course')
    assert not (folder / '.present').exists()
    port = free_port()
    log = open(folder / 'present.log', 'w')
    env = {key: value for key, value in os.environ.items() if key != 'NBGRADER_EXECUTION'}
    command = ['make', '--no-print-directory', '-o', '.venv/.installed',   # -o: the shared venv is not reinstalled
               'present', 'ASSIGNMENT=alpha_beta', f'PORT={port}', 'PRESENT_ARGS=--no-browser']
    process = subprocess.Popen(command, cwd=folder, stdout=log, stderr=subprocess.STDOUT, env=env,
                               start_new_session=True)
    url = f'http://127.0.0.1:{port}/'
    try:
        deadline = time.time() + 120
        while True:
            try:
                urllib.request.urlopen(url, timeout=5).close()
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                if process.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f'make present did not serve the page: {(folder / "present.log").read_text()}')
                time.sleep(0.5)
        yield url, folder
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)    # make and the Voilà it started: our own process group
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        log.close()


def test_make_present_serves_the_widget_alone_and_keys_drive_it(presented):
    from playwright.sync_api import sync_playwright
    url, folder = presented
    assert (folder / '.present' / 'alpha_beta' / 'minimax_widget' / 'stepping.py').is_file()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={'width': 1280, 'height': 720})
            page.route(off_machine, lambda route: route.abort())
            errors = []
            page.on('pageerror', lambda error: errors.append(error.message))
            page.goto(url, wait_until='domcontentloaded')
            page.wait_for_selector('.nac-step-panel .nac-step', state='visible', timeout=120_000)
            assert page.locator('.jp-InputArea, .jp-Cell-inputWrapper, .jp-CodeMirrorEditor').count() == 0, \
                'the page shows code'
            assert page.locator('.nac-widget.nac-lecture').count() == 1
            step = page.locator('.nac-step-panel .nac-step').first.bounding_box()
            assert step['y'] + step['height'] <= 720, 'the Step button is not on the first screen'

            def visited():
                text = page.locator('.nac-step-counts').first.inner_text()
                found = re.search(r'([\d,]+) positions visited so far', text)
                return int(found.group(1).replace(',', '')) if found else 0
            page.locator('body').click(position={'x': 5, 'y': 5})
            page.keyboard.press('ArrowRight')
            page.wait_for_function("() => /^\\s*1 positions visited/.test("
                                   "document.querySelector('.nac-step-counts').textContent)", timeout=30_000)
            assert page.locator('.nac-step-text').first.inner_text().startswith('x to move at the start')
            page.keyboard.press('s')
            page.wait_for_function("() => /^\\s*2 positions visited/.test("
                                   "document.querySelector('.nac-step-counts').textContent)", timeout=30_000)
            page.keyboard.press('ArrowLeft')
            page.wait_for_function("() => /^\\s*1 positions visited/.test("
                                   "document.querySelector('.nac-step-counts').textContent)", timeout=30_000)
            page.keyboard.press(' ')                   # Play, then Pause
            page.wait_for_function("() => /· step [3-9]/.test(document.querySelector('.nac-step-counts')"
                                   ".textContent)", timeout=30_000)
            page.keyboard.press(' ')
            page.wait_for_function("() => !document.querySelector('.nac-step-panel .nac-step-play').disabled")
            paused = visited()
            page.wait_for_timeout(1500)
            assert visited() == paused, 'a step was taken after Pause'
            page.keyboard.press('e')                   # Run to end: alpha-beta's 18,297 from the empty board
            page.wait_for_function("() => /18,297 positions visited/.test("
                                   "document.querySelector('.nac-step-counts').textContent)", timeout=60_000)
            page.screenshot(path=str(ARTIFACTS / 'present-1280x720.png'))
            target = os.environ.get('NAC_PRESENT_SCREENSHOT')
            if target:
                page.screenshot(path=target)
            page.locator('.nac-settings-toggle').first.click()        # the game's board is in the Settings panel
            page.locator('.nac-cell-1-1').first.click()
            page.wait_for_function("() => [...document.querySelectorAll('.nac-cell')].filter("
                                   "b => b.textContent.trim()).length === 2", timeout=30_000)
            page.locator('.nac-settings-toggle').first.click()        # closed again
            page.locator('.nac-present-settings').wait_for(state='hidden', timeout=15_000)
            page.keyboard.press('n')                   # New game
            page.wait_for_function("() => [...document.querySelectorAll('.nac-cell')].every("
                                   "b => !b.textContent.trim())", timeout=30_000)
            assert oracle.search_tree_size(oracle.EMPTY_BOARD, 'x') == 549946
            assert not [e for e in errors if 'blob:' in e or 'anywidget' in e or 'nac-' in e], errors
        finally:
            browser.close()


# The presenter layout: after each step, the board of the step, the outline's current line and the tree's current
# node are inside the window and inside the box each scrolls in; the page itself is not scrolled.
IN_VIEW = """() => {
    const root = document.querySelector('.nac-present-root');
    const board = root.querySelector('.nac-step-board svg');
    const line = root.querySelector('.nac-step-asking') || root.querySelector('.nac-step-current');
    const node = root.querySelector('.nac-present-tree .nac-tree .nac-current');
    if (!board || !line || !node) return 'missing: ' + [board, line, node].map(Boolean);
    const inside = (e) => {
        const r = e.getBoundingClientRect();
        let ok = r.height > 0 && r.top >= -1 && r.left >= -1 && r.bottom <= innerHeight + 1 && r.right <= innerWidth + 1;
        // the boxes that clip it, up to the widget (fixed to the window: what is outside it clips nothing)
        for (let up = e.parentElement; up && !up.classList.contains('nac-presenter'); up = up.parentElement) {
            if (!/(auto|scroll|hidden)/.test(getComputedStyle(up).overflowY)) continue;
            const b = up.getBoundingClientRect();
            ok = ok && r.top >= b.top - 1 && r.bottom <= b.bottom + 1;
        }
        return ok;
    };
    const out = [['board', board], ['line', line], ['node', node]].filter(([, e]) => !inside(e)).map(([n]) => n);
    if (scrollY || document.scrollingElement.scrollTop) out.push('page scrolled');
    return out.length ? 'out of view: ' + out.join(', ') : true;
}"""

# The smallest text of the search shown (the Settings panel aside): CSS px, SVG text scaled as drawn.
SMALLEST = """() => {
    const found = [];
    for (const e of document.querySelectorAll('.nac-present-root *')) {
        if (!e.getClientRects().length || e.closest('.nac-present-settings')) continue;
        if (![...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
        let px = parseFloat(getComputedStyle(e).fontSize);
        if (e instanceof SVGElement) { const m = e.getScreenCTM(); px *= Math.hypot(m.a, m.b); }
        found.push({px, text: e.textContent.trim().slice(0, 40)});
    }
    return found.sort((a, b) => a.px - b.px)[0];
}"""

SETTINGS_SHOWN = """() => [...document.querySelectorAll('.nac-widget input, .nac-widget select, .nac-widget .nac-cell')]
    .filter(e => e.getClientRects().length).length"""

FIGURES = """() => ({board: document.querySelector('.nac-step-board svg').getBoundingClientRect().width,
    text: parseFloat(getComputedStyle(document.querySelector('.nac-step-text .widget-html-content')).fontSize),
    bottom: Math.max(...[...document.querySelectorAll('.nac-present-root > *')].filter(e => e.getClientRects().length
        && !e.classList.contains('nac-present-settings')).map(e => e.getBoundingClientRect().bottom))})"""


# What the tree shows: each value and window label with the path of the board above it, and the pruned boards.
TREE_SHOWN = """() => {
    const svg = document.querySelector('.nac-present-tree .nac-tree svg');
    const nodes = [...svg.querySelectorAll('g.nac-node')].map(g => {
        const r = g.querySelector('rect.nac-frame'), x = +r.getAttribute('x'), w = +r.getAttribute('width');
        return {path: g.getAttribute('data-path') || '', cx: x + w / 2, bottom: +r.getAttribute('y') + w,
                pruned: g.classList.contains('nac-pruned')};
    });
    const owner = (t) => {
        const x = +t.getAttribute('x'), y = +t.getAttribute('y');
        const above = nodes.filter(n => Math.abs(n.cx - x) < 1 && n.bottom <= y).sort((a, b) => b.bottom - a.bottom);
        return above.length ? above[0].path : null;
    };
    return {labels: [...svg.querySelectorAll('text.nac-value, text.nac-window')].map(t => ({path: owner(t),
                kind: t.classList.contains('nac-value') ? 'value' : 'window', text: t.textContent.trim()})),
            pruned: nodes.filter(n => n.pruned).map(n => n.path)};
}"""
VALUE = {1: '+1', 0: '0', -1: '−1'}


def parse(path):
    return tuple(tuple(int(n) for n in move.split(',')) for move in path.split(';') if move)


def check_tree(page, texts, reference, label):
    """The tree shows a value (the reference α-β's) only from the step whose text says it backs up, a window only
    once its board was entered or backed up, and a board greyed as pruned only from the step that cuts it: the
    reference's events in order, as many as the step texts so far name."""
    backed = dict(reference.backed[:sum(' backs up' in text for text in texts)])
    entered = {path for path, _ in reference.entered[:sum('moves to try' in text for text in texts)]}
    cut = {path + (move,) for path, moves in reference.cuts[:sum(t.startswith('Cut ') for t in texts)] for move in moves}
    shown = page.evaluate(TREE_SHOWN)
    values = 0
    for item in shown['labels']:
        path = parse(item['path'])
        if item['kind'] == 'value' and not item['text'].startswith('?'):
            assert path in backed and item['text'].split()[0] == VALUE[backed[path]], (label, item, len(texts))
            values += 1
        elif item['kind'] == 'window' and item['text'] != 'pruned':
            assert path in entered | set(backed), (label, item, len(texts))
    assert {parse(path) for path in shown['pruned']} <= cut, (label, shown['pruned'], len(texts))
    return values, len(shown['pruned'])


def step_to(page, index):
    page.keyboard.press('ArrowRight')
    page.wait_for_function("(n) => new RegExp('· step ' + n + '( |$)').test("
                           "document.querySelector('.nac-step-counts').textContent)", arg=index, timeout=30_000)


def check_in_view(page, label):
    try:
        page.wait_for_function(f'() => ({IN_VIEW})() === true', timeout=3000)
    except Exception:
        page.screenshot(path=str(ARTIFACTS / f'{label}-out-of-view.png'))
        raise AssertionError(f'{label}: {page.evaluate(IN_VIEW)}') from None


def test_the_presenter_layout_keeps_the_search_on_one_screen(presented):
    """At 1280x720 and 1920x1080, at 100 % and 150 % zoom (emulated as the browser zooms: width/zoom x height/zoom
    CSS px at a device pixel ratio of zoom): the first 30 steps and a cut of alpha-beta in view, the tree's values,
    windows and pruned boards never ahead of the steps, type sizes."""
    from playwright.sync_api import sync_playwright
    from test_stepping import Reference
    url, _folder = presented
    figures = {}
    reference = Reference(True, 'listed', 2)            # the page's α-β: listed order, live depth 2
    reference.search(oracle.EMPTY_BOARD, 'x')
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            for width, height, zoom in ((1280, 720, 1), (1280, 720, 1.5), (1920, 1080, 1), (1920, 1080, 1.5)):
                label = f'presenter-{width}x{height}-{zoom * 100:.0f}pct'
                context = browser.new_context(viewport={'width': round(width / zoom), 'height': round(height / zoom)},
                                              device_scale_factor=zoom)
                context.route(off_machine, lambda route: route.abort())
                page = context.new_page()
                started = time.perf_counter()
                page.goto(url, wait_until='commit')
                page.wait_for_selector('.nac-present-root .nac-step', state='visible', timeout=120_000)
                page.wait_for_selector('.nac-present-tree .nac-tree svg', state='visible', timeout=60_000)
                ready = time.perf_counter() - started
                assert page.locator('.nac-present-settings').is_hidden(), 'the settings show before Settings'
                assert page.evaluate(SETTINGS_SHOWN) == 0, 'a setting shows outside the Settings panel'
                cut, texts, seen = None, [], []
                for index in range(1, 121):
                    step_to(page, index)
                    texts.append(said_now(page))
                    if index <= 30 or (cut is None and texts[-1].startswith('Cut ')):
                        check_in_view(page, f'{label}-step-{index}')
                        seen.append(check_tree(page, texts, reference, f'{label}-step-{index}'))
                    if cut is None and texts[-1].startswith('Cut '):
                        cut = index
                        assert seen[-1][1] > 0, f'{label}: the cut is not greyed at its step'
                    if index >= 30 and cut is not None:
                        break
                assert cut is not None, f'{label}: no cut in 120 steps'
                assert sum(1 for values, _ in seen if values) > 10, f'{label}: values were seen appearing'
                assert page.locator('.nac-present-tree svg .nac-pruned').count() > 0, 'the cut greys the tree'
                smallest = page.evaluate(SMALLEST)
                figures[width, zoom] = dict(page.evaluate(FIGURES), smallest=smallest['px'], ready=ready, cut=cut,
                                            where=smallest['text'])
                assert figures[width, zoom]['bottom'] <= height / zoom + 1, (label, figures[width, zoom])
                page.screenshot(path=str(ARTIFACTS / f'{label}.png'))
                context.close()
        finally:
            browser.close()
    for (width, zoom), shown in figures.items():
        print(f'\n{width} wide, {zoom * 100:.0f} %: smallest text {shown["smallest"]:.1f} px, step text '
              f'{shown["text"]:.1f} px, board {shown["board"]:.0f} px, lowest edge {shown["bottom"]:.0f} px, '
              f'first cut at step {shown["cut"]}, ready in {shown["ready"]:.1f} s (smallest: {shown["where"]!r})')
    assert all(shown['smallest'] >= 16 for shown in figures.values()), figures
    small, large = figures[1280, 1], figures[1920, 1]      # in proportion to the width on the larger screen
    assert large['text'] >= 1.4 * small['text'] and large['board'] >= 1.4 * small['board'], figures
    assert large['smallest'] >= 16 * 1920 / 1280 - 0.5, figures


def said_now(page):
    return page.locator('.nac-step-text').first.inner_text().strip()


def test_the_presenter_pictures_in_the_docs_are_the_script_s_at_1280x720():
    """docs/widget.md shows the presenter at 1280x720 in pictures that scripts/widget_screenshots.py writes (a
    1280x720 window; at 150 % zoom 1920x1080 device pixels, or 1280x720 scaled down)."""
    import struct
    shown = set(re.findall(r'\(images/(presenter[^)]*\.png)\)', (ROOT / 'docs' / 'widget.md').read_text()))
    written = set(re.findall(r"'(presenter[^']*\.png)'", (ROOT / 'scripts' / 'widget_screenshots.py').read_text()))
    assert len(shown) >= 4 and shown <= written, (shown, written)
    for name in shown:
        header = (ROOT / 'docs' / 'images' / name).read_bytes()[:24]
        assert header[:8] == b'\x89PNG\r\n\x1a\n', name
        size = struct.unpack('>II', header[16:24])
        assert size in ([(1280, 720), (1920, 1080)] if '150pct' in name else [(1280, 720)]), (name, size)
