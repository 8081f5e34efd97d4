# Iterative, no recursion: score walks the game from its board with an explicit stack of (board, player) entries,
# children before parents, backing values up into a dict kept between calls, then picks the root's best move.
# Expected: 12/12.
# %% print_state
def print_state(state):
    text = ''
    for row in state:
        text += '|'.join(row) + '\n'
    print(text)

# %% score_end
TRIPLES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def score_end(state):
    cells = [state[r][c] for r in range(3) for c in range(3)]
    for a, b, c in TRIPLES:
        if cells[a] != ' ' and cells[a] == cells[b] == cells[c]:
            return 1 if cells[a] == 'x' else -1
    if ' ' in cells:
        return None
    return 0

# %% play
def play(state, row, col, mark):
    new = []
    for r in range(3):
        new_row = []
        for c in range(3):
            new_row.append(mark if r == row and c == col else state[r][c])
        new.append(tuple(new_row))
    return tuple(new)

# %% moves
def moves(state):
    empty = []
    for r in range(3):
        for c in range(3):
            if state[r][c] == ' ':
                empty.append((r, c))
    return empty

# %% score
def other(player):
    return 'o' if player == 'x' else 'x'


values = {}     # (board, player to move): minimax value, kept between calls


def score(state, player):
    stack = [(state, player)]
    while stack:
        board, turn = stack[-1]
        if (board, turn) in values:
            stack.pop()
            continue
        end = score_end(board)
        if end is not None:
            values[board, turn] = end
            stack.pop()
            continue
        children = [(play(board, r, c, turn), other(turn)) for r, c in moves(board)]
        waiting = [child for child in children if child not in values]
        if waiting:
            stack.extend(waiting)       # come back to this board when they have values
            continue
        child_values = [values[child] for child in children]
        values[board, turn] = max(child_values) if turn == 'x' else min(child_values)
        stack.pop()
    if score_end(state) is not None:
        return values[state, player], None
    for r, c in moves(state):
        if values[play(state, r, c, player), other(player)] == values[state, player]:
            return values[state, player], (r, c)

# %% perfect_game
def perfect_game():
    state, player = EMPTY_BOARD, 'x'
    print_state(state)
    while score_end(state) is None:
        _, (r, c) = score(state, player)
        state = play(state, r, c, player)
        player = other(player)
        print_state(state)
    print('Final score', score_end(state), '- a draw' if score_end(state) == 0 else '')
    return score_end(state)
