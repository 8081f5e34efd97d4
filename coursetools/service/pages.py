"""The grading service's pages (tornado, in a thread of the service): the instructor's dashboard (the queue, what is
being graded, the last graded, attempts per student, the mark distribution) and each student's own status page
(queued, grading, graded with a link to the feedback page, refused and why, when the next attempt is graded).

Who is asking:
* under JupyterHub (the service started by the Hub: $JUPYTERHUB_API_TOKEN set), the Hub's login through
  `jupyterhub.services.auth.HubOAuth`; instructors are the members of the Hub group `c.Service.instructors_group`
  (read from the Hub's API with the service's own token), or Hub admins;
* standalone, a token: the instructor's (`.grading/service-token`, made at the first start, readable by the
  instructor only), or a student's own, `student_token(secret, student)` (an HMAC of the student id, which the
  instructor hands out: `python -m coursetools.service.pages STUDENT`).
A student sees only their own status and feedback: a name in the address that is not theirs is refused (403)."""
from __future__ import annotations

import asyncio
import functools
import hashlib
import hmac
import html
import os
import secrets
import sys
import threading
import time

from tornado import web
from tornado.ioloop import IOLoop

from coursetools.service.policy import shown
from coursetools.service.queue import Queue


def secret_of(course):
    """The standalone token of the course's instructor: made at the first start, kept in .grading/."""
    path = course.root / '.grading' / 'service-token'
    path.parent.mkdir(exist_ok=True)
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, 'w') as out:
            out.write(secrets.token_hex(24))
    return path.read_text().strip()


def student_token(secret, student):
    return hmac.new(secret.encode(), b'student:' + student.encode(), hashlib.sha256).hexdigest()[:32]


class Who:
    def __init__(self, name, instructor):
        self.name, self.instructor = name, instructor


class Base(web.RequestHandler):
    def initialize(self, pages):
        self.pages = pages

    def who(self):
        """Who is asking (a Who), or None."""
        token = self.get_argument('token', '') or self.request.headers.get('Authorization', '').removeprefix(
            'token ').strip()
        if token and hmac.compare_digest(token, self.pages.secret):
            return Who(None, True)
        student = self.path_kwargs.get('student') or self.get_argument('student', '')
        if token and student and hmac.compare_digest(token, student_token(self.pages.secret, student)):
            return Who(student, False)
        return None

    def get_current_user(self):
        return self.who()

    def allowed(self, student):
        who = self.current_user
        if who is None:
            raise web.HTTPError(403, 'not logged in')
        if not who.instructor and who.name != student:
            raise web.HTTPError(403, f'{who.name} may see only their own status')

    def page(self, title, body, refresh=5):
        self.set_header('Content-Type', 'text/html; charset=utf-8')
        self.set_header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'")
        self.write(f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
                   f'<meta http-equiv="refresh" content="{refresh}"><style>{STYLE}</style></head><body>'
                   f'<h1>{html.escape(title)}</h1>{body}</body></html>')

    def link(self, path, student=None):
        """`path` under the service's prefix, with the standalone token of whoever asks, if any."""
        token = self.get_argument('token', '')
        return self.pages.prefix + path + (f'?token={token}' if token else '')


STYLE = ('body { font-family: sans-serif; max-width: 60em; margin: 1em auto; } table { border-collapse: collapse } '
         'td, th { padding: 0.2em 0.6em; border-bottom: 1px solid #ddd; text-align: left } .bar { background: #4a7; '
         'display: inline-block; height: 0.8em }')


def table(headings, rows):
    head = ''.join(f'<th>{html.escape(h)}</th>' for h in headings)
    body = ''.join('<tr>' + ''.join(f'<td>{cell}</td>' for cell in row) + '</tr>' for row in rows)
    return f'<table><tr>{head}</tr>{body}</table>'


def mark(row):
    return f'{row.score:g} / {row.max_score:g}' if row.score is not None and row.max_score else '-'


def needs_user(method):
    """Someone known: else, under JupyterHub, to the Hub's login page; standalone, refused (403)."""
    @functools.wraps(method)
    def checked(self, *args, **kwargs):
        if self.current_user is None and not self.pages.hub:
            raise web.HTTPError(403, 'a token is needed: ?token=...')
        return web.authenticated(method)(self, *args, **kwargs)
    return checked


class Home(Base):
    @needs_user
    def get(self):
        if self.current_user.instructor:
            return self.redirect(self.link('dashboard'))
        self.redirect(self.link(f'status/{self.current_user.name}'))


class Status(Base):
    @needs_user
    def get(self, student):
        self.allowed(student)
        rows = self.pages.queue.rows(student)
        body = [f'<p>Student: <b class="student">{html.escape(student)}</b></p>']
        waiting = [r for r in rows if r.not_before and r.not_before > time.time()]
        if waiting:
            body.append(f'<p class="next">Your next attempt will be graded from {shown(waiting[0].not_before)}.</p>')
        body.append(table(['handed in', 'assignment', 'state', 'mark', 'why / feedback'], [
            (shown(r.submitted_at), html.escape(r.assignment), f'<span class="state">{r.state}</span>', mark(r),
             f'<a href="{html.escape(self.link(f"feedback/{student}/{r.assignment}"))}">feedback page</a>'
             if r.state == 'graded' else html.escape(r.reason)) for r in rows]))
        self.page(f'Your submissions: {student}', ''.join(body))


class Feedback(Base):
    @needs_user
    def get(self, student, assignment):
        self.allowed(student)
        course = self.pages.service.course
        if assignment not in course.assignments():
            raise web.HTTPError(404)
        page = course.root / 'feedback' / student / assignment / f'{assignment}.html'
        if not page.is_file():
            raise web.HTTPError(404, 'no feedback yet')
        self.set_header('Content-Type', 'text/html; charset=utf-8')
        self.set_header('Content-Security-Policy', "script-src 'none'")
        self.write(page.read_bytes())


class Dashboard(Base):
    @needs_user
    def get(self):
        if not self.current_user.instructor:
            raise web.HTTPError(403, 'for instructors only')
        rows = self.pages.queue.rows()
        counts = self.pages.queue.counts()
        busy = list(self.pages.service.busy.values())
        body = ['<p class="counts">' + ', '.join(f'{n} {s}' for s, n in counts.items()) + '</p>',
                '<h2>Being graded</h2>', table(['student', 'assignment', 'handed in'], [
                    (html.escape(r.student), html.escape(r.assignment), shown(r.submitted_at)) for r in busy]),
                '<h2>Queued</h2>', table(['student', 'assignment', 'handed in'], [
                    (html.escape(r.student), html.escape(r.assignment), shown(r.submitted_at))
                    for r in rows if r.state == 'queued']),
                '<h2>Last graded</h2>', table(['student', 'assignment', 'mark', 'seconds to feedback'], [
                    (html.escape(r.student), html.escape(r.assignment), mark(r), f'{r.seconds or 0:.0f}')
                    for r in rows if r.state == 'graded'][:20])]
        attempts = {}
        for r in rows:
            entry = attempts.setdefault((r.student, r.assignment), {'graded': 0, 'refused': 0, 'last': None})
            if r.state in ('graded', 'refused'):
                entry[r.state] += 1
            if r.state == 'graded' and entry['last'] is None:
                entry['last'] = r
        body += ['<h2>Attempts per student</h2>', table(['student', 'assignment', 'graded', 'refused', 'last mark'], [
            (html.escape(s), html.escape(a), e['graded'], e['refused'], mark(e['last']) if e['last'] else '-')
            for (s, a), e in sorted(attempts.items())])]
        distribution = {}
        for (s, a), e in attempts.items():
            if e['last'] is not None and e['last'].score is not None:
                distribution.setdefault(a, {}).setdefault(round(e['last'].score), []).append(s)
        body.append('<h2>Mark distribution (each student\'s last graded)</h2>')
        for assignment, by_mark in sorted(distribution.items()):
            body.append(f'<h3>{html.escape(assignment)}</h3>' + table(['mark', 'students', ''], [
                (m, len(names), f'<span class="bar" style="width:{len(names)}em"></span>')
                for m, names in sorted(by_mark.items())]))
        self.page('Grading service: dashboard', ''.join(body))


class HubPages:
    """Under JupyterHub: who is asking, from the Hub (HubOAuth: the Hub's login page, its cookie); instructors are
    the members of the group (the identity the Hub gives a service holds the user's groups) and Hub admins."""

    def __init__(self, group):
        from jupyterhub.services.auth import HubOAuth
        # the one instance, which the Hub's OAuth callback handler (HubOAuthCallbackHandler) uses too
        self.auth = HubOAuth.instance(api_token=os.environ['JUPYTERHUB_API_TOKEN'], cache_max_age=60)
        self.group = group

    def handler(self, cls):
        from jupyterhub.services.auth import HubOAuthenticated
        hub = self

        class Hubbed(HubOAuthenticated, cls):
            hub_auth = hub.auth

            def get_current_user(self):
                model = HubOAuthenticated.get_current_user(self)
                if not model or model.get('kind', 'user') != 'user':
                    return None
                return Who(model['name'], bool(model.get('admin')) or hub.group in (model.get('groups') or ()))
        return Hubbed


class Pages:
    def __init__(self, service, port):
        self.service, self.queue = service, Queue(service.db)
        self.secret = secret_of(service.course)
        self.prefix = os.environ.get('JUPYTERHUB_SERVICE_PREFIX', '/')
        self.hub = HubPages(service.policy.instructors_group) if os.environ.get('JUPYTERHUB_API_TOKEN') else None
        handlers = [('', Home), ('dashboard', Dashboard), (r'status/(?P<student>[^/]+)', Status),
                    (r'feedback/(?P<student>[^/]+)/(?P<assignment>[^/]+)', Feedback)]
        routes = [(self.prefix + path, self.hub.handler(cls) if self.hub else cls, {'pages': self})
                  for path, cls in handlers]
        settings = {'login_url': self.prefix}
        if self.hub:
            from jupyterhub.services.auth import HubOAuthCallbackHandler
            routes.append((self.prefix + 'oauth_callback', HubOAuthCallbackHandler))
            settings = {'cookie_secret': secrets.token_bytes(32), 'login_url': self.hub.auth.login_url}
        self.app = web.Application(routes, **settings)
        url = os.environ.get('JUPYTERHUB_SERVICE_URL')
        if url:
            from urllib.parse import urlparse
            parsed = urlparse(url)
            self.ip, self.port = parsed.hostname, parsed.port
        else:
            self.ip, self.port = service.policy.ip, port
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._serve, name='pages', daemon=True)

    def _serve(self):
        asyncio.set_event_loop(asyncio.new_event_loop())
        self.loop = IOLoop.current()
        self.server = self.app.listen(self.port, address=self.ip)
        self.ready.set()
        self.loop.start()

    def stop(self):
        if self.ready.is_set():
            self.loop.add_callback(self.loop.stop)
        self.thread.join(5)
        self.queue.close()


def start(service, port):
    pages = Pages(service, port)
    pages.thread.start()
    pages.ready.wait(10)
    import logging
    logging.getLogger('coursetools.service').info(
        'pages at http://%s:%s%s (%s)', pages.ip, pages.port, pages.prefix,
        'JupyterHub login' if pages.hub else f'the instructor\'s token is in {service.course.root}/.grading/service-token')
    return pages


if __name__ == '__main__':      # a student's standalone token: python -m coursetools.service.pages STUDENT
    from coursetools.grading.course import Course
    course = Course.at()
    for name in sys.argv[1:]:
        print(name, student_token(secret_of(course), name))
