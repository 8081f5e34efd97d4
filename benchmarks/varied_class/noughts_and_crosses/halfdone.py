# Handed in half way: tasks 1-4 done, score and perfect_game still the stubs.
# %% print_state
def print_state(state):
    """Print the board as three rows of ascii art, such as x|o| ."""
    for row in state:
        print(row[0] + '|' + row[1] + '|' + row[2])

# %% score_end
def score_end(state):
    """Return 1 if x has a line, -1 if o has, 0 for a full board without one, None if play goes on."""
    lines = [list(row) for row in state]
    lines += [[state[r][c] for r in range(3)] for c in range(3)]
    lines += [[state[0][0], state[1][1], state[2][2]], [state[0][2], state[1][1], state[2][0]]]
    if ['x', 'x', 'x'] in lines:
        return 1
    if ['o', 'o', 'o'] in lines:
        return -1
    for row in state:
        if ' ' in row:
            return None
    return 0

# %% play
def play(state, row, col, mark):
    """Return a new board: state with mark placed at (row, col)."""
    board = [list(r) for r in state]
    board[row][col] = mark
    return tuple(tuple(r) for r in board)

# %% moves
def moves(state):
    """Return a list of (row, col) for every empty square."""
    return [(row, col) for row in range(3) for col in range(3) if state[row][col] == ' ']
