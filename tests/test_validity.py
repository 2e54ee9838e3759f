"""Validity rules (docs/design.md §7) on constructed figures with a known right answer."""

from __future__ import annotations

import math
from dataclasses import replace

from harness.engine.validity import (
    DISTURBED,
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
