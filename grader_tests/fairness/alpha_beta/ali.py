# Right values and moves, but alphabeta and score_memo recurse through an inner helper, which the workbook
# asks them not to: their calls cannot be counted, so nothing shows the pruning or the memo at work.
# Expected: alphabeta-prunes, alphabeta-count and score_memo-table lost (12/15), and the visible tests say so.
# %% score_counted
def score_counted(state, player):
    """Plain minimax that also counts: return (value, best move or None, positions visited including state)."""
    end = score_end(state)
    if end is not None:
        return end, None, 1
    best_value, best_move, positions = None, None, 1
    for row, col in moves(state):
        value, _, below = score_counted(play(state, row, col, player), other(player))
        positions += below
        if best_move is None or (value > best_value if player == 'x' else value < best_value):
            best_value, best_move = value, (row, col)
    return best_value, best_move, positions

# %% alphabeta
def alphabeta(state, player, alpha, beta):
    """Minimax with alpha-beta pruning, through a helper that does the searching."""
    def search(state, player, alpha, beta):
        end = score_end(state)
        if end is not None:
            return end, None
        best_value, best_move = (-INF if player == 'x' else INF), None
        for row, col in moves(state):
            value, _ = search(play(state, row, col, player), other(player), alpha, beta)
            if value > best_value if player == 'x' else value < best_value:
                best_value, best_move = value, (row, col)
            if player == 'x':
                alpha = max(alpha, best_value)
            else:
                beta = min(beta, best_value)
            if alpha >= beta:
                break
        return best_value, best_move

    return search(state, player, alpha, beta)

# %% score_memo
def score_memo(state, player, known):
    """Minimax that remembers, through a helper that does the searching."""
    def search(state, player):
        if state not in known:
            end = score_end(state)
            if end is not None:
                known[state] = (end, None)
            else:
                options = [(search(play(state, row, col, player), other(player))[0], (row, col))
                           for row, col in moves(state)]
                known[state] = (max if player == 'x' else min)(options, key=lambda option: option[0])
        return known[state]

    return search(state, player)

# %% evaluate
def evaluate(state):
    """score_end for a finished board, otherwise (lines open to x - lines open to o) / 10."""
    end = score_end(state)
    if end is not None:
        return end
    open_to_x = sum(1 for line in lines(state) if 'o' not in line)
    open_to_o = sum(1 for line in lines(state) if 'x' not in line)
    return (open_to_x - open_to_o) / 10

# %% score_depth
def score_depth(state, player, depth):
    """Minimax looking depth moves ahead, then guessing with evaluate: return (value, best move or None)."""
    if depth == 0 or score_end(state) is not None:
        return evaluate(state), None
    best = None
    for row, col in moves(state):
        value, _ = score_depth(play(state, row, col, player), other(player), depth - 1)
        if best is None or (value > best[0] if player == 'x' else value < best[0]):
            best = (value, (row, col))
    return best

# %% count_games
def count_games(state, player):
    """Return (x_wins, o_wins, draws): how the games that can follow state, with player to move, end."""
    end = score_end(state)
    if end is not None:
        return int(end == 1), int(end == -1), int(end == 0)
    x_wins = o_wins = draws = 0
    for row, col in moves(state):
        x, o, d = count_games(play(state, row, col, player), other(player))
        x_wins, o_wins, draws = x_wins + x, o_wins + o, draws + d
    return x_wins, o_wins, draws

# %% reachable
def reachable(state, player):
    """Return the set of every board that can arise from state (included) with player to move."""
    found = set()

    def explore(state, player):
        if state in found:
            return
        found.add(state)
        if score_end(state) is None:
            for row, col in moves(state):
                explore(play(state, row, col, player), other(player))

    explore(state, player)
    return found

# %% canonical
def canonical(state):
    """Return the smallest of the eight rotations and reflections of state."""
    images = []
    for _ in range(4):
        images += [state, mirror(state)]
        state = rotate(state)
    return min(images)

# %% hand_trace
def hand_trace():
    """The values you worked out by hand for x's moves TRACE_MOVES on TRACE_BOARD, in that order (each +1, 0 or -1)."""
    return (1, 0, 0)


# %% perfect_opponent
Minimax never loses: it assumes the best reply, and the best it can force from the empty board is a draw.
