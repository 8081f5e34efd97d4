# Correct and slow: numpy everywhere, and the search recurses through a helper inside score, so the grader can
# only remember the answers of top-level calls (the style of a real student's worksheet).
import numpy as np

# %% print_state
def print_state(state):
    """Print the board as three rows of ascii art, such as x|o| ."""
    for row in np.array(state):
        print('|'.join(row))

# %% score_end
def score_end(state):
    """Return 1 if x has a line, -1 if o has, 0 for a full board without one, None if play goes on."""
    board = np.array(state)
    lines = list(board) + list(board.T) + [board.diagonal(), np.fliplr(board).diagonal()]
    for line in lines:
        text = ''.join(line)
        if text == 'xxx':
            return 1
        if text == 'ooo':
            return -1
    if (board == ' ').any():
        return None
    return 0

# %% play
def play(state, row, col, mark):
    """Return a new board: state with mark placed at (row, col)."""
    board = np.array(state)
    board[row, col] = mark
    return tuple(tuple(str(cell) for cell in line) for line in board)

# %% moves
def moves(state):
    """Return a list of (row, col) for every empty square."""
    rows, cols = np.where(np.array(state) == ' ')
    return list(zip(rows, cols))

# %% score
def score(state, player):
    """Minimax: return (value from x's point of view, best move for player or None when the game is over)."""

    def minimax(board, maximising):
        end = score_end(board)
        if end is not None:
            return end
        values = [minimax(play(board, r, c, 'x' if maximising else 'o'), not maximising) for r, c in moves(board)]
        return max(values) if maximising else min(values)

    end = score_end(state)
    if end is not None:
        return end, None
    best_value, best_move = None, None
    for r, c in moves(state):
        value = minimax(play(state, r, c, player), player != 'x')
        if best_move is None or (value > best_value if player == 'x' else value < best_value):
            best_value, best_move = value, (r, c)
    return best_value, best_move

# %% perfect_game
def perfect_game():
    """Play x against o from the empty board, both choosing with score; print the game; return the final value."""
    state, player = EMPTY_BOARD, 'x'
    print_state(state)
    while score_end(state) is None:
        _, move = score(state, player)
        state = play(state, move[0], move[1], player)
        print()
        print_state(state)
        player = 'o' if player == 'x' else 'x'
    print("It's a draw" if score_end(state) == 0 else 'Someone won')
    return score_end(state)
