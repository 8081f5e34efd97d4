"""The sandbox a student's kernel runs in, split at its boundary: `inside/` is the only course code a sandbox sees
(the launcher that starts every sandbox, the kernel's agent; standard library and IPython only), `host/` is the
grading process's side (`bubblewrap`: the command line and the probe; `processes`: starting a sandbox and waiting
until it is gone; `zygote`: kernels forked into sandboxes; `files`: the only code that touches a path a sandbox can
write, by descriptor; `uids`: throw-away uids, never shared by two live sandboxes). Nothing trusted
(judge/, checks/, grading/) is importable from a sandbox."""
