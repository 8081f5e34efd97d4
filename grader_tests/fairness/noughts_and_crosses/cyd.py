# Correct, in the style of CS50 AI's tictactoe.py: whose turn it is, and whether the board is full, read from the
# counts of x's and o's (x always moves first, and the workbook promises a board from a real game). Expected: 12/12.
# %% print_state
def print_state(state):
    for row in state:
        print('|'.join(row))

# %% score_end
def winner(state):
    lines = [list(row) for row in state] + [[state[r][c] for r in range(3)] for c in range(3)]
    lines += [[state[i][i] for i in range(3)], [state[i][2 - i] for i in range(3)]]
    for line in lines:
        if line[0] != ' ' and line.count(line[0]) == 3:
            return line[0]
    return None


def counts(state):
    marks = [square for row in state for square in row]
    return marks.count('x'), marks.count('o')


def score_end(state):
    won = winner(state)
    if won:
        return 1 if won == 'x' else -1
    xs, os = counts(state)
    return 0 if (xs, os) == (5, 4) else None

# %% play
def play(state, row, col, mark):
    board = [list(r) for r in state]
    board[row][col] = mark
    return tuple(tuple(r) for r in board)

# %% moves
def moves(state):
    return [(r, c) for r in range(3) for c in range(3) if state[r][c] == ' ']

# %% score
def to_move(state):
    xs, os = counts(state)
    return 'x' if xs == os else 'o'


def score(state, player):
    end = score_end(state)
    if end is not None:
        return end, None
    best = None
    for r, c in moves(state):
        value, _ = score(play(state, r, c, to_move(state)), 'o' if player == 'x' else 'x')
        if best is None or (value > best[0] if player == 'x' else value < best[0]):
            best = (value, (r, c))
    return best

# %% perfect_game
def perfect_game():
    state = EMPTY_BOARD
    print_state(state)
    while score_end(state) is None:
        _, (row, col) = score(state, to_move(state))
        state = play(state, row, col, to_move(state))
        print_state(state)
    print('Draw.')
    return score_end(state)
