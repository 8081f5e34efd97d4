# Alpha-beta by the convention, that also stops trying moves once it has found a win for the player to move (no
# move can do better). Right values and moves; it prunes, but visits fewer positions than the convention counts.
# Expected: task 2's values, moves and prunes marks, not its count mark.
# %% alphabeta
def alphabeta(state, player, alpha, beta):
    end = score_end(state)
    if end is not None:
        return end, None
    best_value, best_move = (-INF if player == 'x' else INF), None
    for row, col in moves(state):
        value, _ = alphabeta(play(state, row, col, player), other(player), alpha, beta)
        if player == 'x':
            if value > best_value:
                best_value, best_move = value, (row, col)
            alpha = max(alpha, best_value)
        else:
            if value < best_value:
                best_value, best_move = value, (row, col)
            beta = min(beta, best_value)
        if alpha >= beta or best_value == (1 if player == 'x' else -1):
            break
    return best_value, best_move
