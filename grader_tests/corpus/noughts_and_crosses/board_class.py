# Object-oriented: a Board class over nine squares (winner(), result(), empty_squares(), place() returning a new
# Board, __eq__ and __hash__ so that Boards key a dict), a Minimax solver class keeping a memo, and squares as
# Square(row, col) namedtuples, in moves and in score's move. Expected: 12/12.
from collections import namedtuple

# %% print_state
Square = namedtuple('Square', 'row col')


class Board:
    LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))

    def __init__(self, squares):
        self.squares = tuple(squares)

    @classmethod
    def from_state(cls, state):
        return cls(square for row in state for square in row)

    def to_state(self):
        s = self.squares
        return s[0:3], s[3:6], s[6:9]

    def winner(self):
        for a, b, c in self.LINES:
            if self.squares[a] != ' ' and self.squares[a] == self.squares[b] == self.squares[c]:
                return self.squares[a]
        return None

    def result(self):
        won = self.winner()
        if won is not None:
            return 1 if won == 'x' else -1
        return None if ' ' in self.squares else 0

    def empty_squares(self):
        return [i for i, square in enumerate(self.squares) if square == ' ']

    def place(self, i, mark):
        return Board(self.squares[:i] + (mark,) + self.squares[i + 1:])

    def __eq__(self, other):
        return isinstance(other, Board) and self.squares == other.squares

    def __hash__(self):
        return hash(self.squares)

    def __str__(self):
        return '\n'.join('|'.join(row) for row in self.to_state())


def print_state(state):
    print(Board.from_state(state))

# %% score_end
def score_end(state):
    return Board.from_state(state).result()

# %% play
def play(state, row, col, mark):
    return Board.from_state(state).place(3 * row + col, mark).to_state()

# %% moves
def moves(state):
    return [Square(*divmod(i, 3)) for i in Board.from_state(state).empty_squares()]

# %% score
class Minimax:
    def __init__(self):
        self.memo = {}

    def best(self, board, player):
        if (board, player) not in self.memo:
            self.memo[board, player] = self.search(board, player)
        return self.memo[board, player]

    def search(self, board, player):
        result = board.result()
        if result is not None:
            return result, None
        opponent = 'o' if player == 'x' else 'x'
        options = [(self.best(board.place(i, player), opponent)[0], i) for i in board.empty_squares()]
        value, i = (max if player == 'x' else min)(options, key=lambda option: option[0])
        return value, Square(*divmod(i, 3))


solver = Minimax()


def score(state, player):
    return solver.best(Board.from_state(state), player)

# %% perfect_game
def perfect_game():
    board, player = Board.from_state(EMPTY_BOARD), 'x'
    print_state(board.to_state())
    while board.result() is None:
        _, (row, col) = score(board.to_state(), player)
        board = board.place(3 * row + col, player)
        print()
        print_state(board.to_state())
        player = 'o' if player == 'x' else 'x'
    print('The game is drawn.' if board.result() == 0 else f'{board.winner()} has won.')
    return board.result()
