# score_end misses the anti-diagonal; score, play and moves are right. Expected: the bug costs score_end (and may
# cost the perfect game, which uses everything), never score; the visible score tests pass too, with a note that
# names score_end, since they give score correct helpers (issue 42).
# %% print_state
def print_state(state):
    for row in state:
        print('|'.join(row))

# %% score_end
def score_end(state):
    lines = [list(row) for row in state] + [[state[r][c] for r in range(3)] for c in range(3)]
    lines.append([state[i][i] for i in range(3)])
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
def score(state, player):
    end = score_end(state)
    if end is not None:
        return end, None
    following = 'o' if player == 'x' else 'x'
    options = [(score(play(state, r, c, player), following)[0], (r, c)) for r, c in moves(state)]
    return (max if player == 'x' else min)(options, key=lambda option: option[0])

# %% perfect_game
def perfect_game():
    state, player = EMPTY_BOARD, 'x'
    print_state(state)
    while score_end(state) is None:
        _, (row, col) = score(state, player)
        state = play(state, row, col, player)
        print_state(state)
        player = 'o' if player == 'x' else 'x'
    print('A draw.')
    return score_end(state)
