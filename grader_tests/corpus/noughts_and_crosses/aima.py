# aima-python's games.py style: a TicTacToe game class (actions, result, utility, terminal_test, to_move, k_in_row)
# over GameState namedtuples whose board is a dict keyed by 1-based (x, y), searched by alpha_beta_search; the
# workbook's tuples converted at the boundary. Expected: 12/12.
from collections import namedtuple

# %% print_state
def print_state(state):
    print('\n'.join('|'.join(row) for row in state))

# %% score_end
GameState = namedtuple('GameState', 'to_move, utility, board, moves')


class TicTacToe:
    def actions(self, state):
        return state.moves

    def result(self, state, move):
        board = state.board.copy()
        board[move] = state.to_move
        return GameState(to_move='o' if state.to_move == 'x' else 'x',
                         utility=self.compute_utility(board, move, state.to_move),
                         board=board, moves=[m for m in state.moves if m != move])

    def utility(self, state, player):
        return state.utility if player == 'x' else -state.utility

    def terminal_test(self, state):
        return state.utility != 0 or len(state.moves) == 0

    def to_move(self, state):
        return state.to_move

    def compute_utility(self, board, move, player):
        won = any(self.k_in_row(board, move, player, delta) for delta in ((0, 1), (1, 0), (1, -1), (1, 1)))
        return (+1 if player == 'x' else -1) if won else 0

    def k_in_row(self, board, move, player, delta):
        (delta_x, delta_y), n = delta, -1      # the move itself is counted twice
        for sign in (1, -1):
            x, y = move
            while board.get((x, y)) == player:
                n, x, y = n + 1, x + sign * delta_x, y + sign * delta_y
        return n >= 3


game = TicTacToe()


def to_game_state(state, player):
    board = {(r + 1, c + 1): state[r][c] for r in range(3) for c in range(3) if state[r][c] != ' '}
    utility = max((game.compute_utility(board, move, mark) for move, mark in board.items()), key=abs, default=0)
    moves = [(x, y) for x in range(1, 4) for y in range(1, 4) if (x, y) not in board]
    return GameState(to_move=player, utility=utility, board=board, moves=moves)


def score_end(state):
    s = to_game_state(state, 'x')
    return game.utility(s, 'x') if game.terminal_test(s) else None

# %% play
def play(state, row, col, mark):
    s = game.result(to_game_state(state, mark), (row + 1, col + 1))
    return tuple(tuple(s.board.get((x, y), ' ') for y in range(1, 4)) for x in range(1, 4))

# %% moves
def moves(state):
    return [(x - 1, y - 1) for (x, y) in game.actions(to_game_state(state, 'x'))]

# %% score
def alpha_beta_search(state, game):
    player = game.to_move(state)

    def max_value(state, alpha, beta):
        if game.terminal_test(state):
            return game.utility(state, player)
        v = -float('inf')
        for a in game.actions(state):
            v = max(v, min_value(game.result(state, a), alpha, beta))
            if v >= beta:
                return v
            alpha = max(alpha, v)
        return v

    def min_value(state, alpha, beta):
        if game.terminal_test(state):
            return game.utility(state, player)
        v = float('inf')
        for a in game.actions(state):
            v = min(v, max_value(game.result(state, a), alpha, beta))
            if v <= alpha:
                return v
            beta = min(beta, v)
        return v

    best_score, best_action = -float('inf'), None
    for a in game.actions(state):
        v = min_value(game.result(state, a), best_score, float('inf'))
        if v > best_score:
            best_score, best_action = v, a
    return best_action, best_score


def score(state, player):
    s = to_game_state(state, player)
    if game.terminal_test(s):
        return game.utility(s, 'x'), None
    (x, y), value = alpha_beta_search(s, game)
    return (value if player == 'x' else -value), (x - 1, y - 1)

# %% perfect_game
def perfect_game():
    state, player = EMPTY_BOARD, 'x'
    print_state(state)
    while score_end(state) is None:
        state, player = play(state, *score(state, player)[1], player), 'o' if player == 'x' else 'x'
        print_state(state)
    print('Nobody won: a draw.' if score_end(state) == 0 else 'Somebody won.')
    return score_end(state)
