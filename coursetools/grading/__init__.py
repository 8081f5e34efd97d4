"""The nbgrader run: the execute preprocessor that sends test cells to the judge, the sandboxed kernels (each a
sandbox of its own), the worker pool (local or a Dask cluster), the gradebook pipeline and feedback.
Imports `judge/`, `sandbox/` and nbgrader; never `instructor/`."""
