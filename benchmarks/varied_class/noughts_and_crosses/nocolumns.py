# score_end checks rows and diagonals but not columns; the rest is right. score is tested with a correct
# score_end, but the perfect game uses hers.
# %% print_state
def print_state(state):
    """Print the board as three rows of ascii art, such as x|o| ."""
    print('\n'.join('|'.join(row) for row in state))

# %% score_end
def score_end(state):
    """Return 1 if x has a line, -1 if o has, 0 for a full board without one, None if play goes on."""
    lines = [tuple(row) for row in state] + [(state[0][0], state[1][1], state[2][2]),
                                            (state[0][2], state[1][1], state[2][0])]
    for line in lines:
        if line == ('x', 'x', 'x'):
            return 1
        if line == ('o', 'o', 'o'):
            return -1
    return None if ' ' in ''.join(''.join(row) for row in state) else 0

# %% play
def play(state, row, col, mark):
    """Return a new board: state with mark placed at (row, col)."""
    return tuple(tuple(mark if (r, c) == (row, col) else v for c, v in enumerate(line)) for r, line in enumerate(state))

# %% moves
def moves(state):
    """Return a list of (row, col) for every empty square."""
    return [divmod(i, 3) for i, v in enumerate(''.join(''.join(row) for row in state)) if v == ' ']

# %% score
def score(state, player):
    """Minimax: return (value from x's point of view, best move for player or None when the game is over)."""
    end = score_end(state)
    if end is not None:
        return end, None
    results = []
    for r, c in moves(state):
        value, _ = score(play(state, r, c, player), 'x' if player == 'o' else 'o')
        results.append((value, (r, c)))
    return max(results, key=lambda t: t[0]) if player == 'x' else min(results, key=lambda t: t[0])

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
        player = 'x' if player == 'o' else 'o'
    print('Draw.' if score_end(state) == 0 else 'Win.')
    return score_end(state)
