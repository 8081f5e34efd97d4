# Negamax: one recursive helper scores a position for the side to move (+1 a win, -1 a loss), flipping the sign at
# each level, with a memo dict keyed by (board, player); score turns it back into x's point of view. Expected: 12/12.
# %% print_state
def print_state(state):
    print('\n'.join('|'.join(row) for row in state))

# %% score_end
LINES = ([[(r, 0), (r, 1), (r, 2)] for r in range(3)] + [[(0, c), (1, c), (2, c)] for c in range(3)]
         + [[(0, 0), (1, 1), (2, 2)], [(0, 2), (1, 1), (2, 0)]])


def score_end(state):
    for line in LINES:
        a, b, c = (state[r][col] for r, col in line)
        if a != ' ' and a == b == c:
            return 1 if a == 'x' else -1
    if any(' ' in row for row in state):
        return None
    return 0

# %% play
def play(state, row, col, mark):
    return tuple(tuple(mark if (r, c) == (row, col) else state[r][c] for c in range(3)) for r in range(3))

# %% moves
def moves(state):
    result = []
    for r, row in enumerate(state):
        for c, square in enumerate(row):
            if square == ' ':
                result.append((r, c))
    return result

# %% score
SIGN = {'x': 1, 'o': -1}
OTHER = {'x': 'o', 'o': 'x'}
memo = {}


def negamax(state, player):
    """(value for the player to move, best move)"""
    if (state, player) in memo:
        return memo[state, player]
    end = score_end(state)
    if end is not None:
        return SIGN[player] * end, None
    best_value, best_move = -2, None
    for r, c in moves(state):
        value = -negamax(play(state, r, c, player), OTHER[player])[0]
        if value > best_value:
            best_value, best_move = value, (r, c)
    memo[state, player] = best_value, best_move
    return best_value, best_move


def score(state, player):
    value, move = negamax(state, player)
    return SIGN[player] * value, move

# %% perfect_game
def perfect_game():
    state, player = EMPTY_BOARD, 'x'
    print_state(state)
    while score_end(state) is None:
        _, (r, c) = score(state, player)
        state = play(state, r, c, player)
        player = OTHER[player]
        print()
        print_state(state)
    result = score_end(state)
    print({1: 'x wins', -1: 'o wins', 0: 'draw'}[result])
    return result
