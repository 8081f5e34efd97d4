# Real Python's tic-tac-toe engine style: frozen dataclasses (a GameState over a 9-character string, with cached
# properties for whose turn it is, the winner by regular-expression patterns and the possible Moves; a Move holding
# the states before and after), a minimax over Moves cached with functools.cache and bound with functools.partial
# in find_best_move. Expected: 12/12.
import re
from dataclasses import dataclass
from functools import cache, cached_property, partial

# %% print_state
def print_state(state):
    for row in state:
        print('|'.join(row))

# %% score_end
WINNING_PATTERNS = ('???......', '...???...', '......???', '?..?..?..',
                    '.?..?..?.', '..?..?..?', '?...?...?', '..?.?.?..')


@dataclass(frozen=True)
class GameState:
    cells: str

    @cached_property
    def current_mark(self):
        return 'x' if self.cells.count('x') == self.cells.count('o') else 'o'

    @cached_property
    def winner(self):
        for pattern in WINNING_PATTERNS:
            for mark in 'xo':
                if re.match(pattern.replace('?', mark), self.cells):
                    return mark
        return None

    @cached_property
    def game_over(self):
        return self.winner is not None or ' ' not in self.cells

    def evaluate_score(self, mark):
        return 0 if self.winner is None else 1 if self.winner == mark else -1

    @cached_property
    def possible_moves(self):
        if self.game_over:
            return []
        return [self.make_move_to(i) for i, cell in enumerate(self.cells) if cell == ' ']

    def make_move_to(self, index):
        cells = self.cells[:index] + self.current_mark + self.cells[index + 1:]
        return Move(self.current_mark, index, self, GameState(cells))


def game_state(state):
    return GameState(''.join(''.join(row) for row in state))


def score_end(state):
    game = game_state(state)
    return game.evaluate_score('x') if game.game_over else None

# %% play
def play(state, row, col, mark):
    cells = list(game_state(state).cells)
    cells[3 * row + col] = mark
    return tuple(tuple(cells[i:i + 3]) for i in (0, 3, 6))

# %% moves
def moves(state):
    return [divmod(i, 3) for i, cell in enumerate(game_state(state).cells) if cell == ' ']

# %% score
@dataclass(frozen=True)
class Move:
    mark: str
    cell_index: int
    before_state: GameState
    after_state: GameState


@cache
def minimax(move, maximizer, choose_highest_score=False):
    if move.after_state.game_over:
        return move.after_state.evaluate_score(maximizer)
    return (max if choose_highest_score else min)(
        minimax(next_move, maximizer, not choose_highest_score) for next_move in move.after_state.possible_moves)


def find_best_move(game):
    bound_minimax = partial(minimax, maximizer=game.current_mark)
    return max(game.possible_moves, key=bound_minimax)


def score(state, player):
    game = game_state(state)
    if game.game_over:
        return game.evaluate_score('x'), None
    move = find_best_move(game)
    value = minimax(move, maximizer=game.current_mark)
    return (value if game.current_mark == 'x' else -value), divmod(move.cell_index, 3)

# %% perfect_game
def perfect_game():
    game = game_state(EMPTY_BOARD)
    print_state(EMPTY_BOARD)
    while not game.game_over:
        game = find_best_move(game).after_state
        print()
        print_state(tuple(tuple(game.cells[i:i + 3]) for i in (0, 3, 6)))
    print('Tie!' if game.winner is None else f'{game.winner} wins!')
    return game.evaluate_score('x')
