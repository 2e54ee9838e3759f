"""The side-by-side experiment's settings (harness/model/side_by_side.py): presets, step rates, sizing."""

from __future__ import annotations

import pytest

from harness.model.side_by_side import (
    PRESETS,
    SideBySideSpec,
    capacity_rungs,
    cost_step_rates,
    fits,
    preset,
    top_cost_rate,
)


def test_an_unknown_preset_is_refused_with_the_valid_names() -> None:
    with pytest.raises(ValueError) as caught:
        preset("fast")
    for name in PRESETS:
        assert name in str(caught.value)


def test_the_standard_preset_is_the_defaults() -> None:
    assert preset("standard") == SideBySideSpec()


def test_cost_steps_run_each_pass_low_to_high() -> None:
    spec = SideBySideSpec(cost_rates=3, cost_passes=2, low_share=0.25)
    assert cost_step_rates(400, spec) == (100.0, 200.0, 400.0, 100.0, 200.0, 400.0)


def test_capacity_rungs_span_the_quota_rate() -> None:
    spec = SideBySideSpec(capacity_low=0.5, capacity_high=2.0, capacity_rungs=3)
    assert capacity_rungs(1000, spec) == (500.0, 1000.0, 2000.0)


def test_the_top_cost_rate_keeps_the_costliest_group_under_its_share_of_the_quota() -> None:
    spec = SideBySideSpec(quota_share=0.6, host_max_share=0.8)
    # At 100 req/s the costliest group used 20 % of its quota and the machine was 10 % busy.
    assert top_cost_rate(100, [0.1, 0.2], 0.10, spec) == pytest.approx(300)
    # A busy machine is the tighter limit: 0.9 x 0.8 / 0.4 = 1.8.
    assert top_cost_rate(100, [0.1, 0.2], 0.40, spec) == pytest.approx(180)
    # Never below the low share of the sizing rate, even when the sizing step itself was already too much.
    assert top_cost_rate(100, [1.6], 0.0, spec) == pytest.approx(100 * spec.low_share)


def test_three_groups_at_half_a_core_fit_on_two_cores_and_four_do_not() -> None:
    assert fits(3, 0.5, 1, 2) is None
    problem = fits(4, 0.5, 1, 2)
    assert problem is not None
    assert "At most 3 group(s)" in problem and "--cpus 0.38" in problem
