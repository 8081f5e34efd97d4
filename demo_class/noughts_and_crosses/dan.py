# Task 2 mistake: forgets the diagonals. Expected: score_end 2 of 3 (diagonals fail). In the perfect game his
# search does not see diagonal wins, so it lets x complete one and plays on: task 6 boards 0, and the game
# returns 0 (the board fills up "without a line") and says draw, so task 6 result 1. Total 10/12.
# %% print_state
def print_state(state):
    """Print the board as three rows of ascii art, such as x|o| ."""
    for row in state:
        print(row[0] + '|' + row[1] + '|' + row[2])

# %% score_end
def score_end(state):
    """Return 1 if x has a line, -1 if o has, 0 for a full board without one, None if play goes on."""
    for i in range(3):
        row = state[i]
        col = (state[0][i], state[1][i], state[2][i])
        for line in (row, col):
            if line.count('x') == 3:
                return 1
            if line.count('o') == 3:
                return -1
    if any(cell == ' ' for row in state for cell in row):
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
    result = []
    for row in range(3):
        for col in range(3):
            if state[row][col] == ' ':
                result.append((row, col))
    return result

# %% score
def score(state, player):
    """Minimax: return (value from x's point of view, best move for player or None when the game is over)."""
    end = score_end(state)
    if end is not None:
        return end, None
    best_value, best_move = None, None
    for row, col in moves(state):
        if player == 'x':
            value, _ = score(play(state, row, col, 'x'), 'o')
            if best_value is None or value > best_value:
                best_value, best_move = value, (row, col)
        else:
            value, _ = score(play(state, row, col, 'o'), 'x')
            if best_value is None or value < best_value:
                best_value, best_move = value, (row, col)
    return best_value, best_move

# %% perfect_game
def perfect_game():
    """Play x against o from the empty board, both choosing with score; print the game; return the final value."""
    state = EMPTY_BOARD
    player = 'x'
    print_state(state)
    print()
    while score_end(state) is None:
        value, (row, col) = score(state, player)
        state = play(state, row, col, player)
        print_state(state)
        print()
        if player == 'x':
            player = 'o'
        else:
            player = 'x'
    result = score_end(state)
    if result == 1:
        print('x wins')
    elif result == -1:
        print('o wins')
    else:
        print('The game is a draw')
    return result
