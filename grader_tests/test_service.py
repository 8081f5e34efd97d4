"""The grading service (`make serve`, coursetools/service): students hand in with nbgrader's own `submit` to the
course's exchange, the service (a real process, the real engine, the sandbox) grades each and releases the
feedback that the student's `nbgrader fetch_feedback` finds. Its marks are `make grade`'s; its queue survives
SIGTERM and `kill -9`, grading each submission once; it runs beside `make grade`; the instructor's policy."""
import os
import re
import signal
import sqlite3
import time

import pytest

from conftest import needs_sandbox, run_grade
from coursetools.instructor import marks
from service_class import (ASSIGNMENT, COURSE_ID, answers, exchange_course, fetch_feedback, start_service, states,
                           stop, submit, wait_for)

pytestmark = needs_sandbox


def task_marks(course, assignment=ASSIGNMENT):
    table, _ = marks.marks_by_task(f'sqlite:///{course / "gradebook.db"}', assignment)
    return table


def all_done(course, count):
    found = states(course)
    return len(found) == count and all(state in ('graded', 'refused') for _, state, *_ in found.values())


def test_marks_equal_make_grades_for_the_demo_class_handed_in_one_by_one(graded_class, tmp_path):
    """Each demo student hands in both workbooks through the exchange; the first three one at a time (each graded
    alone), the rest as a burst: every task's mark is the one `make grade` gave the same notebook, and each
    student's fetch_feedback finds their own page with their score."""
    second = 'alpha_beta'
    reference = {assignment: task_marks(graded_class[0], assignment) for assignment in (ASSIGNMENT, second)}
    course = exchange_course(tmp_path, assignments=(ASSIGNMENT, second))
    service = start_service(course, '--no-pages')
    students = sorted(reference[ASSIGNMENT])
    handed_in = [(student, ASSIGNMENT) for student in students] + [(student, second) for student in
                                                                    sorted(reference[second])]
    try:
        for count, (student, assignment) in enumerate(handed_in[:3], 1):
            submit(course, tmp_path / student, student, answers(student, assignment), assignment=assignment)
            assert wait_for(lambda: all_done(course, count), 60), (course / 'service.log').read_text()
        for student, assignment in handed_in[3:]:
            submit(course, tmp_path / student, student, answers(student, assignment), assignment=assignment)
        assert wait_for(lambda: all_done(course, len(handed_in)), 300), (course / 'service.log').read_text()
    finally:
        stop(service)
    log = (course / 'service.log').read_text()
    for assignment in reference:
        assert task_marks(course, assignment) == reference[assignment], assignment
    assert sorted((s, state, gradings) for s, state, _, gradings, _ in states(course).values()) == \
        sorted((s, 'graded', 1) for s, _ in handed_in)
    for student, assignment in handed_in:   # the log says what was graded, for whom, the mark and how long
        assert re.search(rf'graded {student} {assignment}: [\d.]+/\d+; graded in [\d.]+ s', log), log
    for student, assignment in [('ada', ASSIGNMENT), (students[-1], ASSIGNMENT), ('ada', second)]:
        pages = fetch_feedback(course, tmp_path / student, student, assignment)
        total = sum(reference[assignment][student].values())
        assert len(pages) == 1 and re.search(rf'Score: {total:g} / \d+', next(iter(pages.values()))), pages


def wait_grading(course, timeout=60):
    return wait_for(lambda: any(state == 'grading' for _, state, *_ in states(course).values()), timeout, 0.05)


def test_sigterm_and_kill_9_mid_grade_lose_nothing_and_grade_each_submission_once(tmp_path):
    """SIGTERM while grading stops the service within seconds with nothing left `grading`; `kill -9` while
    grading, a submission handed in while it is down, then a restart: every submission graded exactly once (one
    finished grading each, one gradebook submission each), none lost."""
    course = exchange_course(tmp_path)
    students = ['ada', 'cat', 'ben']
    for student in students:
        submit(course, tmp_path / student, student, answers(student))
    service = start_service(course, '--no-pages')
    assert wait_grading(course), (course / 'service.log').read_text()
    time.sleep(1.5)         # its kernels running
    began = time.monotonic()
    service.send_signal(signal.SIGTERM)
    # a bound that catches a hang, not a benchmark: once 32 s beside the suite's grading classes (load about 10)
    service.wait(90)
    assert time.monotonic() - began < 60
    stop(service)
    assert [state for _, state, *_ in states(course).values()].count('grading') == 0
    assert 'stopped: ' in (course / 'service.log').read_text()

    service = start_service(course, '--no-pages')
    assert wait_grading(course), (course / 'service.log').read_text()
    time.sleep(1.5)
    os.kill(service.pid, signal.SIGKILL)
    service.wait(10)
    stop(service)           # what it left running (kernels, checker servers)
    assert 'grading' in [state for _, state, *_ in states(course).values()]
    submit(course, tmp_path / 'dan', 'dan', answers('dan'))        # while it is down
    service = start_service(course, '--no-pages', '--once')
    assert service.wait(180) == 0, (course / 'service.log').read_text()
    stop(service)
    found = states(course)
    assert sorted(s for s, *_ in found.values()) == sorted(students + ['dan'])
    assert {s: (state, gradings) for s, state, _, gradings, _ in found.values()} == \
        {s: ('graded', 1) for s in students + ['dan']}
    with sqlite3.connect(course / 'gradebook.db') as db:
        assert db.execute('pragma integrity_check').fetchone() == ('ok',)
        assert db.execute('select count(*) from submitted_assignment').fetchone() == (4,)
    totals = {s: sum(m.values()) for s, m in task_marks(course).items()}
    assert totals == {'ada': 12, 'cat': 11, 'ben': 12, 'dan': 10}, task_marks(course)      # test_demo_class's
    assert 'queued again' in (course / 'service.log').read_text()


def test_make_grade_and_the_service_side_by_side(graded_class, tmp_path):
    """`make grade` runs while the service grades: one waits for the other (the course's grading lock), both
    succeed, the gradebook is whole, and every mark is `make grade`'s."""
    reference = task_marks(graded_class[0])
    course = exchange_course(tmp_path)
    from coursetools.instructor import democlass
    democlass.build_class(course, students=['eve', 'fay'])          # handed in by hand, graded by make grade
    (course / 'roster.csv').unlink(missing_ok=True)
    service = start_service(course, '--no-pages')
    try:
        for student in ('gus', 'hal'):
            submit(course, tmp_path / student, student, answers(student))
        assert wait_grading(course), (course / 'service.log').read_text()
        result = run_grade(course, ASSIGNMENT, '--no-progress')
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        assert wait_for(lambda: all_done(course, 2), 120), (course / 'service.log').read_text()
        submit(course, tmp_path / 'ivy', 'ivy', answers('ivy'))         # and the service after make grade
        assert wait_for(lambda: all_done(course, 3), 120), (course / 'service.log').read_text()
    finally:
        stop(service)
    assert 'The grading service' in result.stdout or 'waiting for `make grade`' in \
        (course / 'service.log').read_text()
    with sqlite3.connect(course / 'gradebook.db') as db:
        assert db.execute('pragma integrity_check').fetchone() == ('ok',)
    assert task_marks(course) == {s: reference[s] for s in ('eve', 'fay', 'gus', 'hal', 'ivy')}


POLICY = ["c.Service.attempts_per_day = 1",
          "c.Term.duedates = {'noughts_and_crosses': '2026-01-01 00:00:00 UTC'}",
          "c.LateSubmissionPlugin.penalty_method = 'percentage'",
          "c.LatePenalty.percent = 10", "c.LatePenalty.cap = 30"]


def on_time_copy(course, folder, when='2025-12-31 12:00:00.000000 UTC'):
    """The student's submission handed in again, as it was on time (a folder the exchange would have made then)."""
    import shutil
    inbound = course / 'exchange' / COURSE_ID / 'inbound'
    student, assignment, _, random = folder.rsplit('+', 3)
    name = f'{student}+{assignment}+{when}+{random}x'
    shutil.copytree(inbound / folder, inbound / f'.{name}')
    (inbound / f'.{name}' / 'timestamp.txt').write_text(when)
    os.rename(inbound / f'.{name}', inbound / name)
    return name


def test_policy_attempts_and_the_due_date(tmp_path):
    """Over the attempt limit: a page saying when the next attempt will be graded, released where the student's
    fetch_feedback finds it, and the submission kept. After the due date, the last submission on time counts (a
    late one is refused, the marks stay); a student with nothing on time gets the late penalty make grade takes."""
    course = exchange_course(tmp_path, POLICY)
    ada_late = submit(course, tmp_path / 'ada', 'ada', answers('ada'))
    ada_on_time = on_time_copy(course, ada_late)
    submit(course, tmp_path / 'cat', 'cat', answers('cat'))
    service = start_service(course, '--no-pages')
    try:
        assert wait_for(lambda: all_done(course, 3), 120), (course / 'service.log').read_text()
        submit(course, tmp_path / 'cat', 'cat', answers('ada'))     # cat's second attempt in a day
        assert wait_for(lambda: all_done(course, 4), 60), (course / 'service.log').read_text()
    finally:
        stop(service)
    found = states(course)
    assert found[ada_on_time][1:2] == ('graded',) and found[ada_on_time][4] == 12
    assert found[ada_late][1] == 'refused' and 'your last submission on time' in found[ada_late][2]
    cat = sorted((row for row in found.values() if row[0] == 'cat'), key=lambda row: row[1])
    assert [row[1] for row in cat] == ['graded', 'refused']
    assert cat[0][4] == pytest.approx(11 - 3.6)        # 11 of 12, 30% of 12 taken (capped): make grade's penalty
    assert 'your next attempt will be graded from' in cat[1][2] and 'This submission is kept' in cat[1][2]
    pages = fetch_feedback(course, tmp_path / 'cat', 'cat')
    texts = sorted(pages.values(), key=len)
    assert any('your next attempt will be graded from' in text for text in texts), texts
    assert len(list((course / 'exchange' / COURSE_ID / 'inbound').iterdir())) == 4      # nothing lost
    log = (course / 'service.log').read_text()
    assert log.count('refused ') == 2 and 'the limit is 1' in log
    with sqlite3.connect(course / 'gradebook.db') as db:      # the gradebook keeps ada's on-time marks
        assert db.execute("select count(*) from submitted_assignment").fetchone() == (2,)


def test_before_the_due_date_a_page_can_show_marks_and_visible_tests_only(tmp_path):
    """c.Service.before_due = 'marks': before her due date fay's page keeps every mark and her visible tests'
    failures, but a failed hidden test says only that it failed (its message comes after the due date)."""
    course = exchange_course(tmp_path, ["c.Service.before_due = 'marks'",
                                        "c.Term.duedates = {'noughts_and_crosses': '2099-01-01 00:00:00 UTC'}"])
    submit(course, tmp_path / 'fay', 'fay', answers('fay'))
    service = start_service(course, '--no-pages', '--once')
    assert service.wait(120) == 0, (course / 'service.log').read_text()
    stop(service)
    page, = fetch_feedback(course, tmp_path / 'fay', 'fay').values()
    text = __import__('html').unescape(page)
    assert 'Score: 10 / 12' in text and 'Visible test failed' in text, text[:2000]
    assert text.count('Hidden test failed') == 2 and 'what it checked is shown after the due date' in text
    assert 'not a minimax-best move' not in text


def test_the_queue_lives_in_postgresql_with_the_gradebook(tmp_path):
    """With the gradebook in PostgreSQL (--db), the queue is a table there too, and the marks are the same."""
    import sqlalchemy as sa
    from postgres import postgres_server
    course = exchange_course(tmp_path)
    with postgres_server() as url:
        submit(course, tmp_path / 'cat', 'cat', answers('cat'))
        service = start_service(course, '--no-pages', '--once', f'--db={url}')
        assert service.wait(120) == 0, (course / 'service.log').read_text()
        stop(service)
        engine = sa.create_engine(url)
        try:
            with engine.connect() as db:
                assert list(db.execute(sa.text('select student, state, gradings, score from service_submissions'))) \
                    == [('cat', 'graded', 1, 11.0)]
        finally:
            engine.dispose()
        assert marks.marks_by_task(url, ASSIGNMENT)[0]['cat']['print_state'] == 0
    assert not (course / 'gradebook.db').exists() or states(course) == {}
    page, = fetch_feedback(course, tmp_path / 'cat', 'cat').values()
    assert 'Score: 11 / 12' in page


def test_a_link_planted_in_the_inbound_folder_is_refused_saying_why(tmp_path):
    """Every student can write the inbound folder: a submission that is a link to the course's source (its
    solutions would earn full marks) is refused, named in the log with the reason, and not graded; an honest
    submission beside it is graded. The folder is watched by polling here (c.Service.force_polling)."""
    course = exchange_course(tmp_path, ['c.Service.force_polling = True'])
    inbound = course / 'exchange' / COURSE_ID / 'inbound'
    planted = f'mallory+{ASSIGNMENT}+2026-11-20 17:00:00.000000 UTC+0a1b2c'
    (inbound / planted).symlink_to(course / 'source' / ASSIGNMENT)
    submit(course, tmp_path / 'ada', 'ada', answers('ada'))
    service = start_service(course, '--no-pages', '--once')
    assert service.wait(120) == 0, (course / 'service.log').read_text()
    stop(service)
    found = states(course)
    assert found[planted][:2] == ('mallory', 'refused') and 'not collected: a link, or no folder' in found[planted][2]
    assert sorted(row[1] for row in found.values()) == ['graded', 'refused']
    assert set(task_marks(course)) == {'ada'}
    log = (course / 'service.log').read_text()
    assert '(polling;' in log and re.search(r"refused mallory .*: not collected: a link, or no folder", log), log


def test_when_the_grader_fails_the_submission_waits_in_the_queue(tmp_path):
    """A fault of the grader's own (here its Dask scheduler cannot be reached) is logged, saying whose grading
    failed and why; the submission is queued again, not lost nor refused, and the service keeps running."""
    course = exchange_course(tmp_path)
    submit(course, tmp_path / 'ada', 'ada', answers('ada'))
    service = start_service(course, '--no-pages', '--Grading.scheduler=tcp://127.0.0.1:9',
                            '--Grading.scheduler_timeout=1')
    try:
        assert wait_for(lambda: 'queued again, tried again in 30 s' in (course / 'service.log').read_text(), 120), \
            (course / 'service.log').read_text()
        assert service.poll() is None
        assert [row[1] for row in states(course).values()] == ['queued']
    finally:
        stop(service)
    assert re.search(r'grading ada failed \(\w+: ', (course / 'service.log').read_text())
