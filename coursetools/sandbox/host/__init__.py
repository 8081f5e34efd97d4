"""The grading process's side of the sandbox: the bubblewrap command line and probe, the files the grader keeps
for each sandbox (the only code touching a path a sandbox can write), and the reserved throw-away uids."""
