"""The trusted checker's own rules, without a kernel: the order test cells run in, which answers a kernel may be
given and when, and the limits of a session."""
import os
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
    server.close()                  # its uid's lease


def _status(pid):
    """The fields of /proc/<pid>/status, as text."""
    with open(f'/proc/{pid}/status') as file:
        return dict((part.strip() for part in line.split(':', 1)) for line in file if ':' in line)


def _assert_runs_as(pid, uid):
    status = _status(pid)
    assert status['Uid'].split() == [str(uid)] * 4 and status['Gid'].split() == [str(uid)] * 4, status
    assert set(status['Groups'].split()) <= {str(uid)}, status['Groups']
    if uid != 0:
        assert int(status['CapEff'], 16) == int(status['CapPrm'], 16) == int(status['CapAmb'], 16) == 0, status
        assert status['NoNewPrivs'] == '1'


def test_a_root_grader_starts_each_checker_server_as_a_throw_away_uid_of_its_own():
    """The checker server runs the test cells and reads the students' answers: as root, a flaw there would give
    the grading machine away. Each live server has its own uid, with no group and no capability."""
    from coursetools.judge.checker_host import CheckerServer
    servers = [CheckerServer(), CheckerServer()]
    try:
        for server in servers:
            server.start()
        uids = [server.lease.uid for server in servers]
        if os.geteuid() == 0:
            assert None not in uids and 0 not in uids and uids[0] != uids[1]
        else:
            assert uids == [None, None]
        for server, uid in zip(servers, uids):
            assert server.alive
            _assert_runs_as(server.pid, os.getuid() if uid is None else uid)
            assert os.stat(server.socket_path).st_uid == (os.getuid() if uid is None else uid)
    finally:
        for server in servers:
            server.close()
    assert all(server.lease is None and server.pid is None for server in servers)


def test_a_session_of_a_checker_server_that_dropped_root_still_runs_a_test_cell():
    """What a session does after the drop (import the checks, ask the kernel, judge) works as the server's uid,
    and the session, forked from the server, is that uid too."""
    import asyncio
    import json
    from coursetools.grading.course import checks_modules
    from coursetools.judge.checker_host import CheckerServer, TrustedCells
    server = CheckerServer(warm=checks_modules('noughts_and_crosses')).start()
    asked = []

    async def kernel(request, deadline):         # the kernel's side: double(2) is 4
        asked.append(json.loads(request)['function'])
        return {'text': json.dumps({'results': [4]})}
    trusted = TrustedCells('doubling', {'double-works': "assert double(2) == 4\nprint('double works')"}, [],
                           ['double'])
    try:
        session = server.session()
        try:
            _assert_runs_as(session.pid, os.getuid() if server.lease.uid is None else server.lease.uid)
            errors, order = session.begin(trusted)
            outputs, notes = asyncio.run(session.run_cell(trusted, 'double-works', kernel, None))
        finally:
            session.close()
    finally:
        server.close()
    assert (errors, order, asked, notes) == ([], ['double-works'], ['double'], [])
    assert outputs == [{'output_type': 'stream', 'name': 'stdout', 'text': 'double works\n'}]


def test_a_checker_server_that_is_not_the_uid_it_was_meant_to_be_does_not_start():
    """The server checks the drop itself: one still root (or any other uid) exits, saying why."""
    code = 'from coursetools.judge.checker_server import main; main(%d)' % (os.getuid() + 1)
    result = subprocess.run([sys.executable, '-c', code, '/nonexistent/checker.sock'], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 1 and 'checker server: not started, as it is not uid' in result.stderr, result
    assert not result.stdout
