"""Grading trust: what one student's code can do to its own marks, to another student's, and to the course.

A hidden catalogue of attacks (never shipped to students), graded through `make grade`'s code path in ONE
grading slot (`--workers=1`), so that every attacker is followed on the same slot by an honest or blank notebook.
The invariants tested, whatever the attack:

* nothing a student touched is reused: the notebook after an attacker gets the marks it gets alone;
* no course code enters a kernel, and nothing of the course's code or hidden tests reaches an output;
* test cells run in the released order, and a helper's answers come only after that helper was judged;
* every limit holds where the student's bytes arrive: no autograded or feedback file over 5 MB.
"""
import pathlib
import re

import nbformat
import pytest

from conftest import ROOT, copy_course, needs_sandbox, run_grade
from coursetools.instructor import democlass
from coursetools.instructor import marks
from coursetools.instructor import report
from test_hostile import ASSIGNMENT, NOTEBOOK, TASKS, ada, filled, released, write_student

pytestmark = needs_sandbox

ADA = (1, 3, 2, 1, 3, 2)
JON = (1, 3, 2, 1, 2, 0)          # demo student jon (his header says why)
BLANK = (0, 0, 0, 0, 0, 0)

# Each breaker sends, from inside a call, a frame on its own kernel's IOPub socket that is not a Jupyter message.
_BREAK = '''
def _break_the_channel(how):
    kernel = get_ipython().kernel
    session, socket = kernel.session, kernel.iopub_socket
    if how == 'garbage':
        socket.send_multipart([b'not', b'a', b'jupyter', b'message'])
    else:
        header = b'{}' if how == 'no msg_id' else session.pack(session.msg_header('stream'))
        content = b'this is not json' if how == 'not json' else b'{}'
        parts = [header, b'{}', b'{}', content]
        socket.send_multipart([b'stream', b'<IDS|MSG>', session.sign(parts)] + parts)
    import time
    time.sleep(0.5)
'''


def breaker_in_score(how):
    """Breaks the channel from inside score's calls. Since issue 42 a test cell's calls run in a process forked
    for that cell, cut off from the kernel's sockets, so the frame never leaves it: the answers earn their marks."""
    preamble, answers = ada()
    score = answers['score'].replace('def score(state, player):', f'''_calls = [0]


def score(state, player):
    _calls[0] += 1
    if _calls[0] == 300:
        _break_the_channel({how!r})''')
    return filled(preamble, {**answers, 'score': _BREAK + '\n\n' + score})


def breaker_in_cell(task, how):
    """Breaks the channel while the kernel runs the cell of `task` itself: that cell fails, is not replayed in the
    fresh kernel, and the tasks needing its function lose their marks."""
    preamble, answers = ada()
    return filled(preamble, {**answers, task: _BREAK + '\n\n' + answers[task] + f'\n\n_break_the_channel({how!r})\n'})


# Keeps whatever the grader gives the kernel (today: tables of correct answers) and answers from it, with the
# test cells of `score` moved to the top of the notebook, where they would be judged first.
_KEEPER = '''
import sys


def _kept(name, *arguments):
    agent = sys.modules.get('_course_grader')
    for table_name, table in getattr(agent, '_tables', {}).items():
        if table_name == name:
            return agent._answering(name, table)(*arguments)
    for frame_info in __import__('inspect').stack():
        found = frame_info.frame.f_globals.get(name)
        if callable(found) and getattr(found, '__module__', '') != '__main__':
            return found(*arguments)
    raise NotImplementedError()
'''


def keeper_with_tests_moved():
    preamble, answers = ada()
    stubs = {'score_end': 'def score_end(state):\n    return _kept("score_end", state)\n',
             'moves': 'def moves(state):\n    return _kept("moves", state)\n',
             'play': 'def play(state, row, col, mark):\n    return _kept("play", state, row, col, mark)\n'}
    nb = filled(preamble, {**answers, **stubs, 'print_state': _KEEPER + '\n\n' + answers['print_state']})
    ids = [cell.metadata.get('nbgrader', {}).get('grade_id') for cell in nb.cells]
    moved = [cell for cell, grade_id in zip(nb.cells, ids) if str(grade_id).startswith('score-')]
    rest = [cell for cell in nb.cells if cell not in moved]
    at = next(i for i, cell in enumerate(rest) if cell.metadata.get('nbgrader', {}).get('grade_id') == 'print_state') + 1
    nb.cells = rest[:at] + moved + rest[at:]
    return nb


# Walks the frames above the student's function during a call and prints everything it can reach.
FRAME_WALKER = '''
import sys


def _everything_above():
    frame, seen = sys._getframe(1), []
    while frame is not None:
        seen.append(repr(frame.f_code))
        for value in list(frame.f_locals.values()) + list(frame.f_globals.values()):
            seen.append(repr(value)[:20000])
            source = getattr(getattr(value, '__code__', None), 'co_consts', None)
            seen.append(repr(source)[:20000])
        frame = frame.f_back
    for module in list(sys.modules.values()):
        for name in ('__file__', '__doc__'):
            seen.append(str(getattr(module, name, ''))[:2000])
    print('\\n'.join(seen))
'''


def frame_walker():
    preamble, answers = ada()
    score = answers['score'].replace('def score(state, player):', '''_walked = []


def score(state, player):
    caller = sys._getframe(1).f_code
    if not _walked and caller.co_name != 'score' and 'ipykernel' not in caller.co_filename:
        _walked.append(1)          # the first call made by something other than the notebook's own cells
        _everything_above()''')
    return filled(preamble, {**answers, 'score': FRAME_WALKER + '\n\n' + score})


# Replaces the agent's answer on a function's first call, with an answer built to cost the grader: a set of
# integers whose hashes all collide, or 20 MB of text. Since issue 42 the replacement lasts as long as the process
# it was made in: the child serving one test cell's calls. So it costs the cells whose calls run the function
# (its own task's, and the perfect game's visible check that calls print_state after it); the other tasks,
# judged with the grader's own helpers, keep their marks.
_REPLACE_ANSWER = '''
import sys

_replaced = []


def _answer_with(make):
    if not _replaced:
        _replaced.append(make())
        sys.modules['_course_grader'].answer = lambda user_ns, request: _replaced[0]
'''
COLLIDING = "'{\"results\": [{\"s\": [' + ','.join(str(i * (2 ** 61 - 1)) for i in range(250_000)) + ']}]}'"
HUGE = "'{\"results\": [\"' + 'x' * 20_000_000 + '\"]}'"


def answer_replaced_in(task, text):
    preamble, answers = ada()
    source = answers[task]
    header = source.splitlines()[0]
    return filled(preamble, {**answers, task: _REPLACE_ANSWER + '\n\n' + source.replace(
        header, f'{header}\n    _answer_with(lambda: {text})', 1)})


def huge_errors():
    preamble, answers = ada()
    return filled(preamble, {**answers, 'print_state': answers['print_state'] + "\n\nraise ValueError('e' * 20_000_000)\n"})


# student -> (notebook builder, marks per task, or None where only the tasks not named in `unsure` are asserted)
CLASS = {
    'a1_breaker_garbage': (lambda: breaker_in_score('garbage'), ADA),
    'a2_ada': (lambda: filled(*ada()), ADA),
    'a3_breaker_game': (lambda: breaker_in_cell('perfect_game', 'not json'), (1, 3, 2, 1, 3, 0)),
    'a4_jon': (lambda: filled(*democlass.read_answers(ROOT / 'demo_class' / ASSIGNMENT / 'jon.py')), JON),
    'a5_breaker_header': (lambda: breaker_in_cell('score', 'no msg_id'), (1, 3, 2, 1, 0, 0)),
    'a6_blank': (released, BLANK),
    'a7_keeper': (keeper_with_tests_moved, (1, 0, 0, 0, 3, 0)),
    'a8_ada': (lambda: filled(*ada()), ADA),
    'a9_breaker_json': (lambda: breaker_in_cell('score', 'not json'), (1, 3, 2, 1, 0, 0)),
    'b1_blank': (released, BLANK),
    'b2_collider': (lambda: answer_replaced_in('moves', COLLIDING), (1, 3, 2, 0, 3, 1)),
    'b3_ada': (lambda: filled(*ada()), ADA),
    'b4_huge': (lambda: answer_replaced_in('play', HUGE), (1, 3, 0, 1, 3, 1)),
    'b5_ada': (lambda: filled(*ada()), ADA),
    'b6_frame_walker': (frame_walker, ADA),
    'b7_huge_errors': (huge_errors, ADA),
    'b8_ada': (lambda: filled(*ada()), ADA),
}


@pytest.fixture(scope='module')
def trust_class(tmp_path_factory):
    course = copy_course(tmp_path_factory.mktemp('trust') / 'course', students=[])
    for student, (build, _) in CLASS.items():
        write_student(course, student, build())
    result = run_grade(course, ASSIGNMENT, '--workers=1', '--SandboxedExecute.timeout=20')
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return course, result


def test_each_student_gets_what_its_own_code_earns_and_no_other_is_touched(trust_class):
    course, _ = trust_class
    table, _ = marks.marks_by_task('sqlite:///' + str(course / 'gradebook.db'), ASSIGNMENT)
    got = {student: tuple(int(row[task]) for task in TASKS) for student, row in table.items()}
    assert got == {student: expected for student, (_, expected) in CLASS.items()}


def test_a_broken_channel_is_reported_for_its_notebook_alone(trust_class):
    course, result = trust_class
    problems = report.gather(course, ASSIGNMENT, 'sqlite:///' + str(course / 'gradebook.db'))['problems']
    broken = {student for student, notes in problems.items() if any('GraderChannelError' in note or
                                                                      'could not read' in note for note in notes)}
    assert broken == {'a3_breaker_game', 'a5_breaker_header', 'a9_breaker_json'}


def course_lines():
    """Lines of the course's own code and of the hidden tests, long enough to be recognised anywhere."""
    lines = set()
    for path in [*(ROOT / 'coursetools' / 'checks').glob('*.py'), *(ROOT / 'coursetools' / 'game').glob('*.py')]:
        lines.update(line.strip() for line in path.read_text().splitlines())
    source = nbformat.read(ROOT / 'source' / ASSIGNMENT / NOTEBOOK, as_version=4)
    for cell in source.cells:
        hidden = re.findall(r'### BEGIN (?:HIDDEN TESTS|SOLUTION)(.*?)### END', cell.source, re.S)
        for block in hidden:
            lines.update(line.strip() for line in block.splitlines())
    return {line for line in lines if len(line) > 30 and not line.startswith(('#', '"""', "'''"))}


def student_visible_text(course, student):
    """The student's feedback page, and every output of their autograded notebook (the outputs are what the
    student's code and the checker wrote; the cells' sources are the instructor's own)."""
    feedback = (course / 'feedback' / student / ASSIGNMENT / NOTEBOOK.replace('.ipynb', '.html')).read_text()
    nb = nbformat.read(course / 'autograded' / student / ASSIGNMENT / NOTEBOOK, as_version=4)
    outputs = nbformat.writes(nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(outputs=cell.outputs) for cell in nb.cells if cell.cell_type == 'code']))
    return feedback + outputs


def test_nothing_of_the_course_reaches_what_a_student_sees(trust_class):
    course, _ = trust_class
    secret = course_lines()
    assert len(secret) > 100
    walked = student_visible_text(course, 'b6_frame_walker')
    assert '_course_grader' in walked or 'course grader' in walked          # the walk did reach the agent
    for student in CLASS:
        text = student_visible_text(course, student)
        own = (course / 'submitted' / student / ASSIGNMENT / NOTEBOOK).read_text()
        leaked = [line for line in secret if line in text and line not in own]
        assert leaked == [], (student, leaked[:3])


def test_no_output_file_exceeds_five_megabytes(trust_class):
    course, _ = trust_class
    for folder in ('autograded', 'feedback'):
        for path in pathlib.Path(course / folder).rglob('*'):
            if path.is_file():
                assert path.stat().st_size < 5 * 1024 ** 2, path
    text = student_visible_text(course, 'b7_huge_errors')
    assert 'characters cut by the grader' in text


def test_limits_are_explained_to_the_student(trust_class):
    course, _ = trust_class
    assert 'equal hashes' in student_visible_text(course, 'b2_collider')
    assert 'was refused by the grader' in student_visible_text(course, 'b4_huge')
