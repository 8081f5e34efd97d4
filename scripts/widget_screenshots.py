"""Screenshots of the presenter layout of `make present` for docs/widget.md, at 1280x720 (docs/images/presenter-*).

    .venv/bin/python scripts/widget_screenshots.py [--out docs/images]

It runs `make present ASSIGNMENT=alpha_beta` in this checkout on a free port (no browser of its own) and drives
Debian's chromium (/usr/bin/chromium) through Playwright, as a lecturer would with the keys and the Settings panel.
Requests to other machines are aborted: the pictures are of the page offline. 150 % zoom is emulated as the browser
zooms (a viewport of 1280/1.5 x 720/1.5 CSS px at a device pixel ratio of 1.5).
"""
import argparse
import os
import pathlib
import signal
import socket
import subprocess
import time
import urllib.request
from urllib.parse import urlsplit

ROOT = pathlib.Path(__file__).resolve().parent.parent
CHROMIUM = '/usr/bin/chromium'
CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
                 '--disable-sync', '--no-first-run', '--disable-dev-shm-usage']
STEP = "(n) => new RegExp('· step ' + n + '( |$)').test(document.querySelector('.nac-step-counts').textContent)"


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def serve(port):
    """`make present ASSIGNMENT=alpha_beta` on ``port``: its process (a group of its own), once the page answers."""
    env = {key: value for key, value in os.environ.items() if key != 'NBGRADER_EXECUTION'}
    process = subprocess.Popen(['make', '--no-print-directory', 'present', 'ASSIGNMENT=alpha_beta', f'PORT={port}',
                                'PRESENT_ARGS=--no-browser'], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.time() + 120
    while True:
        try:
            urllib.request.urlopen(f'http://127.0.0.1:{port}/', timeout=5).close()
            return process
        except OSError:
            if process.poll() is not None or time.time() > deadline:
                stop(process)
                raise SystemExit('make present did not serve the page')
            time.sleep(0.5)


def stop(process):
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


def open_page(browser, url, zoom=1.0):
    context = browser.new_context(viewport={'width': round(1280 / zoom), 'height': round(720 / zoom)},
                                  device_scale_factor=zoom)
    context.route(lambda u: urlsplit(u).hostname not in (None, '127.0.0.1', 'localhost'), lambda r: r.abort())
    page = context.new_page()
    page.goto(url, wait_until='commit')
    page.wait_for_selector('.nac-present-tree .nac-tree svg', state='visible', timeout=120_000)
    page.step = 0
    return page


def step(page, times=1):
    for _ in range(times):
        page.step += 1
        page.keyboard.press('ArrowRight')
        page.wait_for_function(STEP, arg=page.step, timeout=30_000)
    page.wait_for_timeout(700)          # the follower scrolls the boxes 30-450 ms after a step


def text(page):
    return page.locator('.nac-step-text').first.inner_text().strip()


def settings(page, show):
    toggle = page.locator('.nac-settings-toggle').first
    if ('mod-active' in (toggle.get_attribute('class') or '')) != show:
        toggle.click()
    page.locator('.nac-present-settings').wait_for(state='visible' if show else 'hidden', timeout=15_000)


def shots(browser, url, out):
    page = open_page(browser, url)                    # the empty board, 12 steps in
    step(page, 12)
    page.screenshot(path=str(out / 'presenter-1280x720.png'))
    settings(page, True)                              # the Settings panel over the search
    page.select_option('.nac-start select', label='A: x to move, 5 empty')
    page.wait_for_function("() => /Press Step/.test(document.querySelector('.nac-step-text').textContent)",
                           timeout=30_000)
    page.wait_for_timeout(500)
    page.screenshot(path=str(out / 'presenter-settings-1280x720.png'))
    settings(page, False)
    page.step = 0
    for _ in range(80):                               # position A to its first cut
        step(page)
        if text(page).startswith('Cut '):
            break
    page.screenshot(path=str(out / 'presenter-cut-1280x720.png'))
    settings(page, True)                              # predict α and β from the same position
    page.locator('.nac-predict input').first.check()
    page.select_option('.nac-ask select', label='α and β (α-β)')
    page.locator('.nac-step-restart').first.click()
    page.wait_for_function("() => /Press Step/.test(document.querySelector('.nac-step-text').textContent)",
                           timeout=30_000)
    settings(page, False)
    for _ in range(10):
        page.keyboard.press('ArrowRight')
        page.wait_for_timeout(600)
        if text(page).startswith('Predict:'):
            break
    page.screenshot(path=str(out / 'presenter-predict-1280x720.png'))
    settings(page, True)                              # which moves will be pruned, in position C
    page.select_option('.nac-start select', label='C: x to move, 3 empty')
    page.select_option('.nac-ask select', label='moves pruned (α-β)')
    page.wait_for_function("() => /Press Step/.test(document.querySelector('.nac-step-text').textContent)",
                           timeout=30_000)
    settings(page, False)
    asked = "() => /^Predict:/.test(document.querySelector('.nac-step-text').textContent.trim())"

    def to_question():
        for _ in range(12):
            page.keyboard.press('ArrowRight')
            page.wait_for_timeout(600)
            if page.evaluate(asked):
                return
        raise SystemExit('no question asked')
    to_question()
    page.wait_for_timeout(700)
    page.screenshot(path=str(out / 'presenter-prune-1280x720.png'))
    while '(after 2,1)' not in text(page):            # 'none' at the start and after 1,2, to the first cut's question
        page.locator('.nac-choice', has_text='none').first.click()
        page.wait_for_function("() => /You said/.test(document.querySelector('.nac-step-text').textContent)")
        to_question()
    page.locator('.nac-choice', has_text='none').first.click()
    page.wait_for_function("() => /You said/.test(document.querySelector('.nac-step-text').textContent)")
    page.wait_for_timeout(700)
    page.screenshot(path=str(out / 'presenter-prune-reveal-1280x720.png'))
    page.context.close()
    page = open_page(browser, url, zoom=1.5)          # 150 % zoom
    step(page, 12)
    page.screenshot(path=str(out / 'presenter-1280x720-150pct.png'))
    page.context.close()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--out', default=str(ROOT / 'docs' / 'images'))
    args = parser.parse_args(argv)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright
    port = free_port()
    process = serve(port)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            try:
                shots(browser, f'http://127.0.0.1:{port}/', out)
            finally:
                browser.close()
    finally:
        stop(process)
    print(f'screenshots in {out}')


if __name__ == '__main__':
    main()
