"""A sandbox's working folder: a student's submission copied in (links kept as links, no fifos or devices, so
that copying never blocks or reads outside it) and handed to the sandbox's throw-away user."""
import os
import shutil
import stat
from typing import Optional


def special_files(dirpath, names):
    """`shutil.copytree`'s ignore: everything that is not a regular file, a folder or a symlink (fifos, devices,
    sockets), so that copying a submission never blocks or reads outside it."""
    skip = []
    for name in names:
        try:
            mode = os.lstat(os.path.join(dirpath, name)).st_mode
        except OSError:
            skip.append(name)
            continue
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
            skip.append(name)
    return skip


def copy_submission(src: str, dest: str, uid: Optional[int] = None) -> str:
    """Copy the submission folder to ``dest`` (symlinks kept as links, special files skipped, so nothing
    outside ``src`` is ever read) and hand it to ``uid``."""
    shutil.copytree(src, dest, symlinks=True, ignore=special_files)
    if uid is not None:
        chown_tree(dest, uid)
    return dest


def chown_tree(path: str, uid: int) -> None:
    os.lchown(path, uid, uid)
    for root, dirs, files in os.walk(path):
        for n in dirs + files:
            os.lchown(os.path.join(root, n), uid, uid)
