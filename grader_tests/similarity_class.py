"""A made-up class for the similarity report (grader_tests/test_similarity.py, benchmarks/similarity_benchmark.py):
honest students who write the noughts-and-crosses answers each from independent choices (for every function a
shape and an option for each of its slots, the usual one half the time; docstrings kept or not; names, habits,
layout, comments), some with a common mistake (play returning lists, score_end without the second diagonal, moves
returning a generator) and different elsewhere; copiers who take another student's answers and rename the
variables, reorder the functions of a cell, rewrite the comments and the layout, or only the comments and
layout; and a group who hand in byte-identical copies of the usual answers. docs/similarity.md says why.

    make_class(seed) -> Class(answers={student: {grade_id: source}}, groups=[set of students who copied])
"""
import pathlib
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
HEAD = {'print_state': 'def print_state(state):', 'score_end': 'def score_end(state):',
        'play': 'def play(state, row, col, mark):', 'moves': 'def moves(state):',
        'score': 'def score(state, player):', 'perfect_game': 'def perfect_game():'}
# Each function: (its shapes, {slot: its options}), the usual option first. A shape's `<<slot>>` is filled with one
# of the slot's options; an option (helper, text) also puts a helper function before the function; `@@diag@@`
# lines are the second diagonal (left out by the score_end mistake). `{name}`s are the student's names.
PARTS = {
    'print_state': ([
        "    for {row} in state:\n        print('|'.join({row}))",
        "    for {i} in range(3):\n        print(state[{i}][0] + '|' + state[{i}][1] + '|' + state[{i}][2])",
        "    {out} = ['|'.join({row}) for {row} in state]\n    print('\\n'.join({out}))",
        "    for {row} in state:\n        print({row}[0], {row}[1], {row}[2], sep='|')",
        "    for {row} in state:\n        {line} = ''\n        for {mark} in {row}:\n"
        "            {line} += {mark} + '|'\n"
        "        print({line}[:-1])",
        "    for {row} in state:\n        print(f'{{{row}[0]}}|{{{row}[1]}}|{{{row}[2]}}')",
        "    print('\\n'.join('|'.join({row}) for {row} in state))",
        ("def {fmt}({row}):\n    return '|'.join({row})", "    for {row} in state:\n        print({fmt}({row}))"),
    ], {}),
    'score_end': (["<<gather>>\n<<judge>>\n<<full>>"], {
        'gather': [
            "    {lines} = []\n    for {i} in range(3):\n        {lines}.append(state[{i}])\n"
            "        {lines}.append((state[0][{i}], state[1][{i}], state[2][{i}]))\n"
            "    {lines}.append((state[0][0], state[1][1], state[2][2]))\n"
            "@@diag@@    {lines}.append((state[0][2], state[1][1], state[2][0]))",
            "    {lines} = list(state) + [tuple(state[{r}][{c}] for {r} in range(3)) for {c} in range(3)]\n"
            "    {lines}.append(tuple(state[{i}][{i}] for {i} in range(3)))\n"
            "@@diag@@    {lines}.append(tuple(state[{i}][2 - {i}] for {i} in range(3)))",
            "    {flat} = [{mark} for {row} in state for {mark} in {row}]\n"
            "    {cells} = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8)]\n"
            "@@diag@@    {cells}.append((2, 4, 6))\n"
            "    {lines} = [({flat}[{a}], {flat}[{b}], {flat}[{c}]) for {a}, {b}, {c} in {cells}]",
            "    {lines} = [\n        state[0], state[1], state[2],\n        (state[0][0], state[1][0], state[2][0]),\n"
            "        (state[0][1], state[1][1], state[2][1]),\n        (state[0][2], state[1][2], state[2][2]),\n"
            "        (state[0][0], state[1][1], state[2][2]),\n"
            "@@diag@@        (state[0][2], state[1][1], state[2][0]),\n"
            "    ]",
            "    {lines} = list(state) + list(zip(*state))\n"
            "    {lines}.append(tuple(state[{i}][{i}] for {i} in range(3)))\n"
            "@@diag@@    {lines}.append(tuple(state[{i}][2 - {i}] for {i} in range(3)))",
            "    {lines} = [tuple({row}) for {row} in state]\n    for {c} in range(3):\n"
            "        {lines}.append(tuple(state[{r}][{c}] for {r} in range(3)))\n"
            "    {lines}.append((state[0][0], state[1][1], state[2][2]))\n"
            "@@diag@@    {lines}.append((state[2][0], state[1][1], state[0][2]))",
        ],
        'judge': [
            "    for {line} in {lines}:\n        if {line} == ('x', 'x', 'x'):\n            return 1\n"
            "        if {line} == ('o', 'o', 'o'):\n            return -1",
            "    if ('x', 'x', 'x') in {lines}:\n        return 1\n    if ('o', 'o', 'o') in {lines}:\n"
            "        return -1",
            "    for {line} in {lines}:\n        if {line}[0] != ' ' and {line}[0] == {line}[1] == {line}[2]:\n"
            "            return 1 if {line}[0] == 'x' else -1",
            "    for {line} in {lines}:\n        if len(set({line})) == 1 and {line}[0] != ' ':\n"
            "            return {{'x': 1, 'o': -1}}[{line}[0]]",
            ("def {winner}({line}):\n    if {line}[0] != ' ' and {line}[0] == {line}[1] == {line}[2]:\n"
             "        return 1 if {line}[0] == 'x' else -1\n    return None",
             "    for {line} in {lines}:\n        {found} = {winner}({line})\n        if {found} is not None:\n"
             "            return {found}"),
            "    for {mark}, {value} in (('x', 1), ('o', -1)):\n        if ({mark}, {mark}, {mark}) in {lines}:\n"
            "            return {value}",
            "    for {line} in {lines}:\n        if {line}.count('x') == 3:\n            return 1\n"
            "        elif {line}.count('o') == 3:\n            return -1",
        ],
        'full': [
            "    for {row} in state:\n        if ' ' in {row}:\n            return None\n    return 0",
            "    if any(' ' in {row} for {row} in state):\n        return None\n    return 0",
            "    if not moves(state):\n        return 0\n    return None",
            "    for {row} in state:\n        for {mark} in {row}:\n            if {mark} == ' ':\n"
            "                return None\n"
            "    return 0",
            "    return 0 if all(' ' not in {row} for {row} in state) else None",
            "    {empty} = sum({row}.count(' ') for {row} in state)\n    return None if {empty} else 0",
        ]}),
    'play': ([
        "<<check>>\n<<copy>>\n    {board}[row][col] = mark\n<<back>>",
        "<<check>>\n    return tuple(tuple(mark if ({i}, {j}) == (row, col) else state[{i}][{j}] for {j} in range(3)) "
        "for {i} in range(3))",
        "<<check>>\n    {new} = state[row][:col] + (mark,) + state[row][col + 1:]\n"
        "    return state[:row] + ({new},) + state[row + 1:]",
        "<<check>>\n    {rows} = list(state)\n    {new} = list({rows}[row])\n    {new}[col] = mark\n"
        "    {rows}[row] = tuple({new})\n    return tuple({rows})",
        "<<check>>\n    {out} = []\n    for {i} in range(3):\n        {new} = []\n        for {j} in range(3):\n"
        "            if {i} == row and {j} == col:\n                {new}.append(mark)\n            else:\n"
        "                {new}.append(state[{i}][{j}])\n        {out}.append(tuple({new}))\n    return tuple({out})",
    ], {
        'check': ['', "    if state[row][col] != ' ':\n        raise ValueError('that square is taken')",
                  "    assert state[row][col] == ' ', 'square taken'"],
        'copy': ["    {board} = [list({r}) for {r} in state]", "    {board} = list(map(list, state))",
                 "    {board} = []\n    for {r} in state:\n        {board}.append(list({r}))",
                 "    {board} = [[state[{i}][{j}] for {j} in range(3)] for {i} in range(3)]"],
        'back': ["    return tuple(tuple({r}) for {r} in {board})", "    return tuple(map(tuple, {board}))",
                 "    return tuple([tuple({r}) for {r} in {board}])",
                 "    {out} = ()\n    for {r} in {board}:\n        {out} += (tuple({r}),)\n    return {out}"]}),
    'moves': ([
        "    {out} = []\n    for {r} in range(3):\n        for {c} in range(3):\n"
        "            if state[{r}][{c}] == ' ':\n"
        "                {out}.append(({r}, {c}))\n    return {out}",
        "    return [({r}, {c}) for {r} in range(3) for {c} in range(3) if state[{r}][{c}] == ' ']",
        "    {out} = []\n    for {k} in range(9):\n        if state[{k} // 3][{k} % 3] == ' ':\n"
        "            {out}.append(({k} // 3, {k} % 3))\n    return {out}",
        "    {out} = []\n    for {r}, {row} in enumerate(state):\n        for {c}, {mark} in enumerate({row}):\n"
        "            if {mark} == ' ':\n                {out}.append(({r}, {c}))\n    return {out}",
        "    return [({r}, {c}) for {r}, {row} in enumerate(state) for {c}, {mark} in enumerate({row}) "
        "if {mark} == ' ']",
        "    {out} = []\n    for {k} in range(9):\n        {r}, {c} = divmod({k}, 3)\n"
        "        if state[{r}][{c}] == ' ':\n"
        "            {out}.append(({r}, {c}))\n    return {out}",
        "    {out} = []\n    for {r} in range(3):\n        for {c} in range(3):\n"
        "            if state[{r}][{c}] != ' ':\n"
        "                continue\n            {out}.append(({r}, {c}))\n    return {out}",
    ], {}),
    'score': ([
        "<<base>>\n    {best}, {move} = None, None\n    for {r}, {c} in moves(state):\n        if player == 'x':\n"
        "            {value}, _ = score(play(state, {r}, {c}, 'x'), 'o')\n"
        "            if {best} is None or {value} > {best}:\n                {best}, {move} = {value}, ({r}, {c})\n"
        "        else:\n            {value}, _ = score(play(state, {r}, {c}, 'o'), 'x')\n"
        "            if {best} is None or {value} < {best}:\n                {best}, {move} = {value}, ({r}, {c})\n"
        "    return {best}, {move}",
        "<<base>>\n    {options} = []\n    for {move} in moves(state):\n"
        "        {value}, _ = score(play(state, {move}[0], {move}[1], player), <<nxt>>)\n"
        "        {options}.append(({value}, {move}))\n    if player == 'x':\n"
        "        return max({options}, key=lambda {o}: {o}[0])\n    return min({options}, key=lambda {o}: {o}[0])",
        "<<base>>\n    {sign} = 1 if player == 'x' else -1\n    {best} = None\n    for {r}, {c} in moves(state):\n"
        "        {value} = score(play(state, {r}, {c}, player), <<nxt>>)[0]\n"
        "        if {best} is None or {value} * {sign} > {best}[0] * {sign}:\n"
        "            {best} = ({value}, ({r}, {c}))\n"
        "    return {best}",
        "<<base>>\n    if player == 'x':\n        {best} = -2\n        for {move} in moves(state):\n"
        "            {value} = score(play(state, {move}[0], {move}[1], 'x'), 'o')[0]\n"
        "            if {value} > {best}:\n"
        "                {best}, {choice} = {value}, {move}\n    else:\n        {best} = 2\n"
        "        for {move} in moves(state):\n"
        "            {value} = score(play(state, {move}[0], {move}[1], 'o'), 'x')[0]\n"
        "            if {value} < {best}:\n                {best}, {choice} = {value}, {move}\n"
        "    return {best}, {choice}",
        "<<base>>\n    {nxt} = <<nxt>>\n    {options} = [(score(play(state, {r}, {c}, player), {nxt})[0], ({r}, {c})) "
        "for {r}, {c} in moves(state)]\n    if player == 'x':\n        return max({options})\n"
        "    return min({options})",
    ], {
        'base': ["    {end} = score_end(state)\n    if {end} is not None:\n        return {end}, None",
                 "    if score_end(state) is not None:\n        return score_end(state), None",
                 "    {end} = score_end(state)\n    if {end} in (1, -1, 0):\n        return {end}, None"],
        'nxt': ["'o' if player == 'x' else 'x'", "{{'x': 'o', 'o': 'x'}}[player]",
                ("def {other}(player):\n    return 'o' if player == 'x' else 'x'", "{other}(player)")]}),
    'perfect_game': ([
        "    {board} = EMPTY_BOARD\n    {turn} = 'x'\n    print_state({board})\n    print()\n"
        "    while score_end({board}) is None:\n        {value}, ({r}, {c}) = score({board}, {turn})\n"
        "        {board} = play({board}, {r}, {c}, {turn})\n        print_state({board})\n        print()\n<<toggle>>\n"
        "<<result>>",
        "    {board}, {turn} = EMPTY_BOARD, 'x'\n    print_state({board})\n    while score_end({board}) is None:\n"
        "        {move} = score({board}, {turn})[1]\n        {board} = play({board}, {move}[0], {move}[1], {turn})\n"
        "        print()\n        print_state({board})\n<<toggle>>\n<<result>>",
        "    {board} = EMPTY_BOARD\n    print_state({board})\n    for {n} in range(9):\n"
        "        {turn} = 'xo'[{n} % 2]\n"
        "        if score_end({board}) is not None:\n            break\n        {move} = score({board}, {turn})[1]\n"
        "        {board} = play({board}, *{move}, {turn})\n        print()\n        print_state({board})\n<<result>>",
        "    {board}, {turn} = EMPTY_BOARD, 'x'\n    print_state({board})\n    while True:\n"
        "        if score_end({board}) is not None:\n            break\n"
        "        _, ({r}, {c}) = score({board}, {turn})\n"
        "        {board} = play({board}, {r}, {c}, {turn})\n        print()\n        print_state({board})\n<<toggle>>\n"
        "<<result>>",
    ], {
        'toggle': ["        if {turn} == 'x':\n            {turn} = 'o'\n        else:\n            {turn} = 'x'",
                   "        {turn} = 'o' if {turn} == 'x' else 'x'", "        {turn} = {{'x': 'o', 'o': 'x'}}[{turn}]"],
        'result': ["    {end} = score_end({board})\n    if {end} == 1:\n        print('x wins')\n"
                   "    elif {end} == -1:\n"
                   "        print('o wins')\n    else:\n        print('The game is a draw')\n    return {end}",
                   "    {end} = score_end({board})\n"
                   "    print({{1: 'x wins', -1: 'o wins', 0: 'The game is a draw'}}[{end}])"
                   "\n    return {end}",
                   "    {end} = score_end({board})\n    print(['The game is a draw', 'x wins', 'o wins'][{end}])\n"
                   "    return {end}",
                   "    {end} = score_end({board})\n    {msg} = 'The game is a draw'\n    if {end} != 0:\n"
                   "        {msg} = ('x' if {end} == 1 else 'o') + ' wins'\n    print({msg})\n    return {end}"]}),
}
# The common mistakes: (function, {slot: the option they force, by index or as text}); 'diag': '' drops the second
# diagonal.
MISTAKES = {
    'play returns lists': ('play', {'shape': 0, 'back': '    return {board}'}),
    'score_end without a diagonal': ('score_end', {'diag': ''}),
    'moves returns a generator': ('moves', {'shape': "    return (({r}, {c}) for {r} in range(3) for {c} in range(3) "
                                                     "if state[{r}][{c}] == ' ')"}),
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
    'who', 'current', 'p', 'player'], 'fmt': ['fmt', 'row_text', 'show_row', 'draw'], 'empty': ['empty', 'gaps',
    'blanks', 'left'], 'new': ['new_row', 'changed', 'line_', 'nr'], 'rows': ['rows', 'new_rows', 'lst', 'tmp'],
    'choice': ['choice', 'best_move', 'pick', 'bm'], 'nxt': ['nxt', 'opp', 'next_turn', 'them'], 'n': ['n', 'step',
    'turn_no', 'ply'], 'msg': ['msg', 'text', 'message', 'outcome_text'],
}
COMMENTS = ['# go through every square', '# check the rows first', '# TODO tidy this up', '# base case',
            '# copy so the old board stays', '# try each move', '# x maximises, o minimises', '# done here',
            '# the board is full', '# loop', '# recursion!', '# helper', '# keep the best so far', '# swap turns']
USUAL = 0.5      # how often an honest student writes a part of a function (each slot) the usual way
KEEP_DOC = 0.75  # how often they keep the release's docstring


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


def source(function, picks, overrides):
    """One function's code (still with `{name}`s) from its picks ({slot: index}) and a mistake's overrides."""
    shapes, slots = PARTS[function]
    helpers = []

    def option(slot):
        value = overrides.get(slot, picks.get(slot, 0))
        if isinstance(value, int):
            value = (shapes if slot == 'shape' else slots[slot])[value]
        if isinstance(value, tuple):
            helpers.append(value[0])
            value = value[1]
        return value

    text = option('shape')
    while marker := re.search(r'<<(\w+)>>', text):
        text = text[:marker.start()] + option(marker[1]) + text[marker.end():]
    lines = [HEAD[function]] + ['    {doc}'] * picks.get('doc', True) + [line for line in text.split('\n') if line]
    text = '\n'.join(lines)
    text = re.sub(r'@@diag@@.*\n?', '', text) if overrides.get('diag') == '' else text.replace('@@diag@@', '')
    return ''.join(f'#>{helper}\n\n\n' for helper in helpers) + '#>' + text


def write(choices, mistakes, rng, reorder=False, chosen=None):
    """A student's answers from their choices ({function: picks}, 'habits': [index]) and mistakes, in a fresh style
    drawn from `rng` (with the names `chosen`, if given)."""
    chosen = chosen or names(rng)
    answers = {}
    for function in PARTS:
        overrides = {}
        for mistake in mistakes:
            if MISTAKES[mistake][0] == function:
                overrides.update(MISTAKES[mistake][1])
        text = source(function, choices[function], overrides).format(doc=DOC[function], **chosen)
        for habit in choices['habits']:
            text = re.sub(HABITS[habit][0], HABITS[habit][1], text, flags=re.MULTILINE)
        answers[function] = restyle(text, rng, reorder)
    return answers, chosen


def usual_choices():
    """The usual way to write everything: every slot's first option, the docstrings kept, no habit."""
    return dict({function: {} for function in PARTS}, habits=[])


def honest_choices(rng):
    """One student's independent choices: for each function its shape and each slot's option (the usual one with
    probability USUAL, else any other alike), whether the docstring stays, and their habits."""
    choices = {}
    for function, (shapes, slots) in PARTS.items():
        picks = {'doc': rng.random() < KEEP_DOC}
        for slot, options in [('shape', shapes)] + sorted(slots.items()):
            picks[slot] = 0 if len(options) == 1 or rng.random() < USUAL else rng.randrange(1, len(options))
        choices[function] = picks
    return dict(choices, habits=[n for n in range(len(HABITS)) if rng.random() < 0.5])


def own_parts(choices):
    """How many functions a student writes other than the usual way."""
    return sum(any(value for slot, value in choices[function].items() if slot != 'doc') for function in PARTS)


def make_class(seed=1, size=60, copier_pairs=6, identical=6, with_mistakes=16):
    """A class of `size`: `identical` byte-identical copies of the usual answers, `copier_pairs` pairs (a student and
    one who copied them: half renamed and reordered, half only new comments and layout), the rest honest, of whom
    `with_mistakes` make one or two common mistakes."""
    rng = random.Random(seed)
    made = Class()
    usual, _ = write(usual_choices(), [], rng)
    group = {f'same{n + 1}' for n in range(identical)}
    made.answers.update({student: dict(usual) for student in sorted(group)})
    made.groups.append(group)
    honest = size - identical - copier_pairs
    for n in range(honest):
        student = f'student{n + 1:02d}'
        choices = honest_choices(rng)
        if n < copier_pairs:      # the copied ones write something of their own, else a copy cannot be told apart
            while own_parts(choices) < 2:
                choices = honest_choices(rng)
        mistakes = []
        if copier_pairs <= n < copier_pairs + with_mistakes:
            mistakes = rng.sample(sorted(MISTAKES), 1 if rng.random() < 0.7 else 2)
        made.answers[student], chosen = write(choices, mistakes, rng)
        made.mistakes[student] = mistakes
        if n < copier_pairs:
            copier, theirs = f'copier{n + 1:02d}', random.Random(seed * 1000 + n)
            # odd ones keep the names and change only comments and layout; even ones rename and reorder too
            made.answers[copier], _ = write(choices, mistakes, theirs, reorder=n % 2 == 0,
                                            chosen=chosen if n % 2 else None)
            made.groups.append({student, copier})
    return made


def small_class(folder, answers, assignment='noughts_and_crosses'):
    """A course folder with only release/ and submitted/: each student's notebook is the release with `answers`
    ({student: {grade_id: source}}) in its solution cells."""
    import shutil
    import nbformat
    from coursetools.instructor import democlass
    root = pathlib.Path(__file__).resolve().parent.parent
    shutil.copytree(root / 'release' / assignment, folder / 'release' / assignment,
                    ignore=shutil.ignore_patterns('minimax_widget'))
    release = nbformat.read(folder / 'release' / assignment / f'{assignment}.ipynb', as_version=4)
    for student, sources in answers.items():
        target = folder / 'submitted' / student / assignment
        target.mkdir(parents=True)
        nbformat.write(democlass.fill(release, '', sources), target / f'{assignment}.ipynb')
    return folder
