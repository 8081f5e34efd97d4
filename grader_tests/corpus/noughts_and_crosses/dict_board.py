# Boards as dicts {(row, col): mark}, lines as lists of coordinates, a search that makes and unmakes moves on one
# dict in place, memoized by a frozenset of its items. Expected: 12/12.
# %% print_state
SQUARES = [(r, c) for r in range(3) for c in range(3)]


def to_dict(state):
    return {(r, c): state[r][c] for r, c in SQUARES}


def to_tuples(board):
    return tuple(tuple(board[r, c] for c in range(3)) for r in range(3))


def print_state(state):
    board = to_dict(state)
    for r in range(3):
        print(f'{board[r, 0]}|{board[r, 1]}|{board[r, 2]}')

# %% score_end
LINES = ([[(r, c) for c in range(3)] for r in range(3)] + [[(r, c) for r in range(3)] for c in range(3)]
         + [[(i, i) for i in range(3)], [(i, 2 - i) for i in range(3)]])


def winner(board):
    for line in LINES:
        marks = {board[square] for square in line}
        if len(marks) == 1 and ' ' not in marks:
            return marks.pop()
    return None


def result_of(board):
    won = winner(board)
    if won == 'x':
        return 1
    if won == 'o':
        return -1
    return None if ' ' in board.values() else 0


def score_end(state):
    return result_of(to_dict(state))

# %% play
def play(state, row, col, mark):
    board = to_dict(state)
    board[row, col] = mark
    return to_tuples(board)

# %% moves
def empty_squares(board):
    return [square for square in SQUARES if board[square] == ' ']


def moves(state):
    return empty_squares(to_dict(state))

# %% score
seen = {}


def minimax(board, player):
    key = (frozenset(board.items()), player)
    if key not in seen:
        end = result_of(board)
        if end is not None:
            seen[key] = (end, None)
        else:
            best = None
            for square in empty_squares(board):
                board[square] = player            # try the move...
                value = minimax(board, 'o' if player == 'x' else 'x')[0]
                board[square] = ' '               # ...and take it back
                if best is None or (value > best[0] if player == 'x' else value < best[0]):
                    best = (value, square)
            seen[key] = best
    return seen[key]


def score(state, player):
    return minimax(to_dict(state), player)

# %% perfect_game
def perfect_game():
    board, player = to_dict(EMPTY_BOARD), 'x'
    print_state(to_tuples(board))
    while result_of(board) is None:
        _, square = score(to_tuples(board), player)
        board[square] = player
        player = 'o' if player == 'x' else 'x'
        print()
        print_state(to_tuples(board))
    print('Draw!' if result_of(board) == 0 else 'Winner: ' + winner(board))
    return result_of(board)
