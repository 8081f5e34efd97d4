# Correct but slow: numpy boards and deep copies everywhere. Expected: 12/12.
import copy
import numpy as np

# %% print_state
def print_state(state):
    """Print the board as three rows of ascii art, such as x|o| ."""
    board = np.array(state)
    for i in range(3):
        print('|'.join(board[i, :]))

# %% score_end
def score_end(state):
    """Return 1 if x has a line, -1 if o has, 0 for a full board without one, None if play goes on."""
    board = np.array(copy.deepcopy(state))
    candidates = [board[i, :] for i in range(3)] + [board[:, i] for i in range(3)]
    candidates += [np.diag(board), np.diag(np.fliplr(board))]
    for line in candidates:
        if np.all(line == 'x'):
            return 1
        if np.all(line == 'o'):
            return -1
    if np.any(board == ' '):
        return None
    return 0

# %% play
def play(state, row, col, mark):
    """Return a new board: state with mark placed at (row, col)."""
    board = np.array(copy.deepcopy(state))
    board[row, col] = mark
    return tuple(tuple(str(cell) for cell in r) for r in board)

# %% moves
def moves(state):
    """Return a list of (row, col) for every empty square."""
    rows, cols = np.where(np.array(state) == ' ')
    return list(zip(rows, cols))

# %% score
def score(state, player):
    """Minimax: return (value from x's point of view, best move for player or None when the game is over)."""
    end = score_end(copy.deepcopy(state))
    if end is not None:
        return end, None
    results = []
    for move in moves(state):
        child = play(copy.deepcopy(state), move[0], move[1], player)
        value, _ = score(child, 'o' if player == 'x' else 'x')
        results.append((value, move))
    if player == 'x':
        return max(results, key=lambda r: r[0])
    return min(results, key=lambda r: r[0])

# %% perfect_game
def perfect_game():
    """Play x against o from the empty board, both choosing with score; print the game; return the final value."""
    state, player = EMPTY_BOARD, 'x'
    print_state(state)
    while score_end(state) is None:
        _, move = score(state, player)
        state = play(state, move[0], move[1], player)
        print('')
        print_state(state)
        player = {'x': 'o', 'o': 'x'}[player]
    print("Result: it's a draw" if score_end(state) == 0 else 'Somebody won')
    return score_end(state)
