"""The noughts-and-crosses minimax course: its grader, its instructor tools and its classroom widget.

One folder per job, imports pointing one way (down this list; a test holds it):

- `instructor/`  the instructor's commands: `make grade`, LMS import, report, marks table, demo class.
- `grading/`     the nbgrader run: the execute preprocessor, kernels, the worker pool, the gradebook pipeline.
- `judge/`       the trusted side that decides marks: the checker that runs the test cells, answer decoding,
                 the tampering scan.
- `checks/`      what each task is checked against (imported by the test cells the checker runs).
- `sandbox/`     `inside/`: the only course code a student's sandbox sees (its launcher, the kernel's agent);
                 `host/`: the grading process's side (bubblewrap, the files it keeps for a sandbox, uids).
- `game/`        the one model of noughts and crosses: boards, lines, the exhaustive oracle, analyses.
- `widget/`      the classroom widget; ships beside the notebook and imports nothing of the course.
"""
