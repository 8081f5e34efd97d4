"""`make present` and `make demo` as a lecture hall meets them, in Debian's chromium: each test runs the real make
target (headless, a free port) in a fresh clone of this checkout (test_present.fresh_copy).

* the present page offline (every request to another machine aborted) and on a network that drops them silently
  is ready as fast as with the network, asks nothing of another machine, and has Font Awesome's font loaded;
* its keys work after every checkbox was ticked and every slider moved with the mouse (the focus left there), and
  the control labels are at least 16 px at 1280 px wide, in proportion on wider screens;
* ten reloads leave one kernel (kernel processes below the server), an open page keeps its kernel past the culling
  time, and a closed page's kernel goes; each page's kernel is shut down at its page's request, none culled;
* `make present` of noughts_and_crosses loads offline and steps minimax;
* `make present NOTEBOOK=path` shows that notebook's functions, its kernel sandboxed (its sockets folder locked once
  ready; ten reloads leave one sandbox), and `make demo` opens either workbook in JupyterLab (ten reloads keep its
  one kernel).
"""
import contextlib
import json
import os
import re
import secrets
import signal
import subprocess
import time
import urllib.request

import nbformat
import pytest

import test_browser
from conftest import ROOT, descendants
from test_browser import ARTIFACTS, free_port, off_machine
from test_present import fresh_copy

browser = test_browser.browser          # test_browser.py's chromium (Debian's, driven by Playwright)
pytestmark = pytest.mark.alone         # times a page's loads and waits out kernel culling: run alone, last
READY = '.nac-step-panel .nac-step'
CULL_IDLE = 5                           # --cull-idle for the served page: seconds (make present's default is 60)
STATE = """() => ['.nac-step-text', '.nac-step-counts', '.nac-tally'].map(
    s => (document.querySelector(s) || {}).textContent || '').join(' | ')"""


def stop(process):
    """make and what it started (its own process group), by the group's id."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


@contextlib.contextmanager
def running(folder, target, *variables, ready_url, env=None):
    """`make TARGET VARIABLES...` in ``folder`` (the shared venv not reinstalled) until ``ready_url`` answers."""
    env = {key: value for key, value in (env or os.environ).items() if key != 'NBGRADER_EXECUTION'}
    log_path = folder / f'make-{target}.log'
    with open(log_path, 'w') as log:
        process = subprocess.Popen(['make', '--no-print-directory', '-o', '.venv/.installed', target, *variables],
                                   cwd=folder, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            deadline = time.time() + 120
            while True:
                try:
                    urllib.request.urlopen(ready_url, timeout=5).close()
                    break
                except OSError:
                    if process.poll() is not None or time.time() > deadline:
                        raise RuntimeError(f'make {target} did not serve {ready_url}: {log_path.read_text()}')
                    time.sleep(0.5)
            yield process
        finally:
            stop(process)


def kernels(process):
    """Pids of the kernel processes below ``process`` (make, then Voilà or JupyterLab)."""
    found = []
    for pid in descendants(process.pid):
        try:
            if b'ipykernel' in open(f'/proc/{pid}/cmdline', 'rb').read():
                found.append(pid)
        except OSError:
            pass
    return found


def wait_for_kernels(process, at_most, timeout):
    deadline = time.time() + timeout
    while len(kernels(process)) > at_most and time.time() < deadline:
        time.sleep(0.5)
    return len(kernels(process))


@pytest.fixture(scope='module')
def present(tmp_path_factory):
    """`make present ASSIGNMENT=alpha_beta` with --cull-idle 5: (url, folder, make's process)."""
    folder = fresh_copy(tmp_path_factory.mktemp('lecture') / 'course')
    port = free_port()
    url = f'http://127.0.0.1:{port}/'
    with running(folder, 'present', 'ASSIGNMENT=alpha_beta', f'PORT={port}',
                 f'PRESENT_ARGS=--no-browser --cull-idle {CULL_IDLE}', ready_url=url) as process:
        yield url, folder, process


OPENED = []                              # the contexts a test opened: closed after it, passed or failed


@pytest.fixture(autouse=True)
def close_pages():
    yield
    while OPENED:
        try:
            OPENED.pop().close()
        except Exception:
            pass                            # closed by the test already


def open_present(browser, url, network='offline', width=1280, height=720):
    """A new context's page on ``url``: (page, seconds until the Step button shows, off-machine requests).
    network: 'offline' aborts every request to another machine at once, 'silent' never answers them, 'online'
    leaves them to this machine's network."""
    context = browser.new_context(viewport={'width': width, 'height': height})
    OPENED.append(context)
    asked = []
    context.on('request', lambda request: off_machine(request.url) and asked.append(request.url))
    if network == 'offline':
        context.route(off_machine, lambda route: route.abort())
    elif network == 'silent':
        context.route(off_machine, lambda route: None)       # left pending: a network that drops requests
    page = context.new_page()
    page.errors = []
    page.on('pageerror', lambda error: page.errors.append(error.message))
    started = time.perf_counter()
    page.goto(url, wait_until='commit')
    page.wait_for_selector(READY, state='visible', timeout=120_000)
    return page, time.perf_counter() - started, asked


FONT_AWESOME = """async () => {
    await document.fonts.ready;
    const icon = document.querySelector('.nac-step-panel .nac-step i.fa');
    return {family: icon ? getComputedStyle(icon).fontFamily : 'no icon',
            loaded: [...document.fonts].filter(f => /Font Awesome/.test(f.family) && f.status === 'loaded')
                                       .map(f => f.family)};
}"""


def test_the_present_page_is_ready_offline_as_fast_as_online(browser, present):
    url, _folder, _process = present
    took = {}
    for network in ('online', 'offline', 'silent', 'online', 'offline', 'silent'):
        page, seconds, asked = open_present(browser, url, network)
        assert asked == [], f'{network}: the page asked another machine for {asked}'
        fonts = page.evaluate(FONT_AWESOME)
        assert 'Font Awesome' in fonts['family'] and fonts['loaded'], f'{network}: Font Awesome not loaded: {fonts}'
        page.screenshot(path=str(ARTIFACTS / f'present-ready-{network}.png'))
        page.context.close()
        took[network] = min(took.get(network, seconds), seconds)
    print('\ntime to ready (best of two): ' + ', '.join(f'{name} {s:.1f} s' for name, s in took.items()))
    for network in ('offline', 'silent'):
        assert took[network] <= 1.5 * took['online'] + 3, took


def changed_by(page, key):
    """Press ``key`` and wait until the step panel's texts change; True if they did."""
    before = page.evaluate(STATE)
    page.keyboard.press(key)
    try:
        page.wait_for_function(f'() => ({STATE})() !== {json.dumps(before)}', timeout=15_000)
        return True
    except Exception:
        return False


def readout(slider):
    return slider.locator('.widget-readout').first.inner_text().strip()


def drag(page, slider):
    """Move ``slider``'s handle with the mouse (right, or left if it is at its end): the value it shows then."""
    before = readout(slider)
    for dx in (60, -60):
        slider.scroll_into_view_if_needed()         # the step panel scrolls the page after each step: let it settle
        page.wait_for_timeout(800)
        box = slider.locator('.noUi-handle').first.bounding_box()
        x, y = box['x'] + box['width'] / 2, box['y'] + box['height'] / 2
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x + dx, y, steps=6)
        page.mouse.up()
        page.wait_for_timeout(300)
        if readout(slider) != before:
            return readout(slider)
    raise AssertionError(f'the slider did not move: {before}')


LABEL_SIZES = """() => [...document.querySelectorAll(
    '.nac-widget .widget-hslider > .widget-label, .nac-widget .widget-checkbox label')]
    .filter(e => e.getBoundingClientRect().width > 0)
    .map(e => ({text: e.textContent.trim(), px: parseFloat(getComputedStyle(e).fontSize),
                cut: e.scrollWidth > e.clientWidth + 1}))"""


def test_keys_work_after_every_checkbox_and_slider_and_labels_are_big(browser, present):
    url, _folder, _process = present
    page, _seconds, _asked = open_present(browser, url)
    focused = "() => { const e = document.activeElement; return e ? e.tagName + '.' + e.className : ''; }"
    assert page.locator('.nac-predict input').first.is_hidden(), 'a setting shows before Settings is pressed'
    page.locator('.nac-settings-toggle').first.click()          # every setting is in the panel it opens
    page.locator('.nac-present-settings').wait_for(state='visible', timeout=15_000)
    predict = page.locator('.nac-predict input').first
    # "predict, then reveal" ticked with the mouse: → steps until a prediction is asked, 0 answers it.
    predict.click()
    assert page.evaluate(focused).startswith('INPUT'), page.evaluate(focused)
    for _ in range(8):
        assert changed_by(page, 'ArrowRight'), f'→ ignored with the focus on {page.evaluate(focused)}'
        if page.locator('.nac-step-text').first.inner_text().strip().startswith('Predict:'):
            break
    assert changed_by(page, '0'), '0 ignored after ticking "predict, then reveal"'
    assert re.search(r'of 1 predicted', page.locator('.nac-tally').first.inner_text()), 'no tally after 0'
    assert predict.is_checked(), 'a key toggled the checkbox'
    predict.click()
    boxes = page.locator('.nac-widget .widget-checkbox input')
    for index in range(boxes.count()):
        box = boxes.nth(index)
        if not box.is_visible():
            continue
        for _ in range(2):                 # ticked (or unticked), then back as it was
            box.click()
            state = box.is_checked()
            page.wait_for_timeout(500)
            # a question asked (Play may stop on one while "predict" is ticked) waits for its answer, not for →
            asking = page.locator('.nac-step-text').first.inner_text().strip().startswith('Predict:')
            key = '0' if asking else 'ArrowRight'
            assert changed_by(page, key), f'{key} ignored after clicking checkbox {index}'
            page.keyboard.press(' ')                            # Play, then Pause, not the checkbox
            page.keyboard.press(' ')
            page.wait_for_timeout(300)
            assert box.is_checked() == state, f'space toggled checkbox {index}'
    sliders = page.locator('.nac-widget .widget-hslider')
    moved = 0
    for index in range(sliders.count()):
        slider = sliders.nth(index)
        if not slider.is_visible():
            continue
        value = drag(page, slider)
        moved += 1
        page.wait_for_timeout(1000)                  # a new live depth restarts the search: let it settle
        where = page.evaluate(focused)
        assert changed_by(page, 'ArrowRight'), f'→ ignored after moving slider {index} (focus on {where})'
        assert changed_by(page, 'ArrowLeft'), f'← ignored after moving slider {index}'
        assert readout(slider) == value, 'an arrow key moved the slider'
        slider.locator('.noUi-handle').first.focus()
        assert changed_by(page, 'ArrowRight'), f'→ ignored with the focus on slider {index}'
    assert moved >= 1
    page.locator('.nac-step-panel .nac-step-restart').first.click()          # the focus on a button
    page.wait_for_function("() => /^Press Step/.test(document.querySelector('.nac-step-text').textContent.trim())",
                           timeout=15_000)
    assert changed_by(page, 'ArrowRight'), '→ ignored with the focus on a button'

    assert boxes.count() >= 4 and moved >= 3, (boxes.count(), moved)    # the Settings panel's, all of them
    sizes = {}
    for width, height in ((1280, 720), (1920, 1080)):
        page.set_viewport_size({'width': width, 'height': height})
        page.wait_for_timeout(300)
        labels = page.evaluate(LABEL_SIZES)
        assert len(labels) >= 2 and not [label for label in labels if label['cut']], labels
        sizes[width] = min(label['px'] for label in labels)
    print(f'\nsmallest control label: {sizes[1280]:.1f} px at 1280 wide, {sizes[1920]:.1f} px at 1920 wide')
    assert sizes[1280] >= 16 and sizes[1920] >= 16 * 1920 / 1280 - 0.5, sizes
    page.screenshot(path=str(ARTIFACTS / 'present-1920x1080.png'))
    assert not [e for e in page.errors if 'nac-' in e or 'anywidget' in e], page.errors
    page.context.close()


def shut_down_by_their_pages(log_text):
    """(kernels a page connected to, those of them culled instead of shut down at the page's request), from
    Voilà's log."""
    connected = set(re.findall(r'Connecting to kernel ([0-9a-f-]{36})', log_text))
    culled = set(re.findall(r"Culling '\w+' kernel '[^']*' \(([0-9a-f-]{36})\)", log_text))
    return connected, connected & culled


def test_reloads_and_closed_pages_leave_no_kernels_running(browser, present):
    url, folder, process = present
    idle = wait_for_kernels(process, 0, 60)        # the earlier tests' pages are closed: their kernels go
    assert idle == 0, f'{idle} kernels left by closed pages'
    log_path = folder / 'make-present.log'
    logged_before = log_path.stat().st_size         # (those tests close their pages without unloading them)
    page, _seconds, _asked = open_present(browser, url)
    assert len(kernels(process)) == 1
    for _ in range(10):
        page.reload(wait_until='commit')
        page.wait_for_selector(READY, state='visible', timeout=120_000)
    right_after = len(kernels(process))
    settled = wait_for_kernels(process, 1, 4 * CULL_IDLE + 10)
    page.wait_for_timeout((2 * CULL_IDLE + 2) * 1000)       # past the culling time: the open page keeps its kernel
    kept = kernels(process)
    assert changed_by(page, 'ArrowRight'), 'the open page lost its kernel'
    page.close(run_before_unload=True)          # as a closed tab: the page unloads
    closed = wait_for_kernels(process, 0, 4 * CULL_IDLE + 10)
    page.context.close()
    print(f'\nkernels after ten reloads: {right_after} at once, {settled} a few seconds later; '
          f'{len(kept)} with the page left open; {closed} once it was closed')
    assert settled <= 1 and len(kept) == 1 and closed == 0
    with open(log_path, 'rb') as file:
        file.seek(logged_before)
        log = file.read().decode('utf-8', 'replace')
    connected, culled = shut_down_by_their_pages(log)       # each page, as it unloads, asks for its kernel's end
    assert len(connected) >= 11 and not culled, (len(connected), culled)
    assert "'_xsrf' argument missing" not in log


def ten_reloads(page, count, ready=READY, timeout=4 * CULL_IDLE + 10):
    """Reload ``page`` ten times, each until ``ready`` shows; then (at most ``timeout`` s) until ``count()`` (the
    kernels) is one or fewer: (kernels right after, kernels then)."""
    started = time.time()
    for _ in range(10):
        page.reload(wait_until='commit')
        page.wait_for_selector(ready, state='visible', timeout=120_000)
    right_after, deadline, reloaded = count(), time.time() + timeout, time.time()
    while count() > 1 and time.time() < deadline:
        time.sleep(0.5)
    print(f'\nten reloads: {reloaded - started:.1f} s, {right_after} kernels at once, {count()} '
          f'{time.time() - reloaded:.1f} s later')
    return right_after, count()


def test_make_present_of_the_first_workbook_offline(browser, tmp_path_factory):
    """`make present` (noughts_and_crosses, no alphabeta): ready with every outside request blocked, and minimax
    steps. (Ten reloads are counted on the alpha_beta page above: the same Voilà, another notebook.)"""
    folder = fresh_copy(tmp_path_factory.mktemp('first') / 'course')
    port = free_port()
    url = f'http://127.0.0.1:{port}/'
    with running(folder, 'present', f'PORT={port}', 'PRESENT_ARGS=--no-browser', ready_url=url):
        page, seconds, asked = open_present(browser, url)
        assert asked == [] and page.locator('.nac-present-title').inner_text().startswith('Noughts and crosses')
        assert changed_by(page, 'ArrowRight') and changed_by(page, 'ArrowRight')
        assert page.locator('.nac-step-text').first.inner_text().startswith('o to move after 0,0: 8 moves to try')
        assert 'subtrees pruned' not in page.locator('.nac-step-counts').first.inner_text(), 'minimax, not α-β'
        print(f'\nmake present (noughts_and_crosses): ready offline in {seconds:.1f} s')
        page.context.close()


BUGGY_MOVES = '''def moves(state):
    """Every empty square but the centre: the bug to lecture on."""
    return [(row, col) for row in range(3) for col in range(3) if state[row][col] == ' ' and (row, col) != (1, 1)]
'''


def student_notebook(path):
    """A demo student's notebook (demo_class/noughts_and_crosses/ada.py in the release, as `make demo-class` builds
    it), its `moves` a call of a helper of the student's own that never lists the centre, and a call that would stop
    the page if it ran."""
    from coursetools.instructor.democlass import fill, read_answers
    release = nbformat.read(ROOT / 'release' / 'noughts_and_crosses' / 'noughts_and_crosses.ipynb', as_version=4)
    notebook = fill(release, *read_answers(ROOT / 'demo_class' / 'noughts_and_crosses' / 'ada.py'))
    for cell in notebook.cells:
        if cell.metadata.get('nbgrader', {}).get('grade_id') == 'moves':
            cell.source = 'def moves(state):\n    return my_moves(state)\n'
    notebook.cells.insert(1, nbformat.v4.new_code_cell(BUGGY_MOVES.replace('def moves', 'def my_moves') +
                                                       "\nraise SystemExit('a call ran')\n"))
    nbformat.write(notebook, path)
    return path


def test_definitions_of_a_students_notebook(tmp_path):
    from coursetools.instructor import present as presenting
    cells = presenting.definitions(student_notebook(tmp_path / 'mine.ipynb'), own_cells=True)
    joined = '\n'.join(cells)
    assert 'def my_moves' in joined and 'return my_moves(state)' in joined and 'SystemExit' not in joined
    assert 'def test_' not in joined and 'GameTreeWidget' not in joined
    assert 'def check_score_end_everywhere' in joined and not re.search(r'^check_score_end_everywhere\(', joined, re.M)


def test_make_present_notebook_shows_that_notebooks_functions(browser, tmp_path_factory):
    folder = fresh_copy(tmp_path_factory.mktemp('student') / 'course')
    (folder / 'submitted' / 'ada-lovelace-1815').mkdir(parents=True)
    notebook = student_notebook(folder / 'submitted' / 'ada-lovelace-1815' / 'noughts_and_crosses.ipynb')
    port = free_port()
    url = f'http://127.0.0.1:{port}/'
    tmp = tmp_path_factory.mktemp('sandboxes')           # the sandboxes' folders: TMPDIR of make present
    with running(folder, 'present', f'NOTEBOOK={notebook.relative_to(folder)}', f'PORT={port}',
                 f'PRESENT_ARGS=--no-browser --cull-idle {CULL_IDLE}', ready_url=url,
                 env=dict(os.environ, TMPDIR=str(tmp))) as process:
        page, _seconds, asked = open_present(browser, url)
        assert asked == []
        assert 'noughts_and_crosses.ipynb' in page.locator('.nac-present-title').inner_text()
        assert 'lovelace' not in page.inner_text('body'), "the student's folder is shown"
        page.keyboard.press('ArrowRight')                 # the start entered: its moves listed by the student's moves
        page.wait_for_selector('.nac-step-tree .nac-step-line[data-path="0,0"]', timeout=30_000)
        paths = page.eval_on_selector_all('.nac-step-tree .nac-step-line[data-path]',
                                          'lines => lines.map(l => l.dataset.path)')
        assert '1,1' not in paths and len([p for p in paths if p.count(',') == 1]) == 8, paths
        page.screenshot(path=str(ARTIFACTS / 'present-student-notebook.png'))
        inside, made = sandboxed_kernels(process), list(tmp.glob('nbsbx-*'))
        # the page is ready: its kernel's sockets folder is root's now, as in grading (lock_sockets)
        modes = {str(p): (p.stat().st_uid, oct(p.stat().st_mode & 0o777)) for p in tmp.glob('nbsbx-*/kernel*/sockets')}
        locked = (os.geteuid(), oct(0o711 if os.geteuid() == 0 else 0o500))
        assert modes and set(modes.values()) == {locked}, modes
        _right_after, after_reloads = ten_reloads(page, lambda: len(sandboxed_kernels(process)))  # each sandbox
        # the page's kernel dies: Voilà restarts it in a new sandbox, its sockets folder locked once ready too
        os.kill(sandboxed_kernels(process)[0], signal.SIGKILL)
        deadline, again = time.time() + 60, None
        while time.time() < deadline and again != locked:
            time.sleep(0.5)
            again = next(((p.stat().st_uid, oct(p.stat().st_mode & 0o777))
                          for p in tmp.glob('nbsbx-*/kernel2/sockets')), None)
        assert again == locked, f'the restarted kernel\'s sockets folder: {again}'
        page.context.close()
    assert inside, "the student's kernel does not run in the grading sandbox"
    assert after_reloads == 1, f'{after_reloads} sandboxed kernels after ten reloads'
    assert made and not list(tmp.glob('nbsbx-*')), 'a sandbox folder outlived its kernel'   # Voilà stopped


def sandboxed_kernels(process):
    """The kernels below ``process`` that run in a sandbox: below bwrap, in a network namespace of their own."""
    found = []
    for pid in kernels(process):
        try:
            parent = int(open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[1])
            if open(f'/proc/{pid}/cmdline', 'rb').read().startswith(b'/usr/bin/bwrap'):
                continue
            below_bwrap = b'bwrap' in open(f'/proc/{parent}/cmdline', 'rb').read().split(b'\0')[0]
            if below_bwrap and os.readlink(f'/proc/{pid}/ns/net') != os.readlink('/proc/self/ns/net'):
                found.append(pid)
        except OSError:
            pass
    return found


@pytest.mark.parametrize('assignment', ['noughts_and_crosses', 'alpha_beta'])
def test_make_demo_opens_the_workbook_in_jupyterlab(browser, tmp_path_factory, assignment):
    base = tmp_path_factory.mktemp('demo')
    folder, work = fresh_copy(base / 'course'), base / 'jupyter'
    settings = work / 'settings' / '@jupyterlab' / 'apputils-extension'
    settings.mkdir(parents=True)
    (settings / 'notification.jupyterlab-settings').write_text(json.dumps({'fetchNews': 'false'}))
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(work / 'config'), JUPYTER_RUNTIME_DIR=str(work / 'runtime'),
               JUPYTERLAB_SETTINGS_DIR=str(work / 'settings'), JUPYTERLAB_WORKSPACES_DIR=str(work / 'workspaces'))
    port, token = free_port(), secrets.token_hex(16)
    options = (f'--no-browser --ServerApp.ip=127.0.0.1 --ServerApp.port={port} --ServerApp.port_retries=0 '
               f'--IdentityProvider.token={token} --LabApp.news_url=None' + (' --allow-root' if os.geteuid() == 0 else ''))
    with running(folder, 'demo', f'ASSIGNMENT={assignment}', f'DEMO_ARGS={options}', env=env,
                 ready_url=f'http://127.0.0.1:{port}/api/status?token={token}') as process:
        assert (folder / 'source' / assignment / 'minimax_widget' / 'keys.py').is_file()
        opener = list((work / 'runtime').glob('jpserver-file-to-run-*-open.html'))   # what a browser is given
        assert len(opener) == 1, list((work / 'runtime').iterdir())
        context = browser.new_context(viewport={'width': 1280, 'height': 720})
        context.route(off_machine, lambda route: route.abort())
        page = context.new_page()
        troubles = []       # what the page met on this machine, for a failure's message
        page.on('requestfailed', lambda r: off_machine(r.url) or troubles.append(f'{r.method} {r.url}: {r.failure}'))
        page.on('console', lambda message: message.type == 'error' and troubles.append(f'console: {message.text}'))
        page.goto(opener[0].as_uri())
        page.wait_for_url(re.compile(rf'/lab/tree/{assignment}\.ipynb'), timeout=60_000)
        page.wait_for_selector('.jp-NotebookPanel .jp-Cell', timeout=90_000)
        page.wait_for_function(f"() => /{assignment}\\.ipynb/.test((document.querySelector("
                               "'.lm-DockPanel-tabBar .lm-mod-current') || {}).textContent)", timeout=30_000)
        page.wait_for_function("() => document.querySelectorAll('.jp-NotebookPanel .jp-Cell').length > 10",
                               timeout=30_000)          # the workbook's cells, not an empty notebook
        page.screenshot(path=str(ARTIFACTS / f'demo-{assignment}-1280x720.png'))
        if assignment == 'noughts_and_crosses':         # the notebook's kernel, kept across ten reloads
            if not _started(process):
                page.screenshot(path=str(ARTIFACTS / f'demo-{assignment}-no-kernel.png'))
                raise AssertionError(f'no kernel for the workbook; the page met: {troubles[-20:]}')
            right_after, settled = ten_reloads(page, lambda: len(kernels(process)), '.jp-NotebookPanel .jp-Cell',
                                               timeout=30)
            print(f'\nmake demo: kernels after ten reloads: {right_after} at once, {settled} later')
            assert settled == 1, demo_kernels_described(process, f'http://127.0.0.1:{port}', token)
        context.close()
        assert process.poll() is None


def demo_kernels_described(process, server, token):
    """For a failure's message: each kernel process (pid, parent, start in clock ticks, command) and the server's
    sessions and kernels, so that a second session of the notebook can be told from a kernel no session holds."""
    lines = []
    for pid in kernels(process):
        with contextlib.suppress(OSError):
            fields = open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()
            command = open(f'/proc/{pid}/cmdline', 'rb').read().replace(b'\0', b' ').decode(errors='replace')
            lines.append(f'kernel pid {pid}, parent {fields[1]}, started {fields[19]}: {command[:200]}')
    for api in ('sessions', 'kernels'):
        with contextlib.suppress(OSError, ValueError):
            with urllib.request.urlopen(f'{server}/api/{api}?token={token}', timeout=10) as answer:
                lines.append(f'/api/{api}: {json.loads(answer.read())}')
    return '\n'.join(lines)


def _started(process, timeout=120):
    """The workbook's kernel is running below JupyterLab."""
    deadline = time.time() + timeout
    while not kernels(process) and time.time() < deadline:
        time.sleep(0.5)
    return len(kernels(process)) == 1
