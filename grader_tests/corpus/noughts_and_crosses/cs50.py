# CS50 AI's tictactoe.py style: player() from the counts of marks, actions() as a set, result(), winner(),
# terminal(), utility(), and max_value/min_value with alpha-beta pruning. Expected: 12/12.
import math

# %% print_state
def print_state(state):
    for row in state:
        print(row[0] + "|" + row[1] + "|" + row[2])

# %% score_end
X = "x"
O = "o"
EMPTY = " "


def winner(board):
    for i in range(3):
        if board[i][0] != EMPTY and board[i][0] == board[i][1] == board[i][2]:
            return board[i][0]
        if board[0][i] != EMPTY and board[0][i] == board[1][i] == board[2][i]:
            return board[0][i]
    if board[1][1] != EMPTY and (board[0][0] == board[1][1] == board[2][2] or
                                 board[0][2] == board[1][1] == board[2][0]):
        return board[1][1]
    return None


def terminal(board):
    return winner(board) is not None or not any(EMPTY in row for row in board)


def utility(board):
    return {X: 1, O: -1}.get(winner(board), 0)


def score_end(state):
    return utility(state) if terminal(state) else None

# %% play
def play(state, row, col, mark):
    new_board = [list(r) for r in state]
    new_board[row][col] = mark
    return tuple(tuple(r) for r in new_board)

# %% moves
def actions(board):
    return {(i, j) for i in range(3) for j in range(3) if board[i][j] == EMPTY}


def moves(state):
    return list(actions(state))

# %% score
def player(board):
    x_count = sum(row.count(X) for row in board)
    o_count = sum(row.count(O) for row in board)
    return O if x_count > o_count else X


def result(board, action):
    i, j = action
    if board[i][j] != EMPTY:
        raise ValueError("Invalid action")
    return play(board, i, j, player(board))


def max_value(board, alpha, beta):
    if terminal(board):
        return utility(board)
    v = -math.inf
    for action in actions(board):
        v = max(v, min_value(result(board, action), alpha, beta))
        alpha = max(alpha, v)
        if alpha >= beta:
            break
    return v


def min_value(board, alpha, beta):
    if terminal(board):
        return utility(board)
    v = math.inf
    for action in actions(board):
        v = min(v, max_value(result(board, action), alpha, beta))
        beta = min(beta, v)
        if alpha >= beta:
            break
    return v


def score(state, player_to_move):
    if terminal(state):
        return utility(state), None
    if player(state) == X:
        return max((min_value(result(state, a), -math.inf, math.inf), a) for a in actions(state))
    return min((max_value(result(state, a), -math.inf, math.inf), a) for a in actions(state))

# %% perfect_game
def perfect_game():
    board = EMPTY_BOARD
    print_state(board)
    while not terminal(board):
        print()
        board = result(board, score(board, player(board))[1])
        print_state(board)
    w = winner(board)
    print("Game Over: Tie." if w is None else f"Game Over: {w} wins.")
    return utility(board)
