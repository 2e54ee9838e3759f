"""Validity rules (docs/design.md §7) on constructed figures with a known right answer."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from harness.engine.validity import (
    DISTURBED,
    OWN_MAX_BUSY_PCT_FOR_HELD_UP,
    UNACCOUNTED_MAX_PCT,
    RunFigures,
    Slo,
    disturbed_only,
    verdict,
)

GOOD = RunFigures(
    model="open",
    window_s=20.0,
    requests=6000,
    ok=6000,
    sys_errors=0,
    late_sends=0,
    mean_latency_ms=2.0,
    p99_latency_ms=9.0,
    offered_rps=300.0,
    users=None,
    think_ms=0.0,
    loadgen_cpu_pct=30.0,
    loadgen_allotment_cores=1.0,
    db_cpu_pct=20.0,
    db_allotment_cores=1.0,
    host_busy_pct=60.0,
    instance_cpu_per_second=[40.0] * 20,
)


def test_a_clean_run_is_valid_and_meets_the_slo() -> None:
    result = verdict(GOOD, Slo())
    assert result.valid and result.reasons == []
    assert result.slo["met"]


def test_saturated_load_generator_is_invalid() -> None:
    result = verdict(replace(GOOD, loadgen_cpu_pct=85.0), Slo())
    assert not result.valid
    assert not result.checks["loadgen_cpu"].ok
    assert any("the load driver used 85" in r for r in result.reasons)


def test_late_sends_make_a_run_invalid() -> None:
    result = verdict(replace(GOOD, late_sends=3), Slo())
    assert not result.valid and not result.checks["late_sends"].ok


def test_saturated_database_host_is_invalid() -> None:
    assert not verdict(replace(GOOD, db_cpu_pct=90.0), Slo()).checks["database_host"].ok
    assert not verdict(replace(GOOD, host_busy_pct=99.0), Slo()).checks["database_host"].ok


def test_system_errors_invalidate_only_runs_meant_to_be_below_capacity() -> None:
    failing = replace(GOOD, sys_errors=30, ok=5970)
    assert not verdict(failing, Slo()).checks["system_errors"].ok
    probing = verdict(replace(failing, expect_below_capacity=False), Slo())
    assert probing.checks["system_errors"].ok
    assert not probing.slo["met"]


def test_generator_falling_behind_breaks_littles_law_check() -> None:
    result = verdict(replace(GOOD, requests=4000, ok=4000), Slo())
    assert not result.checks["littles_law"].ok


def test_closed_model_littles_law() -> None:
    closed = replace(GOOD, model="closed", offered_rps=None, users=10, think_ms=0.0, mean_latency_ms=33.3)
    assert verdict(closed, Slo()).checks["littles_law"].ok  # 300/s x 33.3 ms = 10 users
    assert not verdict(replace(closed, users=20), Slo()).checks["littles_law"].ok


def test_warm_up_left_in_the_window_is_not_steady() -> None:
    drifting = replace(GOOD, instance_cpu_per_second=[90.0] * 7 + [50.0] * 6 + [40.0] * 7)
    assert not verdict(drifting, Slo()).checks["steady_state"].ok


def test_slo_breach_on_a_valid_run_is_reported_as_not_met_not_invalid() -> None:
    slow = verdict(replace(GOOD, p99_latency_ms=80.0), Slo())
    assert slow.valid
    assert not slow.slo["met"] and not slow.slo["parts"]["p99"]


def test_another_tenants_work_fails_only_the_host_check_and_may_run_again() -> None:
    """A window in which the machine was busier than every measured process explains (another tenant, or
    the hypervisor's steal) is not judged, as a ladder step is not; nothing of the app was wrong."""
    disturbed = verdict(replace(GOOD, unaccounted_pct=UNACCOUNTED_MAX_PCT + 5, steal_pct=12.0), Slo())
    assert not disturbed.valid and not disturbed.checks[DISTURBED].ok
    assert [name for name, check in disturbed.checks.items() if not check.ok] == [DISTURBED]
    assert "15 % of the machine" in disturbed.reasons[0] and "steal 12 %" in disturbed.reasons[0]
    assert disturbed_only(disturbed) and disturbed_only(disturbed.to_json())
    # at the limit, or not read at all (NaN: a remote or an old run), the run is judged as before
    for unaccounted in (UNACCOUNTED_MAX_PCT, math.nan):
        assert verdict(replace(GOOD, unaccounted_pct=unaccounted), Slo()).valid
    # invalid for a reason of its own as well: not a disturbance alone, so it is not run again
    both = verdict(replace(GOOD, unaccounted_pct=40.0, late_sends=2), Slo())
    assert not disturbed_only(both) and not disturbed_only(verdict(GOOD, Slo()))
    assert not disturbed_only(None) and not disturbed_only({})


def test_a_late_send_with_free_connections_and_no_throttled_instance_is_the_hosts_doing() -> None:
    """A request goes out late when the driver is starved of CPU or every connection is busy. With free
    connections no app held it back, and an instance never throttled took no more than its quota of the
    cores the driver shares; and on a machine the measured processes left half idle they cannot have
    kept the driver off every core: the host held the driver up, and the run may run again. Otherwise, or
    where any of these is unknown, the late send stays the run's own."""
    late = replace(
        GOOD,
        late_sends=1,
        max_inflight=5,
        max_conns=5000,
        instances_throttled=False,
        host_busy_pct=20.0,
        unaccounted_pct=2.0,
    )
    held_up = verdict(late, Slo())
    assert not held_up.valid and disturbed_only(held_up)
    assert held_up.checks["late_sends"].ok and "counted under host" in held_up.checks["late_sends"].detail
    assert "at most 5 of its 5000 connections busy" in held_up.checks[DISTURBED].detail
    for own in (
        replace(late, max_inflight=5000),  # every connection busy: the app held the requests back
        replace(late, instances_throttled=True),  # an instance past its quota may have starved the driver
        replace(late, instances_throttled=None),
        replace(late, max_inflight=None),
        # the measured processes kept most of the machine busy: they may have starved the driver themselves
        replace(late, host_busy_pct=OWN_MAX_BUSY_PCT_FOR_HELD_UP + 5, unaccounted_pct=2.0),
        replace(late, unaccounted_pct=math.nan),
    ):
        result = verdict(own, Slo())
        assert (
            not result.checks["late_sends"].ok and result.checks[DISTURBED].ok and not disturbed_only(result)
        )
    both = verdict(replace(late, unaccounted_pct=UNACCOUNTED_MAX_PCT + 10), Slo())
    detail = both.checks[DISTURBED].detail
    assert (
        disturbed_only(both) and "no measured process explains" in detail and "held the driver up" in detail
    )


def test_the_run_digest_reads_the_drivers_connections_and_the_instances_throttling() -> None:
    """What the late-send rule needs reaches it: the driver's most requests in flight and its connection
    limit from the summary, and whether any instance was throttled from the sampler (None when unknown)."""
    from types import SimpleNamespace

    from harness.engine.driver import digest_summary
    from harness.engine.session import _throttled

    summary = {
        "schema": 1,
        **dict.fromkeys(("requests", "ok"), 100),
        **dict.fromkeys(("app_errors", "sys_errors"), 0),
        "late_sends": 1,
        "latency_ms": {"mean": 1.0},
        "max_inflight": 5,
        "settings": {"max_conns": 5000},
    }
    digested = digest_summary(summary)
    assert (digested["max_inflight"], digested["max_conns"]) == (5, 5000)

    def sampler(readings: dict[str, Any]) -> Any:
        return SimpleNamespace(window_throttling=lambda name, start, end: readings[name])

    quiet, busy = {"throttled_periods": 0}, {"throttled_periods": 3}
    assert _throttled(sampler({"a": quiet, "b": quiet}), ["a", "b"], 0, 1) is False
    assert _throttled(sampler({"a": quiet, "b": busy}), ["a", "b"], 0, 1) is True
    assert _throttled(sampler({"a": quiet, "b": None}), ["a", "b"], 0, 1) is None
    assert _throttled(sampler({}), [], 0, 1) is None
