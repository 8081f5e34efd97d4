"""A throw-away PostgreSQL server for the tests: ``with postgres_server() as url: ...``.

It uses the Debian server binaries (/usr/lib/postgresql/<version>/bin, package `postgresql`; `make test` installs
it when missing). The server

* lives in a fresh temporary folder (data directory, unix socket, log), removed at the end, always;
* listens only on 127.0.0.1, on a free port, and on a unix socket inside that folder (never /var/run/postgresql);
* has one superuser, `grader`, with a random password (scram-sha-256), and one database, `gradebook`.

PostgreSQL refuses to run as root: as root the server runs as the `postgres` system user that the Debian package
creates (`runuser -u postgres --`), or as `nobody` when there is no such user; as anyone else it runs as that user.
"""
import contextlib
import glob
import os
import pathlib
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import time

USER = 'grader'
DATABASE = 'gradebook'


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server binaries on this machine (`make test` installs them)."""


def find_bin_dir():
    """The newest /usr/lib/postgresql/<version>/bin with initdb, pg_ctl and postgres, or $PG_BIN_DIR; else None."""
    candidates = [os.environ['PG_BIN_DIR']] if os.environ.get('PG_BIN_DIR') else []
    candidates += sorted(glob.glob('/usr/lib/postgresql/*/bin'),
                         key=lambda p: [int(x) if x.isdigit() else 0 for x in pathlib.Path(p).parent.name.split('.')],
                         reverse=True)
    for directory in candidates:
        if all(os.access(os.path.join(directory, tool), os.X_OK) for tool in ('initdb', 'pg_ctl', 'postgres')):
            return directory
    return None


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def _server_account():
    """(run-as prefix, uid, gid): who runs initdb and the server."""
    if os.geteuid() != 0:
        return [], None, None
    for name in ('postgres', 'nobody'):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        runuser = shutil.which('runuser') or '/usr/sbin/runuser'
        return [runuser, '-u', name, '--'], entry.pw_uid, entry.pw_gid
    raise RuntimeError('PostgreSQL cannot run as root and there is neither a `postgres` nor a `nobody` user')


class PostgresServer:
    """One throw-away server; start() returns its URL, stop() stops it and removes its folder."""

    def __init__(self, bin_dir=None, start_timeout=60):
        self.bin_dir = bin_dir or find_bin_dir()
        if self.bin_dir is None:
            raise PostgresUnavailable('no PostgreSQL server binaries (initdb, pg_ctl, postgres) in '
                                      '/usr/lib/postgresql/*/bin: install the Debian package `postgresql` '
                                      '(scripts/system-packages.sh test does)')
        self.start_timeout = start_timeout
        self.folder = self.port = self.password = None
        self._running = False

    # paths inside the throw-away folder
    data = property(lambda self: self.folder / 'data')
    log = property(lambda self: self.folder / 'server.log')

    @property
    def url(self):
        return f'postgresql+psycopg2://{USER}:{self.password}@127.0.0.1:{self.port}/{DATABASE}'

    def _run(self, *command, check=True):
        result = subprocess.run([*self._as, *command], capture_output=True, text=True, cwd=self.folder,
                                env=dict(os.environ, LC_ALL='C.UTF-8', LANG='C.UTF-8'))
        if check and result.returncode != 0:
            raise RuntimeError(f'{" ".join(command)} failed (exit {result.returncode}):\n'
                               f'{result.stdout}{result.stderr}{self.log_tail()}')
        return result

    def log_tail(self, n=3000):
        try:
            return '\nserver log:\n' + self.log.read_text(errors='replace')[-n:]
        except (OSError, TypeError):
            return ''

    def start(self):
        self._as, uid, gid = _server_account()
        self.folder = pathlib.Path(tempfile.mkdtemp(prefix='course-pg-'))
        try:
            if uid is not None:
                os.chown(self.folder, uid, gid)
            self.password = secrets.token_urlsafe(16)
            pwfile = self.folder / 'pwfile'
            pwfile.write_text(self.password + '\n')
            if uid is not None:
                os.chown(pwfile, uid, gid)
            pwfile.chmod(0o600)
            self._run(os.path.join(self.bin_dir, 'initdb'), '-D', str(self.data), '-U', USER,
                      f'--pwfile={pwfile}', '--auth=scram-sha-256', '--encoding=UTF8', '--no-sync')
            pwfile.unlink()
            for attempt in range(5):  # the free port may be taken between free_port() and the server's bind
                self.port = free_port()
                options = (f'-c listen_addresses=127.0.0.1 -p {self.port} -k {self.folder} '
                           '-c fsync=off -c synchronous_commit=off -c full_page_writes=off '
                           '-c max_connections=40 -c shared_buffers=32MB')
                result = self._run(os.path.join(self.bin_dir, 'pg_ctl'), 'start', '-D', str(self.data),
                                   '-l', str(self.log), '-w', '-t', str(self.start_timeout), '-o', options,
                                   check=False)
                self._running = (self.data / 'postmaster.pid').exists()
                if result.returncode == 0:
                    break
                if 'could not bind' not in self.log_tail() or attempt == 4:
                    raise RuntimeError(f'pg_ctl start failed (exit {result.returncode}):\n'
                                       f'{result.stdout}{result.stderr}{self.log_tail()}')
                self._stop_server()
            self._create_database()
            return self.url
        except BaseException:
            self.stop()
            raise

    def _create_database(self):
        import psycopg2
        deadline = time.monotonic() + self.start_timeout
        while True:
            try:
                connection = psycopg2.connect(host='127.0.0.1', port=self.port, user=USER, password=self.password,
                                              dbname='postgres', connect_timeout=5)
                break
            except psycopg2.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        try:
            connection.autocommit = True
            with connection.cursor() as cursor:
                cursor.execute(f'CREATE DATABASE {DATABASE}')
        finally:
            connection.close()

    def _stop_server(self):
        if not self._running:
            return
        result = self._run(os.path.join(self.bin_dir, 'pg_ctl'), 'stop', '-D', str(self.data), '-m', 'fast',
                           '-w', '-t', '30', check=False)
        if result.returncode != 0 and (self.data / 'postmaster.pid').exists():
            # pg_ctl could not stop it: end our own postmaster (the pid is in its own pid file) for good.
            try:
                pid = int((self.data / 'postmaster.pid').read_text().split()[0])
                os.kill(pid, 9)
            except (OSError, ValueError, IndexError):
                pass
        self._running = False

    def stop(self):
        try:
            self._stop_server()
        finally:
            if self.folder is not None:
                shutil.rmtree(self.folder, ignore_errors=True)
                self.folder = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


@contextlib.contextmanager
def postgres_server(**kwargs):
    """Start a throw-away server; yields its URL (postgresql+psycopg2://grader:...@127.0.0.1:PORT/gradebook)."""
    server = PostgresServer(**kwargs)
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


if __name__ == '__main__':
    with postgres_server() as url:
        print('started', url)
        from nbgrader.api import Gradebook
        with Gradebook(url) as gradebook:
            gradebook.add_student('probe')
            print('students:', [s.id for s in gradebook.students])
    print('stopped')
