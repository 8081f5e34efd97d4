# Bitboards: x's squares and o's squares as two 9-bit integers, the eight lines as bit masks, the search on the
# pair of ints cached with functools.lru_cache; boards converted at the boundary. Expected: 12/12.
from functools import lru_cache

# %% print_state
def print_state(state):
    for row in state:
        print('|'.join(row))

# %% score_end
WINS = (0b111000000, 0b000111000, 0b000000111, 0b100100100,
        0b010010010, 0b001001001, 0b100010001, 0b001010100)
FULL = 0b111111111


def bit(row, col):
    return 1 << (8 - 3 * row - col)


def to_bits(state):
    xs = os = 0
    for r in range(3):
        for c in range(3):
            if state[r][c] == 'x':
                xs |= bit(r, c)
            elif state[r][c] == 'o':
                os |= bit(r, c)
    return xs, os


def has_line(bits):
    return any(bits & w == w for w in WINS)


def end_value(xs, os):
    if has_line(xs):
        return 1
    if has_line(os):
        return -1
    return 0 if xs | os == FULL else None


def score_end(state):
    return end_value(*to_bits(state))

# %% play
def from_bits(xs, os):
    return tuple(tuple('x' if xs & bit(r, c) else 'o' if os & bit(r, c) else ' ' for c in range(3))
                 for r in range(3))


def play(state, row, col, mark):
    xs, os = to_bits(state)
    if mark == 'x':
        xs |= bit(row, col)
    else:
        os |= bit(row, col)
    return from_bits(xs, os)

# %% moves
def moves(state):
    xs, os = to_bits(state)
    return [(r, c) for r in range(3) for c in range(3) if not (xs | os) & bit(r, c)]

# %% score
@lru_cache(maxsize=None)
def search(xs, os, x_to_move):
    end = end_value(xs, os)
    if end is not None:
        return end, -1
    best, best_square = None, -1
    for square in range(9):
        b = 1 << (8 - square)
        if (xs | os) & b:
            continue
        value = search(xs | b, os, False)[0] if x_to_move else search(xs, os | b, True)[0]
        if best is None or (value > best if x_to_move else value < best):
            best, best_square = value, square
    return best, best_square


def score(state, player):
    value, square = search(*to_bits(state), player == 'x')
    return value, (divmod(square, 3) if square >= 0 else None)

# %% perfect_game
def perfect_game():
    state, player = EMPTY_BOARD, 'x'
    print_state(state)
    while score_end(state) is None:
        _, (row, col) = score(state, player)
        state = play(state, row, col, player)
        player = 'o' if player == 'x' else 'x'
        print()
        print_state(state)
    print('Result:', score_end(state), '(a draw)' if score_end(state) == 0 else '')
    return score_end(state)
