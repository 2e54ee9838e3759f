"""Ladders in the report's figures (harness/analysis/plots.py, tables.py): one point per step against the
offered rate, and the time breakdown over the steps that met the SLO only."""

from __future__ import annotations

from typing import Any

from harness.analysis.load import Run
from harness.analysis.plots import _offered_points
from harness.analysis.tables import breakdown_of


def _step(rate: float, served: float, met: bool, latency: float, app: float, db: float) -> dict[str, Any]:
    return {
        "rate": rate,
        "throughput_rps": served,
        "requests": rate * 2,
        "slo_met": met,
        "kept_up": met,
        "latency_ms": {"mean": latency},
        "server_timing_ms": {"app": {"mean": app}, "db": {"mean": db}},
    }


def _ladder_run() -> Run:
    steps = [
        _step(300.0, 300.0, True, 1.0, 0.5, 0.3),
        _step(600.0, 598.0, True, 2.0, 0.6, 0.4),
        _step(900.0, 700.0, False, 900.0, 50.0, 1.0),  # overloaded: queueing, not the app's time
    ]
    metrics = {
        "offered_rps": 300.0,  # the ladder's first step
        "throughput_rps": 532.7,  # its mean over every step: above the first step's rate
        "ladder": {"steps": steps},
        "per_type": {"browse": {"requests": 3600, "latency_ms": {"mean": 300.0}, "server_timing_ms": {}}},
    }
    return Run("r1", None, "java", "default", "ladder", {}, 0, "completed", True, [], metrics=metrics)


def test_a_ladder_is_one_point_per_step_never_above_the_diagonal() -> None:
    points = _offered_points(_ladder_run())
    assert points == [(300.0, 300.0), (600.0, 598.0), (900.0, 700.0)]
    assert all(served <= offered for offered, served in points)


def test_a_fixed_rate_run_is_one_point() -> None:
    run = Run("r2", None, "node", "default", "fixed-rate", {}, 0, "completed", True, [])
    run.metrics = {"offered_rps": 200.0, "throughput_rps": 199.0}
    assert _offered_points(run) == [(200.0, 199.0)]


def test_a_ladders_time_is_split_over_its_steps_within_the_slo() -> None:
    slices = breakdown_of([_ladder_run()])
    assert list(slices) == ["all"]
    everything = slices["all"]
    # Request-weighted over the 300 and 600 req/s steps (600 and 1,200 requests); the overloaded step's
    # 900 ms of queueing is left out.
    assert everything.latency == (1.0 * 600 + 2.0 * 1200) / 1800
    assert everything.app == (0.5 * 600 + 0.6 * 1200) / 1800
    assert everything.db == (0.3 * 600 + 0.4 * 1200) / 1800
