# The magic-square trick: squares numbered by a 3x3 magic square, so that a player has a line exactly when three
# of their numbers sum to 15 (itertools.combinations); positions as two frozensets of numbers, memoized in a dict.
# Expected: 12/12.
from itertools import combinations

# %% print_state
def print_state(state):
    for row in state:
        print('|'.join(row))

# %% score_end
MAGIC = ((2, 7, 6),
         (9, 5, 1),
         (4, 3, 8))


def numbers(state, mark):
    return frozenset(MAGIC[r][c] for r in range(3) for c in range(3) if state[r][c] == mark)


def has_fifteen(nums):
    return any(sum(three) == 15 for three in combinations(nums, 3))


def outcome(xs, os):
    if has_fifteen(xs):
        return 1
    if has_fifteen(os):
        return -1
    return 0 if len(xs) + len(os) == 9 else None


def score_end(state):
    return outcome(numbers(state, 'x'), numbers(state, 'o'))

# %% play
def play(state, row, col, mark):
    return tuple(tuple(mark if (r, c) == (row, col) else state[r][c] for c in range(3)) for r in range(3))

# %% moves
def moves(state):
    return [(r, c) for r in range(3) for c in range(3) if state[r][c] == ' ']

# %% score
WHERE = {MAGIC[r][c]: (r, c) for r in range(3) for c in range(3)}
known = {}


def value_of(xs, os, player):
    if (xs, os, player) not in known:
        end = outcome(xs, os)
        if end is not None:
            known[xs, os, player] = (end, None)
        else:
            free = set(range(1, 10)) - xs - os
            if player == 'x':
                known[xs, os, player] = max((value_of(xs | {n}, os, 'o')[0], n) for n in free)
            else:
                known[xs, os, player] = min((value_of(xs, os | {n}, 'x')[0], n) for n in free)
    return known[xs, os, player]


def score(state, player):
    value, n = value_of(numbers(state, 'x'), numbers(state, 'o'), player)
    return value, WHERE.get(n)

# %% perfect_game
def perfect_game():
    state, player = EMPTY_BOARD, 'x'
    print_state(state)
    while score_end(state) is None:
        state = play(state, *score(state, player)[1], player)
        player = 'o' if player == 'x' else 'x'
        print()
        print_state(state)
    print('A draw.' if score_end(state) == 0 else 'A win.')
    return score_end(state)
