"""The report's Claims section: verdicts stored by `replicate` appear beside the runs they rest on, and only there."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from synthetic import Writer, make_metrics

from harness.analysis.comparison import compare
from harness.analysis.report import SECTIONS, render_html, sections_for
from harness.analysis.writers import render_terminal
from harness.claims import runner
from harness.claims.model import find
from harness.claims.store import latest_per_claim, load_verdicts, save_verdict, verdict_record
from harness.claims.verdict import REPLICATED


def _runs(writer: Writer, impl: str, values: list[float]) -> list[str]:
    ids = []
    for repetition, value in enumerate(values):
        metrics = make_metrics(
            throughput=value, offered=value, cpu_pct_total=50.0, memory_mb=100.0, p50_ms=2.0
        )
        folder = writer.write_run(
            impl=impl, regime="claim", point={"rate": 100.0}, repetition=repetition, metrics=metrics
        )
        ids.append(folder.name)
    return ids


def _stored_verdict(results: Path) -> tuple[list[str], Path]:
    writer = Writer(results)
    # thesis-table-7.2 is judged on CPU cost per request: node's over java's, expected > 1
    java_values, node_values = [7.52, 7.29, 7.10, 7.41], [9.35, 9.09, 9.17, 9.26]
    java, node = _runs(writer, "java", java_values), _runs(writer, "node", node_values)
    values = dict(zip(java + node, java_values + node_values, strict=True))

    def observe(claim: object, size: object) -> runner.Observations:
        return {
            ("java", "java"): [{"valid": True, "value": values[r], "run": r} for r in java],
            ("node", "node"): [{"valid": True, "value": values[r], "run": r} for r in node],
        }

    claim = find("thesis-table-7.2")
    verdict = runner.replicate(claim, quick=True, runner=observe)
    assert verdict.outcome == REPLICATED
    record = verdict_record(claim, runner.size_for(claim, True, None), True, verdict)
    return java + node, save_verdict(record, results)


def test_verdict_round_trips_with_its_runs(tmp_path: Path) -> None:
    run_ids, path = _stored_verdict(tmp_path / "results")
    [record] = latest_per_claim(load_verdicts(path.parent))
    assert record["outcome"] == REPLICATED and record["size"] == "quick"
    assert sorted(record["runs"]) == sorted(run_ids)
    [row] = record["comparisons"]
    assert row["a"]["values"] == [7.52, 7.29, 7.10, 7.41]
    assert row["ratio_ci"][0] < row["ratio"] < row["ratio_ci"][1]


def test_report_shows_claims_section_for_its_runs(tmp_path: Path) -> None:
    results = tmp_path / "results"
    _stored_verdict(results)
    html = render_html(compare([results], n_resamples=999))
    assert '<section id="claims">' in html and 'href="#claims"' in html
    assert "thesis-table-7.2: REPLICATED" in html
    assert "7.33" in html  # the java mean of the four stored values
    out = io.StringIO()
    render_terminal(compare([results], n_resamples=999), Console(file=out, width=250))
    assert "thesis-table-7.2: REPLICATED" in out.getvalue()


def test_report_without_verdicts_has_no_claims_section(tmp_path: Path) -> None:
    results = tmp_path / "results"
    stored = tmp_path / "elsewhere"
    _stored_verdict(stored)
    _runs(Writer(results, seed=1), "php", [500.0, 510.0, 490.0])
    html = render_html(compare([results], n_resamples=999))
    assert '<section id="claims">' not in html and 'href="#claims"' not in html


def test_optional_sections_sit_before_the_manifest() -> None:
    ids = [sid for sid, _ in sections_for({"claims"})]
    assert ids.index("claims") == ids.index("manifest") - 1
    assert [sid for sid, _ in sections_for(set())] == [sid for sid, _ in SECTIONS]
