"""The late-penalty plugin's arithmetic (coursetools/instructor/late.py), worked by hand from its definition: percent of
the marks per started unit late, at most the cap, nothing within the grace period; and the one mark every output
shows (coursetools/grading/mark.py)."""
import pytest

from coursetools.instructor.late import LatePenalty, percentage_penalty
from coursetools.grading.mark import Mark

HOUR, DAY = 3600, 86400


@pytest.mark.parametrize('seconds, unit, expected', [
    (1, 'day', 1.2),                 # a second late starts a day: 10% of 12
    (DAY, 'day', 1.2),               # exactly a day: still one
    (DAY + 1, 'day', 2.4),           # into the second day
    (49 * HOUR, 'day', 3.6),         # three started days
    (10 * DAY, 'day', 6.0),          # 100% would be 12: the cap, 50%, takes 6
    (90 * 60, 'hour', 2.4),          # an hour and a half: two started hours
    (HOUR, 'hour', 1.2),
])
def test_percent_per_started_unit_up_to_the_cap(seconds, unit, expected):
    assert percentage_penalty(seconds, 12, percent=10, unit=unit, cap=50) == pytest.approx(expected)


def test_grace_period_costs_nothing_and_past_it_lateness_counts_from_the_due_date():
    plugin = LatePenalty(penalty_method='percentage', percent=10, unit='hour', cap=100, grace_minutes=30)
    assert plugin.penalty(11, 12, 30 * 60) is None                  # 30 minutes late: within the grace
    assert plugin.penalty(11, 12, 30 * 60 + 1) == pytest.approx(1.2)   # one started hour from the due date
    assert plugin.penalty(11, 12, 3 * HOUR) == pytest.approx(3.6)


def test_nbgraders_own_methods_are_kept_and_none_is_the_default():
    assert LatePenalty().penalty(11, 12, DAY) is None
    assert LatePenalty(penalty_method='zero').penalty(11, 12, 1) == 11
    assert LatePenalty(penalty_method='zero', grace_minutes=5).penalty(11, 12, 60) is None


def test_the_course_config_keeps_nbgraders_default_of_no_penalty(tmp_path):
    from conftest import ROOT
    from coursetools.instructor.roster import course_config
    config = course_config(ROOT)
    assert config.AssignLatePenalties.plugin_class == 'coursetools.instructor.late.LatePenalty'
    assert LatePenalty(config=config).penalty_method == 'none'


def test_one_mark_written_one_way():
    assert Mark(raw=12, penalty=0, waiting=0, max_score=12).text() == '12'
    assert Mark(raw=11, penalty=3, waiting=0, max_score=12).text() == '8 (11 - 3 late)'
    assert Mark(raw=15, penalty=0, waiting=2, max_score=17).text() == '15 + 2 waiting'
    assert Mark(raw=14, penalty=1.7, waiting=0, max_score=17).text() == '12.3 (14 - 1.7 late)'
    assert Mark(raw=2, penalty=3, waiting=0, max_score=12).final == 0
    assert Mark(raw=0, penalty=0, waiting=0, max_score=12, ungraded=True).text() == '-'
