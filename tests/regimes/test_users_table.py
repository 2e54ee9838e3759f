"""The `users` command's table: the RUBiS QoS figures per user count, defined as in the report's QoS table;
and the means with their interval that the `users` and `payload` tables print."""

from __future__ import annotations

from typing import Any

from harness.analysis.regime_tables import mean_ci_text, users_cells
from harness.model.stats import mean_ci


def run(rps: float, max_ms: float, mean_ms: float, requests: int, over_pct: float = 0.0) -> dict[str, Any]:
    return {
        "throughput_rps": rps,
        "latency_ms": {"max": max_ms, "mean": mean_ms, "p50": mean_ms * 0.9},
        "requests": requests,
        "over_1s_pct": over_pct,
        "app_errors": 1,
        "sys_errors": 0,
    }


def test_the_maximum_is_the_slowest_request_of_all_runs_never_an_interval() -> None:
    # node at 1 user in a campaign here: maxima 12.1, 8.6 and 64.8 ms gave "28.5 [-16.3, 73.3]".
    cells = users_cells(
        [run(1700, 12.1, 0.5, 8000), run(1710, 8.6, 0.5, 8000), run(1705, 64.8, 0.5, 8000)], 3
    )
    assert cells[1] == "64.8"


def test_the_share_over_one_second_is_of_all_requests() -> None:
    # 10 % of 1000 requests and none of 9000: 1 % of the 10,000, not the runs' mean share of 5 %.
    cells = users_cells([run(100, 1500, 200, 1000, over_pct=10.0), run(900, 900, 20, 9000)], 2)
    assert cells[4] == "1.00"


def test_means_carry_their_interval_and_errors_and_validity_are_counted() -> None:
    cells = users_cells([run(1000, 20, 2.0, 8000), run(1100, 30, 2.2, 8800), run(1200, 25, 2.4, 9600)], 2)
    assert cells[0].startswith("1,100 [") and cells[2].startswith("2.20 [")
    assert cells[5:] == ["3", "0", "2/3"]


def test_the_interval_of_equal_values_is_the_value_and_one_value_has_none() -> None:
    equal = mean_ci([300.0, 300.0, 300.0])
    assert equal is not None and (equal.low, equal.high) == (300.0, 300.0)
    spread = mean_ci([280.0, 300.0, 320.0])
    assert spread is not None and spread.low < 300.0 < spread.high
    assert mean_ci([300.0]) is None
    assert mean_ci_text([300.0, 300.0, 300.0]) == "300 [300, 300]" and mean_ci_text([300.0]) == "300 (n=1)"
