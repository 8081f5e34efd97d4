# Correct, passing arguments by keyword (and score with a depth of its own). Expected: 12/12.
# %% print_state
def print_state(state):
    for row in state:
        print('|'.join(row))

# %% score_end
def score_end(state):
    lines = [list(row) for row in state] + [[state[r][c] for r in range(3)] for c in range(3)]
    lines += [[state[i][i] for i in range(3)], [state[i][2 - i] for i in range(3)]]
    for mark, value in (('x', 1), ('o', -1)):
        if [mark] * 3 in lines:
            return value
    return None if any(' ' in row for row in state) else 0

# %% play
def play(state, row, col, mark):
    return tuple(tuple(mark if (r, c) == (row, col) else state[r][c] for c in range(3)) for r in range(3))

# %% moves
def moves(state):
    return [(r, c) for r in range(3) for c in range(3) if state[r][c] == ' ']

# %% score
def score(state, player, depth=0):
    end = score_end(state=state)
    if end is not None:
        return end, None
    following = 'o' if player == 'x' else 'x'
    options = [(score(play(state, row=r, col=c, mark=player), player=following, depth=depth + 1)[0], (r, c))
               for r, c in moves(state=state)]
    return (max if player == 'x' else min)(options, key=lambda option: option[0])

# %% perfect_game
def perfect_game():
    state, player = EMPTY_BOARD, 'x'
    print_state(state=state)
    while score_end(state) is None:
        _, (row, col) = score(state=state, player=player)
        state = play(state, row, col, mark=player)
        print_state(state=state)
        player = 'o' if player == 'x' else 'x'
    print('A draw, as always.')
    return score_end(state)
