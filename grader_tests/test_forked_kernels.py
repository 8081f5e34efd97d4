"""`make grade`'s kernels are forked from a warm zygote into a sandbox bubblewrap made for each of them
(`grading.kernels.ForkedKernels`, `sandbox/host/zygote.py`, `sandbox/inside/zygote.py`). What such a kernel sees
must be what a cold kernel sees: the cold kernel's sandbox is the one the other sandbox tests prove, and this
module compares the two, field by field, in real sandboxes. The few differences are listed and each is stricter."""
import json
import os
import signal

import pytest
from nbformat.v4 import new_code_cell, new_notebook

from conftest import ROOT, needs_sandbox
from coursetools.grading.execute import SandboxedExecute
from coursetools.grading.kernels import ForkedKernels, Kernels
from coursetools.sandbox.host import bubblewrap as sbx
from coursetools.sandbox.host import uids
from coursetools.sandbox.host.files import NotebookFolder
from coursetools.sandbox.host.zygote import Zygote, ZygoteFailed

pytestmark = needs_sandbox        # and root, as `make test` runs: only root's kernels are forked

PROBE = r'''
import json, os, resource, signal, socket, sys
fields = ('Uid', 'Gid', 'Groups', 'CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb', 'NoNewPrivs', 'Seccomp', 'VmSize',
          'VmRSS', 'Umask')
status = {k: v.strip() for k, v in (line.split(':', 1) for line in open('/proc/self/status')) if k in fields}
kinds = set()
for fd in os.listdir('/proc/self/fd'):
    try:
        target = os.readlink(f'/proc/self/fd/{fd}')
    except OSError:         # listdir's own
        continue
    kinds.add((fd if int(fd) <= 2 else '') + (os.path.basename(target) if target.startswith('/') else
                                              target.split('[')[0]))
print(json.dumps(dict(
    status=status, cwd=os.getcwd(), env=dict(os.environ), path=sys.path, flags=str(sys.flags),
    fds=sorted(kinds), host=socket.gethostname(), interfaces=socket.if_nameindex(),
    limits={n: resource.getrlimit(getattr(resource, n)) for n in dir(resource) if n.startswith('RLIMIT_')},
    mounts=sorted(line.split()[4] for line in open('/proc/self/mountinfo')),
    processes=[open(f'/proc/{p}/cmdline').read().split('\0')[:4] for p in sorted(os.listdir('/proc'), key=str)
               if p.isdigit()],
    signals=[str(signal.getsignal(s)) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP)],
    blocked=sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])), files=sorted(os.listdir('.')),
    modules=sorted(sys.modules), parent=os.getppid(), session_inside=os.getsid(0) != 0,
    uid_files=os.stat('data.txt').st_uid == os.getuid(),
    course=sorted({getattr(m, '__file__', None) or '' for m in list(sys.modules.values())} - {''}
                  - {f for f in {getattr(m, '__file__', None) or '' for m in list(sys.modules.values())}
                     if f.startswith(sys.base_prefix) or f.startswith(sys.prefix)}),
)))
'''


def probe(tmp_path, source, name):
    submission = tmp_path / name / 'ps1'
    submission.mkdir(parents=True)
    (submission / 'data.txt').write_text('the student\'s file')
    notebook = new_notebook(cells=[new_code_cell(PROBE)])
    SandboxedExecute(kernel_source=source).preprocess(notebook, {'metadata': {'path': str(submission)}})
    printed = [o for o in notebook.cells[0].outputs if o.get('name') == 'stdout']
    assert printed, notebook.cells[0].outputs
    return json.loads(printed[0]['text'])


@pytest.fixture(scope='module')
def seen(tmp_path_factory):
    forked = ForkedKernels()
    try:
        forked.warm_up()
        tmp = tmp_path_factory.mktemp('forked')
        yield probe(tmp, Kernels(), 'cold'), probe(tmp, forked, 'forked')
    finally:
        forked.zygote.close()


def test_a_forked_kernel_has_the_cold_kernels_environment_files_paths_and_limits(seen):
    cold, forked = seen
    for field in ('cwd', 'env', 'path', 'flags', 'fds', 'host', 'interfaces', 'limits', 'signals', 'blocked',
                  'files', 'modules', 'uid_files', 'course', 'parent', 'session_inside'):
        assert forked[field] == cold[field], field
    assert forked['course'] == [] and forked['uid_files']
    assert forked['parent'] == 1 and forked['session_inside']       # not the grader's session: no terminal of it
    assert forked['interfaces'] == [[1, 'lo']] and forked['host'] == 'grading-sandbox'


def test_a_forked_kernel_has_the_cold_kernels_mounts(seen):
    cold, forked = seen

    def general(mounts):        # each kernel's own folder on the host has a name of its own
        return sorted('/<kernel folder>' + m[m.index('/kernel'):] if '/nbsbx-' in m else m for m in mounts)
    assert general(forked['mounts']) == general(cold['mounts'])
    assert not any(m.startswith(str(ROOT)) and '.venv' not in m for m in forked['mounts'])


def test_a_forked_kernel_has_no_privilege_and_a_uid_of_its_own(seen):
    cold, forked = seen
    for status in (cold['status'], forked['status']):
        uid = status['Uid'].split()
        assert len(set(uid)) == 1 and uid[0] != '0' and status['Gid'].split() == uid and status['Groups'] == ''
        assert {status[c] for c in ('CapInh', 'CapPrm', 'CapEff', 'CapAmb')} == {'0000000000000000'}
        assert status['NoNewPrivs'] == '1'
    assert forked['status']['Seccomp'] == cold['status']['Seccomp']
    assert forked['status']['Umask'] == cold['status']['Umask']
    assert forked['status']['CapBnd'] == '0000000000000000'         # stricter: bwrap leaves the bounding set


def test_a_forked_kernel_starts_with_the_memory_a_cold_one_has(seen):
    """What the zygote held and the kernel inherits must not bring a notebook nearer its memory limit."""
    cold, forked = (int(s['status']['VmSize'].split()[0]) for s in seen)
    assert forked < cold * 1.05, (forked, cold)


def test_a_forked_kernel_sees_only_its_sandbox_processes(seen):
    cold, forked = seen
    assert len(cold['processes']) == 2          # bwrap's init and the kernel
    assert len(forked['processes']) == 3        # and the program that holds the sandbox open
    assert os.path.basename(forked['processes'][0][0]) == 'bwrap' and forked['processes'][1][:2] == ['sleep', 'infinity']


def host_processes_with(marker):
    found = []
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open(f'/proc/{pid}/cmdline', 'rb') as cmdline:
                if marker.encode() in cmdline.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def test_a_forked_kernels_death_ends_its_sandbox_and_the_next_cells_get_a_new_kernel(tmp_path):
    forked = ForkedKernels()
    submission = tmp_path / 'ps1'
    submission.mkdir()
    marker = 'sleep 4711.5'
    notebook = new_notebook(cells=[
        new_code_cell(f'import os, subprocess\nsubprocess.Popen("{marker}", shell=True, start_new_session=True)\n'
                      'print(os.getpid())'),
        new_code_cell('os.kill(os.getpid(), 9)'),
        new_code_cell('print("after")'),
    ])
    try:
        SandboxedExecute(kernel_source=forked).preprocess(notebook, {'metadata': {'path': str(submission)}})
        assert [o.get('ename') for o in notebook.cells[1].outputs] == ['KernelDied']
        assert notebook.cells[2].outputs[0]['text'] == 'after\n'
        assert host_processes_with(marker) == []
        watchers = open(f'/proc/{forked.zygote.process.pid}/task/{forked.zygote.process.pid}/children').read()
        assert watchers.split() == []
    finally:
        forked.zygote.close()


def test_a_zygote_that_died_is_started_again(tmp_path):
    forked = ForkedKernels()
    forked.warm_up()
    first = forked.zygote.process
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert probe(tmp_path, forked, 'again')['files'] == ['data.txt']
    assert forked.zygote.process.pid != first.pid
    forked.zygote.close()


def test_a_kernel_the_zygote_cannot_make_is_the_machines_fault_and_leaves_no_sandbox(tmp_path):
    """A failure inside the fork (here a limit this Python does not know) is a SandboxUnavailable: `make grade`
    stops with the machine's fault, and no student loses a mark for it."""
    zygote = Zygote(sbx.base_env())
    zygote.start()
    with uids.lease() as lease:
        folder = NotebookFolder(None, uid=lease.uid)
        kernel = folder.kernel()
        try:
            with open(kernel.connection_file, 'x') as f:
                f.write('{}')
            kernel.share_connection_file()
            layout = sbx.SandboxLayout(folder.submission, kernel.connection_file, kernel.sockets,
                                       f'{sbx.SANDBOX_HOME}/ps1')
            config = sbx.launcher_config(layout, sbx.Limits(), lease.uid)
            config['rlimits']['RLIMIT_NOT_A_LIMIT'] = [1, 1]
            log = kernel.open_log()
            with pytest.raises(ZygoteFailed, match='RLIMIT_NOT_A_LIMIT'):
                zygote.launch(sbx.build_command([], layout, sbx.Limits(), uid=lease.uid), log,
                              {'argv': ['-f', kernel.connection_file], 'env': sbx.sandbox_env(layout),
                               'launcher': config})
            os.close(log)
            assert host_processes_with(kernel.connection_file) == []
        finally:
            zygote.close()
            folder.remove()




def test_a_submission_too_large_for_its_sandbox_fails_the_start_as_a_cold_kernels_does(tmp_path):
    """Not the machine's fault (which would take the worker away from every other notebook): the same error as a
    cold kernel whose launcher could not copy the submission in."""
    forked = ForkedKernels()
    failures = []
    try:
        for source in (Kernels(), forked):
            submission = tmp_path / type(source).__name__ / 'ps1'
            submission.mkdir(parents=True)
            (submission / 'big.bin').write_bytes(b'x' * 3 * 1024 * 1024)
            with pytest.raises(RuntimeError, match='could not start') as failed:
                SandboxedExecute(kernel_source=source, scratch_limit=2 * 1024 * 1024).preprocess(
                    new_notebook(cells=[new_code_cell('print(1)')]), {'metadata': {'path': str(submission)}})
            failures.append(failed.value)
    finally:
        if forked.zygote is not None:
            forked.zygote.close()
    assert not any(isinstance(failure, sbx.SandboxUnavailable) for failure in failures)
    assert 'No space left on device' in str(failures[1])
