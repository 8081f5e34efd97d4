# GeeksforGeeks's "Minimax Algorithm in Game Theory" (tic-tac-toe AI, with alpha-beta pruning) style: the board
# copied into a list of lists, each move made in place and undone after the recursive call, a find_best_move loop
# over the squares; the search calls the workbook's own score_end and moves on that mutable list. Expected: 12/12.
# %% print_state
def print_state(state):
    for i in range(3):
        print(state[i][0], state[i][1], state[i][2], sep='|')

# %% score_end
def score_end(board):
    for i in range(3):
        if board[i][0] == board[i][1] == board[i][2] and board[i][0] != ' ':
            return 1 if board[i][0] == 'x' else -1
        if board[0][i] == board[1][i] == board[2][i] and board[0][i] != ' ':
            return 1 if board[0][i] == 'x' else -1
    if board[0][0] == board[1][1] == board[2][2] and board[1][1] != ' ':
        return 1 if board[1][1] == 'x' else -1
    if board[0][2] == board[1][1] == board[2][0] and board[1][1] != ' ':
        return 1 if board[1][1] == 'x' else -1
    return None if any(' ' in row for row in board) else 0

# %% play
def play(state, row, col, mark):
    board = [list(r) for r in state]
    board[row][col] = mark
    return tuple(tuple(r) for r in board)

# %% moves
def moves(board):
    return [(i, j) for i in range(3) for j in range(3) if board[i][j] == ' ']

# %% score
def minimax(board, is_max, alpha, beta):
    result = score_end(board)
    if result is not None:
        return result
    best = -1000 if is_max else 1000
    for i, j in moves(board):
        board[i][j] = 'x' if is_max else 'o'
        value = minimax(board, not is_max, alpha, beta)
        board[i][j] = ' '
        if is_max:
            best = max(best, value)
            alpha = max(alpha, best)
        else:
            best = min(best, value)
            beta = min(beta, best)
        if beta <= alpha:
            break
    return best


def find_best_move(board, player):
    best_val, best_move = (-1000 if player == 'x' else 1000), None
    for i in range(3):
        for j in range(3):
            if board[i][j] == ' ':
                board[i][j] = player
                move_val = minimax(board, player == 'o', -1000, 1000)
                board[i][j] = ' '
                if (move_val > best_val) if player == 'x' else (move_val < best_val):
                    best_val, best_move = move_val, (i, j)
    return best_val, best_move


def score(state, player):
    end = score_end(state)
    if end is not None:
        return end, None
    return find_best_move([list(row) for row in state], player)

# %% perfect_game
def perfect_game():
    state, player = EMPTY_BOARD, 'x'
    print_state(state)
    while score_end(state) is None:
        _, (i, j) = score(state, player)
        state = play(state, i, j, player)
        player = 'o' if player == 'x' else 'x'
        print('-----')
        print_state(state)
    print("It's a tie" if score_end(state) == 0 else 'We have a winner')
    return score_end(state)
