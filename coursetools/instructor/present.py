"""`make present`: the game-tree widget alone on a page, for a projector.

It writes .present/<assignment>/present.ipynb, a notebook of the workbook's given cells and the instructor's
solutions (their output hidden) and one widget cell in lecture mode with the keys on, copies the widget package
beside it as minimax_widget/, and serves it with Voilà, which shows a notebook's outputs only, as a page of its
own: no code, no notebook around it. Keys on that page: → or s Step, ← or b Back, space Play/Pause, e Run to end,
r Restart, n New game, -, 0, + a prediction.

    python -m coursetools.instructor.present [ASSIGNMENT] [--port 8866] [--no-browser]
"""
import argparse
import os
import shutil
import sys
from pathlib import Path

import nbformat

import coursetools
from coursetools.grading.course import Course

GIVEN_CELLS = {'helpers', 'given', 'count-calls', 'symmetry-helpers'}   # cells the solutions build on
WIDGET_CELL = """from minimax_widget import GameTreeWidget

GameTreeWidget(print_state=print_state, score_end=score_end, play=play, moves=moves, score=score,
               alphabeta=globals().get('alphabeta'), lecture=True, keys=True, tree={tree}, live_depth=2)"""
PAGE_STYLE = """from IPython.display import HTML

HTML('<style>body {{ margin: 0; }} .jp-OutputArea-output {{ padding: 12px 24px; }}'
     '.nac-widget {{ max-width: 1880px; }}</style>'
     '<div style="font-size:22px;font-weight:bold;margin:8px 24px 0">{title}</div>')"""


def definitions(source):
    """The code cells of the workbook that define its functions: the given ones and every solution cell."""
    cells = []
    for cell in nbformat.read(source, as_version=4).cells:
        meta = cell.metadata.get('nbgrader', {})
        if cell.cell_type == 'code' and (meta.get('solution') or cell.get('id') in GIVEN_CELLS
                                         or meta.get('grade_id') in GIVEN_CELLS):
            cells.append(cell.source)
    return cells


def build(course, assignment, tree=False):
    """Write .present/<assignment>/ (the notebook and the widget beside it); return the notebook's path."""
    source = course.root / 'source' / assignment / f'{assignment}.ipynb'
    if not source.is_file():
        raise SystemExit(f'make present: no workbook {source}; assignments: {", ".join(course.assignments())}')
    folder = course.root / '.present' / assignment
    folder.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(folder / 'minimax_widget', ignore_errors=True)
    shutil.copytree(Path(coursetools.__file__).parent / 'widget', folder / 'minimax_widget',
                    ignore=shutil.ignore_patterns('__pycache__', '*.pyc'))
    title = assignment.replace('_', ' ').capitalize() + ': the search, step by step'
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell('%%capture\n' + '\n\n'.join(definitions(source))),
                      nbformat.v4.new_code_cell(PAGE_STYLE.format(title=title)),
                      nbformat.v4.new_code_cell(WIDGET_CELL.format(tree=tree))]
    notebook.metadata['kernelspec'] = {'name': 'python3', 'display_name': 'Python 3', 'language': 'python'}
    path = folder / 'present.ipynb'
    nbformat.write(notebook, path)
    return path


def voila_command(notebook, port, browser):
    """Voilà serving ``notebook`` alone on this machine, its code hidden."""
    return [sys.executable, '-m', 'voila', str(notebook), f'--port={port}', '--Voila.ip=127.0.0.1',
            '--theme=light', '--strip_sources=True', *([] if browser else ['--no-browser'])]


def main(argv=None):
    parser = argparse.ArgumentParser(description='The game-tree widget alone on a page, for a projector (Voilà).')
    parser.add_argument('assignment', nargs='?', default='noughts_and_crosses')
    parser.add_argument('--port', type=int, default=8866)
    parser.add_argument('--no-browser', action='store_true', help='serve the page without opening a browser')
    parser.add_argument('--tree', action='store_true', help='draw the search tree above the step panel too')
    args = parser.parse_args(argv)
    os.environ.pop('NBGRADER_EXECUTION', None)
    notebook = build(Course.at(), args.assignment, args.tree)
    command = voila_command(notebook, args.port, not args.no_browser)
    print(f'make present: http://127.0.0.1:{args.port}/ shows {notebook.relative_to(Course.at().root)} '
          f'(Ctrl-C to stop)', flush=True)
    os.execv(command[0], command)   # Voilà takes this process's place: Ctrl-C stops it


if __name__ == '__main__':
    main()
