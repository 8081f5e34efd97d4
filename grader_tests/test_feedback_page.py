"""The feedback page `make grade` writes (coursetools.grading.feedback_page) reads like a good TA wrote it: the
student's own line numbers, each failed check labelled visible or hidden with its task and part, contents named
by task, long lines wrapped, and the first failure of each task at the top.

A small class is graded through `make grade`'s own code path and its pages are read with BeautifulSoup:

* ada: every answer right;
* dan (demo class): no diagonals in score_end, a visible test fails; his perfect game fails a hidden test;
* raiser: score_end raises, with a long message, on boards with x in the top left and the centre;
* sly: score_end wrong on one position that no visible test shows, so only a hidden test fails;
* scripter: ada's answers, with HTML meant to act in the instructor's browser in a markdown cell of its own and in
  what a cell displays.
"""
import re

import nbformat
import pytest
from bs4 import BeautifulSoup
from nbformat.v4 import new_code_cell, new_markdown_cell
from nbgrader.preprocessors import ClearHiddenTests

from conftest import ROOT, copy_course, needs_sandbox, run_grade
from coursetools.grading.course import task_of
from coursetools.instructor import democlass, marks
from coursetools.judge import failures

ASSIGNMENT = 'noughts_and_crosses'
NOTEBOOK = f'{ASSIGNMENT}.ipynb'
TASKS = ('print_state', 'score_end', 'play', 'moves', 'score', 'perfect_game')
RAISE = '        raise ValueError("no diagonals here, please: " + repr(state) * 4)'
SLY_BOARD = (('x', 'x', 'x'), (' ', 'o', ' '), ('o', ' ', ' '))     # x has the top row after five moves


def answers(student):
    return democlass.read_answers(ROOT / 'demo_class' / ASSIGNMENT / f'{student}.py')


def raiser():
    """ada's answers, with a score_end that raises on boards with x in the top left and the centre."""
    preamble, found = answers('ada')
    head, body = found['score_end'].split('"""\n', 1)         # after the docstring
    condition = '    if state[0][0] == "x" and state[1][1] == "x":\n'
    return preamble, dict(found, score_end=head + '"""\n' + condition + RAISE + '\n' + body)


def sly():
    """ada's answers, with a score_end that calls one won position (SLY_BOARD) unfinished."""
    preamble, found = answers('ada')
    source = found['score_end'].replace('    lines = []\n', f'    if tuple(map(tuple, state)) == {SLY_BOARD!r}:\n'
                                                           '        return None\n    lines = []\n', 1)
    assert source != found['score_end']
    return preamble, dict(found, score_end=source)


# Markup that would act where the page is opened: a script, an event handler, a javascript: link, a script shown.
ACTING = ('<script>window.acted = 1</script><img src="x" onerror="window.acted = 2">'
          '<a href="javascript:window.acted = 3">here</a>')
DISPLAY = (f'\n\nfrom IPython.display import HTML, Javascript, display\ndisplay(HTML({ACTING!r}))\n'
           "display(Javascript('window.acted = 4'))\n"
           # pages write an image's width and height into its tag unquoted
           "display({'image/png': 'AAAA'}, raw=True, metadata={'image/png': {'width': '1 onerror=window.acted=5', "
           "'height': 40, 'alt': 'x'}})\n")
MARKDOWN = f'## My notes\n\n| board | value |\n|---|---|\n| empty | 0 |\n\n{ACTING}'


def scripter():
    """ada's notebook, with ACTING in a markdown cell at its end and displayed by its print_state cell."""
    preamble, found = answers('ada')
    nb = democlass.fill(released(), preamble, dict(found, print_state=found['print_state'] + DISPLAY))
    nb.cells.append(new_markdown_cell(MARKDOWN))
    return nb


def released():
    return nbformat.read(ROOT / 'release' / ASSIGNMENT / NOTEBOOK, as_version=4)


@pytest.fixture(scope='module')
def feedback_class(tmp_path_factory):
    course = copy_course(tmp_path_factory.mktemp('feedback') / 'course', students=('ada', 'dan'))
    for student, (preamble, found) in {'raiser': raiser(), 'sly': sly()}.items():
        folder = course / 'submitted' / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(democlass.fill(released(), preamble, found), folder / NOTEBOOK)
        (folder / 'timestamp.txt').write_text(democlass.TIMESTAMP + '\n')
    (course / 'submitted' / 'scripter' / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(scripter(), course / 'submitted' / 'scripter' / ASSIGNMENT / NOTEBOOK)
    result = run_grade(course, ASSIGNMENT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return course


def page(course, student):
    path = course / 'feedback' / student / ASSIGNMENT / NOTEBOOK.replace('.ipynb', '.html')
    return BeautifulSoup(path.read_text(), features='html.parser')


def check_panel(soup, grade_id):
    """The panel of the test cell `grade_id` on a page."""
    anchor = soup.find('a', attrs={'name': grade_id})
    return anchor.find_parent('div', class_='feedback-check')


def label(soup, grade_id):
    return check_panel(soup, grade_id).find(class_='feedback-label').get_text(strip=True)


def cell_output(soup, grade_id):
    """The text of the outputs of the test cell `grade_id`."""
    return check_panel(soup, grade_id).find_parent('div', class_='cell').find(class_='output_wrapper').get_text()


def line_of(source, text):
    """The 1-based number of the line of `source` that holds `text`."""
    return next(number for number, line in enumerate(source.split('\n'), 1) if text in line)


def test_released_line_numbers_are_the_lines_nbgrader_releases():
    remover = ClearHiddenTests(enforce_metadata=False)
    checked = 0
    for assignment in ('noughts_and_crosses', 'alpha_beta'):
        nb = nbformat.read(ROOT / 'source' / assignment / f'{assignment}.ipynb', as_version=4)
        for cell in nb.cells:
            if not (cell.metadata.get('nbgrader') or {}).get('grade'):
                continue
            shown, _ = remover.preprocess_cell(new_code_cell(cell.source), {}, 0)
            kept = shown.source.split('\n')
            lines = cell.source.split('\n')
            numbers = [failures.released_line(cell.source, n) for n in range(1, len(lines) + 1)]
            assert [n for n in numbers if n is not None] == list(range(1, len(kept) + 1))
            for number, text in zip(numbers, lines):
                if number is not None:
                    assert kept[number - 1] == text
            checked += len(lines) > len(kept)
    assert checked >= 10              # cells with hidden tests were among them


@needs_sandbox
def test_tracebacks_give_the_line_numbers_the_student_sees(feedback_class):
    soup = page(feedback_class, 'raiser')
    own = raiser()[1]['score_end']
    test_cell = next(c.source for c in released().cells if c.metadata.get('nbgrader', {}).get('grade_id') ==
                     'score_end-diagonals')
    shown = cell_output(soup, 'score_end-diagonals')
    assert (f'File "your cell score_end", line {line_of(own, RAISE.strip())}, in score_end\n'
            f'    {RAISE.strip()}') in shown
    assert f'{failures.VISIBLE} {line_of(test_cell, "got = score_end(board)")}: got = score_end(board)' in shown
    assert '/tmp/ipykernel' not in shown


@needs_sandbox
def test_each_failed_check_is_labelled_visible_or_hidden_with_its_task_and_part(feedback_class):
    expected = {('raiser', 'score_end-diagonals'): 'Visible test failed',
                ('dan', 'score_end-diagonals'): 'Visible test failed',
                ('dan', 'perfect_game-boards'): 'Visible test failed',     # his game's full board has a line
                ('sly', 'score_end-rows-and-columns'): 'Hidden test failed',
                ('sly', 'score_end-diagonals'): 'Passed',
                ('ada', 'score-moves'): 'Passed'}
    for (student, grade_id), wanted in expected.items():
        soup = page(feedback_class, student)
        assert label(soup, grade_id) == wanted, (student, grade_id)
        heading = check_panel(soup, grade_id).find(class_='panel-heading').get_text(' ', strip=True)
        assert task_of(grade_id) in heading and grade_id.split('-', 1)[1].replace('-', ' ') in heading
    assert 'A hidden test of this cell failed' in check_panel(page(feedback_class, 'sly'),
                                                              'score_end-rows-and-columns').get_text()
    assert failures.HIDDEN in cell_output(page(feedback_class, 'sly'), 'score_end-rows-and-columns')


@needs_sandbox
def test_the_contents_are_named_by_task_and_part(feedback_class):
    for student in ('ada', 'dan'):
        soup = page(feedback_class, student)
        toc = soup.find('nav', id='toc')
        assert 'Test cell' not in toc.get_text()
        tasks = toc.find('ol').find_all('li', recursive=False)
        assert [task.find('code').get_text() for task in tasks] == list(TASKS)
        assert 'Task 2: has the game ended?' in tasks[1].get_text()
        for task in tasks:
            for entry in task.find('ol').find_all('li'):
                target = entry.find('a')['href'][1:]
                assert soup.find('a', attrs={'name': target}) is not None
                assert task_of(target) == task.find('code').get_text()
                assert entry.find('a').get_text() == target.split('-', 1)[1].replace('-', ' ')
            assert soup.find(id=task.find('a')['href'][1:]) is not None      # the task's own cell


@needs_sandbox
def test_the_summary_lists_the_first_failure_of_each_failing_task_only(feedback_class):
    db = f'sqlite:///{feedback_class / "gradebook.db"}'
    order = [c.metadata['nbgrader']['grade_id'] for c in released().cells
             if c.metadata.get('nbgrader', {}).get('grade') and not c.metadata['nbgrader'].get('solution')]
    for student in ('ada', 'dan', 'raiser', 'sly'):
        scores = marks.marks_by_cell(db, ASSIGNMENT, student)
        first = {}
        for grade_id in order:
            if scores[grade_id] < 1:
                first.setdefault(task_of(grade_id), grade_id)
        soup = page(feedback_class, student)
        summary = soup.find(id='feedback-summary')
        items = summary.find_all('li')
        assert [item.find('a')['href'] for item in items] == [f'#{grade_id}' for grade_id in first.values()]
        assert (not items) == ('Every check passed.' in summary.get_text())
        autograded = nbformat.read(feedback_class / 'autograded' / student / ASSIGNMENT / NOTEBOOK, as_version=4)
        for item, (task, grade_id) in zip(items, first.items()):
            lost = sum(1 - score for cell, score in scores.items() if task_of(cell) == task)
            assert item.find('code').get_text() == task and f'lost {lost:g} of' in item.get_text()
            error = next(o for c in autograded.cells if c.metadata.get('nbgrader', {}).get('grade_id') == grade_id
                         for o in c.outputs if o.output_type == 'error')
            message = item.find(class_='feedback-message').get_text(strip=True)
            assert f'{error.ename}: {error.evalue.splitlines()[0]}'.startswith(message.rstrip('…'))
            assert len(message) <= 160
    assert len(page(feedback_class, 'dan').find(id='feedback-summary').find_all('li')) == 2


def wrapping_rules(soup):
    """The selectors of the page's CSS rules that wrap text (white-space: pre-wrap)."""
    css = ' '.join(style.get_text() for style in soup.find_all('style'))
    css = re.sub(r'/\*.*?\*/', '', css, flags=re.S)
    return [selector.strip() for selectors, body in re.findall(r'([^{}]+)\{([^{}]*)\}', css)
            if re.search(r'white-space\s*:\s*pre-wrap', body) for selector in selectors.split(',')]


@needs_sandbox
def test_long_messages_are_wrapped_at_the_page_width(feedback_class):
    soup = page(feedback_class, 'raiser')
    long_line = next(pre for pre in check_panel(soup, 'score_end-diagonals').find_parent('div', class_='cell')
                     .select('div.output_area pre') if 'no diagonals here' in pre.get_text())
    assert max(len(line) for line in long_line.get_text().splitlines()) > 200
    wrapped = {id(element) for selector in wrapping_rules(soup) for element in soup.select(selector)}
    assert id(long_line) in wrapped
    assert all(id(message) in wrapped for message in soup.select('#feedback-summary .feedback-message'))


def test_a_kernel_file_is_named_only_when_exactly_one_cell_has_its_lines():
    from coursetools.grading.feedback_page import name_frames
    names = [('your cell score', ['def score(state, player):', '    best = None', '    return best[0]']),
             ('your cell moves', ['def moves(state):', '    return best[0]']),
             ("the notebook's cell helpers", ['def picture(state):', '    return best[0]'])]
    entry = ('In your code:\n  File "/tmp/ipykernel_7/11.py", line 3, in score\n    return best[0]\n'
             '  File "/tmp/ipykernel_7/12.py", line 2, in moves\n    return best[0]\n'
             '  File "/work/helper.py", line 9, in other\n    return best[0]')
    named = name_frames(entry, names)
    assert 'File "your cell score", line 3, in score' in named          # only score's cell has it on line 3
    assert 'File "/tmp/ipykernel_7/12.py", line 2' in named            # two cells have it on line 2: left alone
    assert 'File "/work/helper.py", line 9' in named                   # no cell: left alone


@needs_sandbox
def test_the_page_stays_accessible(feedback_class):
    for student in ('ada', 'raiser'):
        soup = page(feedback_class, student)
        for link in soup.select('a[href^="#"]'):
            target = link['href'][1:]
            assert soup.find(id=target) or soup.find('a', attrs={'name': target}), (student, target)
        for region in soup.select('[aria-labelledby]'):
            assert soup.find(id=region['aria-labelledby']).get_text(strip=True)
        assert all(image.get('alt') is not None for image in soup.find_all('img'))
        assert all(label.get_text(strip=True) for label in soup.select('.feedback-label'))   # words, not colours
        assert soup.find('h1').get_text().startswith(ASSIGNMENT)


def test_what_a_student_wrote_or_displayed_keeps_its_form_and_never_acts(feedback_class):
    """The page is opened in a browser where it could act as whoever opens it: the student's scripts, event
    handlers and javascript: links are shown as text or dropped; their headings, tables and text stay; the marks
    are ada's."""
    soup, plain = page(feedback_class, 'scripter'), page(feedback_class, 'ada')
    assert [str(script) for script in soup.find_all('script')] == [str(script) for script in plain.find_all('script')]
    assert not [tag for tag in soup.find_all(True) for name in tag.attrs if name.lower().startswith('on')]
    assert not [a for a in soup.find_all('a', href=True) if a['href'].strip().lower().startswith('javascript')]
    assert [h2.get_text() for h2 in soup.find_all('h2') if 'My' in h2.get_text()] == ['My notes¶']
    assert soup.find('td', string='empty') and soup.find('th', string='value')
    # shown as text three times: in the markdown, in what the cell displayed, in the cell's code
    assert soup.get_text().count('<script>window.acted = 1</script>') == 3
    # formgrader's pages are drawn from the graded notebook: of an output's metadata, only sizes that are numbers
    graded = nbformat.read(feedback_class / 'autograded' / 'scripter' / ASSIGNMENT / NOTEBOOK, as_version=4)
    assert [output.metadata for cell in graded.cells for output in cell.get('outputs', [])
            if 'image/png' in output.get('data', {})] == [{'image/png': {'height': 40}}]
    db = 'sqlite:///' + str(feedback_class / 'gradebook.db')
    assert marks.marks_by_cell(db, ASSIGNMENT, 'scripter') == marks.marks_by_cell(db, ASSIGNMENT, 'ada')
