# score gives values from the point of view of the player to move, not of x: right for x, wrong sign for o.
# Values fail where o is to move and the game is not drawn; the moves are still the best ones. Perfect game fine.
# %% print_state
def print_state(state):
    """Print the board as three rows of ascii art, such as x|o| ."""
    for row in state:
        print('|'.join(row))

# %% score_end
def score_end(state):
    """Return 1 if x has a line, -1 if o has, 0 for a full board without one, None if play goes on."""
    lines = list(state) + list(zip(*state)) + [(state[0][0], state[1][1], state[2][2]),
                                               (state[0][2], state[1][1], state[2][0])]
    if ('x', 'x', 'x') in lines:
        return 1
    if ('o', 'o', 'o') in lines:
        return -1
    return 0 if all(' ' not in row for row in state) else None

# %% play
def play(state, row, col, mark):
    """Return a new board: state with mark placed at (row, col)."""
    board = [list(r) for r in state]
    board[row][col] = mark
    return tuple(map(tuple, board))

# %% moves
def moves(state):
    """Return a list of (row, col) for every empty square."""
    return [(r, c) for r, line in enumerate(state) for c, mark in enumerate(line) if mark == ' ']

# %% score
def score(state, player):
    """Minimax: return (value from x's point of view, best move for player or None when the game is over)."""
    end = score_end(state)
    if end is not None:
        return (end if player == 'x' else -end), None
    best = None
    for r, c in moves(state):
        value = -score(play(state, r, c, player), 'o' if player == 'x' else 'x')[0]
        if best is None or value > best[0]:
            best = (value, (r, c))
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
    print('A draw' if score_end(state) == 0 else 'A win')
    return score_end(state)
