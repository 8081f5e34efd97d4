# Flat strings: the board as a 9-character string such as 'xo  x   o', squares numbered 0 to 8, lines as index
# triples, the search on strings cached with functools.lru_cache. Expected: 12/12.
from functools import lru_cache

# %% print_state
def flatten(state):
    return ''.join(''.join(row) for row in state)


def print_state(state):
    s = flatten(state)
    for i in range(0, 9, 3):
        print(s[i] + '|' + s[i + 1] + '|' + s[i + 2])

# %% score_end
WIN_LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def check(s):
    for a, b, c in WIN_LINES:
        if s[a] == s[b] == s[c] == 'x':
            return 1
        if s[a] == s[b] == s[c] == 'o':
            return -1
    return None if ' ' in s else 0


def score_end(state):
    return check(flatten(state))

# %% play
def unflatten(s):
    return tuple(s[0:3]), tuple(s[3:6]), tuple(s[6:9])


def play(state, row, col, mark):
    s = flatten(state)
    i = row * 3 + col
    return unflatten(s[:i] + mark + s[i + 1:])

# %% moves
def moves(state):
    return [(i // 3, i % 3) for i, ch in enumerate(flatten(state)) if ch == ' ']

# %% score
@lru_cache(maxsize=None)
def best(s, player):
    result = check(s)
    if result is not None:
        return result, None
    other = 'o' if player == 'x' else 'x'
    scored = []
    for i, ch in enumerate(s):
        if ch == ' ':
            scored.append((best(s[:i] + player + s[i + 1:], other)[0], i))
    value, i = max(scored) if player == 'x' else min(scored)
    return value, (i // 3, i % 3)


def score(state, player):
    return best(flatten(state), player)

# %% perfect_game
def perfect_game():
    s, player = ' ' * 9, 'x'
    print_state(unflatten(s))
    while check(s) is None:
        _, (row, col) = score(unflatten(s), player)
        i = row * 3 + col
        s = s[:i] + player + s[i + 1:]
        player = 'o' if player == 'x' else 'x'
        print()
        print_state(unflatten(s))
    print('draw' if check(s) == 0 else 'won by ' + ('x' if check(s) == 1 else 'o'))
    return check(s)
