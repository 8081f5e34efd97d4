"""A classroom widget for noughts and crosses: play against the notebook's own minimax, watch a perfect game and
read the search tree below any position, on a projector.

    from minimax_widget import GameTreeWidget
    GameTreeWidget(print_state=print_state, score_end=score_end, play=play, moves=moves, score=score)

It uses only the functions it is given (see docs/widget.md). Under nbgrader (NBGRADER_EXECUTION set) it imports
neither ipywidgets nor anywidget and shows one line of text.
"""
from .grading import grading

if grading():
    from .grading import DisabledWidget as GameTreeWidget
else:
    from .controls import GameTreeWidget

__all__ = ['GameTreeWidget']
