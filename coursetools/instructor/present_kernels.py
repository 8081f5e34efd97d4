"""The kernels of `make present NOTEBOOK=path`: each in the course's bubblewrap sandbox, as when graded.

Voilà's kernel manager makes one of these per page (`--MultiKernelManager.kernel_manager_class`). Before the kernel
starts, the page's folder (its notebook and minimax_widget/) is copied to a folder only the server can write, a
throw-away uid is leased (when run as root) and the kernel is launched by the grading code's own `Kernels.launch`:
new PID, network, IPC namespaces, the venv read-only, private tmpfs for HOME and /tmp, rlimits. It talks to Voilà
over ZeroMQ ipc sockets, as a grading kernel does, and once it answers (before Voilà runs any of the page's cells)
its sockets folder becomes root's, as in grading (`KernelFolder.lock_sockets`). When the kernel is shut down (the page closed, culled, Voilà
stopped) the whole sandbox is killed and its folder removed.

What differs from grading: no test cells, no NBGRADER_EXECUTION (the widget must run), and a CPU limit of an hour
rather than 15 minutes (a lecture is long; the widget computes in the background)."""
import uuid

from jupyter_server.services.kernels.kernelmanager import ServerKernelManager

from coursetools.grading.channel import wait_until_ready
from coursetools.grading.kernels import Kernels, SandboxProvisioner
from coursetools.sandbox.host.bubblewrap import Limits

LIMITS = Limits(cpu_seconds=3600)
READY_SECONDS = 60


class SandboxedPresentKernelManager(ServerKernelManager):
    """A Voilà page's kernel in a sandbox of its own."""
    place = None
    folder = None           # this start's KernelFolder: its connection file, log and sockets

    async def _async_pre_start_kernel(self, **kw):
        """A new sandbox for each start, a restart too (a kernel that died, say at its CPU limit); the page's
        folder and uid are kept until the kernel is shut down for good."""
        self.kernel_id = self.kernel_id or kw.pop('kernel_id', str(uuid.uuid4()))
        source = Kernels()
        if self.place is None:
            self.place = await source.prepare(_Executor(), kw.get('cwd') or self.parent.root_dir)
        self.folder = kernel = self.place.folder.kernel()
        self.transport, self.ip = 'ipc', f'{kernel.sockets}/k'          # no network inside: unix sockets
        self.kernel_spec.interrupt_mode = 'message'                     # bwrap does not forward SIGINT
        self.connection_file = kernel.connection_file
        self.provisioner = SandboxProvisioner(kernel_id=self.kernel_id, kernel_spec=self.kernel_spec, parent=self,
                                              source=source, place=self.place, limits=LIMITS, kernel=kernel)
        kw.pop('env', None)                     # the sandbox's own environment, not the server's
        return await super()._async_pre_start_kernel(**kw)

    async def _async_post_start_kernel(self, **kw):
        """Started: wait until the kernel answers, then lock its sockets folder, before any cell of the page runs
        (as grading does once its kernel is ready)."""
        await super()._async_post_start_kernel(**kw)
        client = self.client()
        client.start_channels()
        try:
            await wait_until_ready(client, READY_SECONDS)
        finally:
            client.stop_channels()
        self.folder.lock_sockets()

    def cleanup_ipc_files(self):
        """Nothing: the sockets go with the page's folder."""

    async def _async_cleanup_resources(self, restart=False):
        await super()._async_cleanup_resources(restart)
        place, self.place = (self.place, None) if not restart else (None, self.place)
        if place is not None:
            await Kernels().finish(place)


class _Executor:
    """What Kernels.prepare reads of a grading executor."""
    sandboxed, nbgrader_execution, sandbox_tmpdir = True, '', ''
