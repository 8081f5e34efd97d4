# kay's answers, with the written question and its answer cell deleted from the notebook. nbgrader puts a deleted
# test cell back after the source cell just before it, which it looked for among solution and test cells only, so
# the question, a locked markdown cell, stopped the notebook with a KeyError; the course places it after the
# nearest cell still there (grading/autograde.RestoreHiddenTests). Expected: graded, every autograded mark kept.
