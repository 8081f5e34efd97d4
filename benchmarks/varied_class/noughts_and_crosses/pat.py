# Correct, in the style of a real worksheet this course grew from: moves via numpy, and score searches with a
# helper inside it that recurses on its own (undoing each move by playing a space back), so the grader can only
# remember score's top-level answers. The slowest honest student in the class; a slow answer is not a wrong one.
# Expected: 12/12.
import numpy as np

# %% print_state
def print_state(state):
    """Print the board as three rows of ascii art, such as x|o| ."""
    for row in state:
        print('|'.join(row))

# %% score_end
def score_end(state):
    """Return 1 if x has a line, -1 if o has, 0 for a full board without one, None if play goes on."""
    for row in state:
        if ''.join(row) == 'xxx':
            return 1
        if ''.join(row) == 'ooo':
            return -1
    for col in range(3):
        column = state[0][col] + state[1][col] + state[2][col]
        if column == 'xxx':
            return 1
        if column == 'ooo':
            return -1
    for diagonal in (state[0][0] + state[1][1] + state[2][2], state[2][0] + state[1][1] + state[0][2]):
        if diagonal == 'xxx':
            return 1
        if diagonal == 'ooo':
            return -1
    if ' ' in ''.join(''.join(row) for row in state):
        return None
    return 0

# %% play
def play(state, row, col, mark):
    """Return a new board: state with mark placed at (row, col)."""
    rows = [list(r) for r in state]
    rows[row][col] = mark
    return tuple(tuple(r) for r in rows)

# %% moves
def moves(state):
    """Return a list of (row, col) for every empty square."""
    empty = np.where(np.array(state) == ' ')
    return list(zip(empty[0], empty[1]))

# %% score
def score(state, player):
    """Minimax: return (value from x's point of view, best move for player or None when the game is over)."""

    def minimax(state, maximise):
        if score_end(state) == 1:
            return 1
        elif score_end(state) == -1:
            return -1
        elif score_end(state) == 0:
            return 0
        best = -10 if maximise else 10
        for row, col in moves(state):
            state = play(state, row, col, 'x' if maximise else 'o')
            result = minimax(state, not maximise)
            state = play(state, row, col, ' ')
            best = max(best, result) if maximise else min(best, result)
        return best

    if score_end(state) is not None:
        return score_end(state), None
    best_score, best_move = None, None
    for row, col in moves(state):
        result = minimax(play(state, row, col, player), player == 'o')
        if best_move is None or (result > best_score if player == 'x' else result < best_score):
            best_score, best_move = result, (row, col)
    return best_score, best_move

# %% perfect_game
def perfect_game():
    """Play x against o from the empty board, both choosing with score; print the game; return the final value."""
    state, player = EMPTY_BOARD, 'x'
    print_state(state)
    while score_end(state) is None:
        _, (row, col) = score(state, player)
        state = play(state, row, col, player)
        print()
        print_state(state)
        player = 'o' if player == 'x' else 'x'
    print("\nIt's a draw" if score_end(state) == 0 else '\nThe game is won')
    return score_end(state)
