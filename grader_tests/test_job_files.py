"""A job's files (`pool.snapshot` in the grading process, `pool.materialize` on a worker, perhaps as root and from
the network with --scheduler) land inside the slot's folder and nowhere else; the student's own links are kept as
links."""
import os
import stat

import pytest

from coursetools.grading import pool


@pytest.fixture
def folders(tmp_path):
    """(the job's folder, a sentinel folder beside it that must stay empty)."""
    (tmp_path / 'job').mkdir()
    (tmp_path / 'outside').mkdir()
    return tmp_path / 'job', tmp_path / 'outside'


FILE = ('file', b'written', 0o644)

ESCAPES = {
    'parent': lambda outside: {'../outside/x': FILE},
    'parent-deeper': lambda outside: {'a/../../outside/x': FILE},
    'absolute': lambda outside: {str(outside / 'x'): FILE},
    'absolute-folder': lambda outside: {str(outside / 'd'): ('dir', None, 0o755)},
    'absolute-link': lambda outside: {str(outside / 'l'): ('link', '/etc', 0)},
    'through-a-link': lambda outside: {'a': ('link', str(outside), 0), 'a/x': FILE},
    'through-a-link-listed-after': lambda outside: {'a/x': FILE, 'a': ('link', str(outside), 0)},
    'folder-through-a-link': lambda outside: {'a': ('link', str(outside), 0), 'a/d': ('dir', None, 0o755)},
    'link-through-a-link': lambda outside: {'a': ('link', str(outside), 0), 'a/l': ('link', '/etc', 0)},
    'relative-link-then-through-it': lambda outside: {'a': ('link', '../outside', 0), 'a/b/x': FILE},
    'through-a-file': lambda outside: {'a': FILE, 'a/x': FILE},
    'empty-component': lambda outside: {'a//x': FILE},
    'dot-component': lambda outside: {'./x': FILE},
    'trailing-slash': lambda outside: {'a/': ('dir', None, 0o755)},
    'empty-path': lambda outside: {'': FILE},
    'unknown-kind': lambda outside: {'x': ('fifo', None, 0o644)},
}


@pytest.mark.parametrize('name', ESCAPES)
def test_an_entry_that_would_leave_the_folder_is_refused_and_nothing_is_written_outside(folders, name):
    job, outside = folders
    files = ESCAPES[name](outside)
    with pytest.raises(ValueError, match='job file .* refused'):
        pool.materialize(files, str(job))
    assert list(outside.iterdir()) == []
    assert sorted(os.listdir(job.parent)) == ['job', 'outside']


def test_the_error_names_the_entry(folders):
    job, outside = folders
    with pytest.raises(ValueError, match=r"job file 'a/x' refused: it is inside 'a', a link, not a folder"):
        pool.materialize({'a': ('link', str(outside), 0), 'a/x': FILE}, str(job))


@pytest.mark.parametrize('entry', ['a/x', 'a/b/x'])
def test_a_link_already_on_disk_is_never_followed_to_write_a_file(folders, entry):
    job, outside = folders
    os.symlink(outside, job / 'a')
    with pytest.raises(ValueError, match=f"job file '{entry}' refused"):
        pool.materialize({entry: FILE}, str(job))
    assert list(outside.iterdir()) == []


def test_a_file_whose_name_is_a_link_on_disk_is_not_written_through_it(folders):
    job, outside = folders
    os.symlink(outside / 'x', job / 'x')            # a dangling link: open('wb') would create outside/x
    with pytest.raises(ValueError, match="job file 'x' refused"):
        pool.materialize({'x': FILE}, str(job))
    assert list(outside.iterdir()) == []


def test_a_folder_whose_name_is_a_link_on_disk_does_not_change_the_modes_outside(folders):
    job, outside = folders
    outside.chmod(0o700)
    os.symlink(outside, job / 'a')
    with pytest.raises(ValueError, match="job file 'a' refused"):
        pool.materialize({'a': ('dir', None, 0o777)}, str(job))
    assert stat.S_IMODE(outside.stat().st_mode) == 0o700 and list(outside.iterdir()) == []


def test_snapshot_then_materialize_gives_back_the_same_files_folders_links_and_modes(tmp_path):
    source = tmp_path / 'source'
    (source / 'data' / 'deeper').mkdir(parents=True)
    (source / 'notebook.ipynb').write_bytes(b'{"cells": []}')
    (source / 'run.sh').write_bytes(b'#!/bin/sh\n')
    (source / 'run.sh').chmod(0o755)
    (source / 'data' / 'table.csv').write_bytes(b'a,b\n1,2\n' * 1000)
    (source / 'data' / 'table.csv').chmod(0o640)
    (source / 'data' / 'deeper').chmod(0o750)
    (source / 'data' / 'empty').write_bytes(b'')
    os.symlink('data/table.csv', source / 'table')         # the student's own links stay links,
    os.symlink('/etc/passwd', source / 'data' / 'passwd')  # wherever they point
    os.symlink('data', source / 'folder-link')
    files = pool.snapshot(str(source))
    assert files['folder-link'] == ('link', 'data', 0) and 'folder-link/table.csv' not in files
    target = tmp_path / 'target'
    target.mkdir()
    pool.materialize(files, str(target))
    assert pool.snapshot(str(target)) == files
    assert os.readlink(target / 'data' / 'passwd') == '/etc/passwd' and (target / 'table').is_symlink()
    assert stat.S_IMODE((target / 'run.sh').stat().st_mode) == 0o755
    assert stat.S_IMODE((target / 'data' / 'deeper').stat().st_mode) == 0o750
    assert (target / 'data' / 'table.csv').read_bytes() == b'a,b\n1,2\n' * 1000


def test_files_listed_before_their_folder_still_land_in_it(tmp_path):
    """A job built elsewhere need not list a folder before its files (today's order is os.walk's)."""
    pool.materialize({'d/x': FILE, 'd': ('dir', None, 0o750)}, str(tmp_path))
    assert (tmp_path / 'd' / 'x').read_bytes() == b'written'
    assert stat.S_IMODE((tmp_path / 'd').stat().st_mode) == 0o750
