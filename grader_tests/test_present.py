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
            page.locator('.nac-cell-1-1').first.click()
            page.wait_for_function("() => [...document.querySelectorAll('.nac-cell')].filter("
                                   "b => b.textContent.trim()).length === 2", timeout=30_000)
            page.locator('body').click(position={'x': 5, 'y': 5})
            page.keyboard.press('n')                   # New game
            page.wait_for_function("() => [...document.querySelectorAll('.nac-cell')].every("
                                   "b => !b.textContent.trim())", timeout=30_000)
            assert oracle.search_tree_size(oracle.EMPTY_BOARD, 'x') == 549946
            assert not [e for e in errors if 'blob:' in e or 'anywidget' in e or 'nac-' in e], errors
        finally:
            browser.close()
