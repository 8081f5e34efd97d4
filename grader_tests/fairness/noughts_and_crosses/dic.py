# Misreads the anti-diagonal in score_end, and score keeps its answers in a global dictionary, as the workbook's
# further work suggests. The perfect game fills that dictionary using the buggy score_end. Expected: the bug
# costs score_end (and may cost the perfect game, which uses everything), never score.
# %% print_state
def print_state(state):
    for row in state:
        print('|'.join(row))

# %% score_end
def score_end(state):
    lines = list(state) + list(zip(*state)) + [tuple(state[i][i] for i in range(3)),
                                               tuple(state[i][3 - i] for i in range(1, 3)) + (state[2][0],)]
    if ('x', 'x', 'x') in lines:
        return 1
    if ('o', 'o', 'o') in lines:
        return -1
    return 0 if all(' ' not in row for row in state) else None

# %% play
def play(state, row, col, mark):
    board = [list(r) for r in state]
    board[row][col] = mark
    return tuple(map(tuple, board))

# %% moves
def moves(state):
    return [(r, c) for r in range(3) for c in range(3) if state[r][c] == ' ']

# %% score
known = {}


def score(state, player):
    if (state, player) not in known:
        end = score_end(state)
        if end is not None:
            known[state, player] = (end, None)
        else:
            best = None
            for row, col in moves(state):
                value, _ = score(play(state, row, col, player), 'o' if player == 'x' else 'x')
                if best is None or (value > best[0] if player == 'x' else value < best[0]):
                    best = (value, (row, col))
            known[state, player] = best
    return known[state, player]

# %% perfect_game
def perfect_game():
    state, player = EMPTY_BOARD, 'x'
    print_state(state)
    while score_end(state) is None:
        _, (row, col) = score(state, player)
        state = play(state, row, col, player)
        print_state(state)
        player = 'o' if player == 'x' else 'x'
    print('It is a draw.')
    return score_end(state)
