"""The instructor's tools: `grade` (what `make grade` runs), the LMS import, the HTML report, the marks table,
`grades_csv` (grades.csv as CSV should be), the demo class, `repair` (making submissions gradable before nbgrader
sees them), `safe_html` (what the pages an instructor opens show of a student's HTML), `exchange` (collect, taking
regular files only). The top of the tree: may import any other folder, and nothing imports it."""
