"""score_helpers.txt, shipped beside the first workbook: the correct answers of `score_end`, `moves` and `play` on
every position the searches of the visible `score` tests can reach (the subtrees of their boards). The workbook's
locked cell `score-helpers` answers from it while those tests run, so that they try the student's `score` with
correct helpers in the student's own kernel, as grading does; it holds answers only, never code that computes one.

`python -m coursetools.instructor.score_helpers` writes it from the oracle into source/; `make release` copies it.
"""
import ast
import json
import sys

from coursetools.checks.references import reachable_from
from coursetools.game import oracle
from coursetools.grading.course import Course

ASSIGNMENT = 'noughts_and_crosses'
FILE = 'score_helpers.txt'
TEST_CELLS = ('score-finished', 'score-values', 'score-moves')
HEADER = """\
# Correct answers of score_end, moves and play on every position a game can reach from the boards of the tests
# of score: while those tests run, your score is given these in place of your own functions. One position a line:
# the board (rows left to right, '.' for an empty square), what score_end returns, what moves returns (row and
# column), then each call of play a search makes there with the board it returns: <row><col><mark>=<board>, the
# mark of the player to move, or '.' to empty a square again (a search that undoes its moves).
"""


def visible_boards(notebook):
    """Every board the visible score tests of `notebook` (a path) write out, in order of appearance."""
    cells = json.loads(notebook.read_text())['cells']
    boards = []
    for cell in cells:
        if (cell['metadata'].get('nbgrader') or {}).get('grade_id') in TEST_CELLS:
            for node in ast.walk(ast.parse(''.join(cell['source']))):
                if isinstance(node, ast.Tuple) and len(node.elts) == 3 and all(
                        isinstance(row, ast.Tuple) and len(row.elts) == 3
                        and all(isinstance(square, ast.Constant) for square in row.elts) for row in node.elts):
                    boards.append(ast.literal_eval(node))
    return list(dict.fromkeys(boards))


def positions(boards):
    """Every position a game reaches from the boards, each with the player to move by its marks (x moves first)."""
    found = set()
    for board in boards:
        found |= reachable_from(board, oracle.to_move(board))
    return sorted(found, key=oracle.flat)


def text(boards):
    """The file's text for `boards`."""
    found = positions(boards)
    known = set(found)
    return HEADER + ''.join(line(position, known) + '\n' for position in found)


def line(board, known):
    """One position's line; a square is emptied again only where that gives a position of `known`."""
    def written(position):
        return oracle.flat(position).replace(' ', '.')

    empty = oracle.empty_cells(board)
    plays = []
    if oracle.outcome(board) is None:
        mark = oracle.to_move(board)
        plays += [f'{r}{c}{mark}={written(oracle.place(board, r, c, mark))}' for r, c in empty]
    last = oracle.other(oracle.to_move(board))          # who made the move that reached `board`
    plays += [f'{r}{c}.={written(oracle.place(board, r, c, " "))}' for r in range(3) for c in range(3)
              if board[r][c] == last and oracle.place(board, r, c, ' ') in known]
    moves = ','.join(f'{r}{c}' for r, c in empty) or '-'
    return ' '.join([written(board), str(oracle.outcome(board)), moves] + plays)


def main(root=None):
    """Write score_helpers.txt beside the source notebook; the path written."""
    folder = Course.at(root).root / 'source' / ASSIGNMENT
    path = folder / FILE
    path.write_text(text(visible_boards(folder / f'{ASSIGNMENT}.ipynb')))
    return path


if __name__ == '__main__':
    print(f'wrote {main(sys.argv[1] if len(sys.argv) > 1 else None)}')
