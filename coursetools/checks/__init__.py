"""What each task is checked against, one module per assignment (`noughts_and_crosses`, `alpha_beta`), with
`calls` for calling a student's function and saying what went wrong. The assignments' test cells import these;
in grading they run in the judge's checker, where a student's function is a proxy answering with values.
Imports `game/` and `judge/`'s answer types; never `grading/` or `instructor/`."""
