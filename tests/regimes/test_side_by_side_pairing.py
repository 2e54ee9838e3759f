"""Which cost steps a side-by-side fresh start compares: only steps every group kept up with, on a host
under its limit, and in which no group's quota throttled it, the same steps for every group."""

from __future__ import annotations

from typing import Any

import pytest

from harness.engine.driver import LoadSettings
from harness.engine.side_by_side import _scaled_rates, busy_steps, group_costs, paired_steps, throttled_steps

HOST_MAX_PCT = 80.0


def _step(index: int, cpu_s: float, throttled: float | None = 0.0, host: float = 50.0) -> dict[str, Any]:
    return {
        "index": index,
        "rate": 100.0,
        "step_s": 4.0,
        "completed": 400,
        "kept_up": True,
        "instance_cpu_s": cpu_s,
        "db_cpu_s": 0.1,
        "host_busy_pct": host,
        "throttled_share": throttled,
        "pss_mb": 50.0,
    }


def test_a_step_in_which_one_group_was_throttled_is_left_out_for_every_group() -> None:
    per_group = {
        "a": [_step(0, 0.4), _step(1, 0.9, throttled=0.25), _step(2, 0.4)],
        "b": [_step(0, 0.4), _step(1, 0.4), _step(2, 0.4, throttled=None)],
    }
    assert paired_steps(per_group, HOST_MAX_PCT) == [0, 2]
    assert throttled_steps(per_group) == [1]


def test_the_burst_in_a_throttled_step_does_not_reach_either_groups_cost() -> None:
    # Group a spends half a CPU-second more in step 1 (a compile, say) and its quota bites: a and b
    # otherwise cost the same, and the comparison says so.
    per_group = {
        "a": [_step(0, 0.4), _step(1, 0.9, throttled=0.25), _step(2, 0.4)],
        "b": [_step(0, 0.4), _step(1, 0.4), _step(2, 0.4)],
    }
    use = paired_steps(per_group, HOST_MAX_PCT)
    costs = {label: group_costs(steps, 0.0, use)["app_us"] for label, steps in per_group.items()}
    assert costs["a"] == pytest.approx(costs["b"]) == pytest.approx(1000.0)
    everything = [0, 1, 2]
    assert group_costs(per_group["a"], 0.0, everything)["app_us"] > costs["a"]


def test_host_busy_and_not_kept_up_steps_stay_out_as_before() -> None:
    slow = {**_step(1, 0.4), "kept_up": False}
    per_group = {
        "a": [_step(0, 0.4, host=95.0), slow, _step(2, 0.4)],
        "b": [_step(0, 0.4, host=95.0), _step(1, 0.4), _step(2, 0.4)],
    }
    assert paired_steps(per_group, HOST_MAX_PCT) == [2]
    assert busy_steps(per_group, HOST_MAX_PCT) == [0]
    assert throttled_steps(per_group) == []


def test_a_step_is_busy_for_every_group_when_one_groups_reading_is_above_the_bound() -> None:
    per_group = {
        "a": [_step(0, 0.4), _step(1, 0.4, host=HOST_MAX_PCT), _step(2, 0.4, host=HOST_MAX_PCT + 0.1)],
        "b": [{**_step(0, 0.4), "host_busy_pct": None}, _step(1, 0.4), _step(2, 0.4)],
    }
    assert busy_steps(per_group, HOST_MAX_PCT) == [2]
    assert paired_steps(per_group, HOST_MAX_PCT) == [0, 1]


def test_a_groups_driver_gets_every_rate_of_the_load_times_its_scale() -> None:
    load = LoadSettings(
        targets=["http://127.0.0.1:1"], rate=100.0, steps=(100.0, 150.0, 200.0), warmup_from_rate=50.0
    )
    assert _scaled_rates(load, 1.0) == {}
    assert _scaled_rates(load, 2.0) == {
        "rate": 200.0,
        "steps": (200.0, 300.0, 400.0),
        "warmup_from_rate": 100.0,
    }
    assert (
        _scaled_rates(LoadSettings(targets=["http://127.0.0.1:1"], rate=100.0), 2.0)["warmup_from_rate"]
        is None
    )
