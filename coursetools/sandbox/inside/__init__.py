"""The course code that runs inside a student's sandbox: `launcher` (the first program in every sandbox: copies the
submission into the sandbox's own sized tmpfs, applies the limits, drops root, starts the kernel) and
`kernel_agent` (answers the checker's questions in the kernel, values only). Standard library and IPython only."""
