# Copied oli's answers (demo_class/noughts_and_crosses/oli.py), then renamed the variables and rewrote the
# comments to hide it: the same code token for token, so the same mistake (the "opening book" reply to a corner
# opening) and the same marks. Planted for the similarity report (docs/similarity.md), which must flag the pair
# pam/oli and no other. Expected: score-finished 1, score-values 1, score-moves 0. Total 11/12.
# %% print_state
def print_state(state):
    """Print the board as three rows of ascii art, such as x|o| ."""
    for line in state:
        print('|'.join(line))

# %% score_end
def score_end(state):
    """Return 1 if x has a line, -1 if o has, 0 for a full board without one, None if play goes on."""
    triples = [list(line) for line in state]
    triples += [[state[i][j] for i in range(3)] for j in range(3)]
    triples += [[state[k][k] for k in range(3)], [state[k][2 - k] for k in range(3)]]
    for triple in triples:
        if triple == ['x'] * 3:
            return 1
        if triple == ['o'] * 3:
            return -1
    return None if any(' ' in line for line in state) else 0

# %% play
def play(state, row, col, mark):
    """Return a new board: state with mark placed at (row, col)."""
    return tuple(tuple(mark if (i, j) == (row, col) else state[i][j] for j in range(3)) for i in range(3))

# %% moves
def moves(state):
    """Return a list of (row, col) for every empty square."""
    return [(i, j) for i in range(3) for j in range(3) if state[i][j] == ' ']

# %% score
ORDER = [(1, 1), (0, 0), (0, 2), (2, 0), (2, 2), (0, 1), (1, 0), (1, 2), (2, 1)]   # try the centre, then corners


def score(state, player):
    """Minimax: return (value from x's point of view, best move for player or None when the game is over)."""
    result = score_end(state)
    if result is not None:
        return result, None
    occupied = [(i, j) for i in range(3) for j in range(3) if state[i][j] != ' ']
    if len(occupied) == 1:
        # only one mark down: answer opposite it (a corner after the centre), no search needed
        i, j = occupied[0]
        return 0, ((0, 0) if (i, j) == (1, 1) else (2 - i, 2 - j))
    best_so_far = None
    for square in sorted(moves(state), key=ORDER.index):
        outcome, _ = score(play(state, square[0], square[1], player), 'o' if player == 'x' else 'x')
        if best_so_far is None or (outcome > best_so_far[0] if player == 'x' else outcome < best_so_far[0]):
            best_so_far = (outcome, square)
    return best_so_far

# %% perfect_game
def perfect_game():
    """Play x against o from the empty board, both choosing with score; print the game; return the final value."""
    board, turn = EMPTY_BOARD, 'x'
    print_state(board)
    while score_end(board) is None:
        _, (i, j) = score(board, turn)
        board = play(board, i, j, turn)
        print()
        print_state(board)
        turn = 'o' if turn == 'x' else 'x'
    print("\nIt's a draw!" if score_end(board) == 0 else '\nSomebody won.')
    return score_end(board)
