"""The per-request trace, error classes and recovery figures of fault runs, on synthetic requests."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.faults import timeline
from harness.faults.scenarios import NAMES, overload, scenario
from harness.faults.timeline import Request

T0 = 1_800_000_000.0  # the measurement's start, unix seconds


def req(
    start_s: float, ms: float, status: int = 200, error: str = "-", target: int = 0, bid: int | None = None
) -> Request:
    end_ms = (T0 + start_s) * 1000 + ms
    return Request("m", end_ms, ms, status, error, "get_item", target, bid)


def test_trace_lines_parse_and_other_lines_are_ignored() -> None:
    lines = [
        "bbt m 1800000001234 12.500 201 - place_bid 1 77",
        "bbt w 1800000001300 3.000 0 reset get_item 0 -",
        'time="..." level=warning msg="something else"',
        "bbt m not-a-number 1 200 - x 0 -",
    ]
    parsed = timeline.parse_trace(lines)
    assert len(parsed) == 2
    assert parsed[0].bid_id == 77 and parsed[0].status == 201 and parsed[0].target == 1
    assert parsed[0].start_ms == pytest.approx(1800000001234 - 12.5)
    assert parsed[1].klass == "connection" and parsed[1].phase == "w"


@pytest.mark.parametrize(
    ("status", "error", "klass"),
    [
        (200, "-", "ok"),
        (201, "-", "ok"),
        (409, "-", "client_4xx"),
        (503, "-", "unavailable_503"),
        (500, "-", "server_5xx"),
        (502, "-", "server_5xx"),
        (0, "reset", "connection"),
        (0, "refused", "connection"),
        (0, "other", "connection"),
        (0, "timeout", "timeout"),
    ],
)
def test_error_classes(status: int, error: str, klass: str) -> None:
    assert timeline.classify(status, error) == klass


def test_per_second_series_counts_and_percentiles(tmp_path: Path) -> None:
    requests = [req(0.1 * i, 10.0) for i in range(10)]  # second 0: ten successes of 10 ms
    requests += [req(1.5, 1.0, 503), req(1.6, 1.0, 500), req(1.7, 0.0, 0, "reset")]  # second 1: errors only
    requests += [req(3.2, 30.0)]  # second 2 is empty, second 3 has one success
    rows = timeline.per_second(requests, T0)
    assert [r.t for r in rows] == [0, 1, 2, 3]
    assert rows[0].counts["ok"] == 10 and rows[0].p99_ms == 10.0
    assert rows[1].counts["unavailable_503"] == 1 and rows[1].counts["server_5xx"] == 1
    assert rows[1].counts["connection"] == 1 and rows[1].requests == 3 and rows[1].p99_ms is None
    assert rows[2].requests == 0
    timeline.write_csv(rows, tmp_path / "timeline.csv")
    back = timeline.read_csv(tmp_path / "timeline.csv")
    assert len(back) == 4 and back[3]["p99_ms"] == 30.0 and back[2]["p99_ms"] is None


def outage_trace() -> list[Request]:
    """10 req/s: 5 ms successes for 10 s, 503s from 10 s to 15 s, 50 ms successes 15-18 s, then 5 ms again."""
    out = []
    for i in range(300):
        t = i / 10
        if t < 10:
            out.append(req(t, 5.0))
        elif t < 15:
            out.append(req(t, 1.0, 503))
        elif t < 18:
            out.append(req(t, 50.0))
        else:
            out.append(req(t, 5.0))
    return out


def test_recovery_figures() -> None:
    trace = outage_trace()
    baseline = timeline.baseline_p99(trace, T0, 10.0)
    assert baseline == 5.0
    assert timeline.first_success_after(trace, T0, 15.0) == pytest.approx(0.05, abs=1e-6)
    # The first error-free 3 s window with p99 <= max(1.5 x 5, 5 + 5) = 10 ms starts at 18 s.
    assert timeline.time_to_baseline(trace, T0, 15.0, baseline) == pytest.approx(3.0)
    assert timeline.p99_bound(5.0) == 10.0 and timeline.p99_bound(100.0) == 150.0


def test_no_recovery_is_none_not_a_number() -> None:
    trace = [req(i / 10, 5.0) for i in range(100)] + [req(10 + i / 10, 1.0, 503) for i in range(100)]
    assert timeline.first_success_after(trace, T0, 10.0) is None
    assert timeline.time_to_baseline(trace, T0, 10.0, 5.0) is None
    assert timeline.time_to_baseline(trace, T0, 10.0, None) is None


def test_scenarios_are_bounded_and_overload_stages_cover_the_window() -> None:
    for name in NAMES:
        for quick in (True, False):
            plan = scenario(name, quick)
            assert 0 < plan.fault_start_s <= plan.fault_end_s < plan.duration_s <= 120
            assert all(0 < step.at_s < plan.duration_s for step in plan.steps)
    plan = overload(quick=False)
    stages = plan.stages(rate=100, capacity=200)
    seconds = [float(part.split(":")[0].rstrip("s")) for part in stages.split(",")]
    assert sum(seconds) == plan.duration_s
    assert ":400" in stages and stages.startswith("15s:100")
    assert scenario("db-outage").stages(100, 200) == ""
