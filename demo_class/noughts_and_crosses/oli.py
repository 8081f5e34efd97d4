# Task 5 mistake that shows only early in a game: an "opening book" for o's first reply, the square opposite
# x's (the corner if x took the centre), which the student believed always draws. It does after a centre or an
# edge, but after a corner o must take the centre, and the opposite corner loses. Values are still right (every
# position with one mark is a draw), only the move is wrong, and only in positions with one mark. The perfect game
# is perfect: the search tries the centre first, so x opens there and o's book answer is a corner, which is right.
# Expected: score-finished 1, score-values 1, score-moves 0 (the hidden sample has positions with one mark).
# Total 11/12.
# %% print_state
def print_state(state):
    """Print the board as three rows of ascii art, such as x|o| ."""
    for row in state:
        print('|'.join(row))

# %% score_end
def score_end(state):
    """Return 1 if x has a line, -1 if o has, 0 for a full board without one, None if play goes on."""
    lines = [list(row) for row in state]
    lines += [[state[r][c] for r in range(3)] for c in range(3)]
    lines += [[state[i][i] for i in range(3)], [state[i][2 - i] for i in range(3)]]
    for line in lines:
        if line == ['x'] * 3:
            return 1
        if line == ['o'] * 3:
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
PREFERENCE = [(1, 1), (0, 0), (0, 2), (2, 0), (2, 2), (0, 1), (1, 0), (1, 2), (2, 1)]   # good moves first


def score(state, player):
    """Minimax: return (value from x's point of view, best move for player or None when the game is over)."""
    end = score_end(state)
    if end is not None:
        return end, None
    taken = [(r, c) for r in range(3) for c in range(3) if state[r][c] != ' ']
    if len(taken) == 1:                      # o's first reply, from the book: no need to search
        r, c = taken[0]
        return 0, ((0, 0) if (r, c) == (1, 1) else (2 - r, 2 - c))
    best = None
    for move in sorted(moves(state), key=PREFERENCE.index):
        value, _ = score(play(state, move[0], move[1], player), 'o' if player == 'x' else 'x')
        if best is None or (value > best[0] if player == 'x' else value < best[0]):
            best = (value, move)
    return best

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
    print("\nIt's a draw!" if score_end(state) == 0 else '\nSomebody won.')
    return score_end(state)
