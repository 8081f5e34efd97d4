"""How fast is the classroom widget with the workbook's functions and a plain (unmemoized) minimax as score?

    python benchmarks/widget_benchmark.py

The widget is imported as the notebook imports it: coursetools/widget/ copied to a temporary folder as
minimax_widget/. "Cold" means fresh functions and a fresh widget cache for every measurement. It prints:

* the time to build and draw (to SVG, for a 760-px view) the depth-2 and depth-3 trees from every position with at
  most four marks and a sample of the others: median, 95th percentile, the worst and where (targets: 0.3 s, 1 s);
  then depth 2 with memoize off (every call reaches score: the classroom demonstration of a plain search);
* the same through a whole widget (its background thread and its tree view), from the empty board;
* counting the positions a plain and a memoized minimax visit from the empty board;
* a whole perfect game with no pause, with and without the tree drawn after every move;
* the notebook's widget cell under nbgrader (NBGRADER_EXECUTION set), in a fresh interpreter;
* the step panel: the kernel time of every Step (the search's next event and the panel redrawn) through the whole
  search from mid-game positions and from the empty board, minimax and alpha-beta in each move order (bar: 0.1 s).
"""
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
NOTEBOOK = ROOT / 'source' / 'noughts_and_crosses' / 'noughts_and_crosses.ipynb'
NAMES = ('print_state', 'score_end', 'play', 'moves', 'score')
PLAIN_SCORE = '''
def score(state, player):
    end = score_end(state)
    if end is not None:
        return end, None
    opponent = 'o' if player == 'x' else 'x'
    options = [(score(play(state, row, col, player), opponent)[0], (row, col)) for row, col in moves(state)]
    return (max if player == 'x' else min)(options, key=lambda option: option[0])
'''
TARGETS = {2: 0.3, 3: 1.0}
STEP_TARGET = 0.1
ALPHABETA = '''
def alphabeta(state, player, alpha, beta):
    return score(state, player)
'''


def fresh_functions():
    """The workbook's solution cells and a plain minimax, executed in a fresh namespace, as a notebook would."""
    namespace = {'__name__': 'notebook'}
    for cell in json.loads(NOTEBOOK.read_text())['cells']:
        if cell['cell_type'] == 'code' and cell.get('metadata', {}).get('nbgrader', {}).get('solution'):
            exec(compile(''.join(cell['source']), str(NOTEBOOK), 'exec'), namespace)
    exec(compile(PLAIN_SCORE, 'score', 'exec'), namespace)
    return {name: namespace[name] for name in NAMES}


def shipped_widget(folder):
    """Import the package as the notebook does: minimax_widget/ in a folder of its own."""
    shutil.copytree(ROOT / 'coursetools' / 'widget', Path(folder) / 'minimax_widget',
                    ignore=shutil.ignore_patterns('__pycache__'))
    sys.path.insert(0, str(folder))
    import minimax_widget
    return minimax_widget


def positions():
    """Every unfinished position with at most four marks (the costly ones) and 300 others."""
    from coursetools.game import oracle
    open_positions = [board for board in oracle.reachable_positions() if oracle.outcome(board) is None]
    early = [board for board in open_positions if sum(cell != ' ' for row in board for cell in row) <= 4]
    late = [board for board in open_positions if sum(cell != ' ' for row in board for cell in row) > 4]
    return early + random.Random(1).sample(late, 300)


def tree_times():
    from minimax_widget.calls import FunctionCaller
    from minimax_widget.drawing import draw_tree
    from minimax_widget.model import build_tree, side_to_move
    boards = positions()
    print(f'Build and draw a tree, cold, from {len(boards)} positions (every one with at most four marks, '
          f'and 300 others):')
    print(f'{"depth":>5} {"median s":>9} {"95% s":>8} {"worst s":>8}  worst position{"":>19} target')
    for depth in (2, 3):
        times = []
        for board in boards:
            call = FunctionCaller(fresh_functions())
            start = time.perf_counter()
            tree = build_tree(call, board, side_to_move(board), depth)
            draw_tree(tree, 760)
            times.append((time.perf_counter() - start, board))
        seconds = sorted(t for t, _ in times)
        worst, where = max(times)
        flat = ''.join(''.join(row) for row in where).replace(' ', '.')
        print(f'{depth:>5} {statistics.median(seconds):>9.3f} {seconds[int(0.95 * len(seconds))]:>8.3f} '
              f'{worst:>8.3f}  {flat:<33} {"met" if worst <= TARGETS[depth] else "MISSED"} (<= {TARGETS[depth]} s)')
    print('(memoize on, the default: the widget remembers score\'s recursive calls, so each position is searched once)')
    for cells in ('xo x o   ', '         '):
        board = tuple(tuple(cells[row * 3:row * 3 + 3]) for row in range(3))
        call = FunctionCaller(fresh_functions(), memoize=False)
        start = time.perf_counter()
        tree = build_tree(call, board, side_to_move(board), 2)
        draw_tree(tree, 760)
        print(f'memoize off, depth 2 from {cells.replace(" ", "."):<9}: {time.perf_counter() - start:.2f} s, '
              f'{call.calls["score"]:,} calls of score')


def widget_times(package):
    print('\nThrough the widget (background thread, tree view, counts), cold, from the empty board:')
    for depth in (1, 2, 3):
        start = time.perf_counter()
        widget = package.GameTreeWidget(**fresh_functions(), depth=depth)
        widget.wait(120)
        elapsed = time.perf_counter() - start
        tree = widget.last_tree
        print(f'  depth {depth}: tree shown and counted {elapsed:.3f} s (building it {tree.counts["seconds"]:.3f} s, '
              f'{tree.counts["score_calls"]:,} calls reached score, {len(widget.last_drawing.svg):,} bytes of SVG); '
              f'plain minimax {tree.search["plain"]:,} positions, memoized {tree.search["distinct"]:,}')
        widget.close()
    from minimax_widget.calls import FunctionCaller
    from minimax_widget.model import EMPTY_STATE, PositionGraph
    start = time.perf_counter()
    counts = PositionGraph().counts(FunctionCaller(fresh_functions()), EMPTY_STATE, 'x')
    print(f'  counting alone: {time.perf_counter() - start:.3f} s for {counts}')
    for label, options in [('tree not drawn', dict(tree=False)),
                           ('depth-2 tree drawn after every move (answers remembered from the first tree)', {})]:
        widget = package.GameTreeWidget(**fresh_functions(), **options)
        widget.wait(120)
        start = time.perf_counter()
        widget.perfect_game(pace=0)
        widget.wait(120)
        turn = widget.status.value.split('</div>')[0].split('>')[-1]
        print(f'  perfect game from the empty board, pace 0, {label}: {time.perf_counter() - start:.3f} s '
              f'({len(widget.history) - 1} moves; {turn})')
        widget.close()


def step_times(package):
    """Every Step of a whole search, timed as the kernel spends it: the job of the step panel run on this thread
    (the search's next event, the outline, the texts and the buttons written to the widgets)."""
    print(f'\nStepping through the whole search (kernel time per Step, bar {STEP_TARGET} s), fresh widget each:')
    print(f'{"from":<10} {"search":<22} {"live depth":>10} {"steps":>6} {"median ms":>10} {"95% ms":>7} '
          f'{"worst ms":>9}  worst step  bar')
    namespace = fresh_functions()
    exec(compile(ALPHABETA, 'alphabeta', 'exec'), namespace)
    for cells in ('x...o....', 'xo..x....', '.........'):
        board = tuple(tuple(cells[row * 3:row * 3 + 3].replace('.', ' ')) for row in range(3))
        for kind, order in [('minimax', 'listed'), ('alphabeta', 'listed'), ('alphabeta', 'best'),
                            ('alphabeta', 'worst')]:
            for depth in ((2, 4) if cells != '.........' else (2,)):
                widget = package.GameTreeWidget(**fresh_functions(), alphabeta=namespace['alphabeta'], tree=False,
                                                state=board, live_depth=depth)
                widget.wait(60)
                panel = widget.steps
                panel.ui.kind.value, panel.ui.order.value = kind, order
                widget.wait(60)
                times = []
                while not panel.ui.step.disabled:
                    start = time.perf_counter()
                    panel._step_job()
                    times.append((time.perf_counter() - start, panel.steps[panel.index - 1].kind))
                ms = sorted(t * 1000 for t, _ in times)
                worst, what = max(times)
                label = kind if kind == 'minimax' else f'alpha-beta, {order}'
                print(f'{cells:<10} {label:<22} {depth:>10} {len(times):>6} {statistics.median(ms):>10.2f} '
                      f'{ms[int(0.95 * len(ms))]:>7.2f} {worst * 1000:>9.1f}  {what:<10}  '
                      f'{"met" if worst <= STEP_TARGET else "MISSED"}')
                widget.close()
    print('(the widget prepares each position shown in the background first: the values that order the moves and '
          'the counts shown at the end)')
    for cells in ('x...o....', '.........'):
        board = tuple(tuple(cells[row * 3:row * 3 + 3].replace('.', ' ')) for row in range(3))
        widget = package.GameTreeWidget(**fresh_functions(), alphabeta=namespace['alphabeta'], tree=False, state=board)
        widget.wait(60)
        panel = widget.steps
        panel.call.cache.clear()
        panel.tables.clear()
        panel.searches.clear()
        start = time.perf_counter()
        panel._warm_job()
        print(f'  preparing {cells}, cold: {time.perf_counter() - start:.3f} s (background thread)')
        widget.close()


def grading_time(folder):
    script = ('import sys, time\nstarted = time.perf_counter()\nfrom minimax_widget import GameTreeWidget\n'
              'repr(GameTreeWidget(print_state=None, score_end=None, play=None, moves=None, score=None))\n'
              'print(f"{time.perf_counter() - started:.4f}", "ipywidgets" in sys.modules, "anywidget" in sys.modules)')
    env = dict(os.environ, NBGRADER_EXECUTION='autograde', PYTHONPATH='')
    out = subprocess.run([sys.executable, '-c', script], cwd=folder, env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    print(f'\nThe widget cell under nbgrader: {float(out[0]):.4f} s; ipywidgets imported: {out[1]}, '
          f'anywidget imported: {out[2]}')


def main():
    os.environ.pop('NBGRADER_EXECUTION', None)
    with tempfile.TemporaryDirectory() as folder:
        package = shipped_widget(folder)
        tree_times()
        widget_times(package)
        grading_time(folder)
        step_times(package)


if __name__ == '__main__':
    main()
