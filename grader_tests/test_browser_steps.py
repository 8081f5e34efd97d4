"""The widget's step panel in a real browser (Debian's chromium, JupyterLab 4), in both workbooks: Step, Back, Play,
Pause, Run to end, the move-order switch and predict-then-reveal, pressed as a lecturer presses them, with the
outline's text, the line saying what happened and the counts checked after the steps against a reference search
written in grader_tests/test_stepping.py and against coursetools.game's independent counts.

The folder, the Jupyter server and the browser are test_browser.py's (a plain minimax as score, the widget beside
the notebooks as minimax_widget/). Set NAC_STEP_SCREENSHOTS=docs/images to save the pictures used in docs/widget.md.
"""
import math
import os
import time

import pytest

from coursetools.game import analysis, oracle
import test_browser
from test_browser import ARTIFACTS, open_notebook, widget_errors
from test_stepping import Reference

# test_browser.py's fixtures, used here under the same names: its folder, its Jupyter server, its chromium
server, browser, open_page = test_browser.server, test_browser.browser, test_browser.open_page

pytestmark = pytest.mark.serial        # a live browser: after the grading tests, beside other browsers only
INF = math.inf
VALUE = {1: '+1', 0: '0', -1: '−1'}


def said(page):
    return ' '.join(page.locator('.nac-step-text').first.inner_text().split())


def lines(page):
    return [' '.join(text.split()) for text in page.locator('.nac-step-tree .nac-step-line').all_inner_texts()]


def counts(page):
    return ' '.join(page.locator('.nac-step-counts').first.inner_text().split())


PRESS_TIMEOUT = 120_000     # ms: a button stays disabled while the kernel searches, which a busy machine slows


def press(page, css_class, then):
    """Click the panel's button (once enabled) and wait until ``then`` (a JS expression over the panel's texts)
    holds."""
    page.locator(f'.nac-step-panel .{css_class}').first.click(timeout=PRESS_TIMEOUT)
    page.wait_for_function(f"""() => {{
        const text = (name) => (document.querySelector('.nac-step-panel .' + name) || {{}}).textContent || '';
        return {then};
    }}""", timeout=PRESS_TIMEOUT)


def visited_is(count):
    return f"/^\\s*{count:,} positions visited so far/.test(text('nac-step-counts'))"


def step_index_is(index):
    return f"/· step {index}( |$)/.test(text('nac-step-counts'))"


PANEL_READY = """() => /^Press Step/.test(
    ((document.querySelector('.nac-step-panel .nac-step-text') || {}).textContent || '').trim())"""


def open_panel(page, server, name, label):
    """The workbook open, every cell run (`open_notebook`), and the step panel ready."""
    open_notebook(page, server, f'{server.base}/lab/tree/{name}?reset&token={server.token}', label)
    page.wait_for_function(PANEL_READY, timeout=30_000)
    page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
    page.locator('.nac-step-panel').first.scroll_into_view_if_needed()


def after(board, player, path):
    for move in path:
        board, player = oracle.place(board, *move, player), oracle.other(player)
    return board, player


def save_pictures(page, name):
    """The step panel as the screen shows it (artifacts, and docs/images when NAC_STEP_SCREENSHOTS is set)."""
    page.evaluate("() => document.querySelector('.nac-step-panel').scrollIntoView({block: 'start'})")
    page.wait_for_timeout(300)
    page.screenshot(path=str(ARTIFACTS / f'{name}.png'))
    folder = os.environ.get('NAC_STEP_SCREENSHOTS')
    if folder:
        page.screenshot(path=os.path.join(folder, f'{name}.png'))


def test_alpha_beta_steps_back_play_orders_and_predictions(server, open_page):
    page = open_page(1280, 720)
    open_panel(page, server, 'alpha_beta.ipynb', 'steps-alpha-beta')
    reference = Reference(True, 'listed', 2)
    reference.search(oracle.EMPTY_BOARD, 'x')

    # Step 1: the start is entered with the full window; its nine moves wait.
    press(page, 'nac-step', visited_is(1))
    assert said(page) == ('x to move at the start, window (α −∞, β +∞): 9 moves to try '
                          '(0,0, 0,1, 0,2, 1,0, 1,1, 1,2, 2,0, 2,1, 2,2).')
    assert lines(page) == ['start · x to move · best so far – · α −∞, β +∞'] + \
        [f'{row},{col} · o to move · not yet' for row, col in oracle.empty_cells(oracle.EMPTY_BOARD)]
    # Step 2: x's first move is entered; step 3: o's first answer is searched below the live depth at once.
    press(page, 'nac-step', visited_is(2))
    assert said(page).startswith('o to move after 0,0, window (α −∞, β +∞): 8 moves to try')
    (path, value), = reference.backed[:1]
    board, player = after(oracle.EMPTY_BOARD, 'x', path)
    value_check, below = analysis.alphabeta_visits(board, player, -INF, INF)
    assert value_check == value and path == ((0, 0), (0, 1))
    press(page, 'nac-step', visited_is(2 + below))
    assert said(page) == (f'x to move after 0,0 then 0,1: searched below in one step ({below:,} positions): '
                          f'{VALUE[value]}, so {VALUE[value]} backs up; o\'s best so far: {VALUE[value]} '
                          f'(α −∞, β {VALUE[value]}).')
    assert f'0,1 · x to move = {VALUE[value]} (searched at once, {below:,} positions)' in lines(page)
    assert lines(page)[1] == f'0,0 · o to move · best so far {VALUE[value]} · α −∞, β {VALUE[value]}'
    # Back: the outline and the text are those of step 2 again.
    press(page, 'nac-back', visited_is(2))
    assert said(page).startswith('o to move after 0,0') and '0,1 · x to move · not yet' in lines(page)

    # Play at the speed slider's pace, then Pause: the steps move on by themselves, and stop.
    press(page, 'nac-step-play', step_index_is(5))
    page.locator('.nac-step-panel .nac-step-pause').first.click()
    page.wait_for_function("() => document.querySelector('.nac-step-panel .nac-step-play').disabled === false")
    stopped = counts(page)
    page.wait_for_timeout(1500)
    assert counts(page) == stopped, 'a step was taken after Pause'

    # Run to end: the value, the values backed up to the start's moves, the cuts there, the counts.
    press(page, 'nac-step-end', f"/{reference.visited:,} positions visited/.test(text('nac-step-counts'))")
    assert analysis.alphabeta_visits(oracle.EMPTY_BOARD, 'x')[1] == reference.visited == 18297
    assert said(page).startswith(f'The search is over: the value here is 0, best move 0,0. {reference.visited:,}')
    shown = lines(page)
    assert shown[0] == 'start · x to move = 0 (the value here)'
    for path, value in reference.backed:
        if len(path) == 1:
            assert any(line.startswith(f'{path[0][0]},{path[0][1]} · o to move = {VALUE[value]} ')
                       for line in shown), shown
    assert f'{reference.pruned:,} subtrees pruned' in counts(page)
    assert f'Plain minimax visits {oracle.search_tree_size(oracle.EMPTY_BOARD, "x"):,} positions here' in counts(page)
    save_pictures(page, 'steps-alpha-beta-1280x720')

    # The move-order switch: best first prunes more, worst first less; the counts follow the reference.
    for label, order in (('best first', 'best'), ('worst first', 'worst')):
        page.locator('.nac-step-order button', has_text=label).first.click()
        page.wait_for_function("() => /Press Step/.test(document.querySelector('.nac-step-text').textContent) ||"
                               " document.querySelector('.nac-step-tree').textContent === ''", timeout=30_000)
        each = Reference(True, order, 2)
        each.search(oracle.EMPTY_BOARD, 'x')
        press(page, 'nac-step-end', f"/{each.visited:,} positions visited/.test(text('nac-step-counts'))")
        assert f'{each.pruned:,} subtrees pruned' in counts(page)
        assert lines(page)[0] == 'start · x to move = 0 (the value here)'
    assert not widget_errors(page), widget_errors(page)


def test_minimax_steps_and_predictions_in_the_first_workbook(server, open_page):
    page = open_page(1280, 720)
    open_panel(page, server, 'noughts_and_crosses.ipynb', 'steps-minimax')
    assert not page.locator('.nac-step-order').first.is_visible(), 'no move orders without alphabeta'
    page.locator('.nac-cell-1-1').first.click()           # x in the centre; the AI answers as o
    page.wait_for_function("() => [...document.querySelectorAll('.nac-cell')].filter(b => b.textContent.trim())"
                           ".length === 2", timeout=30_000)
    board = oracle.nested(''.join(page.locator(f'.nac-cell-{r}-{c}').first.inner_text().strip() or ' '
                                  for r in range(3) for c in range(3)))
    reference = Reference(False, 'listed', 2)
    value = reference.search(board, 'x')
    page.locator('.nac-step-panel').first.scroll_into_view_if_needed()

    # Predict, then reveal: the third Step asks for the first value to back up (o's first answer to x's first move,
    # searched below the live depth), and waits for it.
    page.locator('.nac-predict input').first.check()
    press(page, 'nac-step', visited_is(1))
    press(page, 'nac-step', visited_is(2))
    (path, right), = reference.backed[:1]
    press(page, 'nac-step', "/^Predict:/.test(text('nac-step-text').trim())")
    where = ' then '.join(f'{row},{col}' for row, col in path)
    assert said(page) == (f'Predict: the board drawn (after {where}), x to move: what value backs up from it? '
                          'Press −1, 0 or +1.')
    assert any(line.endswith('= ? (predict: −1, 0 or +1)') for line in lines(page)), lines(page)
    page.locator('.nac-step-panel .nac-step').first.click()
    page.wait_for_timeout(500)
    assert said(page).startswith('Predict:') and counts(page).endswith('step 2'), 'Step waits for the prediction'
    guess = {1: 'nac-guess-1', 0: 'nac-guess-0', -1: 'nac-guess-minus'}[right]
    press(page, guess, "/1 of 1 predicted right/.test(text('nac-tally'))")
    # the answer alone, with its reason (a value's reason starts with the value), the step taken: no question
    assert said(page).startswith(f'You said {VALUE[right]}: right. {VALUE[right]}: ') and 'Predict' not in said(page)
    assert counts(page).endswith('step 3'), counts(page)
    save_pictures(page, 'steps-predict-1280x720')
    (path, _value), = reference.backed[1:2]            # then, at the next Step, the next question, Step waiting
    press(page, 'nac-step', "/^Predict:/.test(text('nac-step-text').trim())")
    where = ' then '.join(f'{row},{col}' for row, col in path)
    assert said(page).startswith(f'Predict: the board drawn (after {where}), x to move: what value backs up')
    assert counts(page).endswith('step 3') and 'You said' not in said(page)

    # Run to end (predictions are skipped): the reference's value and visited count.
    press(page, 'nac-step-end', f"/{reference.visited:,} positions visited/.test(text('nac-step-counts'))")
    assert reference.visited == oracle.search_tree_size(board, 'x')
    assert lines(page)[0] == f'start · x to move = {VALUE[value]} (the value here)'
    assert 'subtrees pruned' not in counts(page)
    assert not widget_errors(page), widget_errors(page)


def test_step_panel_at_150_percent(server, open_page):
    """At 1280x720 and 150% zoom the panel's buttons are on screen and usable, its text at least 16 CSS px."""
    page = open_page(1280, 720, zoom=1.5)
    open_panel(page, server, 'alpha_beta.ipynb', 'steps-150pct')
    started = time.perf_counter()
    press(page, 'nac-step', visited_is(1))
    press(page, 'nac-step', visited_is(2))
    print(f'two steps at 150%: {time.perf_counter() - started:.2f} s')
    sizes = page.evaluate("""() => [...document.querySelectorAll(
        '.nac-step-line, .nac-step-text .widget-html-content, .nac-step-counts .widget-html-content')]
        .map(e => parseFloat(getComputedStyle(e).fontSize))""")
    assert sizes and min(sizes) >= 16, sizes
    for css in ('nac-step', 'nac-back', 'nac-step-play', 'nac-step-pause', 'nac-step-end', 'nac-step-restart'):
        box = page.locator(f'.nac-step-panel .{css}').first.bounding_box()
        assert box and box['height'] >= 28 and box['width'] >= 40, (css, box)
    save_pictures(page, 'steps-alpha-beta-1280x720-150pct')
    assert not widget_errors(page), widget_errors(page)
