"""A made-up class for the similarity report (grader_tests/test_similarity.py, benchmarks/similarity_benchmark.py):
honest students who write the noughts-and-crosses answers each in their own style (names, layout, comments, a
few ways to write each function, the most usual way most often), some with a common mistake (play returning
lists, score_end without the second diagonal, moves returning a generator); copiers who take another student's
answers and rename the variables, reorder the functions of a cell, rewrite the comments and the layout, or only
the comments and layout; and a group who hand in byte-identical copies of the most usual correct answers.

    make_class(seed) -> Class(answers={student: {grade_id: source}}, groups=[set of students who copied])
"""
import random
import re
from dataclasses import dataclass, field

DOC = {
    'print_state': '"""Print the board as three rows of ascii art, such as x|o| ."""',
    'score_end': '"""Return 1 if x has a line, -1 if o has, 0 for a full board without one, None if play goes on."""',
    'play': '"""Return a new board: state with mark placed at (row, col)."""',
    'moves': '"""Return a list of (row, col) for every empty square."""',
    'score': '"""Minimax: return (value from x\'s point of view, best move for player or None when the game is '
             'over)."""',
    'perfect_game': '"""Play x against o from the empty board, both choosing with score; print the game; return the '
                    'final value."""',
}
# Each function's ways of writing it, the usual one first. `{name}`s are the student's names; `@@diag@@` lines are
# the second diagonal (left out by the score_end mistake); `#>` starts a helper function a copier may move.
WAYS = {
    'print_state': [
        "def print_state(state):\n    {doc}\n    for {row} in state:\n        print('|'.join({row}))",
        "def print_state(state):\n    {doc}\n    for {i} in range(3):\n"
        "        print(state[{i}][0] + '|' + state[{i}][1] + '|' + state[{i}][2])",
        "def print_state(state):\n    {doc}\n    {out} = ['|'.join({row}) for {row} in state]\n"
        "    print('\\n'.join({out}))",
    ],
    'score_end': [
        "def score_end(state):\n    {doc}\n    {lines} = []\n    for {i} in range(3):\n"
        "        {lines}.append(state[{i}])\n        {lines}.append((state[0][{i}], state[1][{i}], state[2][{i}]))\n"
        "    {lines}.append((state[0][0], state[1][1], state[2][2]))\n"
        "@@diag@@    {lines}.append((state[0][2], state[1][1], state[2][0]))\n"
        "    for {line} in {lines}:\n        if {line} == ('x', 'x', 'x'):\n            return 1\n"
        "        if {line} == ('o', 'o', 'o'):\n            return -1\n    for {row} in state:\n"
        "        if ' ' in {row}:\n            return None\n    return 0",
        "#>def {winner}({line}):\n    if {line}[0] != ' ' and {line}[0] == {line}[1] == {line}[2]:\n"
        "        return 1 if {line}[0] == 'x' else -1\n    return None\n\n\n"
        "#>def score_end(state):\n    {doc}\n    {lines} = list(state) + [tuple(state[{r}][{c}] for {r} in range(3)) "
        "for {c} in range(3)]\n    {lines}.append(tuple(state[{i}][{i}] for {i} in range(3)))\n"
        "@@diag@@    {lines}.append(tuple(state[{i}][2 - {i}] for {i} in range(3)))\n"
        "    for {line} in {lines}:\n        {found} = {winner}({line})\n        if {found} is not None:\n"
        "            return {found}\n    if any(' ' in {row} for {row} in state):\n        return None\n    return 0",
        "def score_end(state):\n    {doc}\n    {cells} = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), "
        "(2, 5, 8), (0, 4, 8)]\n@@diag@@    {cells}.append((2, 4, 6))\n"
        "    {flat} = [{mark} for {row} in state for {mark} in {row}]\n    for {a}, {b}, {c} in {cells}:\n"
        "        if {flat}[{a}] == {flat}[{b}] == {flat}[{c}] == 'x':\n            return 1\n"
        "        if {flat}[{a}] == {flat}[{b}] == {flat}[{c}] == 'o':\n            return -1\n"
        "    return None if ' ' in {flat} else 0",
    ],
    'play': [
        "def play(state, row, col, mark):\n    {doc}\n    {board} = [list({r}) for {r} in state]\n"
        "    {board}[row][col] = mark\n    return tuple(tuple({r}) for {r} in {board})",
        "def play(state, row, col, mark):\n    {doc}\n    return tuple(tuple(mark if ({i}, {j}) == (row, col) else "
        "state[{i}][{j}] for {j} in range(3)) for {i} in range(3))",
        "def play(state, row, col, mark):\n    {doc}\n    {board} = list(map(list, state))\n"
        "    {board}[row][col] = mark\n    return tuple(map(tuple, {board}))",
    ],
    'moves': [
        "def moves(state):\n    {doc}\n    {out} = []\n    for {r} in range(3):\n        for {c} in range(3):\n"
        "            if state[{r}][{c}] == ' ':\n                {out}.append(({r}, {c}))\n    return {out}",
        "def moves(state):\n    {doc}\n    return [({r}, {c}) for {r} in range(3) for {c} in range(3) "
        "if state[{r}][{c}] == ' ']",
        "def moves(state):\n    {doc}\n    {out} = []\n    for {k} in range(9):\n"
        "        if state[{k} // 3][{k} % 3] == ' ':\n            {out}.append(({k} // 3, {k} % 3))\n    return {out}",
    ],
    'score': [
        "def score(state, player):\n    {doc}\n    {end} = score_end(state)\n    if {end} is not None:\n"
        "        return {end}, None\n    {best}, {move} = None, None\n    for {r}, {c} in moves(state):\n"
        "        if player == 'x':\n            {value}, _ = score(play(state, {r}, {c}, 'x'), 'o')\n"
        "            if {best} is None or {value} > {best}:\n                {best}, {move} = {value}, ({r}, {c})\n"
        "        else:\n            {value}, _ = score(play(state, {r}, {c}, 'o'), 'x')\n"
        "            if {best} is None or {value} < {best}:\n                {best}, {move} = {value}, ({r}, {c})\n"
        "    return {best}, {move}",
        "#>def {other}(player):\n    return 'o' if player == 'x' else 'x'\n\n\n"
        "#>def score(state, player):\n    {doc}\n    {end} = score_end(state)\n    if {end} is not None:\n"
        "        return {end}, None\n    {options} = []\n    for {move} in moves(state):\n"
        "        {value}, _ = score(play(state, {move}[0], {move}[1], player), {other}(player))\n"
        "        {options}.append(({value}, {move}))\n    if player == 'x':\n"
        "        return max({options}, key=lambda {o}: {o}[0])\n    return min({options}, key=lambda {o}: {o}[0])",
        "def score(state, player):\n    {doc}\n    {end} = score_end(state)\n    if {end} is not None:\n"
        "        return {end}, None\n    {sign} = 1 if player == 'x' else -1\n    {best} = None\n"
        "    for {r}, {c} in moves(state):\n        {value} = score(play(state, {r}, {c}, player), "
        "'o' if player == 'x' else 'x')[0]\n        if {best} is None or {value} * {sign} > {best}[0] * {sign}:\n"
        "            {best} = ({value}, ({r}, {c}))\n    return {best}",
    ],
    'perfect_game': [
        "def perfect_game():\n    {doc}\n    {board} = EMPTY_BOARD\n    player = 'x'\n    print_state({board})\n"
        "    print()\n    while score_end({board}) is None:\n        {value}, ({r}, {c}) = score({board}, player)\n"
        "        {board} = play({board}, {r}, {c}, player)\n        print_state({board})\n        print()\n"
        "        if player == 'x':\n            player = 'o'\n        else:\n            player = 'x'\n"
        "    {end} = score_end({board})\n    if {end} == 1:\n        print('x wins')\n    elif {end} == -1:\n"
        "        print('o wins')\n    else:\n        print('The game is a draw')\n    return {end}",
        "def perfect_game():\n    {doc}\n    {board}, {turn} = EMPTY_BOARD, 'x'\n    print_state({board})\n"
        "    while score_end({board}) is None:\n        {move} = score({board}, {turn})[1]\n"
        "        {board} = play({board}, {move}[0], {move}[1], {turn})\n        print()\n        print_state({board})\n"
        "        {turn} = 'o' if {turn} == 'x' else 'x'\n    {end} = score_end({board})\n"
        "    print({{1: 'x wins', -1: 'o wins', 0: 'The game is a draw'}}[{end}])\n    return {end}",
    ],
}
# The common mistakes: (function, what the student's source becomes).
MISTAKES = {
    'play returns lists': ('play', lambda s: re.sub(r'return tuple\(map\(tuple, (\w+)\)\)|return tuple\(tuple\(\w+\) '
                                                    r'for \w+ in (\w+)\)', lambda m: f'return {m[1] or m[2]}', s)),
    'score_end without a diagonal': ('score_end', lambda s: re.sub(r'@@diag@@.*\n', '', s)),
    'moves returns a generator': ('moves', lambda s: s.replace("return [(", "return ((").replace("== ' ']",
                                                                                                 "== ' ')")),
}
# Small habits that differ between students writing the same way (each student has about half of them).
HABITS = [
    (r'range\(3\)', 'range(len(state))'), (r' is None', ' == None'), (r' is not None', ' != None'),
    (r'return (\w+), None', r'return (\1, None)'), (r'return None\n', 'return\n'), (r"print\(\)", "print('')"),
    (r'(\w+) > (\w+)\n', r'\2 < \1\n'), (r'(\w+) < (\w+)\n', r'\2 > \1\n'),
    (r"player == 'x'", "player != 'o'"), (r"(\w+)\.append\((.*)\)\n", r"\1 += [\2]\n"),
    (r"'o' if (\w+) == 'x' else 'x'", r"'x' if \1 == 'o' else 'o'"), (r'\[(\d)\]\[(\d)\]', r'[\1][\2 ]'),
]
NAMES = {
    'row': ['row', 'r', 'line', 'cells', 'squares'], 'i': ['i', 'n', 'idx', 'k', 'x'], 'out': ['result', 'out',
    'empty', 'free', 'spots', 'found'], 'lines': ['lines', 'triples', 'wins', 'all_lines', 'checks'],
    'line': ['line', 'l', 'trio', 'three', 't'], 'winner': ['winner', 'line_winner', 'who_won', 'owner'],
    'found': ['found', 'w', 'res', 'who'], 'cells': ['cells', 'combos', 'wins', 'triples'], 'flat': ['flat', 'cells_',
    'f', 'squares'], 'mark': ['m', 'cell', 'sq', 'ch'], 'a': ['a', 'p', 'i1'], 'b': ['b', 'q', 'i2'], 'c': ['c', 's',
    'i3'], 'r': ['r', 'row_', 'i', 'y'], 'j': ['j', 'cc', 'col_', 'x2'], 'board': ['board', 'new', 'grid', 'b2',
    'copy'], 'k': ['k', 'n', 'pos', 'square'], 'end': ['end', 'result', 'outcome', 'final', 'done'], 'best': ['best',
    'top', 'best_value', 'bv'], 'move': ['move', 'best_move', 'mv', 'choice'], 'value': ['value', 'v', 'val',
    'sc'], 'other': ['other', 'opponent', 'next_player', 'swap'], 'options': ['options', 'results', 'scores',
    'children'], 'o': ['o', 't', 'pair', 'item'], 'sign': ['sign', 'direction', 'factor', 's'], 'turn': ['turn',
    'who', 'current', 'p'],
}
COMMENTS = ['# go through every square', '# check the rows first', '# TODO tidy this up', '# base case',
            '# copy so the old board stays', '# try each move', '# x maximises, o minimises', '# done here',
            '# the board is full', '# loop', '# recursion!', '# helper', '# keep the best so far', '# swap turns']
USUAL = 0.6      # how often an honest student writes a function the usual way


@dataclass
class Class:
    answers: dict = field(default_factory=dict)        # {student: {grade_id: source}}
    groups: list = field(default_factory=list)          # [set of students one of whom copied the others]
    mistakes: dict = field(default_factory=dict)        # {student: [mistake]}


def names(rng):
    """One student's names: a distinct name for each placeholder."""
    chosen, taken = {}, set()
    for key, pool in NAMES.items():
        free = [name for name in pool if name not in taken] or [f'{pool[0]}{len(taken)}']
        chosen[key] = rng.choice(free)
        taken.add(chosen[key])
    return chosen


def restyle(source, rng, reorder=False):
    """`source` in one student's layout: indent width, operator spacing, blank lines, comments; with `reorder`,
    the functions of a cell in another order."""
    parts = [part for part in re.split(r'^#>', source, flags=re.MULTILINE) if part.strip()]
    if reorder and len(parts) > 1:
        parts.reverse()
    indent, tight, airy = rng.choice([4, 4, 2]), rng.random() < 0.3, rng.random() < 0.3
    out = []
    for line in '\n\n\n'.join(part.strip('\n') for part in parts).splitlines():
        body = line.lstrip(' ')
        depth = (len(line) - len(body)) // 4
        if tight and "'" not in body:
            body = re.sub(r' (==|!=|=|\+|\*|-|//|%|<|>) ', r'\1', body)
        if body and not body.startswith(('def ', '"""', 'return', 'else', 'elif')) and rng.random() < 0.12:
            out.append(' ' * indent * depth + rng.choice(COMMENTS))
        out.append(' ' * indent * depth + body)
        if airy and body.endswith(':') is False and depth and rng.random() < 0.2:
            out.append('')
    return '\n'.join(out)


def write(choices, mistakes, rng, reorder=False, chosen=None):
    """A student's answers from their ways ({function: index}) and mistakes, in a fresh style drawn from `rng`
    (with the names `chosen`, if given)."""
    chosen = chosen or names(rng)
    answers = {}
    for function, way in choices.items():
        if function == 'habits':
            continue
        source = WAYS[function][way].format(doc=DOC[function], **chosen)
        for mistake in mistakes:
            if MISTAKES[mistake][0] == function:
                source = MISTAKES[mistake][1](source)
        source = source.replace('@@diag@@', '')
        for habit in choices['habits']:
            source = re.sub(HABITS[habit][0], HABITS[habit][1], source, flags=re.MULTILINE)
        answers[function] = restyle(source, rng, reorder)
    return answers, chosen


def honest_choices(rng):
    choices = {function: 0 if rng.random() < USUAL else rng.randrange(1, len(ways)) for function, ways in WAYS.items()}
    return dict(choices, habits=[n for n in range(len(HABITS)) if rng.random() < 0.5])


def make_class(seed=1, size=60, copier_pairs=6, identical=6, with_mistakes=16):
    """A class of `size`: `identical` byte-identical copies of the usual answers, `copier_pairs` pairs (a student and
    one who copied them: half renamed and reordered, half only new comments and layout), the rest honest, of whom
    `with_mistakes` make one or two common mistakes."""
    rng = random.Random(seed)
    made = Class()
    usual, _ = write(dict({function: 0 for function in WAYS}, habits=[]), [], rng)
    group = {f'same{n + 1}' for n in range(identical)}
    made.answers.update({student: dict(usual) for student in sorted(group)})
    made.groups.append(group)
    honest = size - identical - copier_pairs
    for n in range(honest):
        student = f'student{n + 1:02d}'
        choices = honest_choices(rng)
        if n < copier_pairs:      # the copied ones write something of their own, else a copy cannot be told apart
            while sum(way != 0 for function, way in choices.items() if function != 'habits') < 2:
                choices = honest_choices(rng)
        mistakes = []
        if copier_pairs <= n < copier_pairs + with_mistakes:
            mistakes = rng.sample(sorted(MISTAKES), 1 if rng.random() < 0.7 else 2)
            if 'moves returns a generator' in mistakes:
                choices['moves'] = 1
            if 'play returns lists' in mistakes and choices['play'] == 1:
                choices['play'] = 0
        made.answers[student], chosen = write(choices, mistakes, rng)
        made.mistakes[student] = mistakes
        if n < copier_pairs:
            copier, theirs = f'copier{n + 1:02d}', random.Random(seed * 1000 + n)
            # odd ones keep the names and change only comments and layout; even ones rename and reorder too
            made.answers[copier], _ = write(choices, mistakes, theirs, reorder=n % 2 == 0,
                                            chosen=chosen if n % 2 else None)
            made.groups.append({student, copier})
    return made

