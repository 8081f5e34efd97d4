# score's values are right but it returns the first move it tries, not the best one; print_state puts spaces
# around the bars. Tasks 1 and 5 (moves) lose marks, and the perfect game goes wrong.
# %% print_state
def print_state(state):
    """Print the board as three rows of ascii art, such as x|o| ."""
    for row in state:
        print(' | '.join(row))

# %% score_end
def score_end(state):
    """Return 1 if x has a line, -1 if o has, 0 for a full board without one, None if play goes on."""
    for a, b, c in [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]:
        cells = [state[i // 3][i % 3] for i in (a, b, c)]
        if cells[0] != ' ' and cells[0] == cells[1] == cells[2]:
            return 1 if cells[0] == 'x' else -1
    return None if any(' ' in row for row in state) else 0

# %% play
def play(state, row, col, mark):
    """Return a new board: state with mark placed at (row, col)."""
    new = list(state)
    line = list(new[row])
    line[col] = mark
    new[row] = tuple(line)
    return tuple(new)

# %% moves
def moves(state):
    """Return a list of (row, col) for every empty square."""
    found = []
    for r in range(3):
        for c in range(3):
            if state[r][c] == ' ':
                found.append((r, c))
    return found

# %% score
def score(state, player):
    """Minimax: return (value from x's point of view, best move for player or None when the game is over)."""
    end = score_end(state)
    if end is not None:
        return end, None
    nxt = 'o' if player == 'x' else 'x'
    values = [score(play(state, r, c, player), nxt)[0] for r, c in moves(state)]
    return (max(values) if player == 'x' else min(values)), moves(state)[0]

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
    print("It's a draw!" if score_end(state) == 0 else 'Game over')
    return score_end(state)
