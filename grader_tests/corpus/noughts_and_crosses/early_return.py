# Plain recursive minimax with no memo, that returns as soon as a move wins on the spot or reaches the best value
# the player can hope for (1 for x, -1 for o); score_end with explicit index checks. Expected: 12/12.
# %% print_state
def print_state(state):
    print(f"{state[0][0]}|{state[0][1]}|{state[0][2]}")
    print(f"{state[1][0]}|{state[1][1]}|{state[1][2]}")
    print(f"{state[2][0]}|{state[2][1]}|{state[2][2]}")

# %% score_end
def score_end(state):
    for i in range(3):
        if state[i][0] == state[i][1] == state[i][2] != ' ':
            return 1 if state[i][0] == 'x' else -1
        if state[0][i] == state[1][i] == state[2][i] != ' ':
            return 1 if state[0][i] == 'x' else -1
    if state[1][1] != ' ' and (state[0][0] == state[1][1] == state[2][2] or
                               state[0][2] == state[1][1] == state[2][0]):
        return 1 if state[1][1] == 'x' else -1
    for row in state:
        if ' ' in row:
            return None
    return 0

# %% play
def play(state, row, col, mark):
    board = list(map(list, state))
    board[row][col] = mark
    return tuple(map(tuple, board))

# %% moves
def moves(state):
    return [(r, c) for r in range(3) for c in range(3) if state[r][c] == ' ']

# %% score
def score(state, player):
    result = score_end(state)
    if result is not None:
        return result, None
    target = 1 if player == 'x' else -1        # the best this player can get
    next_player = 'o' if player == 'x' else 'x'
    best_value, best_move = None, None
    for move in moves(state):
        child = play(state, move[0], move[1], player)
        if score_end(child) == target:
            return target, move                 # wins right now
        value, _ = score(child, next_player)
        if value == target:
            return value, move                  # nothing can beat it
        if best_value is None or (value > best_value if player == 'x' else value < best_value):
            best_value, best_move = value, move
    return best_value, best_move

# %% perfect_game
def perfect_game():
    state = EMPTY_BOARD
    player = 'x'
    while True:
        print_state(state)
        print()
        if score_end(state) is not None:
            break
        move = score(state, player)[1]
        state = play(state, move[0], move[1], player)
        player = 'o' if player == 'x' else 'x'
    if score_end(state) == 0:
        print("It's a draw!")
    return score_end(state)
