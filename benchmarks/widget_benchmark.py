"""How fast is the classroom widget with the notebook's reference functions?

    python benchmarks/widget_benchmark.py

Prints the time to compute and draw (to PNG) the depth-1, -2 and -3 trees of the empty board and of a
mid-game position, "cold" (fresh reference functions, so their own memo is empty, and an empty widget
cache) and "warm" (everything remembered), and the time of a whole perfect game with no pause between moves.
"""
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
NOTEBOOK = ROOT / 'source' / 'noughts_and_crosses' / 'noughts_and_crosses.ipynb'
NAMES = ('print_state', 'score_end', 'play', 'moves', 'score')
MID_GAME = (('x', ' ', 'o'), (' ', 'x', ' '), (' ', ' ', ' '))   # o to move


def reference_functions():
    """The notebook's solution cells, executed in order in a fresh namespace (a fresh memo each time)."""
    notebook = json.loads(NOTEBOOK.read_text())
    namespace = {'__name__': 'reference_solutions'}
    for cell in notebook['cells']:
        if cell['cell_type'] == 'code' and cell.get('metadata', {}).get('nbgrader', {}).get('solution'):
            exec(compile(''.join(cell['source']), str(NOTEBOOK), 'exec'), namespace)
    return {name: namespace[name] for name in NAMES}


def main():
    os.environ.pop('NBGRADER_EXECUTION', None)
    from coursetools.widget import GameTreeWidget, draw_tree, figure_png
    figure_png(draw_tree(GameTreeWidget(**reference_functions(), tree=False).tree(depth=1)))   # import matplotlib

    print(f'{"position":<10} {"depth":>5} {"cold s":>8} {"warm s":>8} {"nodes":>6} {"positions searched (cold)":>26}')
    for name, board, player in [('empty', None, 'x'), ('mid-game', MID_GAME, 'o')]:
        for depth in (1, 2, 3):
            widget = GameTreeWidget(**reference_functions(), tree=False, state=board)
            widget.wait()
            state = widget.state
            start = time.perf_counter()
            tree = widget.tree(state, player, depth)
            figure_png(draw_tree(tree))
            cold = time.perf_counter() - start
            start = time.perf_counter()
            figure_png(draw_tree(widget.tree(state, player, depth)))
            warm = time.perf_counter() - start
            print(f'{name:<10} {depth:>5} {cold:>8.3f} {warm:>8.3f} {len(tree.nodes()):>6} {tree.counts["positions"]:>26}')
            widget.close()

    for label, kwargs in [('cold, tree not drawn', dict(tree=False)), ('cold, depth-2 tree drawn each move', dict(tree=True, depth=2))]:
        widget = GameTreeWidget(**reference_functions(), **kwargs)
        widget.wait()
        start = time.perf_counter()
        widget.perfect_game(pace=0)
        widget.wait()
        elapsed = time.perf_counter() - start
        print(f'perfect game from the empty board, pace 0, {label}: {elapsed:.3f} s '
              f'({len(widget.history) - 1} moves, result {widget.status.value.split("Game over: ")[-1].split(".")[0]})')
        widget.close()


if __name__ == '__main__':
    main()
