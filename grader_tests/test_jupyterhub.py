"""The grading service on a real JupyterHub (docs/jupyterhub.md): JupyterHub from PyPI, configurable-http-proxy from
npm (.venv/node, installed by `scripts/system-packages.sh test`), users' servers started by a local spawner, the
Hub's test-friendly DummyAuthenticator, and the service as a Hub-managed service behind the Hub's login (HubOAuth).

In chromium, each student logs in through the Hub's login page; their own Jupyter server fetches the assignment
and submits it through nbgrader's Assignment List endpoints (what its *Assignments* tab calls), after the
notebook is saved through Jupyter's contents API; then the student opens the service's status page (through the
Hub's OAuth) and follows the link to their feedback. zoe's correct notebook shows 12/12 within 60 s of submitting;
bob's wrong one its marks; max, over the limit of one attempt a day, the "next attempt" page. The instructor
(group `instructors`) sees all three on the dashboard; bob opening zoe's status is refused."""
import json
import os
import re
import subprocess
import sys
import time

import pytest

from conftest import ROOT, needs_sandbox
from postgres import free_port
from service_class import ASSIGNMENT, COURSE_ID, answers, exchange_course, stop, wait_for
import test_browser

browser = test_browser.browser          # test_browser.py's chromium (Debian's, driven by Playwright)
pytestmark = [needs_sandbox, pytest.mark.serial]
PROXY = ROOT / '.venv' / 'node' / 'node_modules' / '.bin' / 'configurable-http-proxy'
STUDENTS = ('zoe', 'bob', 'max')


def hub_config(folder, course, port, hub_port, service_port):
    """The Hub's configuration: the one docs/jupyterhub.md describes, with this test's ports and folders."""
    python = sys.executable
    return f'''
c = get_config()  # noqa
c.JupyterHub.ip = '127.0.0.1'
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = '127.0.0.1'
c.JupyterHub.hub_port = {hub_port}
c.JupyterHub.db_url = 'sqlite:///{folder}/jupyterhub.sqlite'
c.JupyterHub.cookie_secret_file = '{folder}/jupyterhub_cookie_secret'
c.ConfigurableHTTPProxy.command = ['{PROXY}']
c.ConfigurableHTTPProxy.pid_file = '{folder}/proxy.pid'
c.JupyterHub.authenticator_class = 'dummy'
c.Authenticator.allowed_users = {{'zoe', 'bob', 'max', 'teach'}}
c.JupyterHub.spawner_class = 'simple'
c.SimpleLocalProcessSpawner.home_dir_template = '{folder}/home/{{username}}'
c.Spawner.cmd = ['{python}', '-m', 'jupyterhub.singleuser']
c.Spawner.args = ['--allow-root']           # this test runs as root; a real hub spawns each user as themselves
c.Spawner.default_url = '/tree'
c.Spawner.http_timeout = 60
c.JupyterHub.load_groups = {{'instructors': {{'users': ['teach']}}}}
c.JupyterHub.load_roles = [{{'name': 'user', 'scopes': ['self', 'access:services!service=grading']}}]
c.JupyterHub.services = [{{
    'name': 'grading',
    'url': 'http://127.0.0.1:{service_port}',
    'command': ['{python}', '-m', 'coursetools.service.serve', '--course', '{course}'],
    'cwd': '{course}',
    'environment': {{'PATH': '{os.path.dirname(python)}:' + __import__('os').environ['PATH']}},
    'oauth_no_confirm': True,
}}]
'''


def student_home(folder, course, name):
    """A student's home with the nbgrader settings a course's students get (their id, the shared exchange)."""
    home = folder / 'home' / name
    (home / '.jupyter').mkdir(parents=True)
    settings = (f"c = get_config()\nc.Exchange.root = '{course / 'exchange'}'\n"
                f"c.CourseDirectory.course_id = '{COURSE_ID}'\nc.CourseDirectory.student_id = '{name}'\n"
                f"c.Exchange.cache = '{home / '.nbgrader-cache'}'\nc.Exchange.assignment_dir = '{home}'\n")
    for where in (home, home / '.jupyter'):
        (where / 'nbgrader_config.py').write_text(settings)


@pytest.fixture(scope='module')
def hub(tmp_path_factory):
    assert PROXY.exists(), 'configurable-http-proxy: `bash scripts/system-packages.sh test` installs it'
    folder = tmp_path_factory.mktemp('hub')
    course = exchange_course(folder, ['c.Service.attempts_per_day = 1'])
    for name in STUDENTS + ('teach',):
        student_home(folder, course, name)
    port, hub_port, service_port = free_port(), free_port(), free_port()
    (folder / 'jupyterhub_config.py').write_text(hub_config(folder, course, port, hub_port, service_port))
    log = open(folder / 'hub.log', 'wb')
    process = subprocess.Popen([sys.executable, '-m', 'jupyterhub', '-f', str(folder / 'jupyterhub_config.py')],
                               cwd=folder, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                               env=dict(os.environ, PATH=os.path.dirname(sys.executable) + ':' + os.environ['PATH']))
    base = f'http://127.0.0.1:{port}'
    try:
        assert wait_for(lambda: 'pages at http' in (text := (folder / 'hub.log').read_text()) and
                        'JupyterHub is now running' in text, 90), \
            (folder / 'hub.log').read_text()[-5000:]
        yield base, course, folder
    finally:
        stop(process, 60)


def log_in(browser, base, name):
    """A page logged in as `name` through the Hub's login page, their server started."""
    context = browser.new_context()
    context.route(lambda url: '127.0.0.1' not in url, lambda route: route.abort())
    page = context.new_page()
    page.goto(f'{base}/hub/login')
    page.fill('input[name=username]', name)
    page.fill('input[name=password]', 'any')
    page.click('input[type=submit], button[type=submit]')
    page.wait_for_url(re.compile(rf'.*/user/{name}/tree.*'), timeout=90_000)
    page.wait_for_load_state('load')
    assert '_xsrf' in {cookie['name'] for cookie in context.cookies()}
    return page


def api(page, base, name, method, path, body=None):
    """A request from the student's page to their own Jupyter server (its xsrf cookie, as its UI sends)."""
    return page.evaluate('''async ([url, method, body]) => {
        const xsrf = (document.cookie.match(/_xsrf=([^;]+)/) || [])[1] || '';
        const answer = await fetch(url, {method, headers: {'X-XSRFToken': decodeURIComponent(xsrf),
            'Content-Type': 'application/json'}, body: body === null ? undefined : JSON.stringify(body)});
        return [answer.status, await answer.text()];
    }''', [f'{base}/user/{name}/{path}', method, body])


def hand_in(page, base, name, notebook):
    """Fetch the assignment, save the student's notebook over it, submit: as the Assignments tab does."""
    if f'/user/{name}/tree' not in page.url:
        page.goto(f'{base}/user/{name}/tree')
        page.wait_for_load_state('load')
    action = {'course_id': COURSE_ID, 'assignment_id': ASSIGNMENT}
    status, text = api(page, base, name, 'POST', 'assignments/fetch', action)
    assert status == 200, text
    status, text = api(page, base, name, 'PUT', f'api/contents/{ASSIGNMENT}/{ASSIGNMENT}.ipynb',
                       {'type': 'notebook', 'format': 'json', 'content': notebook})
    assert status in (200, 201), text
    status, text = api(page, base, name, 'POST', 'assignments/submit', action)
    assert status == 200 and '"submitted"' in text, text
    return time.monotonic()


def open_status(page, base, name, until, timeout):
    """The student's status page on the service (logged in through the Hub), reloaded until it shows `until`."""
    deadline = time.monotonic() + timeout
    page.goto(f'{base}/services/grading/status/{name}')
    while until not in page.content() and time.monotonic() < deadline:
        time.sleep(1)
        page.reload()
    return page.content()


def test_students_hand_in_on_the_hub_and_see_their_feedback(hub, browser):
    base, course, folder = hub
    zoe = log_in(browser, base, 'zoe')
    submitted = hand_in(zoe, base, 'zoe', json.loads(json.dumps(answers('ada'))))
    content = open_status(zoe, base, 'zoe', '>graded<', 60)
    assert '>graded<' in content, content + (folder / 'hub.log').read_text()[-3000:]
    zoe.click('text=feedback page')
    zoe.wait_for_load_state()
    assert 'Score: 12 / 12' in zoe.content()
    waited = time.monotonic() - submitted
    assert waited < 60, waited
    bob = log_in(browser, base, 'bob')
    hand_in(bob, base, 'bob', json.loads(json.dumps(answers('cat'))))
    assert '11 / 12' in open_status(bob, base, 'bob', '>graded<', 90)
    bob.goto(f'{base}/services/grading/status/zoe')             # another student's status: refused
    assert '403' in bob.content() or 'Forbidden' in bob.content()
    maxi = log_in(browser, base, 'max')
    hand_in(maxi, base, 'max', json.loads(json.dumps(answers('dan'))))
    open_status(maxi, base, 'max', '>graded<', 90)
    hand_in(maxi, base, 'max', json.loads(json.dumps(answers('ada'))))
    content = open_status(maxi, base, 'max', 'Your next attempt will be graded from', 60)
    assert 'Your next attempt will be graded from' in content and '>refused<' in content
    maxi.goto(f'{base}/user/max/tree')
    maxi.wait_for_load_state('load')
    status, text = api(maxi, base, 'max', 'POST', 'assignments/fetch_feedback',
                       {'course_id': COURSE_ID, 'assignment_id': ASSIGNMENT})
    assert status == 200, text
    pages = [p.read_text() for p in (folder / 'home' / 'max' / ASSIGNMENT / 'feedback').glob('*/*.html')]
    assert any('your next attempt will be graded from' in p for p in pages), pages
    teach = log_in(browser, base, 'teach')
    teach.goto(f'{base}/services/grading/dashboard')
    dashboard = teach.content()
    for name in STUDENTS:
        assert f'<td>{name}</td>' in dashboard, dashboard
    assert '3 graded, 1 refused' in dashboard
