# Task 1 mistake: draws separator lines between the rows. Expected: print_state 0. Her perfect game passes every
# position to print_state, so it is judged by those boards, not by the text her print_state makes of them: task 6
# keeps both marks. Total 11/12.
# %% print_state
def print_state(state):
    """Print the board as three rows of ascii art, such as x|o| ."""
    for i, row in enumerate(state):
        print('|'.join(row))
        if i < 2:
            print('-+-+-')

# %% score_end
def score_end(state):
    """Return 1 if x has a line, -1 if o has, 0 for a full board without one, None if play goes on."""
    lines = []
    for i in range(3):
        lines.append(state[i])
        lines.append((state[0][i], state[1][i], state[2][i]))
    lines.append((state[0][0], state[1][1], state[2][2]))
    lines.append((state[0][2], state[1][1], state[2][0]))
    for line in lines:
        if line == ('x', 'x', 'x'):
            return 1
        if line == ('o', 'o', 'o'):
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
