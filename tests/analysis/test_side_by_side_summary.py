"""The side-by-side comparison from stored records (harness/analysis/side_by_side.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from harness.analysis.side_by_side import aa_check, load_records, ranking, sure
from harness.model.side_by_side_math import METRICS, figures, paired_mean_latency, summarize


def _record(host: float, valid: bool = True, php_capacity: dict[str, Any] | None = None) -> dict[str, Any]:
    """One fresh start: java costs 200 x the host's factor, php 1.6 times that; capacities the inverse."""
    return {
        "groups": ["java", "php"],
        "valid": valid,
        "reason": "" if valid else "php: died during the cost steps",
        "failed_group": None if valid else "php",
        "cost": {
            "rates": [100.0, 200.0],
            "busiest_step_pct": 55.0 * host,
            "flagged_host_busy": [],
            "steal_pct": [1.0, 3.0],
            "groups": {
                "java": {"app_us": 200 * host, "db_us": 100 * host, "stack_us": 300 * host, "pss_mb": 280.0},
                "php": {"app_us": 320 * host, "db_us": 100 * host, "stack_us": 420 * host, "pss_mb": 40.0},
            },
        },
        "capacity": {
            "java": {"capacity": {"rps": 2000 / host, "bracketed": True}},
            "php": {"capacity": php_capacity or {"rps": 1250 / host, "bracketed": True}},
        },
    }


def test_the_host_factor_cancels_in_the_paired_ratios() -> None:
    records = [_record(h) for h in (1.0, 1.1, 0.92, 1.05)]
    summary = summarize(records)
    cost = summary["ratios"]["php"]["app_us"]["interval"]
    assert cost["centre"] == pytest.approx(1.6)
    assert cost["cv_pct"] == pytest.approx(0.0, abs=1e-9)
    assert summary["ratios"]["php"]["capacity_rps"]["interval"]["centre"] == pytest.approx(0.625)
    # Each group's own figures keep the host's spread, and say so with their CV.
    assert summary["groups"]["java"]["app_us"]["interval"]["cv_pct"] > 5
    assert summary["host"]["steal_pct_per_fresh_start"] == [2.0] * 4


def test_an_invalid_fresh_start_is_left_out_and_named() -> None:
    records = [_record(1.0), _record(1.1), _record(5.0, valid=False)]
    summary = summarize(records)
    assert summary["valid"] == 2 and summary["fresh_starts"] == 3
    assert summary["groups"]["java"]["app_us"]["values"] == [200.0, pytest.approx(220.0)]
    assert summary["invalid"][0]["failed_group"] == "php"


def test_a_lower_bound_capacity_is_not_paired() -> None:
    records = [_record(1.0), _record(1.1, php_capacity={"rps": 1400.0, "bracketed": False})]
    summary = summarize(records)
    assert len(summary["ratios"]["php"]["capacity_rps"]["per_fresh_start"]) == 1
    assert summary["groups"]["php"]["capacity_at_least"] == [1400.0]


def test_records_of_other_groups_are_refused() -> None:
    other = _record(1.0)
    other["groups"] = ["java", "node"]
    with pytest.raises(ValueError, match="other groups"):
        summarize([_record(1.0), other])


def test_no_bound_is_impossible_even_for_a_wild_sample() -> None:
    records = [_record(h) for h in (0.2, 5.0, 1.0)]
    summary = summarize(records)
    for group in summary["groups"].values():
        for metric in METRICS:
            interval = (group.get(metric.key) or {}).get("interval")
            if interval:
                assert interval["low"] > 0 and math.isfinite(interval["high"])


def test_records_are_read_back_from_folders(tmp_path: Path) -> None:
    for k, host in enumerate((1.0, 1.1)):
        folder = tmp_path / f"run-{k}"
        folder.mkdir()
        (folder / "side-by-side.json").write_text(json.dumps(_record(host)))
    records = load_records([tmp_path])
    assert len(records) == 2 and all(r["folder"].startswith(str(tmp_path)) for r in records)
    assert load_records([tmp_path / "run-0"])[0]["groups"] == ["java", "php"]


def _three(host: float, node_over_php: float) -> dict[str, Any]:
    record = _record(host)
    record["groups"] = ["java", "node", "php"]
    groups = record["cost"]["groups"]
    groups["node"] = {k: v * node_over_php for k, v in groups["php"].items()}
    record["capacity"]["node"] = {"capacity": {"rps": 1250 / host / node_over_php, "bracketed": True}}
    return record


def test_the_ranking_names_all_three_and_which_neighbours_differ() -> None:
    # php and node alike within a percent or two, each way; java well apart.
    records = [_three(h, r) for h, r in ((1.0, 1.01), (1.1, 0.98), (0.95, 1.02), (1.05, 0.99))]
    summary = summarize(records)
    cost = METRICS[0]
    text = ranking(summary, cost)
    assert text.startswith("java (")
    assert "< " in text and "≈ " in text
    ok, sentence = sure(summary, cost)
    assert not ok
    assert "not every pair" in sentence or "order changed" in sentence


def test_sure_when_every_pair_differs_and_the_order_held() -> None:
    records = [_three(h, 1.3) for h in (1.0, 1.1, 0.95)]
    ok, sentence = sure(summarize(records), METRICS[0])
    assert ok and sentence.startswith("sure")


def test_an_aa_comparison_is_checked_against_its_band() -> None:
    records = []
    for host, b_over_a in ((1.0, 1.004), (1.1, 0.997), (0.95, 1.002), (1.05, 0.999)):
        record = _record(host)
        record["groups"] = ["node-a", "node-b"]
        groups = record["cost"]["groups"]
        groups["node-a"] = groups.pop("java")
        groups["node-b"] = {k: v * b_over_a for k, v in groups["node-a"].items()}
        groups.pop("php")
        record["capacity"] = {}
        records.append(record)
    lines = aa_check(summarize(records))
    assert len(lines) == 2
    assert all("contains 1: yes" in line and "within [0.97, 1.03]: yes" in line for line in lines)
    assert aa_check(summarize([_record(1.0), _record(1.1)])) == []


def test_the_order_is_read_within_each_fresh_start_a_lower_bound_leaves() -> None:
    """A lower-bound capacity drops one fresh start from one group: the order is judged on the fresh
    starts that found every group's capacity, not on lists that no longer line up."""
    lower = {"rps": 1400.0, "bracketed": False}
    records = [_record(1.0), _record(1.1, php_capacity=lower), _record(0.95), _record(1.05)]
    ok, sentence = sure(summarize(records), METRICS[3])
    assert ok and "all 3 fresh starts" in sentence
    ok, sentence = sure(summarize([_record(1.0), _record(1.1, php_capacity=lower)]), METRICS[3])
    assert not ok and "only 1 of 2 fresh starts found every group's capacity" in sentence


def test_how_sure_is_one_sentence_over_the_four_answers() -> None:
    from harness.analysis.side_by_side_report import how_sure

    lower = {"rps": 1400.0, "bracketed": False}
    assert how_sure(summarize([_three(h, 1.3) for h in (1.0, 1.1, 0.95)])).startswith("Sure of all 4 answers")
    mixed = summarize([_record(1.0, php_capacity=lower), _record(1.1, php_capacity=lower), _record(0.9)])
    sentence = how_sure(mixed)
    assert sentence.startswith("Sure of 3 of 4 answers") and "not sure of SLO capacity" in sentence
    assert sentence.count(".") == 1


def test_a_capacity_from_fewer_fresh_starts_says_so_and_is_not_ranked_without_an_interval() -> None:
    from harness.analysis.side_by_side_report import group_cell

    lower = {"rps": 1400.0, "bracketed": False}
    summary = summarize([_record(1.0), _record(1.1, php_capacity=lower)])
    text = ranking(summary, METRICS[3])
    assert "php (1,250, from 1 of 2 fresh starts" in text and "? php" in text
    assert group_cell(summary, "php", METRICS[3]).endswith("in 1 more fresh start(s) only ≥ 1,400")


def _step(index: int, completed: int, mean_ms: float | None) -> dict[str, Any]:
    return {"index": index, "completed": completed, "mean_ms": mean_ms}


def test_the_mean_latency_is_over_the_paired_steps_weighted_by_their_requests() -> None:
    steps = [_step(0, 100, 9.0), _step(1, 100, 2.0), _step(2, 300, 4.0)]
    # step 0 was left out for every group (the host too busy): its latency is not the group's
    assert paired_mean_latency(steps, [1, 2]) == pytest.approx((100 * 2.0 + 300 * 4.0) / 400)
    record = _record(1.0)
    record["cost"]["paired_steps"] = [1, 2]
    record["cost"]["steps"] = {
        "java": steps,
        "php": [_step(0, 100, 9.0), _step(1, 100, 1.0), _step(2, 300, 2.0)],
    }
    found = figures(record)
    assert found["java"]["mean_ms"] == pytest.approx(3.5) and found["php"]["mean_ms"] == pytest.approx(1.75)


@pytest.mark.parametrize(
    ("steps", "paired"),
    [
        ([_step(1, 100, 2.0)], [1, 2]),  # a paired step this group did not record
        ([_step(1, 100, 2.0), _step(2, 100, None)], [1, 2]),  # a step without a latency
        ([_step(1, 0, 2.0)], [1]),  # no request finished
        ([_step(1, 100, 2.0)], []),  # no step paired
    ],
)
def test_no_mean_latency_from_part_of_the_paired_steps(
    steps: list[dict[str, Any]], paired: list[int]
) -> None:
    assert paired_mean_latency(steps, paired) is None


def test_a_stored_record_without_steps_has_no_mean_latency() -> None:
    assert figures(_record(1.0))["java"]["mean_ms"] is None


def _with_latency(record: dict[str, Any], mean_ms: dict[str, float]) -> dict[str, Any]:
    """The cost steps' per-group latencies, both steps kept for every group."""
    record["cost"]["paired_steps"] = [0, 1]
    record["cost"]["steps"] = {
        label: [{"index": k, "completed": 400, "mean_ms": ms} for k in (0, 1)]
        for label, ms in mean_ms.items()
    }
    return record


def test_the_latency_is_a_fifth_answer_where_the_records_hold_it() -> None:
    from harness.analysis.side_by_side_report import TERMINAL, asked, how_sure, markdown

    records = [
        _with_latency(_three(h, 1.3), {"java": 1.2 * h, "node": 1.9 * h, "php": 2.6 * h})
        for h in (1.0, 1.25, 0.8)
    ]
    summary = summarize(records)
    latency = next(m for m in METRICS if m.key == "mean_ms")
    assert summary["ratios"]["php"]["mean_ms"]["interval"]["centre"] == pytest.approx(2.6 / 1.2)
    assert latency in asked(summary) and latency not in TERMINAL
    assert ranking(summary, latency).startswith("java (1.20 ms) < node (1.90")
    assert how_sure(summary).startswith("Sure of all 5 answers")
    text = markdown(summary)
    assert "Lowest mean latency (the same rates, in the same seconds):** java (1.20 ms)" in text
    assert "mean latency at the shared rates (ms)" in text


def test_records_without_latencies_keep_their_four_answers() -> None:
    from harness.analysis.side_by_side_report import asked, how_sure

    summary = summarize([_three(h, 1.3) for h in (1.0, 1.1, 0.95)])
    assert [m.key for m in asked(summary)] == ["app_us", "stack_us", "capacity_rps", "pss_mb"]
    assert how_sure(summary).startswith("Sure of all 4 answers")
