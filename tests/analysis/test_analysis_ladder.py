"""Ladders in the analysis (issue #28), on synthetic ladder folders with known truth (synthetic.py):
the registry's ladder metrics, the ">= X" rule and its exclusion from the tests, calibrations and the
floor kept out of the comparison, the per-step labels (throttled, floor-limited), the first screen, the
latency-throughput figure from ladder steps."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from synthetic import LADDER_RATES, LADDER_TRUTH, Writer, write_floor, write_ladders

from harness.analysis.comparison import Comparison, compare
from harness.analysis.ladder_report import (
    Floor,
    first_screen,
    floor_of,
    ladder_groups,
    step_summaries,
    step_table,
)
from harness.analysis.metrics import METRICS, resolve_metrics
from harness.analysis.plots import latency_vs_throughput
from harness.analysis.report import render_html
from harness.analysis.tables import anova_table, verdict_tables

RESAMPLES = 999


def _compare(root: Path) -> Comparison:
    return compare([root], n_resamples=RESAMPLES)


@pytest.fixture(scope="module")
def ladders(tmp_path_factory: pytest.TempPathFactory) -> Comparison:
    """java, node, php x5 ladders; php never fails in 2 of its 5 (a lower bound); node throttled past its
    break; one calibration ladder and a noise floor at 2.5 ms beside them."""
    root = tmp_path_factory.mktemp("ladders") / "results"
    writer = Writer(root, seed=3)
    write_ladders(writer, unbracketed={"php": 2}, throttled_above={"node": 1000.0})
    write_ladders(writer, ("java",), reps=1, regime="ladder-calibration", seed=5)
    write_floor(writer, p99_ms=2.5)
    return _compare(root)


def _ladder_set(comparison: Comparison):  # noqa: ANN202 - a ComparisonSet
    return next(s for s in comparison.sets if s.regime == "ladder")


def test_registry_has_the_ladder_metrics() -> None:
    cost = METRICS["cpu_us_per_request"]
    assert cost.title == "CPU µs per request" and cost.higher_is_better is False
    assert METRICS["db_us_per_request"].higher_is_better is False
    assert METRICS["saturation_rps"].higher_is_better is True
    assert METRICS["rps_per_mb"].title == "throughput density"
    assert "derived from the CPU cost" in METRICS["normalized_throughput"].explanation
    assert METRICS["capacity"].lower_bound is not None
    assert [m.key for m in resolve_metrics(["memory_per_instance_mb", "cost"])] == [
        "memory",
        "cpu_us_per_request",
    ]


def test_ladder_sets_compare_ladder_metrics_only(ladders: Comparison) -> None:
    cset = _ladder_set(ladders)
    compared = {r.metric for r in cset.results}
    assert {"cpu_us_per_request", "db_us_per_request", "saturation_rps", "memory", "rps_per_mb"} <= compared
    assert not compared & {"throughput", "p50", "p99", "cpu"}  # whole-ladder figures mix every step
    cost = cset.result("cpu_us_per_request")
    assert cost is not None and cost.omnibus is not None
    means = {s.label: s.mean for s in cost.summaries}
    for impl, truth in LADDER_TRUTH.items():
        assert means[f"{impl}/crud"] == pytest.approx(truth.cost_us, rel=0.05)
    assert len(set(cost.omnibus.letters.values())) == 3  # 120, 170 and 500 µs: three letters


def test_lower_bound_capacity_is_never_averaged_nor_tested(ladders: Comparison) -> None:
    cset = _ladder_set(ladders)
    bound = cset.bounds["capacity"]["php/crud"]
    assert (bound.bounded, bound.runs) == (2, 5)
    assert bound.value == 650.0  # the highest step below php's break rate, the smallest bound
    capacity = cset.result("capacity")
    assert capacity is not None
    assert {s.label for s in capacity.summaries} == {"java/crud", "node/crud"}
    assert capacity.omnibus is None  # two groups left: a pairwise test, no ANOVA with php in it
    assert all("php/crud" not in (p.a, p.b) for p in capacity.pairs)
    table = next(t for t in verdict_tables(ladders) if "ladder" in t.title)
    row = next(r for r in table.rows if r[0].startswith("capacity"))
    php = table.columns.index("php/crud")
    assert row[php] == ">= 650 (2 of 5 never failed)"
    assert any(cell == "not tested (a lower bound)" for cell in row)
    assert any("php/crud" in n and "left out" in n for n in anova_table(ladders).notes)
    assert any("php/crud is left out of the tests" in w for w in ladders.warnings)


def test_calibrations_and_the_floor_are_not_compared(ladders: Comparison) -> None:
    regimes = {s.regime for s in ladders.sets}
    assert "ladder-calibration" not in regimes and "ladder-floor" not in regimes
    assert all(r.regime not in ("ladder-calibration", "ladder-floor") for r in ladders.runs)
    assert [r.impl for r in ladders.floors] == ["nginx"]
    assert any("1 calibration ladder(s) left out" in w for w in ladders.warnings)


def test_throttled_label_needs_throttling_and_a_broken_slo(ladders: Comparison) -> None:
    groups = ladder_groups(ladders)
    node = step_summaries(groups["node/crud"], "node/crud", None)
    labelled = {s.rate for s in node if s.throttled}
    assert labelled == {r for r in LADDER_RATES if r > 1000.0}
    java = step_summaries(groups["java/crud"], "java/crud", None)
    assert not any(s.throttled for s in java)  # over the SLO above 1500, but never throttled
    rows = step_table(ladders).rows
    node_rows = [r for r in rows if r[0] == "node/crud"]
    assert [r[-1] for r in node_rows if "throttled" in r[-1]] and all(
        "throttled" in r[-1] for r in node_rows if float(r[1].replace(",", "")) > 1000
    )


def test_floor_limited_label_within_twice_the_floor(ladders: Comparison) -> None:
    floor = floor_of(ladders.floors)
    assert floor is not None and floor.p99_at(300.0) == pytest.approx(2.5)
    groups = ladder_groups(ladders)
    java = step_summaries(groups["java/crud"], "java/crud", floor)
    # java's p99 is ~4 ms below its break (within 2 x 2.5 ms), far above the SLO past it
    assert {s.rate for s in java if s.floor_limited} == {r for r in LADDER_RATES if r <= 1500.0}
    table = step_table(ladders)
    assert "floor p99 (ms)" in table.columns
    assert any("floor-limited" in r[-1] for r in table.rows)
    assert any("Floor: the load driver against nginx" in n for n in table.notes)


def test_floor_is_read_only_within_its_reach() -> None:
    floor = Floor((100.0, 200.0), (1.0, 3.0), ("f",))
    assert floor.p99_at(50.0) == 1.0
    assert floor.p99_at(150.0) == pytest.approx(2.0)
    assert floor.p99_at(209.0) == 3.0
    assert floor.p99_at(300.0) is None


def test_first_screen_answers_the_four_questions(ladders: Comparison) -> None:
    screen = first_screen(ladders)
    assert screen is not None
    work, load, memory, sure = screen.sentences
    assert work.startswith("Most work per CPU: java/crud") and "significantly different" in work
    assert load.startswith("Most load under the SLO: java/crud")
    assert "php/crud at least 650 (a lower bound in 2 of 5 ladders: not ranked, not tested)" in load
    assert memory.startswith("Least memory: php/crud")
    assert sure.startswith("How sure: valid ladders java/crud 5 of 5")
    assert "noise floor's p99 is 2.5-2.5 ms" in sure
    assert screen.table.columns[:2] == ["app", "valid ladders"]
    assert [r[0] for r in screen.table.rows] == ["java/crud", "node/crud", "php/crud", "test"]
    php = screen.table.rows[2]
    assert php[screen.table.columns.index("capacity (req/s)")].startswith(">= 650")
    assert "ANOVA" in screen.table.rows[-1][2] and "php/crud left out" in screen.table.rows[-1][3]
    assert screen.figure.png


def test_report_opens_with_the_first_screen_and_plots_the_ladders(ladders: Comparison) -> None:
    html = render_html(ladders)
    assert html.index('<section id="glance">') < html.index('<section id="overview">')
    assert re.search(r'<nav>\s*<a href="#glance">At a glance</a>', html)
    figure = re.search(r'<figure id="fig-latency-throughput">(.*?)</figure>', html, re.S)
    assert figure is not None and "data:image/png;base64," in figure.group(1)
    assert "No plot" not in figure.group(1)
    assert 'id="ladder-steps"' in html
    latency = latency_vs_throughput(ladders)
    assert latency.png and latency.notes.startswith("Knees: ")


def test_report_without_ladders_has_no_first_screen(study_comparison: Comparison) -> None:
    assert first_screen(study_comparison) is None
    assert '<section id="glance">' not in render_html(study_comparison)


def test_a_set_whose_capacity_is_only_lower_bounds_prints(tmp_path: Path) -> None:
    """When no ladder of any app failed (the demo's java x2 set), capacity has bounds and no results: its
    verdict row comes after the rows with results, and the terminal renderer walks both."""
    from rich.console import Console

    from harness.analysis.writers import render_terminal

    writer = Writer(tmp_path / "results", seed=7)
    write_ladders(writer, ("java", "node"), reps=3, unbracketed={"java": 3, "node": 3})
    comparison = _compare(tmp_path / "results")
    cset = _ladder_set(comparison)
    assert cset.result("capacity") is None and set(cset.bounds["capacity"]) == {"java/crud", "node/crud"}
    console = Console(record=True, width=200)
    render_terminal(comparison, console)
    assert "(3 of 3 never failed)" in console.export_text()


def test_first_screen_says_how_much_of_the_spread_the_host_moved(tmp_path: Path) -> None:
    write_ladders(Writer(tmp_path), ("java", "php"), reps=5, host_cv=0.15)
    screen = first_screen(_compare(tmp_path))
    assert screen is not None
    sure = screen.sentences[-1]
    found = re.search(
        r"followed the load driver's CPU per request in the same steps by r java/crud ([0-9.]+)", sure
    )
    assert found is not None and float(found.group(1)) > 0.8
    assert re.search(r"php/crud (0\.9|1\.00)", sure) and "the shared host, not the app" in sure


def test_first_screen_is_silent_on_the_host_when_the_driver_never_varied(ladders: Comparison) -> None:
    screen = first_screen(ladders)
    assert screen is not None and "load driver" not in screen.sentences[-1]


def test_a_comparison_says_when_cost_fits_mix_intercepts(tmp_path: Path) -> None:
    import json

    folders = write_ladders(Writer(tmp_path), ("java", "node"), reps=3)
    assert not any("mixes methods" in w for w in _compare(tmp_path).warnings)
    for folder in folders:
        if "-node-" in folder.name:
            path = folder / "metrics.json"
            metrics = json.loads(path.read_text())
            metrics["ladder"]["cpu_cost"]["idle_measured"] = True
            path.write_text(json.dumps(metrics))
    warnings = [w for w in _compare(tmp_path).warnings if "mixes methods" in w]
    assert len(warnings) == 1 and "fitted the intercept (java/crud)" in warnings[0]
