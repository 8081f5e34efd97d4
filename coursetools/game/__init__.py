"""The one model of noughts and crosses: boards, the winning lines, moves, and exhaustive answers (the oracle,
depth-limited values, symmetries). Pure functions over immutable boards; imports only the standard library."""
