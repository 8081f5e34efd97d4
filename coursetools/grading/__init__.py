"""The nbgrader run: the execute preprocessor that sends test cells to the judge, the sandboxed kernels and the
fork server, the worker pool (local or a Dask cluster), the gradebook pipeline and feedback.
Imports `judge/`, `sandbox/` and nbgrader; never `instructor/`."""
