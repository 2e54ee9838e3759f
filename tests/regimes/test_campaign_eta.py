"""The time left that every campaign prints per run: each run still to come at the mean duration of the
runs measured so far (every run of a campaign is a fresh start)."""

from __future__ import annotations

from pathlib import Path

from harness.regimes.campaign import Campaign


def campaign(planned_runs: int) -> Campaign:
    return Campaign("eta-test", Path("/nonexistent"), planned_runs=planned_runs)


def test_a_campaign_waits_for_a_timed_run_before_it_estimates() -> None:
    # Runs reused from an interrupted campaign take no time: they say nothing about the runs to come.
    resumed = campaign(planned_runs=9)
    resumed.done_runs = 3
    assert resumed.eta() == "being estimated"


def test_the_runs_to_come_are_estimated_at_the_mean_so_far() -> None:
    users = campaign(planned_runs=9)
    users.done_runs = 3
    users.run_seconds = [30.0, 40.0, 50.0]
    assert users.eta() == "~4m00s"


def test_nothing_left_is_zero_whatever_was_timed() -> None:
    done = campaign(planned_runs=4)
    done.done_runs = 4
    assert done.eta() == "~0m00s"


def test_more_runs_than_planned_never_count_below_zero() -> None:
    extra = campaign(planned_runs=2)
    extra.done_runs, extra.run_seconds = 3, [60.0, 60.0, 60.0]
    assert extra.eta() == "~0m00s"
