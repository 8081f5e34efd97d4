"""The grading service (`make serve`, docs/jupyterhub.md): runs for the term, watches the exchange's inbound folder,
keeps each submission in a queue in the gradebook's database (exactly once, across restarts), grades each student
alone with `make grade`'s engine (`instructor/engine`), releases the feedback page to that student only, applies
the instructor's policy (attempts, due date), and serves the instructor's dashboard and each student's status page.
It sits on top of the stack: it imports the instructor's commands, and nothing imports it."""
