"""The source texts' tables, recomputed here straight from the folders' JSON: every printed number must be
reproducible from the result folders (no figure is hard-coded)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from synthetic import Writer, make_metrics

from harness.analysis.knee import find_knee
from harness.analysis.load import read_run
from harness.analysis.tables import (
    breakdown_of,
    cpu_utilization_table,
    errors_table,
    normalized_table,
    over_one_second,
    qos_table,
    source_tables,
    verdict_tables,
)
from harness.analysis.writers import write_csv


def _folders(study, regime: str, impl: str, **point: float) -> list[dict]:
    out = []
    for folder in study.writer.paths:
        manifest = json.loads((folder / "manifest.json").read_text())
        regime_info = manifest["regime"]
        if regime_info["name"] == regime and manifest["impl"] == impl and regime_info["point"] == point:
            verdict = folder / "verdict.json"
            if verdict.exists() and json.loads(verdict.read_text())["valid"]:
                out.append(json.loads((folder / "metrics.json").read_text()))
    return out


def _row(table, label: str, column: str, point: object) -> dict:
    """The row of `label` at `point` (its text in `column`), by column name: each cell keeps its number."""
    rows = [dict(zip(table.columns, row, strict=True)) for row in table.rows]
    return next(r for r in rows if r["implementation"] == label and r[column] == str(point))


def test_thesis_tables_7_1_and_7_2_come_from_the_folders(study, study_comparison):
    raw = _folders(study, "capacity", "node")
    assert len(raw) == 5
    t71 = _row(cpu_utilization_table(study_comparison), "node", "point", "-")
    assert t71["CPU %"].value == pytest.approx(np.mean([m["cpu_pct_total"] for m in raw]))
    assert t71["utilized CPU %"].value == pytest.approx(np.mean([m["utilized_cpu"] * 100 for m in raw]))
    assert t71["maximum CPU %"].value == pytest.approx(100.0)
    t72 = _row(normalized_table(study_comparison), "node", "point", "-")
    assert t72["capacity (req/s)"].value == pytest.approx(np.mean([m["capacity_rps"] for m in raw]))
    assert t72["normalized (req/s per CPU %)"].value == pytest.approx(
        np.mean([m["normalized_throughput"] for m in raw])
    )


def test_qos_and_error_tables(study, study_comparison):
    qos = qos_table(study_comparison)
    raw = _folders(study, "users", "php", users=16)
    row = _row(qos, "php", "users", 16)
    assert row["max (ms)"].value == pytest.approx(max(m["latency_ms"]["max"] for m in raw))
    # some requests took over 1 s, and no run recorded how many: the table shows the bound the percentiles give
    # (the loosest over the runs), not a made-up share
    assert all(m["latency_ms"]["max"] > 1000 for m in raw)
    shares = (("p999", 0.1), ("p99", 1.0), ("p95", 5.0), ("p90", 10.0), ("p50", 50.0))
    bound = max(next(share for key, share in shares if m["latency_ms"][key] < 1000) for m in raw)
    assert row["over 1 s"] == f"< {bound:g}%"
    one = _row(qos, "php", "users", 1)
    assert one["over 1 s"] == "0.0%"  # nothing took a second
    erow = _row(errors_table(study_comparison), "php", "users", 16)
    assert erow["system errors %"].value == pytest.approx(
        np.mean([m["sys_errors"] / m["requests"] * 100 for m in raw])
    )
    assert 10 < erow["application exceptions %"].value < 12


def test_over_one_second_is_exact_when_recorded(tmp_path):
    writer = Writer(tmp_path, seed=1)
    metrics = make_metrics(throughput=10.0, offered=10.0, cpu_pct_total=5.0, memory_mb=50.0, p50_ms=900.0)
    metrics["over_1s_pct"] = 12.5
    run = read_run(
        writer.write_run(impl="java", regime="users", point={"users": 4}, repetition=0, metrics=metrics)
    )
    assert over_one_second(run) == (12.5, "exact")


def test_breakdown_slices_add_up_and_read_both_timing_forms(tmp_path):
    writer = Writer(tmp_path, seed=1)
    runs = []
    for numbers in (False, True):
        metrics = make_metrics(
            throughput=100.0,
            offered=100.0,
            cpu_pct_total=10.0,
            memory_mb=50.0,
            p50_ms=2.0,
            timing_as_numbers=numbers,
        )
        runs.append(
            read_run(
                writer.write_run(
                    impl="node",
                    regime="fixed-rate",
                    point={"rate": 100.0},
                    repetition=int(numbers),
                    metrics=metrics,
                )
            )
        )
    trend_form, number_form = breakdown_of(runs[:1]), breakdown_of(runs[1:])
    assert trend_form.keys() == number_form.keys()
    for name, slices in trend_form.items():
        assert slices.db == pytest.approx(number_form[name].db)
        assert slices.db + slices.app_only + slices.outside == pytest.approx(slices.latency)
    assert list(trend_form)[-1] == "all"


def test_every_source_table_has_rows_for_a_full_study(study_comparison):
    for table in source_tables(study_comparison):
        assert not table.is_empty, table.id


def test_csv_holds_every_group_and_pair(tmp_path, study_comparison):
    main, pairs = write_csv(study_comparison, tmp_path / "cmp.csv")
    rows = list(csv.DictReader(main.open()))
    expected = sum(len(t.records) for t in verdict_tables(study_comparison))
    assert len(rows) == expected
    capacity_node = next(
        r for r in rows if r["regime"] == "capacity" and r["metric"] == "capacity" and r["label"] == "node"
    )
    assert capacity_node["significant"] == "True" and capacity_node["baseline"] == "java"
    assert len(list(csv.DictReader(Path(pairs).open()))) > 0


def test_knee():
    xs = [100, 200, 300, 400, 500, 600]
    ys = [2.0, 2.1, 2.3, 2.6, 6.0, 30.0]
    knee = find_knee(xs, ys)
    assert knee is not None and knee.x in (400, 500)
    assert find_knee([1, 2, 3], [1, 2, 3]) is None
    assert find_knee([1, 2], [1, 5]) is None
