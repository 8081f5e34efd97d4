# functools.lru_cache straight on score, with the workbook's tuples as its keys; lines from zip(*state), the best
# (value, move) pair picked by max/min with a key. Expected: 12/12.
from functools import lru_cache

# %% print_state
def print_state(state):
    for row in state:
        print(*row, sep='|')

# %% score_end
def score_end(state):
    lines = [*state, *zip(*state), (state[0][0], state[1][1], state[2][2]), (state[0][2], state[1][1], state[2][0])]
    for mark, value in (('x', 1), ('o', -1)):
        if (mark,) * 3 in lines:
            return value
    return 0 if all(' ' not in row for row in state) else None

# %% play
def play(state, row, col, mark):
    rows = list(state)
    changed = list(rows[row])
    changed[col] = mark
    rows[row] = tuple(changed)
    return tuple(rows)

# %% moves
def moves(state):
    return [(r, c) for r, row in enumerate(state) for c, square in enumerate(row) if square == ' ']

# %% score
@lru_cache(maxsize=None)
def score(state, player):
    end = score_end(state)
    if end is not None:
        return end, None
    opponent = 'o' if player == 'x' else 'x'
    options = [(score(play(state, r, c, player), opponent)[0], (r, c)) for r, c in moves(state)]
    pick = max if player == 'x' else min
    return pick(options, key=lambda option: option[0])

# %% perfect_game
def perfect_game():
    state, player = EMPTY_BOARD, 'x'
    print_state(state)
    while (end := score_end(state)) is None:
        _, move = score(state, player)
        state = play(state, *move, player)
        player = 'o' if player == 'x' else 'x'
        print()
        print_state(state)
    print({1: 'x won', -1: 'o won', 0: "It's a draw"}[end])
    return end
