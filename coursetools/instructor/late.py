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
