"""`nbgrader collect` (and formgrader's Collect button) taking from the exchange only what a student can hand in:
regular files and folders. Every student can write the exchange's inbound folder, and collect runs as the
instructor. nbgrader's own collect follows symbolic links, so a link there was collected as the student's work,
with whatever it pointed to: the course's source notebook, solutions and all (full marks), any file the
instructor can read, or /dev/zero. Here a link, a pipe or another special file is left out, with a warning, and a
submission that is itself a link, over nbgrader's size limit, or over `MAX_ENTRIES` or `MAX_DEPTH` (folders nested
past Python's recursion limit had stopped collect for everyone), is not collected. `nbgrader submit` copies what
links point to, so an honest submission holds no link. A submission folder whose name holds no time nbgrader can
read had stopped collect for the whole class; it is taken as its student's oldest. One whose student id holds a
control character or markup is not collected (`is_student_id`: a line break had stopped grading for the whole
class). Each submission is looked at before nbgrader touches `submitted/`, so one not collected never costs the
copy collected before (`--update`). Set in nbgrader_config.py (`c.ExchangeFactory.collect`)."""
import datetime
import os
import stat
import tempfile

from nbgrader.exchange.default.collect import ExchangeCollect
from traitlets import Unicode

from coursetools.grading.course import STUDENT_ID_RULE, is_student_id

_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
_CHUNK = 1024 * 1024
MAX_ENTRIES = 10_000        # files and folders in one submission
MAX_DEPTH = 16              # folders inside folders


class NotCollected(Exception):
    """A submission that is not collected, with the reason."""


class CollectRegularFiles(ExchangeCollect):
    """nbgrader's collect, copying a submission's regular files and folders only (module docstring)."""

    def _path_to_record(self, path):
        try:
            return super()._path_to_record(path)
        except (ValueError, OverflowError):
            name = os.path.basename(path)
            student = name.rsplit('+', 3)[0]      # as nbgrader splits it: a student id may hold a +
            self.log.warning('%s holds no time nbgrader can read in its name: taken as the oldest submission of %s',
                             path, student)
            return {'username': student, 'filename': name, 'timestamp': datetime.datetime.min}

    def copy_files(self):
        """nbgrader's copy of each chosen submission, after a first look at each without copying: one that is not
        collected is dropped before nbgrader removes the copy collected earlier (`--update`), which stays."""
        for record in list(self.src_records):
            src = os.path.join(self.inbound_path, record['filename'])
            try:
                if not is_student_id(record['username']):
                    raise NotCollected(STUDENT_ID_RULE)
                self._copy(src, None)
            except NotCollected as reason:
                self._not_collected(src, reason)
                self.src_records.remove(record)
        super().copy_files()

    def do_copy(self, src, dest, log=None):
        """Copy what `src` holds into a scratch folder, opening nothing through a link, then let nbgrader copy
        that to `dest` (its size limits, ignore patterns and group permissions)."""
        with tempfile.TemporaryDirectory(prefix='collect-') as scratch:
            copied = os.path.join(scratch, 'submission')
            try:
                self._copy(src, copied)
            except NotCollected as reason:        # changed since the first look
                self._not_collected(src, reason)
                return
            super().do_copy(copied, dest, log)

    def _not_collected(self, src, reason):
        self.log.warning('%r: %s: not collected', src, reason)       # repr: a name may hold a line break

    def _copy(self, src, target):
        """Copy the submission folder `src` to `target`, or only look at it if `target` is None."""
        SafeCopy(self.log, 1000 * self.coursedir.max_dir_size).copy(src, target)


class CollectOne(CollectRegularFiles):
    """The grading service's collect (`coursetools.instructor.serve`): nbgrader's collect of one student, taking
    the one inbound folder named `folder` as that student's submission, not their newest (the service grades each
    submission in turn). With `--update`, it replaces an older collected copy, never a newer one."""

    folder = Unicode('', help='the name of the folder in the inbound folder to collect').tag(config=True)

    def init_src(self):
        super().init_src()
        path = os.path.join(self.inbound_path, self.folder)
        records = [self._path_to_record(path)] if self.folder and os.path.lexists(path) else []
        self.src_records = [r for r in records if r['username'] == self.coursedir.student_id]


class SafeCopy:
    """Copying a submission folder out of the inbound folder (which every student can write) opening nothing
    through a link: regular files and folders only, at most `max_bytes`, `MAX_ENTRIES` and `MAX_DEPTH`."""

    def __init__(self, log, max_bytes):
        self.log, self.max_bytes = log, max_bytes

    def copy(self, src, target):
        """Copy the folder `src` to `target` (made here; None: only look); raises NotCollected, saying why."""
        folder = _open(src, _FOLDER)
        if folder is None:
            raise NotCollected('a link, or no folder')
        try:
            self._copy_folder(folder, src, target, [self.max_bytes, MAX_ENTRIES], 0)
        finally:
            os.close(folder)

    def _copy_folder(self, folder, shown, target, room, depth):
        """Copy the folder open as `folder` to `target` (None: only look); `room` holds the bytes and entries
        still allowed."""
        if depth > MAX_DEPTH:
            raise NotCollected(f'folders nested more than {MAX_DEPTH} deep')
        if target is not None:
            os.mkdir(target)
        for entry in os.scandir(folder):
            room[1] -= 1
            if room[1] < 0:
                raise NotCollected(f'more than {MAX_ENTRIES:,} files and folders')
            path = os.path.join(shown, entry.name)
            copy = None if target is None else os.path.join(target, entry.name)
            if entry.is_dir(follow_symlinks=False) and (inner := _open(entry.name, _FOLDER, folder)) is not None:
                try:
                    self._copy_folder(inner, path, copy, room, depth + 1)
                finally:
                    os.close(inner)
            elif not (entry.is_file(follow_symlinks=False) and _copy_file(folder, entry.name, copy, room)):
                if target is not None:
                    self.log.warning('%s is a link, a pipe or another special file, not a file a student hands '
                                     'in: left out', path)


def _copy_file(folder, name, copy, room):
    """Copy the regular file `name` in `folder` (opened without following a link or waiting on a pipe) to
    `copy` (None: only count its bytes); False if it is not a regular file. Raises NotCollected past the
    submission's `room` in bytes."""
    source = _open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, folder)
    if source is None:
        return False
    with open(source, 'rb') as reader:
        info = os.fstat(source)
        if not stat.S_ISREG(info.st_mode):
            return False
        if copy is None:
            _spend(room, info.st_size)
            return True
        with open(copy, 'wb') as writer:
            while chunk := reader.read(_CHUNK):
                _spend(room, len(chunk))
                writer.write(chunk)
    return True


def _spend(room, size):
    room[0] -= size
    if room[0] < 0:
        raise NotCollected('over the size a submission may have (c.CourseDirectory.max_dir_size)')


def _open(name, flags=_FOLDER, folder=None):
    """A descriptor of `name` (in `folder`), or None if it cannot be opened so (a link, or it became one)."""
    try:
        return os.open(name, flags, dir_fd=folder)
    except OSError:
        return None
