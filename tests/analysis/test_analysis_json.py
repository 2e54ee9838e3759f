"""`compare --json`: every table for scripts and dashboards, its numbers those of the analysis objects."""

from __future__ import annotations

import io
import json
import math

from rich.console import Console
from synthetic import fixed_rate_groups

from harness.analysis.comparison import compare
from harness.analysis.metrics import ALL_METRICS
from harness.analysis.table_render import json_table
from harness.analysis.tables import details_table, verdict_tables
from harness.cli.compare import main


def test_the_json_holds_every_table_with_the_analysis_numbers(tmp_path):
    fixed_rate_groups(tmp_path / "r", {"java": 1000.0, "node": 1200.0, "php": 800.0}, n=5, seed=4)
    target = tmp_path / "out.json"
    args = [str(tmp_path / "r"), "--quiet", "--json", str(target), "--resamples", "999"]
    assert main(args, Console(file=io.StringIO())) == 0
    exported = json.loads(target.read_text(encoding="utf-8"))
    comparison = compare([tmp_path / "r"], n_resamples=999)

    assert exported["runs_used"] == [run.run_id for run in comparison.runs]
    tables = {table["id"]: table for table in exported["tables"]}
    assert {"details", "anova", "ratios", "runs-used", "runs-excluded"} <= set(tables)

    cset = comparison.sets[0]
    verdict = tables[f"verdict-{cset.slug}"]
    assert verdict["title"] == cset.title and verdict["columns"][:2] == ["metric", "java"]
    for result, row in zip(cset.results, verdict["rows"], strict=True):
        metric = ALL_METRICS[result.metric]
        assert row[0]["text"] == metric.heading() and row[0]["value"] is None
        for summary, cell in zip(result.summaries, row[1:], strict=False):
            assert cell["value"] == summary.mean and cell["unit"] == metric.unit
            assert (cell["ci_low"], cell["ci_high"]) == (summary.mean_ci.low, summary.mean_ci.high)
        for label, cell in zip(verdict["columns"][4:], row[4:], strict=True):
            pair = result.vs_baseline(label.split(" vs ")[0])
            assert math.isclose(cell["value"], pair.delta_pct)
            assert math.isclose(cell["ci_low"], (pair.ratio_ci.low - 1) * 100)

    details = tables["details"]
    n_column = details["columns"].index("n")
    assert all(isinstance(row[n_column]["value"], int) for row in details["rows"])


def test_a_table_renders_to_json_the_same_numbers_its_text_shows(study_comparison):
    for table in [
        *verdict_tables(study_comparison),
        details_table(study_comparison),
    ]:
        exported = json_table(table)
        json.dumps(exported, allow_nan=False)  # numbers as numbers, never NaN
        texts = [[cell["text"] for cell in row] for row in exported["rows"]]
        assert texts == [[str(cell) for cell in row] for row in table.rows]
