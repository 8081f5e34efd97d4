"""The first program in every sandbox (`python -I -S launcher.py CONFIG -- COMMAND...`), standard library only.

Still root inside the sandbox (when the grader is root), it copies the submission, bound read-only, into the
sandbox's own working folder (on a sized tmpfs, so a notebook's files count against that size and vanish with the
sandbox), hands it to the throw-away uid, applies the resource limits, drops root for good and execs the kernel.
Unsandboxed, it only applies the limits and execs."""
import json
import os
import resource
import shutil
import sys


def copy_in(source, target, uid):
    shutil.copytree(source, target, symlinks=True)
    if uid is None:
        return
    for root, dirs, files in os.walk(target):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), uid, uid)
    os.lchown(target, uid, uid)


def drop_root(uid):
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.geteuid() != uid:
        sys.exit('sandbox launcher: could not drop privileges')
    with open('/proc/self/status') as status:
        caps = {line.split(':')[0]: int(line.split()[1], 16) for line in status if line.startswith('Cap')}
    if caps.get('CapEff') or caps.get('CapPrm') or caps.get('CapAmb'):
        sys.exit('sandbox launcher: capabilities left after dropping root')


def limit(config):
    for name, (soft, hard) in config['rlimits'].items():
        resource.setrlimit(getattr(resource, name), (soft, hard))


def become(config):
    """Drop root for good (when the grader is root), make the kernel's folders and go to its working folder."""
    uid = config.get('uid')
    if uid is not None and os.getuid() == 0:
        drop_root(uid)
    for folder in config.get('mkdirs', []):
        os.makedirs(folder, exist_ok=True)
    if config.get('workdir'):
        os.chdir(config['workdir'])


def main(config, command):
    uid = config.get('uid')
    if config.get('submission'):
        copy_in(config['submission'], config['workdir'], uid if os.getuid() == 0 else None)
    limit(config)
    become(config)
    os.execv(command[0], command)


if __name__ == '__main__':
    main(json.loads(sys.argv[1]), sys.argv[3:])
