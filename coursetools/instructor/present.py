"""`make present`: the game-tree widget alone on a page, for a projector.

It writes .present/<assignment>/present.ipynb, a notebook of the workbook's given cells and the instructor's
solutions (their output hidden) and one widget cell in lecture mode with the keys on, copies the widget package
beside it as minimax_widget/, and serves it with Voilà, which shows a notebook's outputs only, as a page of its
own: no code, no notebook around it. Keys on that page: → or s Step, ← or b Back, space Play/Pause, e Run to end,
r Restart, n New game, -, 0, + a prediction.

With --notebook PATH the functions come from that notebook instead (a student's, say): its given and solution
cells as they are, and the definitions (def, class, import, plain assignments) of its other code cells; its test
cells, widget cells and calls are left out. That code runs in the grading sandbox, a kernel per page
(present_kernels.py); --unsandboxed runs it with the lecturer's own rights instead.

The page requests nothing from another machine (the template nac-present drops Voilà's two links to a CDN). The
kernel of a page that is closed or reloaded is shut down at the page's request as it unloads (the template makes
the _xsrf cookie that request quotes, which Voilà 0.5 never sets); one whose page could not ask (a browser that
crashed) goes by culling: no page connected and idle for CULL_IDLE seconds.

    python -m coursetools.instructor.present [ASSIGNMENT] [--notebook PATH] [--port 8866] [--no-browser] [--no-tree]
                                             [--cull-idle SECONDS]
"""
import argparse
import ast
import hashlib
import os
import shutil
import sys
from pathlib import Path

import nbformat

import coursetools
from coursetools.grading.course import Course
from coursetools.sandbox.host import bubblewrap as sbx

GIVEN_CELLS = {'helpers', 'given', 'count-calls', 'symmetry-helpers'}   # cells the solutions build on
WIDGET_CELL = """from minimax_widget import GameTreeWidget

GameTreeWidget(print_state=print_state, score_end=score_end, play=play, moves=moves, score=score,
               alphabeta=globals().get('alphabeta'), lecture=True, keys=True, tree={tree}, live_depth=2,
               presenter=True, title={title!r})"""
PAGE_STYLE = """from IPython.display import HTML

HTML('<style>body {{ margin: 0; overflow: hidden; }}</style>')"""   # the widget fills the window (presenter.py)
TEMPLATES = Path(__file__).resolve().parent / 'present_page'    # on JUPYTER_PATH: voila/templates/nac-present/
TEMPLATE = 'nac-present'
CULL_IDLE, CULL_INTERVAL = 60, 15     # seconds: a kernel with no page, idle this long, goes at the next check
SANDBOXED = 'coursetools.instructor.present_kernels.SandboxedPresentKernelManager'
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)


def _is_widget_cell(source):
    return 'GameTreeWidget' in source or 'minimax_widget' in source


def _definitions_only(source):
    """The top-level definitions of a cell the workbook does not mark: functions, classes, imports and
    assignments that call nothing; None when there are none (or it is not plain Python)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    kept = [node for node in tree.body if isinstance(node, DEFINITIONS) or (
        isinstance(node, (ast.Assign, ast.AnnAssign)) and not any(isinstance(n, ast.Call) for n in ast.walk(node)))]
    return '\n\n'.join(ast.get_source_segment(source, node) for node in kept) or None


def definitions(source, own_cells=False):
    """The code cells that define the workbook's functions: the given ones and every solution cell, and with
    ``own_cells`` the definitions of cells without nbgrader marks (a student's own helpers)."""
    cells = []
    for cell in nbformat.read(source, as_version=4).cells:
        meta = cell.metadata.get('nbgrader', {})
        if cell.cell_type != 'code' or _is_widget_cell(cell.source):
            continue
        if meta.get('solution') or cell.get('id') in GIVEN_CELLS or meta.get('grade_id') in GIVEN_CELLS:
            cells.append(cell.source)
        elif own_cells and not meta.get('grade') and not meta.get('locked'):
            kept = _definitions_only(cell.source)
            if kept:
                cells.append(kept)
    return cells


def build(course, assignment, tree=True, notebook=None):
    """Write .present/<assignment>/ (or .present/notebook-<hash>/ for ``notebook``): the page's notebook and the
    widget beside it; return the notebook's path."""
    if notebook is None:
        source = course.root / 'source' / assignment / f'{assignment}.ipynb'
        if not source.is_file():
            raise SystemExit(f'make present: no workbook {source}; assignments: {", ".join(course.assignments())}')
        folder = course.root / '.present' / assignment
        title = assignment.replace('_', ' ').capitalize()
    else:
        source = Path(notebook).resolve()
        if not source.is_file():
            raise SystemExit(f'make present: no notebook {notebook}')
        folder = course.root / '.present' / f'notebook-{hashlib.sha1(str(source).encode()).hexdigest()[:10]}'
        title = source.name    # the file's name only: no student's folder shown
    folder.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(folder / 'minimax_widget', ignore_errors=True)
    shutil.copytree(Path(coursetools.__file__).parent / 'widget', folder / 'minimax_widget',
                    ignore=shutil.ignore_patterns('__pycache__', '*.pyc'))
    page = nbformat.v4.new_notebook()
    page.cells = [nbformat.v4.new_code_cell('%%capture\n' + '\n\n'.join(definitions(source, notebook is not None))),
                  nbformat.v4.new_code_cell(PAGE_STYLE.format()),
                  nbformat.v4.new_code_cell(WIDGET_CELL.format(tree=tree, title=title))]
    page.metadata['kernelspec'] = {'name': 'python3', 'display_name': 'Python 3', 'language': 'python'}
    path = folder / 'present.ipynb'
    nbformat.write(page, path)
    return path


def voila_command(notebook, port, browser, cull_idle=CULL_IDLE, sandboxed=False):
    """Voilà serving ``notebook`` alone on this machine, its code hidden, with the course's template and the
    kernels of closed pages culled; ``sandboxed``: each kernel in the grading sandbox (present_kernels.py)."""
    return [sys.executable, '-m', 'voila', str(notebook), f'--port={port}', '--Voila.ip=127.0.0.1',
            '--theme=light', '--strip_sources=True', f'--template={TEMPLATE}',
            f'--MappingKernelManager.cull_idle_timeout={cull_idle}',
            f'--MappingKernelManager.cull_interval={min(CULL_INTERVAL, max(1, cull_idle // 4))}',
            '--MappingKernelManager.cull_connected=False',      # a page still open keeps its kernel
            *([f'--MappingKernelManager.kernel_manager_class={SANDBOXED}'] if sandboxed else []),
            *([] if browser else ['--no-browser'])]


def voila_env(environ=os.environ):
    """The environment Voilà runs in: the course's template found first on JUPYTER_PATH."""
    env = {key: value for key, value in environ.items() if key != 'NBGRADER_EXECUTION'}
    env['JUPYTER_PATH'] = os.pathsep.join(filter(None, [str(TEMPLATES), environ.get('JUPYTER_PATH')]))
    return env


def main(argv=None):
    parser = argparse.ArgumentParser(description='The game-tree widget alone on a page, for a projector (Voilà).')
    parser.add_argument('assignment', nargs='?', default='noughts_and_crosses')
    parser.add_argument('--notebook', help="show this notebook's functions (a student's, say) instead of the "
                                           "instructor's solution; its code runs in the grading sandbox")
    parser.add_argument('--unsandboxed', action='store_true', help="run --notebook's code with your rights, not "
                                                                   'in the grading sandbox')
    parser.add_argument('--port', type=int, default=8866)
    parser.add_argument('--no-browser', action='store_true', help='serve the page without opening a browser')
    parser.add_argument('--no-tree', dest='tree', action='store_false', help='the outline only, no search tree')
    parser.add_argument('--tree', action='store_true', help=argparse.SUPPRESS)     # the default now
    parser.set_defaults(tree=True)
    parser.add_argument('--cull-idle', type=int, default=CULL_IDLE, metavar='SECONDS',
                        help=f'shut down a kernel no page is connected to after this long idle ({CULL_IDLE})')
    args = parser.parse_args(argv)
    course = Course.at()
    notebook = build(course, args.assignment, args.tree, args.notebook or None)
    sandboxed = bool(args.notebook) and not args.unsandboxed
    if sandboxed:
        try:
            sbx.require_sandbox()
        except sbx.SandboxUnavailable as error:
            raise SystemExit(f'make present: {args.notebook} is to run in the grading sandbox, which is not '
                             f'available here: {error}\n(PRESENT_ARGS=--unsandboxed runs it with your rights)')
        print(f"make present: {args.notebook}'s code runs in the grading sandbox (bubblewrap), one per page",
              flush=True)
    elif args.notebook:
        print(f"make present: --unsandboxed: {args.notebook}'s code runs with your rights", flush=True)
    command = voila_command(notebook, args.port, not args.no_browser, args.cull_idle, sandboxed)
    print(f'make present: http://127.0.0.1:{args.port}/ shows {notebook.relative_to(course.root)} '
          f'(Ctrl-C to stop)', flush=True)
    os.execve(command[0], command, voila_env())   # Voilà takes this process's place: Ctrl-C stops it


if __name__ == '__main__':
    main()
