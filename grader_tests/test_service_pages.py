"""The grading service's pages, standalone (behind a token): the instructor's dashboard shows the queue, the last
graded, attempts and the mark distribution; a student's status page and feedback are theirs only, whatever name
the address or query carries (forged identities are refused)."""
import html
import re
import urllib.error
import urllib.request

import pytest

from conftest import needs_sandbox
from postgres import free_port
from service_class import (ASSIGNMENT, answers, exchange_course, start_service, states, stop, submit,
                           wait_for)

pytestmark = needs_sandbox


@pytest.fixture(scope='module')
def served(tmp_path_factory):
    """A service with its pages, after ada (12/12) and cat (11/12) handed in and were graded, then cat again
    over the limit of one attempt a day: (base URL, course)."""
    folder = tmp_path_factory.mktemp('pages')
    course = exchange_course(folder, ['c.Service.attempts_per_day = 1'])
    port = free_port()
    service = start_service(course, f'--port={port}')
    try:
        for student in ('ada', 'cat'):
            submit(course, folder / student, student, answers(student))
        assert wait_for(lambda: [s for _, s, *_ in states(course).values()] == ['graded'] * 2, 120), \
            (course / 'service.log').read_text()
        submit(course, folder / 'cat', 'cat', answers('ada'))
        assert wait_for(lambda: sorted(s for _, s, *_ in states(course).values()) == ['graded', 'graded', 'refused'],
                        60), (course / 'service.log').read_text()
        yield f'http://127.0.0.1:{port}/', course
    finally:
        stop(service)


def get(url, token=None, header=None):
    """(status, text) of a GET."""
    request = urllib.request.Request(url + (f'?token={token}' if token else ''),
                                     headers={'Authorization': f'token {header}'} if header else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, html.unescape(answer.read().decode())
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors='replace')


def tokens(course):
    from coursetools.service.pages import secret_of, student_token
    from coursetools.grading.course import Course
    secret = secret_of(Course(course))
    return secret, {name: student_token(secret, name) for name in ('ada', 'cat')}


def test_the_dashboard_is_the_instructors(served):
    base, course = served
    instructor, students = tokens(course)
    status, page = get(base + 'dashboard', header=instructor)
    assert status == 200
    assert '0 queued, 0 grading, 2 graded, 1 refused' in page
    assert 'Last graded' in page and '12 / 12' in page and '11 / 12' in page
    assert "Mark distribution (each student's last graded)" in page
    attempts = page[page.index('Attempts per student'):]
    assert '<td>cat</td><td>noughts_and_crosses</td><td>1</td><td>1</td><td>11 / 12</td>' in attempts, attempts
    for token in (None, students['ada'], 'not-a-token'):
        assert get(base + 'dashboard', token)[0] == 403
    assert get(base + 'dashboard?student=ada&token=' + students['ada'])[0] == 403


def test_a_student_sees_her_own_status_and_feedback_only(served):
    base, course = served
    _, students = tokens(course)
    status, page = get(base + 'status/cat', students['cat'])
    assert status == 200 and 'Your submissions: cat' in page and '11 / 12' in page
    assert 'Your next attempt will be graded from' in page and 'the limit is 1' in page
    assert not re.search(r'\bada\b', page), page  # as a word: the page's hex tokens may hold 'ada'
    status, feedback = get(base + f'feedback/ada/{ASSIGNMENT}', students['ada'])
    assert status == 200 and 'Score: 12 / 12' in feedback
    # forged: another student's name in the address, with her own token; a made-up token; no token
    for url, token in (('status/ada', students['cat']), (f'feedback/ada/{ASSIGNMENT}', students['cat']),
                       ('status/cat', students['ada']), ('status/cat', 'f' * 32), ('status/cat', None),
                       ('status/../status/ada', students['cat'])):
        assert get(base + url, token)[0] in (403, 404), url
    status, page = get(base + 'status/cat?student=ada&token=' + students['cat'])
    assert status == 200 and 'Your submissions: cat' in page and '12 / 12' not in page
    assert get(base + 'feedback/cat/..%2F..%2Fnbgrader_config.py', students['cat'])[0] in (403, 404)
