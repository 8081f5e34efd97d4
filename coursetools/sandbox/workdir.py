"""A sandbox's working folder: a student's submission copied in (links kept as links, no fifos or devices, so
that copying never blocks or reads outside it) and handed to the sandbox's throw-away user."""
import os
import shutil
import stat
import subprocess
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
    """Hand `path` and all below it to `uid` (links themselves, never what they point to), however deep a student
    made it: coreutils walk any depth, where os.walk and shutil.rmtree stop with RecursionError at about 1,000."""
    if subprocess.run(['chown', '-R', '-P', '-h', f'{uid}:{uid}', '--', path], capture_output=True).returncode:
        raise OSError(f'could not hand {path} to the sandbox user')


def remove_tree(path: str) -> None:
    """Remove a folder a student's code wrote in, however deep (as shutil.rmtree(path, ignore_errors=True) does,
    without its recursion)."""
    subprocess.run(['rm', '-rf', '--', path], capture_output=True)
