"""The time left that every campaign prints per run: a run that starts its instances (a fresh start, or a
search's session with its pre-warm) costs many windows, so it is estimated apart from later windows."""

from __future__ import annotations

from pathlib import Path

from harness.regimes.campaign import Campaign


def campaign(planned_runs: int, planned_starts: int) -> Campaign:
    return Campaign(
        "eta-test", Path("/nonexistent"), planned_runs=planned_runs, planned_starts=planned_starts
    )


def test_a_session_campaign_waits_for_a_timed_window_before_it_estimates() -> None:
    # The demo's first line: one search's start done (74 s with the JVM's pre-warm), 62 runs to go. Taking
    # 74 s for each of them said "~77 minutes" for a demo of 15.
    demo = campaign(planned_runs=63, planned_starts=9)
    demo.done_runs, demo.done_starts, demo.run_seconds = 1, 1, [74.0]
    assert demo.eta() == "being estimated"


def test_starts_and_windows_are_estimated_apart() -> None:
    demo = campaign(planned_runs=63, planned_starts=9)
    demo.done_runs, demo.done_starts = 2, 1
    demo.run_seconds, demo.window_seconds = [74.0], [7.0]
    # 8 starts at 74 s and 53 windows at 7 s: 592 + 371 = 963 s.
    assert demo.eta() == "~16m03s"


def test_a_campaign_of_fresh_starts_only_uses_their_mean() -> None:
    users = campaign(planned_runs=9, planned_starts=9)
    users.done_runs = users.done_starts = 3
    users.run_seconds = [30.0, 40.0, 50.0]
    assert users.eta() == "~4m00s"


def test_nothing_left_is_zero_whatever_was_timed() -> None:
    done = campaign(planned_runs=4, planned_starts=2)
    done.done_runs, done.done_starts = 4, 2
    assert done.eta() == "~0m00s"


def test_more_starts_than_planned_never_count_below_zero() -> None:
    # A session restarted after an instance died is a start nobody planned.
    restarted = campaign(planned_runs=10, planned_starts=2)
    restarted.done_runs, restarted.done_starts = 6, 3
    restarted.run_seconds, restarted.window_seconds = [60.0, 60.0, 60.0], [5.0]
    assert restarted.eta() == "~0m20s"
