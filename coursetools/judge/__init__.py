"""The trusted side that decides marks, in processes the student's code cannot reach.

`checker` runs a notebook's test cells in a session forked from a warm server and asks the student's kernel
for values only; `checker_plan` fixes the order of the test cells and the tables of answers given to helpers;
`checker_host` starts and talks to the checker from the grading process; `answers` decodes and bounds what a
kernel answers; `tampering` scans a notebook's code from outside. Imports `sandbox/` (the wire format) and the
standard library; the checks are loaded by the test cells it runs, never imported here."""
