# numpy: the board as a 3x3 array of one-character strings, its lines by slicing, .T, np.diag and np.fliplr, moves
# from np.argwhere (numpy integers), values picked with np.argmax/np.argmin, a dict memo keyed by the array's bytes.
# Expected: 12/12.
import numpy as np

# %% print_state
def print_state(state):
    grid = np.array(state)
    for row in grid:
        print('|'.join(row))

# %% score_end
def lines_of(grid):
    return list(grid) + list(grid.T) + [np.diag(grid), np.diag(np.fliplr(grid))]


def score_end(state):
    grid = np.array(state)
    for line in lines_of(grid):
        if np.all(line == 'x'):
            return 1
        if np.all(line == 'o'):
            return -1
    if np.any(grid == ' '):
        return None
    return 0

# %% play
def play(state, row, col, mark):
    grid = np.array(state)
    grid[row, col] = mark
    return tuple(map(tuple, grid.tolist()))

# %% moves
def moves(state):
    return [tuple(square) for square in np.argwhere(np.array(state) == ' ')]

# %% score
cache = {}


def score(state, player):
    key = (np.array(state).tobytes(), player)
    if key not in cache:
        end = score_end(state)
        if end is not None:
            cache[key] = (end, None)
        else:
            options = moves(state)
            other = 'o' if player == 'x' else 'x'
            values = np.array([score(play(state, r, c, player), other)[0] for r, c in options])
            best = np.argmax(values) if player == 'x' else np.argmin(values)
            cache[key] = (values[best], options[best])
    return cache[key]

# %% perfect_game
def perfect_game():
    state = EMPTY_BOARD
    player = 'x'
    print_state(state)
    while score_end(state) is None:
        value, (row, col) = score(state, player)
        state = play(state, row, col, player)
        print()
        print_state(state)
        player = 'o' if player == 'x' else 'x'
    print("It's a tie!" if score_end(state) == 0 else 'Someone won?!')
    return score_end(state)
