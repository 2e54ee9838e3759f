"""How much of a ladder group's spread in CPU per request the host explains (harness/analysis/host_factor.py):
a host that slows every process of a step alike shows as r near 1, app noise of its own as r near 0."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from harness.analysis.host_factor import (
    app_s_per_request,
    driver_s_per_request,
    postgres_adjusted,
    relative_to_median,
    shared_factor_r,
)
from harness.analysis.ladder_tables import ladder_row

RATES = (500.0, 700.0, 1000.0, 1400.0, 2000.0, 2800.0)
STEP_S = 2.0


def _ladder(host: Sequence[float], saturated_from: int | None = None) -> list[dict[str, Any]]:
    """Steps whose app and driver CPU are both multiplied by the step's host factor."""
    steps = []
    for index, (rate, factor) in enumerate(zip(RATES, host, strict=True)):
        kept_up = saturated_from is None or index < saturated_from
        completed = int(rate * STEP_S)
        app_s = (0.02 + 100e-6 * completed) * factor
        driver_s = (0.01 + 40e-6 * completed) * factor
        steps.append(
            {
                "index": index,
                "rate": rate,
                "step_s": STEP_S,
                "completed": completed,
                "kept_up": kept_up,
                "instance_cpu_s": app_s,
                "loadgen_cpu_pct": driver_s / STEP_S * 100,
            }
        )
    return steps


def _shared_host(seed: int, ladders: int) -> list[list[dict[str, Any]]]:
    """A factor per fresh start and per step, as on the shared host."""
    rng = np.random.default_rng(seed)
    return [
        _ladder(list((1 + rng.normal(0, 0.12)) * (1 + rng.normal(0, 0.05, len(RATES)))))
        for _ in range(ladders)
    ]


def test_per_request_figures_need_their_inputs() -> None:
    step = _ladder([1.0] * len(RATES))[0]
    assert driver_s_per_request(step) == pytest.approx((0.01 + 40e-6 * 1000) / 1000)
    assert app_s_per_request(step) == pytest.approx((0.02 + 100e-6 * 1000) / 1000)
    assert driver_s_per_request({**step, "loadgen_cpu_pct": None}) is None
    assert driver_s_per_request({**step, "loadgen_cpu_pct": float("nan")}) is None
    assert driver_s_per_request({**step, "completed": 0}) is None
    assert app_s_per_request({**step, "instance_cpu_s": None}) is None


def test_a_host_that_slows_app_and_driver_alike_gives_r_near_one() -> None:
    r = shared_factor_r(_shared_host(7, 10))
    assert r is not None and r > 0.99


def test_app_noise_of_its_own_gives_r_near_zero() -> None:
    rng = np.random.default_rng(11)
    ladders = []
    for _ in range(10):
        steps = _ladder([1.0] * len(RATES))
        for step in steps:
            step["instance_cpu_s"] *= 1 + rng.normal(0, 0.1)
            step["loadgen_cpu_pct"] *= 1 + rng.normal(0, 0.03)
        ladders.append(steps)
    r = shared_factor_r(ladders)
    assert r is not None and abs(r) < 0.3


def test_figures_are_relative_to_the_median_below_saturation() -> None:
    fast, slow, slower = _ladder([1.0] * 6), _ladder([1.2] * 6), _ladder([1.5] * 6, saturated_from=4)
    relative = relative_to_median([fast, slow, slower], driver_s_per_request)
    assert relative[(1, 0)] == pytest.approx(1.0)
    assert relative[(0, 0)] == pytest.approx(1 / 1.2)
    assert relative[(2, 0)] == pytest.approx(1.5 / 1.2)
    # Past its saturation a ladder's steps are left out, and the median at that rate is of the other two.
    assert (2, 4) not in relative
    assert relative[(1, 4)] == pytest.approx(1.2 / 1.1)


def test_no_r_without_variation_or_steps() -> None:
    assert shared_factor_r([_ladder([1.0] * len(RATES)) for _ in range(3)]) is None
    assert shared_factor_r([_ladder([1.0, 1.1, 1.2, 1.0, 1.0, 1.0], saturated_from=2)]) is None
    blind = [[{**step, "loadgen_cpu_pct": None} for step in steps] for steps in _shared_host(3, 3)]
    assert shared_factor_r(blind) is None


def test_the_ladder_row_carries_r() -> None:
    ladders = _shared_host(3, 5)
    row = ladder_row("java x1", [{"ladder": {"steps": steps}} for steps in ladders], [True] * 5)
    assert row.host_r is not None and row.host_r > 0.99
    assert ladder_row("java x1", [{"cpu_us_per_request": 90.0}], [True]).host_r is None


def test_postgres_adjusted_costs_keep_the_app_spread_and_drop_the_host_one() -> None:
    """A host factor per ladder moves the app's and PostgreSQL's cost alike; the app's own noise stays."""
    rng = np.random.default_rng(5)
    host = 1 + rng.normal(0, 0.10, 10)
    own = 1 + rng.normal(0, 0.01, 10)
    costs = list(200.0 * host * own)
    db_costs = list(150.0 * host)
    adjusted = postgres_adjusted(costs, db_costs)
    assert all(a is not None for a in adjusted)
    raw_cv = np.std(costs, ddof=1) / np.mean(costs)
    adjusted_cv = np.std(adjusted, ddof=1) / np.mean(adjusted)
    assert raw_cv > 0.05 and adjusted_cv < 0.015
    # The level stays the app's: the ladder with the median PostgreSQL cost (of an odd count) keeps its own.
    odd_costs, odd_db = costs[:9], db_costs[:9]
    middle = int(np.argsort(odd_db)[4])
    assert postgres_adjusted(odd_costs, odd_db)[middle] == pytest.approx(odd_costs[middle])


def test_postgres_adjusted_leaves_ladders_without_a_figure_out() -> None:
    assert postgres_adjusted([100.0, None, 120.0], [50.0, 60.0, None]) == [100.0, None, None]
    assert postgres_adjusted([100.0], [None]) == [None]
    assert postgres_adjusted([100.0, 110.0], [0.0, 55.0]) == [None, 110.0]


def test_a_ladder_row_shows_the_host_adjusted_cost() -> None:
    metrics = [
        {"cpu_us_per_request": 200.0 * f, "db_us_per_request": 150.0 * f} for f in (0.9, 1.0, 1.1, 1.2)
    ]
    row = ladder_row("php x1", metrics, [True] * 4)
    assert row.cost_us.cv_pct is not None and row.cost_us.cv_pct > 10
    assert row.cost_adjusted_us.cv_pct == pytest.approx(0.0, abs=1e-9)
    assert row.cost_adjusted_us.n == 4
