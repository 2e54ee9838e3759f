"""Reading result folders and the index; grouping; invalid and failed runs excluded and reported."""

from __future__ import annotations

import io
import json
import shutil

from rich.console import Console
from synthetic import Writer, fixed_rate_groups, make_metrics

from harness.analysis.comparison import compare
from harness.analysis.load import discover, point_label, point_number, read_run, select
from harness.analysis.writers import render_markdown, render_terminal


def test_invalid_and_failed_runs_are_excluded_and_reported(study, study_comparison):
    runset = study_comparison.runset
    assert len(runset.excluded) == study.invalid_runs + study.failed_runs == 3
    counts = runset.reason_counts()
    assert counts["the load driver sent N requests late"] == 2
    assert any(reason.startswith("status failed: node exited") for reason in counts)
    assert all(run.is_valid for run in study_comparison.runs)
    # every output says so
    out = io.StringIO()
    render_terminal(study_comparison, Console(file=out, width=200))
    text = out.getvalue()
    assert "excluded 3 run(s)" in text and "the load driver sent N requests late (x2)" in text
    assert "Excluded 3 failed or invalid run(s)" in render_markdown(study_comparison)
    # and the invalid capacities (50, 60 req/s) did not leak into the capacity figures
    capacity = study_comparison.sets[0].result("capacity")
    assert study_comparison.sets[0].regime == "capacity"
    assert all(min(s.values) > 300 for s in capacity.summaries)


def test_include_invalid_uses_them_and_says_so_loudly(study):
    comparison = compare([study.root], metrics=["capacity"], include_invalid=True, n_resamples=199)
    assert len(comparison.runset.invalid_included) == 2
    assert len(comparison.runset.excluded) == 1  # the failed run has no metrics.json: nothing to include
    capacity = comparison.sets[0].result("capacity")
    assert {s.label: s.invalid_runs for s in capacity.summaries} == {"java": 1, "node": 0, "php": 1}
    out = io.StringIO()
    render_terminal(comparison, Console(file=out, width=200))
    assert "INCLUDES 2 INVALID OR FAILED RUN(S)" in out.getvalue()
    assert "(n=6)!" in out.getvalue()
    assert "INCLUDES 2 INVALID" in render_markdown(comparison)


def test_index_and_folders_give_the_same_runs(study):
    folder_runs, folder_excluded = select(discover([study.root])[0])
    index_runs, index_excluded = select(discover([], index=study.root / "index.jsonl")[0])
    assert sorted(r.run_id for r in folder_runs) == sorted(r.run_id for r in index_runs)
    assert len(index_excluded) == len(folder_excluded)


def test_index_line_without_folder_is_reported(tmp_path):
    writer = fixed_rate_groups(tmp_path / "r", {"java": 100.0, "node": 100.0}, n=3, seed=1)
    shutil.rmtree(writer.paths[0])
    runs, excluded = select(discover([], index=tmp_path / "r" / "index.jsonl")[0])
    assert len(runs) == 5
    assert [e.reason for e in excluded] == ["result folder missing"]


def test_runner_layout_and_flat_layout_group_alike(tmp_path):
    """The runner writes regime as {"name", "point", "repetition"}; an older flat manifest still reads."""
    writer = Writer(tmp_path / "r", seed=1)
    metrics = make_metrics(throughput=100.0, offered=100.0, cpu_pct_total=10.0, memory_mb=50.0, p50_ms=2.0)
    nested = writer.write_run(
        impl="node", regime="fixed-rate", point={"instances": 2}, repetition=3, metrics=metrics
    )
    flat = writer.write_run(
        impl="node", regime="fixed-rate", point={"instances": 2}, repetition=4, metrics=metrics, flat=True
    )
    a, b = read_run(nested), read_run(flat)
    assert (a.impl, a.variant, a.regime, a.point) == (b.impl, b.variant, b.regime, b.point)
    assert a.point == "instances=2" and a.point_value == 2.0
    assert (a.repetition, b.repetition) == (3, 4)
    assert a.instances == 1  # the manifest's instance count wins over the point


def test_absolute_index_paths_and_dashed_regime_names(tmp_path):
    writer = Writer(tmp_path / "r", seed=2)
    metrics = make_metrics(throughput=100.0, offered=100.0, cpu_pct_total=10.0, memory_mb=50.0, p50_ms=2.0)
    folder = writer.write_run(
        impl="php",
        regime="fixed-rate",
        point={"rate": 100.0},
        repetition=0,
        metrics=metrics,
        absolute_index_path=True,
    )
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest.pop("regime")
    manifest.pop("impl")
    (folder / "manifest.json").write_text(json.dumps(manifest))
    run = read_run(folder)  # no index: the folder name is the last resort
    assert (run.impl, run.regime) == ("php", "fixed-rate")
    (runset_run,) = select(discover([], index=tmp_path / "r" / "index.jsonl")[0])[0]
    assert runset_run.regime == "fixed-rate"


def test_point_forms():
    assert point_label({"rate": 300.0}) == "rate=300" and point_number({"rate": 300.0}) == 300.0
    assert point_label({}) == "-" and point_label(None) == "-"
    assert point_label(2) == "2" and point_number("users=8") == 8.0
    assert point_number({"instances": 2, "rate": 100}) is None


def test_secrets_never_reach_the_manifest_summary(study_comparison):
    from harness.analysis.manifest import manifest_tables

    text = json.dumps([t.rows for t in manifest_tables(study_comparison.runs)])
    assert "s3cret" not in text and "PGPASSWORD" in text


def test_sparse_folders_do_not_break_any_output(tmp_path):
    """Only the fields a minimal runner would write: every output still renders, with 'no data' notes."""
    from harness.analysis.report import render_html
    from harness.analysis.writers import render_markdown as markdown
    from harness.analysis.writers import write_csv

    for i, (impl, value) in enumerate([("java", 100.0), ("node", 120.0)] * 3):
        folder = tmp_path / "r" / f"20260101T00000{i}Z-{impl}-fixed-rate-{i:06x}"
        folder.mkdir(parents=True)
        (folder / "manifest.json").write_text(
            json.dumps({"impl": impl, "regime": "fixed-rate", "status": "completed"})
        )
        (folder / "metrics.json").write_text(
            json.dumps({"throughput_rps": value + i, "db_cpu_pct": float("nan")})
        )
        (folder / "verdict.json").write_text(json.dumps({"valid": True}))
    comparison = compare([tmp_path / "r"], n_resamples=199)
    assert [s.title for s in comparison.sets] == ["fixed-rate"]
    assert [r.metric for r in comparison.sets[0].results] == ["throughput"]
    html = render_html(comparison)
    assert "No plot:" in html and "node vs java" in html
    assert "| throughput (req/s) |" in markdown(comparison)
    write_csv(comparison, tmp_path / "x.csv")
    out = io.StringIO()
    render_terminal(comparison, Console(file=out, width=200))
    assert "node vs java" in out.getvalue()
