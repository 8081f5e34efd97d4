"""What each task is checked against, one module per assignment (`noughts_and_crosses`, `alpha_beta`), with
what they share: `calls` (calling a student's function, saying what went wrong), `references` (the correct
functions), `positions`, `boards` and `isolation` (the instructor's own kernel). The assignments' test cells import these;
in grading they run in the judge's checker, where a student's function is a proxy answering with values.
Imports `game/` and `judge/`'s answer types; never `grading/` or `instructor/`."""
