"""The instructor's tools: `grade` (what `make grade` runs), the LMS import, the HTML report, the marks table and
grades.csv, the demo class, `repair` (making submissions gradable before nbgrader sees them). The top of the tree: may import any other folder, and nothing imports it."""
