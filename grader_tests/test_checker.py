"""The trusted checker's own rules, without a kernel: the order test cells run in, which answers a kernel may be
given and when, and the limits of a session."""
import pathlib
import subprocess
import sys

from coursetools.judge import checker
from coursetools.judge import checker_plan
from conftest import ROOT

sys.path.insert(0, str(ROOT / 'benchmarks'))
from floor import trusted_cells  # noqa: E402  (the gradebook's view of the source notebook)


def test_a_function_is_given_only_after_it_and_every_unhelped_cell_was_judged():
    trusted = trusted_cells('noughts_and_crosses')
    order = checker_plan.order_of_tests(trusted.tests, trusted.graded)
    assert sorted(order) == sorted(trusted.tests)
    position = {cell: order.index(cell) for cell in order}
    helped = [cell for cell in order if cell.startswith(('score_end-', 'score-'))]
    unhelped = [cell for cell in order if cell not in helped]
    assert max(position[c] for c in unhelped) < min(position[c] for c in helped)     # perfect game included
    assert max(position[c] for c in order if c.startswith('score_end-')) < min(
        position[c] for c in order if c.startswith('score-'))
    assert unhelped == [cell for cell in trusted.tests if cell in unhelped]           # otherwise as released


def test_the_released_order_is_kept_where_nothing_is_given():
    tests = {'b-one': "isolate(globals(), testing='b')", 'a-one': "isolate(globals(), testing='a')",
             'c-one': 'assert True'}
    assert checker_plan.order_of_tests(tests, ['a', 'b']) == ['b-one', 'a-one', 'c-one']


def test_a_helper_whose_tests_have_not_run_is_left_as_the_students_own():
    notebook = {'graded': ['moves', 'score_end'], 'helpers': [],
                'tests': {'moves-empty-cells': "isolate(globals(), testing='moves')"}}
    session = checker.Session(None, None, notebook)
    given = {'moves': (lambda board: [], lambda: [(((' ',) * 3,) * 3,)])}
    session.isolate('score_end', {'replace': ('moves',)}, given, {})
    assert session.context['replace'] == [] and 'its own tests had not run' in session.notes[-1]
    session.done.add('moves-empty-cells')
    session.isolate('score_end', {'replace': ('moves',)}, given, {})
    assert session.context['replace'] == ['moves']


def test_checks_that_spin_are_stopped_at_their_cpu_limit_with_a_message():
    code = ('import signal\nfrom coursetools.judge import checker, checker_server\n'
            'checker_server.CPU_SECONDS_PER_CELL = 1\n'
            'signal.signal(signal.SIGXCPU, checker_server._over_cpu_time)\n'
            "session = checker.Session(None, None, {'graded': [], 'helpers': [], 'tests': {}})\n"
            'checker_server._limit_cpu_for_a_cell()\n'
            "print(session.run('slow', 'while True:\\n    pass')[-1]['ename'])\n")
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == 'CheckerLimitError', result.stderr[-2000:]


def test_an_error_message_of_any_size_is_cut():
    output = checker._error_output('ValueError', 'x' * 10_000_000, ['y' * 10_000_000] * 100)
    assert len(output['evalue']) < 5000 and len(output['traceback']) <= 21
    assert sum(map(len, output['traceback'])) < 100_000


def test_the_cells_of_a_task_share_one_counted_search_per_position():
    """alphabeta's four cells ask for the same searches: with `remember_counted`, each position is searched once in
    the kernel, counted, and a plain call, a counted call and a batch all read that one search."""
    import json
    import math
    session = checker.Session(None, None, {'graded': ['alphabeta'], 'helpers': [], 'tests': {}})
    asked = []

    def kernel(request):            # the kernel's side of the channel: a value and a count for each call
        request = json.loads(request)
        asked.append((len(request['calls']), request['count']))
        return {'text': json.dumps({'results': [{'!': {'value': {'t': [0, None]}, 'count': 7 + len(asked)}}
                                                for _ in request['calls']]})}
    session.exchange = kernel
    empty, corner = ((' ',) * 3,) * 3, (('x', ' ', ' '), (' ',) * 3, (' ',) * 3)
    alphabeta = session.namespace['alphabeta']
    session.isolate('alphabeta', {'remember_counted': True}, {}, {})
    assert alphabeta(empty, 'x', -math.inf, math.inf) == (0, None)
    assert alphabeta.counted(empty, 'x', -math.inf, math.inf) == ((0, None), 8)
    batch = list(alphabeta.each([(empty, 'x', -math.inf, math.inf), (corner, 'o', -math.inf, math.inf)]))
    assert [outcome.count for outcome in batch] == [8, 9]
    assert asked == [(1, True), (1, True)]              # the empty board once, then only the new position

    session.bind_defaults()                             # a cell that does not remember: every call is made again
    session.isolate('alphabeta', {}, {}, {})
    alphabeta(empty, 'x', -math.inf, math.inf)
    assert asked[-1] == (1, False) and len(asked) == 3


def test_a_checker_server_whose_grading_process_is_gone_leaves_no_folder_behind():
    from coursetools.judge.checker_host import CheckerServer
    server = CheckerServer().start()
    folder, process = server.folder, server.process
    process.stdin.close()           # as when the grading process is killed: its end of the pipe closes
    process.wait(timeout=30)
    server.process = server.folder = None
    assert not pathlib.Path(folder).exists()
