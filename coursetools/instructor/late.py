"""Late penalties as nbgrader takes them: a `LateSubmissionPlugin` for `AssignLatePenalties`, which autograde runs.

Set in nbgrader_config.py (docs/lms.md, "Late penalties"), so `make grade` and plain `nbgrader autograde` take the
same penalty:

    c.AssignLatePenalties.plugin_class = 'coursetools.instructor.late.LatePenalty'
    c.LateSubmissionPlugin.penalty_method = 'percentage'   # or nbgrader's 'none' (the default), 'zero'
    c.LatePenalty.percent = 10          # of the assignment's marks, per unit late (started units count whole)
    c.LatePenalty.unit = 'day'          # or 'hour'
    c.LatePenalty.cap = 30              # percent of the marks at most; 100: all of them
    c.LatePenalty.grace_minutes = 15    # late by this much or less: no penalty (any method)

Lateness is nbgrader's own (`SubmittedAssignment.total_seconds_late`: the timestamp against the due date plus the
student's extension). Past the grace period it counts from the due date, not from its end.
"""
import logging
import math

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Enum, Float

UNIT_SECONDS = {'hour': 3600, 'day': 86400}


def percentage_penalty(seconds_late, max_score, percent, unit='day', cap=100.0, grace_minutes=0.0):
    """Marks taken for `seconds_late`: `percent` of `max_score` for every started `unit`, at most `cap` percent,
    nothing within the grace period."""
    if seconds_late <= max(0.0, grace_minutes) * 60:
        return 0.0
    units = math.ceil(seconds_late / UNIT_SECONDS[unit])
    return round(min(units * percent, cap) / 100 * max_score, 6)


class LatePenalty(LateSubmissionPlugin):
    """nbgrader's plugin with a third method, 'percentage', and a grace period for every method."""

    penalty_method = Enum(('none', 'zero', 'percentage'), default_value='none',
                          help="'none', 'zero' (nbgrader's) or 'percentage' (`percent` per `unit`, up to `cap`)"
                          ).tag(config=True)
    percent = Float(10.0, help='percent of the marks taken per started unit late').tag(config=True)
    unit = Enum(('day', 'hour'), default_value='day', help='what `percent` is taken for').tag(config=True)
    cap = Float(100.0, help='the most that is taken, in percent of the marks').tag(config=True)
    grace_minutes = Float(0.0, help='lateness up to this costs nothing').tag(config=True)

    def penalty(self, score, max_score, seconds_late):
        """The penalty for a notebook scored `score` of `max_score`, `seconds_late` late (None: none)."""
        if seconds_late <= self.grace_minutes * 60:
            return None
        if self.penalty_method == 'percentage':
            return percentage_penalty(seconds_late, max_score, self.percent, self.unit, self.cap)
        return score if self.penalty_method == 'zero' else None

    def late_submission_penalty(self, student_id, score, total_seconds_late):
        # AssignLatePenalties, our parent, has the notebook's gradebook open while it asks
        parent = self.parent
        max_score = parent.gradebook.find_notebook(parent.notebook_id, parent.assignment_id).max_score
        return self.penalty(score, max_score, total_seconds_late)


def take_again(course_root, assignment, students, db_url):
    """The late penalty of `students`' notebooks taken again from their scores now, by nbgrader's own
    AssignLatePenalties with the course's settings. nbgrader takes it in autograde only, so a mark given by hand
    afterwards was never weighed: under 'zero' a late student kept it, and a penalty cut down to a low score
    stayed cut. `make grade` calls this for the submissions whose hand marks changed."""
    from nbformat.v4 import new_notebook
    from nbgrader.api import Gradebook
    from nbgrader.preprocessors import AssignLatePenalties
    from traitlets.config.loader import PyFileConfigLoader
    config = PyFileConfigLoader('nbgrader_config.py', path=str(course_root)).load_config()
    quiet = logging.getLogger('coursetools.late')       # nbgrader's step warns of every late notebook: said already
    quiet.setLevel(logging.ERROR)
    with Gradebook(db_url) as gradebook:
        notebooks = [notebook.name for notebook in gradebook.find_assignment(assignment).notebooks]
    for student in students:
        for notebook in notebooks:
            resources = {'nbgrader': {'notebook': notebook, 'assignment': assignment, 'student': student,
                                      'db_url': db_url}}
            AssignLatePenalties(config=config, log=quiet).preprocess(new_notebook(), resources)
