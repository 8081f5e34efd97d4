"""The only course code a student's sandbox sees, and the bubblewrap launcher that builds the sandbox.

`kernel_agent` answers the checker's questions inside the student's kernel (values only), `forkserver_inside`
forks kernels inside the sandbox, `bubblewrap` starts sandboxed processes. Everything here imports only the
standard library and IPython: nothing trusted (judge/, checks/, grading/) is importable from a sandbox."""
