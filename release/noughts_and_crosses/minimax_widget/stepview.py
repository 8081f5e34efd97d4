"""The tree while the class steps through a search: a copy of the drawn Tree that knows only what the steps have
shown so far. A value or window appears at the step that backs it up (from the Outline), never before; a move is
greyed as pruned at the step it is cut; best moves and best play stay hidden until the search is over; the node of
the current step is marked. drawing.draw_tree draws it like any Tree."""
from .calls import format_bound, format_value
from .model import Node, Tree


class ShownNode(Node):
    """A board of the tree while stepping: labelled by its move alone (who is to move is said elsewhere)."""
    __slots__ = ()
    move_only = True


def stepping_tree(tree, outline, current, asking=None):
    """The Tree to draw after the steps that built ``outline``: values, ends and windows from the outline only.
    ``current`` is the path of the current step, ``asking`` the path whose value the viewer is to predict."""
    root = _copy(tree.root, outline, asking, False)
    shown = Tree(root, tree.depth, [], None, None, tree.counts)
    shown.search = tree.search
    shown.alphabeta = tree.alphabeta if outline.alphabeta else None
    shown.stepping = True
    shown.current = _deepest(root, current)
    shown.asking = asking
    return shown


def _copy(node, outline, asking, pruned):
    copy = ShownNode(node.state, node.player, node.move, node.path)
    copy.error = node.error
    line = outline.lines.get(node.path)
    pruned = pruned or (line is not None and line.status == 'pruned')
    copy.pruned = pruned
    if line is not None and not pruned and node.path != asking:
        if line.status == 'done':
            copy.value = line.value
            copy.end = line.value if line.kind == 'leaf' else None
        if outline.alphabeta and line.status in ('open', 'done'):
            copy.window = line.window
    copy.below = node.below
    copy.children = [_copy(child, outline, asking, pruned) for child in node.children]
    return copy


def _deepest(root, path):
    """The longest start of ``path`` that the tree draws (the current step may lie below its depth)."""
    node, reached = root, ()
    for move in path or ():
        node = node.child(tuple(move))
        if node is None:
            break
        reached = node.path
    return reached


def stepping_info(node, tree):
    """What hovering a board says while stepping: who is to move and what the steps have shown of it."""
    where = 'the position searched' if not node.path else 'after ' + ' then '.join(
        f'{row},{col}' for row, col in node.path)
    parts = [f'{where}: {node.player} to move']
    if node.pruned:
        parts.append('pruned')
    elif node.path == getattr(tree, 'asking', None):
        parts.append('value: ? (predict it)')
    elif node.value is not None:
        parts.append(f'value backed up: {format_value(node.value)}')
    else:
        parts.append('value: not backed up yet')
    if node.window is not None:
        parts.append(f'α {format_bound(node.window[0])}, β {format_bound(node.window[1])}')
    if node.path:
        parts.append('click to play to this board')
    return ' · '.join(parts)
