"""The gradebook may live in PostgreSQL: `make grade` with `--db postgresql+psycopg2://...` gives demo students
exactly the marks they get with SQLite. The tests start their own throw-away server on 127.0.0.1 (grader_tests/
postgres.py); they fail on a machine without the PostgreSQL server binaries (`make test` installs them).
"""
import csv
import importlib.util
import os
import socket
import sys

import pytest

from conftest import copy_course, run_grade
from coursetools.instructor import marks
from postgres import PostgresServer, find_bin_dir
from test_demo_class import EXPECTED, TASKS

ASSIGNMENT = 'noughts_and_crosses'
# a mark lost in each task, and a stub: the gradebook's rows in every shape the demo class gives them
STUDENTS = ('ada', 'cat', 'dan', 'fay', 'hal', 'ivy', 'max')


@pytest.fixture(autouse=True)
def venv_on_path(monkeypatch):
    # nbgrader's Gradebook runs `alembic` as a subprocess when it opens a new database.
    monkeypatch.setenv('PATH', os.path.join(sys.prefix, 'bin') + os.pathsep + os.environ.get('PATH', ''))


@pytest.fixture(scope='module')
def postgres():
    """A running throw-away server (PostgresServer, .url), stopped and removed after this module."""
    assert find_bin_dir() is not None, ('no PostgreSQL server binaries in /usr/lib/postgresql/*/bin (Debian package '
                                        '`postgresql`; `make test` installs it via scripts/system-packages.sh test)')
    server = PostgresServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope='module')
def postgres_graded(postgres, tmp_path_factory):
    """Demo students graded by `make grade`'s code path into the PostgreSQL gradebook."""
    course = copy_course(tmp_path_factory.mktemp('pgcourse'), students=STUDENTS)
    result = run_grade(course, ASSIGNMENT, '--db', postgres.url)
    assert result.returncode == 0, result.stdout + result.stderr
    return course, result


def test_postgresql_gradebook_gives_the_sqlite_marks(postgres, postgres_graded, graded_class):
    sqlite_course, _ = graded_class
    in_sqlite, sqlite_maxima = marks.marks_by_task('sqlite:///' + str(sqlite_course / 'gradebook.db'), ASSIGNMENT)
    table, maxima = marks.marks_by_task(postgres.url, ASSIGNMENT)
    assert (table, maxima) == ({s: in_sqlite[s] for s in STUDENTS}, sqlite_maxima)
    assert tuple(maxima) == TASKS
    assert {student: tuple(int(row[task]) for task in TASKS) for student, row in table.items()} == {
        s: EXPECTED[s] for s in STUDENTS}
    assert marks.marks_by_cell(postgres.url, ASSIGNMENT, 'dan')['score_end-diagonals'] == 0


def test_postgresql_run_writes_nothing_to_sqlite_and_exports_the_same_grades(postgres_graded, graded_class):
    course, result = postgres_graded
    assert not (course / 'gradebook.db').exists(), 'grading with --db must not touch the SQLite gradebook'
    assert 'ada' in result.stdout and '/12' in result.stdout

    def scores(path, assignment=None):
        with open(path) as handle:
            return {row['student_id']: float(row['score']) for row in csv.DictReader(handle)
                    if assignment is None or row['assignment'] == assignment}
    in_sqlite = scores(graded_class[0] / 'grades.csv', ASSIGNMENT)
    in_postgres = scores(course / 'grades.csv', ASSIGNMENT)
    assert {s: in_postgres[s] for s in STUDENTS} == {s: in_sqlite[s] for s in STUDENTS}
    assert not any(in_postgres[s] for s in set(in_postgres) - set(STUDENTS))     # the roster's others: no marks


def test_server_listens_only_on_localhost(postgres):
    import psycopg2
    connection = psycopg2.connect(host='127.0.0.1', port=postgres.port, user='grader', password=postgres.password,
                                  dbname='gradebook')
    try:
        with connection.cursor() as cursor:
            cursor.execute('SHOW listen_addresses')
            assert cursor.fetchone()[0] == '127.0.0.1'
            cursor.execute('SHOW unix_socket_directories')
            assert cursor.fetchone()[0] == str(postgres.folder)
            cursor.execute('SHOW server_version_num')
            assert int(cursor.fetchone()[0]) >= 150000
    finally:
        connection.close()


def test_plain_postgresql_url_works_when_psycopg3_is_installed(postgres, postgres_graded):
    """SQLAlchemy 2.1 maps a plain postgresql:// URL to psycopg (3), not psycopg2 (both are in requirements.txt)."""
    assert importlib.util.find_spec('psycopg') is not None, 'psycopg (3) is not installed: pip install -r requirements.txt'
    plain = postgres.url.replace('postgresql+psycopg2://', 'postgresql://')
    assert marks.marks_by_task(plain, ASSIGNMENT) == marks.marks_by_task(postgres.url, ASSIGNMENT)


def test_throwaway_server_is_stopped_and_removed():
    assert find_bin_dir() is not None, 'no PostgreSQL server binaries in /usr/lib/postgresql/*/bin'
    server = PostgresServer()
    url = server.start()
    folder, port = server.folder, server.port
    assert url.startswith('postgresql+psycopg2://grader:') and f'@127.0.0.1:{port}/gradebook' in url
    assert folder.is_dir()
    server.stop()
    assert not folder.exists()
    with pytest.raises(OSError):
        socket.create_connection(('127.0.0.1', port), timeout=2).close()
