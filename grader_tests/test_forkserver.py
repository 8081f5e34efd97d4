"""The kernel fork server: its kernels are sandboxed and warm, and nothing one student's kernel does reaches the
next student's kernel or the server itself. Real bubblewrap, real ipykernel, real ZeroMQ."""
import itertools
import os

import pytest
from jupyter_client import BlockingKernelClient
from jupyter_client.connect import write_connection_file

from conftest import needs_sandbox
from coursetools.grading import forkserver
from coursetools.sandbox import bubblewrap as sbx
from coursetools.sandbox.workdir import chown_tree

pytestmark = needs_sandbox

INNER = f'{sbx.SANDBOX_HOME}/task'
SERIAL = itertools.count()


@pytest.fixture
def server(tmp_path):
    os.chmod(tmp_path, 0o755)
    for sub in ('work', 'conn'):
        (tmp_path / sub).mkdir()
    started = forkserver.ForkServer(workdir=str(tmp_path / 'work'), conn_root=str(tmp_path / 'conn'),
                                    inner_workdir=INNER, limits=sbx.Limits(), uid=sbx.pick_sandbox_uid())
    yield started.start()
    started.close()


def give(server, path):
    if server.uid is not None:
        chown_tree(path, server.uid)


def run(server, code, files=(), wipe=True, dies=False, waits=True):
    """Clear the sandbox (wiping it or not), put `files` in the submission folder, fork a kernel, run `code`
    in it and return (what it printed, the kernel handle). With `dies`, the code is expected to end the kernel."""
    server.clear(wipe=wipe)
    for name, text in dict(files).items():
        with open(os.path.join(server.workdir, name), 'w') as f:
            f.write(text)
    give(server, server.workdir)
    folder = os.path.join(server.conn_root, f'k{next(SERIAL)}')
    os.mkdir(folder)
    connection, _ = write_connection_file(os.path.join(folder, 'kernel.json'), transport='ipc',
                                          ip=os.path.join(folder, 'k'))
    give(server, folder)
    kernel = server.spawn(['-f', connection], log=os.path.join(folder, 'kernel.log'))
    client = BlockingKernelClient(connection_file=connection)
    client.load_connection_file()
    client.start_channels()
    printed = []
    try:
        client.wait_for_ready(timeout=30)
        if dies:
            client.execute(code)
            kernel.wait(15)
            return '', kernel
        client.execute_interactive(code, timeout=60, output_hook=lambda msg: printed.append(
            msg['content'].get('text', '') if msg['msg_type'] == 'stream' else
            msg['content'].get('evalue', '') if msg['msg_type'] == 'error' else ''))
        client.shutdown()
    finally:
        client.stop_channels()
    if waits:
        kernel.wait(10)
    return ''.join(printed), kernel


def values(printed):
    """The `key=value` lines a kernel printed, as a dict."""
    return dict(line.split('=', 1) for line in printed.splitlines() if '=' in line)


def test_a_forked_kernel_is_sandboxed_warm_and_without_the_course_package(server):
    printed, kernel = run(server, r'''
import os, socket, sys
print(f"uid={os.getuid()}")
print(f"cwd={os.getcwd()}")
print(f"file={open('answers.txt').read()}")
try:
    socket.create_connection(('1.1.1.1', 53), timeout=2)
    print("network=yes")
except OSError:
    print("network=no")
print(f"warm={'IPython' in sys.modules and 'ipykernel.kernelapp' in sys.modules}")
try:
    import coursetools.checks
    print("course=importable")
except ImportError:
    print("course=hidden")
print(f"processes={len([p for p in os.listdir('/proc') if p.isdigit()])}")
open('mine.py', 'w').write('WHO = "the folder"')
from mine import WHO
print(f"import={WHO}")
''', files={'answers.txt': 'mine'})
    got = values(printed)
    assert got['uid'] != '0'
    assert got['cwd'] == INNER and got['file'] == 'mine'
    assert got['network'] == 'no'
    assert got['warm'] == 'True'                          # IPython and ipykernel came with the fork
    assert got['course'] == 'hidden'                      # the hidden checks and the oracle are not there
    assert got['processes'] == '3'                        # the sandbox's init, the server, this kernel
    assert got['import'] == 'the folder'                  # the folder is on sys.path, as IPython puts it
    assert kernel.returncode == 0


LEAVE_TRACES = r'''
import os, signal, subprocess
home = os.path.expanduser('~')
os.makedirs(f'{home}/.ipython/profile_default/startup', exist_ok=True)
with open(f'{home}/.ipython/profile_default/startup/00-plant.py', 'w') as f:
    f.write("print('PLANTED STARTUP FILE RAN')\n")
for path in ('/tmp/left-behind', '/dev/shm/left-behind', 'left_behind.py', f'{home}/left-behind'):
    try:
        open(path, 'w').write('x')
    except OSError:     # /dev/shm is not writable in the sandbox
        pass
subprocess.Popen(['sh', '-c', 'sleep 600'], start_new_session=True)
if os.fork() == 0:              # a daemon that would wait for the next student
    os.setsid()
    os.execvp('sleep', ['sleep', '600'])
server = os.getppid()           # the kernel is the server's child
for what in ('mem', 'environ'):
    try:
        open(f'/proc/{server}/{what}', 'rb').read(1)
        print(f"read_{what}=yes")
    except OSError:
        print(f"read_{what}=no")
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    os.kill(server, sig)
'''

LOOK_AROUND = r'''
import os
home = os.path.expanduser('~')
found = []
for top in (home, '/tmp', '/dev/shm'):
    for root, dirs, files in os.walk(top):
        found += [os.path.join(root, name) for name in files]
print(f"files={sorted(found)}")
print(f"processes={len([p for p in os.listdir('/proc') if p.isdigit()])}")
'''


def test_nothing_of_one_student_reaches_the_next(server):
    first, _ = run(server, LEAVE_TRACES, files={'answers.txt': 'first student'})
    assert values(first) == {'read_mem': 'no', 'read_environ': 'no'}
    assert server.alive                                   # SIGTERM, SIGINT, SIGHUP are ignored

    second, _ = run(server, LOOK_AROUND, files={'answers.txt': 'second student'})
    got = values(second)
    assert 'PLANTED' not in second
    for trace in ('left-behind', 'left_behind.py', '00-plant.py'):
        assert trace not in got['files']
    assert f'{INNER}/answers.txt' in got['files']
    assert got['processes'] == '3'                       # the daemon and the sleeper are gone


def test_a_restart_within_a_notebook_keeps_the_folder(server):
    run(server, "open('made_by_cell_1.txt', 'w').write('kept')", files={'answers.txt': 'mine'})
    printed, _ = run(server, "import os; print(f\"files={sorted(os.listdir('.'))}\")", wipe=False)
    assert values(printed)['files'] == str(['answers.txt', 'made_by_cell_1.txt'])


def test_a_kernel_that_kills_the_server_takes_only_itself_down(server):
    _, kernel = run(server, r'''
import os, signal
os.kill(os.getppid(), signal.SIGKILL)
''', dies=True)
    assert kernel.returncode is not None                  # the sandbox went down with the server
    assert not server.alive
    with pytest.raises(forkserver.ForkServerError, match='gone'):
        server.clear(wipe=True)


def test_a_frozen_server_is_noticed_and_replaced_for_the_next_student(server, tmp_path):
    run(server, 'import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)', waits=False)
    server.request_timeout = 3
    with pytest.raises(forkserver.ForkServerError, match='stopped answering'):
        server.clear(wipe=True)
    assert not server.alive                               # closed: its sandbox was killed
    fresh = forkserver.ForkServer(workdir=server.workdir, conn_root=server.conn_root, inner_workdir=INNER,
                                  limits=sbx.Limits(), uid=sbx.pick_sandbox_uid()).start()
    try:
        printed, _ = run(fresh, 'print(f"answer={open(\'answers.txt\').read()}")', files={'answers.txt': 'next'})
        assert values(printed) == {'answer': 'next'}
    finally:
        fresh.close()


def test_read_only_folders_under_tmp_survive_the_wipe(tmp_path):
    """A course checked out under /tmp (a CI clone) has its Python and coursetools bound read-only under the
    sandbox's /tmp: the wipe between students must leave them alone."""
    os.chmod(tmp_path, 0o755)
    for sub in ('work', 'conn', 'library'):
        (tmp_path / sub).mkdir()
    (tmp_path / 'library' / 'shared.py').write_text('VALUE = "still here"\n')
    server = forkserver.ForkServer(workdir=str(tmp_path / 'work'), conn_root=str(tmp_path / 'conn'),
                                   inner_workdir=INNER, limits=sbx.Limits(), uid=sbx.pick_sandbox_uid(),
                                   extra_ro_binds=[str(tmp_path / 'library')]).start()
    try:
        assert str(tmp_path).startswith('/tmp/')
        run(server, "open('/tmp/scratch.txt', 'w').write('x')")
        printed, _ = run(server, f"""
import os, sys
sys.path.insert(0, {str(tmp_path / 'library')!r})
from shared import VALUE
print(f"value={{VALUE}}")
print(f"scratch={{os.path.exists('/tmp/scratch.txt')}}")
""")
        assert values(printed) == {'value': 'still here', 'scratch': 'False'}
    finally:
        server.close()
    assert (tmp_path / 'library' / 'shared.py').exists()
