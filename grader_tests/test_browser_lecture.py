"""Stepping in a lecture hall (issue 44), in a real browser: JupyterLab at 1280x720, at 100 % and 150 % zoom, the
alpha_beta workbook's widget with its tree on. After each of the first 30 steps of minimax from the empty board,
at step 60, and at the first cut of alpha-beta, the board of the current step and the outline's current line must be inside
the window, without the lecturer scrolling: on screen, inside the notebook's scrolling area and (the line) inside
the outline's own box. The board must show the position the step's path reaches, numbered move by move.

The folder, the Jupyter server and the browser are test_browser.py's."""
import pytest

from coursetools.game import oracle
import test_browser
from test_browser import ARTIFACTS, widget_errors
from test_browser_steps import open_panel, press, said, step_index_is

server, browser, open_page = test_browser.server, test_browser.browser, test_browser.open_page
pytestmark = pytest.mark.serial

# Whether the board and the current line are seen: inside the window, the scrolling area and (the line) its box.
IN_VIEW = """() => {
    const panel = document.querySelector('.nac-step-panel');
    const board = panel && panel.querySelector('.nac-step-board');
    const line = panel && (panel.querySelector('.nac-step-asking') || panel.querySelector('.nac-step-current'));
    if (!board || !line) return false;
    let port = {top: 0, bottom: innerHeight};
    for (let up = panel.parentElement; up && up !== document.body; up = up.parentElement) {
        const s = getComputedStyle(up);
        if (/(auto|scroll)/.test(s.overflowY) && up.scrollHeight > up.clientHeight + 1) {
            port = up.getBoundingClientRect(); break;
        }
    }
    const top = Math.max(0, port.top) - 1, bottom = Math.min(innerHeight, port.bottom) + 1;
    const seen = (r, t, b) => r.height > 0 && r.top >= t && r.bottom <= b;
    const box = panel.querySelector('.nac-step-tree').getBoundingClientRect();
    const l = line.getBoundingClientRect();
    return seen(board.getBoundingClientRect(), top, bottom) && seen(l, top, bottom) &&
        seen(l, box.top - 1, box.bottom + 1);
}"""

WHERE = """() => {
    const b = document.querySelector('.nac-step-panel .nac-step-board');
    const numbers = [...b.querySelectorAll('.nac-move-number')].map(t => [t.dataset.move, Number(t.textContent)]);
    return {path: b.dataset.path, player: b.dataset.player, state: b.dataset.state, numbers};
}"""


def check_in_view(page, label):
    try:
        page.wait_for_function(IN_VIEW, timeout=3000)
    except Exception:
        page.screenshot(path=str(ARTIFACTS / f'{label}-out-of-view.png'))
        raise AssertionError(f'{label}: the board or the current line is out of view') from None


def check_board(page, label):
    """The board drawn is the position its path reaches from the empty board, the moves numbered in order."""
    shown = page.evaluate(WHERE)
    path = [tuple(int(n) for n in move.split(',')) for move in shown['path'].split(';') if move]
    board, player = oracle.EMPTY_BOARD, 'x'
    for move in path:
        board, player = oracle.place(board, *move, player), oracle.other(player)
    assert shown['state'] == oracle.flat(board) and shown['player'] == player, (label, shown)
    assert sorted(shown['numbers']) == sorted([f'{r},{c}', k] for k, (r, c) in enumerate(path, 1)), (label, shown)


@pytest.mark.parametrize('zoom', [1.0, 1.5])
def test_the_current_step_stays_in_view(server, open_page, zoom):
    page = open_page(1280, 720, zoom=zoom)
    label = f'lecture-steps-{zoom * 100:.0f}pct'
    open_panel(page, server, 'alpha_beta.ipynb', label)
    page.locator('.nac-step-kind button', has_text='minimax').first.click()
    page.wait_for_function("() => /Press Step/.test(document.querySelector('.nac-step-text').textContent) || "
                           "document.querySelector('.nac-step-tree').textContent === ''", timeout=30_000)
    for index in range(1, 31):
        press(page, 'nac-step', step_index_is(index))
        check_in_view(page, f'{label}-step-{index}')
        check_board(page, f'{label}-step-{index}')
    page.screenshot(path=str(ARTIFACTS / f'{label}-step-30.png'))
    for index in range(31, 61):          # the step where the current line once fell below the window
        press(page, 'nac-step', step_index_is(index))
    check_in_view(page, f'{label}-step-60')
    check_board(page, f'{label}-step-60')

    page.locator('.nac-step-kind button', has_text='α-β').first.click()
    page.wait_for_function("() => /Press Step/.test(document.querySelector('.nac-step-text').textContent) || "
                           "document.querySelector('.nac-step-tree').textContent === ''", timeout=30_000)
    for index in range(1, 120):
        press(page, 'nac-step', step_index_is(index))
        if said(page).startswith('Cut '):
            break
    else:
        raise AssertionError(f'{label}: no cut in 120 steps')
    check_in_view(page, f'{label}-cut')
    check_board(page, f'{label}-cut')
    assert page.locator('.nac-step-panel .nac-step-pruned').count() > 0
    assert page.locator('.nac-tree svg .nac-pruned').count() > 0, 'the cut greys the tree at its step'
    page.screenshot(path=str(ARTIFACTS / f'{label}-cut.png'))
    assert not widget_errors(page), widget_errors(page)
