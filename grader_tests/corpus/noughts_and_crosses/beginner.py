# A first-year's long-hand minimax with no memo and no pruning: nested loops over rows and columns, moves as
# [row, col] lists, separate branches for x and o, best values started at -2 and 2, the recursion through score
# itself. Expected: 12/12.
# %% print_state
def print_state(state):
    for row in state:
        print('%s|%s|%s' % row)

# %% score_end
def score_end(state):
    for player, value in [('x', 1), ('o', -1)]:
        for i in range(3):
            if state[i][0] == player and state[i][1] == player and state[i][2] == player:
                return value
            if state[0][i] == player and state[1][i] == player and state[2][i] == player:
                return value
        if state[0][0] == player and state[1][1] == player and state[2][2] == player:
            return value
        if state[0][2] == player and state[1][1] == player and state[2][0] == player:
            return value
    for row in state:
        for square in row:
            if square == ' ':
                return None
    return 0

# %% play
def play(state, row, col, mark):
    new_state = []
    for r in range(3):
        new_row = list(state[r])
        if r == row:
            new_row[col] = mark
        new_state.append(tuple(new_row))
    return tuple(new_state)

# %% moves
def moves(state):
    result = []
    for row in range(3):
        for col in range(3):
            if state[row][col] == ' ':
                result.append([row, col])
    return result

# %% score
def score(state, player):
    end = score_end(state)
    if end is not None:
        return end, None
    if player == 'x':
        best_value = -2
        best_move = None
        for move in moves(state):
            value, _ = score(play(state, move[0], move[1], 'x'), 'o')
            if value > best_value:
                best_value = value
                best_move = move
    else:
        best_value = 2
        best_move = None
        for move in moves(state):
            value, _ = score(play(state, move[0], move[1], 'o'), 'x')
            if value < best_value:
                best_value = value
                best_move = move
    return best_value, best_move

# %% perfect_game
def perfect_game():
    state = EMPTY_BOARD
    player = 'x'
    print_state(state)
    print()
    for turn in range(9):
        if score_end(state) is not None:
            break
        value, move = score(state, player)
        state = play(state, move[0], move[1], player)
        print_state(state)
        print()
        if player == 'x':
            player = 'o'
        else:
            player = 'x'
    result = score_end(state)
    if result == 0:
        print("It's a draw!")
    elif result == 1:
        print('x wins!')
    else:
        print('o wins!')
    return result
