# Correct and quick: score remembers its answers with functools.lru_cache.
from functools import lru_cache

# %% print_state
def print_state(state):
    """Print the board as three rows of ascii art, such as x|o| ."""
    for row in state:
        print('|'.join(row))

# %% score_end
def score_end(state):
    """Return 1 if x has a line, -1 if o has, 0 for a full board without one, None if play goes on."""
    lines = list(state) + list(zip(*state)) + [tuple(state[i][i] for i in range(3)),
                                               tuple(state[i][2 - i] for i in range(3))]
    for mark, value in (('x', 1), ('o', -1)):
        if (mark,) * 3 in lines:
            return value
    return 0 if not any(' ' in row for row in state) else None

# %% play
def play(state, row, col, mark):
    """Return a new board: state with mark placed at (row, col)."""
    rows = [list(r) for r in state]
    rows[row][col] = mark
    return tuple(tuple(r) for r in rows)

# %% moves
def moves(state):
    """Return a list of (row, col) for every empty square."""
    return [(r, c) for r in range(3) for c in range(3) if state[r][c] == ' ']

# %% score
@lru_cache(maxsize=None)
def score(state, player):
    """Minimax: return (value from x's point of view, best move for player or None when the game is over)."""
    end = score_end(state)
    if end is not None:
        return end, None
    following = 'o' if player == 'x' else 'x'
    scored = [(score(play(state, r, c, player), following)[0], (r, c)) for r, c in moves(state)]
    return max(scored, key=lambda s: s[0]) if player == 'x' else min(scored, key=lambda s: s[0])

# %% perfect_game
def perfect_game():
    """Play x against o from the empty board, both choosing with score; print the game; return the final value."""
    state, player = EMPTY_BOARD, 'x'
    print_state(state)
    while score_end(state) is None:
        state = play(state, *score(state, player)[1], player)
        print()
        print_state(state)
        player = 'o' if player == 'x' else 'x'
    print("It's a draw!" if score_end(state) == 0 else 'Somebody won.')
    return score_end(state)
