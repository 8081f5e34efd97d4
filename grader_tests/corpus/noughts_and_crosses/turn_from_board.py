# Whose turn it is read from the board (x when the counts are equal), as CS50 AI's player() does, and made
# optional: play(state, row, col, mark=None) and score(state, player=None) fill it in themselves, so the search and
# the game never pass it; score is cached with functools.lru_cache. Expected: 12/12.
from functools import lru_cache

# %% print_state
def print_state(state):
    print('\n'.join('|'.join(row) for row in state))

# %% score_end
def winner(state):
    lines = [row for row in state] + [tuple(state[r][c] for r in range(3)) for c in range(3)]
    lines += [tuple(state[i][i] for i in range(3)), tuple(state[i][2 - i] for i in range(3))]
    for line in lines:
        if line[0] != ' ' and len(set(line)) == 1:
            return line[0]
    return None


def score_end(state):
    w = winner(state)
    if w:
        return 1 if w == 'x' else -1
    return None if any(' ' in row for row in state) else 0

# %% play
def whose_turn(state):
    squares = [square for row in state for square in row]
    return 'x' if squares.count('x') == squares.count('o') else 'o'


def play(state, row, col, mark=None):
    if mark is None:
        mark = whose_turn(state)
    return tuple(tuple(mark if (r, c) == (row, col) else state[r][c] for c in range(3)) for r in range(3))

# %% moves
def moves(state):
    return [(r, c) for r in range(3) for c in range(3) if state[r][c] == ' ']

# %% score
@lru_cache(maxsize=None)
def score(state, player=None):
    if player is None:
        player = whose_turn(state)
    end = score_end(state)
    if end is not None:
        return end, None
    options = [(score(play(state, r, c))[0], (r, c)) for r, c in moves(state)]
    return max(options) if player == 'x' else min(options)

# %% perfect_game
def perfect_game():
    state = EMPTY_BOARD
    print_state(state)
    while score_end(state) is None:
        state = play(state, *score(state)[1])
        print()
        print_state(state)
    print('draw' if score_end(state) == 0 else winner(state) + ' wins')
    return score_end(state)
