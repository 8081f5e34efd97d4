# score forgets to stop at a finished board: it searches on after a win and, on a full board with no moves,
# recurses into max() of nothing. Raises RecursionError or ValueError in every score cell; the perfect game fails.
# %% print_state
def print_state(state):
    """Print the board as three rows of ascii art, such as x|o| ."""
    for row in state:
        print('|'.join(row))

# %% score_end
def score_end(state):
    """Return 1 if x has a line, -1 if o has, 0 for a full board without one, None if play goes on."""
    lines = [row for row in state] + [tuple(state[r][c] for r in range(3)) for c in range(3)]
    lines += [tuple(state[i][i] for i in range(3)), tuple(state[i][2 - i] for i in range(3))]
    for line in lines:
        if line == ('x',) * 3:
            return 1
        if line == ('o',) * 3:
            return -1
    return None if any(' ' in row for row in state) else 0

# %% play
def play(state, row, col, mark):
    """Return a new board: state with mark placed at (row, col)."""
    return tuple(tuple(mark if (r, c) == (row, col) else state[r][c] for c in range(3)) for r in range(3))

# %% moves
def moves(state):
    """Return a list of (row, col) for every empty square."""
    return [(r, c) for r in range(3) for c in range(3) if state[r][c] == ' ']

# %% score
def score(state, player):
    """Minimax: return (value from x's point of view, best move for player or None when the game is over)."""
    other = 'o' if player == 'x' else 'x'
    options = [(score(play(state, r, c, player), other)[0], (r, c)) for r, c in moves(state)]
    return (max if player == 'x' else min)(options)

# %% perfect_game
def perfect_game():
    """Play x against o from the empty board, both choosing with score; print the game; return the final value."""
    state, player = EMPTY_BOARD, 'x'
    print_state(state)
    while score_end(state) is None:
        _, (r, c) = score(state, player)
        state = play(state, r, c, player)
        print()
        print_state(state)
        player = 'o' if player == 'x' else 'x'
    print('Draw!' if score_end(state) == 0 else 'Won!')
    return score_end(state)
