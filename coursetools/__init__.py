"""Course tooling for the noughts-and-crosses minimax course: oracle, hidden checks, grading and reports."""
