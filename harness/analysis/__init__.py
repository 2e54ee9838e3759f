"""bidbench analysis: from result folders to statistics, the source texts' tables, plots and a report.

The public entry points (what `compare.py` and `./bidbench compare` build on):

    from harness.analysis import compare, render_terminal, write_csv, write_markdown, write_html

    comparison = compare(["results/"], include_invalid=False, alpha=0.05)
    render_terminal(comparison)
    write_html(comparison, "report.html")

The command line over them (a typer command, also `main(argv)`) is harness/cli/compare.py.

Modules, one job each:
    load        find and read result folders and results/index.jsonl; decide who is excluded and why
    metrics     the compared metrics: where each comes from in metrics.json, its unit and direction
    usl         the Universal Scalability Law fit
    knee        where a latency curve turns upward
    comparison  the orchestration: groups -> statistics -> tables (the Comparison object)
    table_model the one table model: cells keep their value, interval and unit beside their text
    table_render its renderers: terminal (rich), Markdown, CSV, JSON, HTML fragment
    tables      the benchstat-like table and the source texts' tables, as model tables
    regime_tables, ladder_tables, claim_rows, summary_table  the commands' own tables, same model
    manifest    the summary of manifests (versions, knobs, host) across runs
    plots       matplotlib figures as base64 PNG
    report      the self-contained HTML report (jinja2)
    writers     terminal, CSV, Markdown and JSON files of a comparison
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.analysis.comparison import Comparison, compare
    from harness.analysis.report import render_html, write_html
    from harness.analysis.writers import render_terminal, write_csv, write_markdown

# Imported on first use, so `compare.py --help` and the loaders stay quick (matplotlib, scipy load later).
_EXPORTS = {
    "Comparison": "harness.analysis.comparison",
    "compare": "harness.analysis.comparison",
    "render_html": "harness.analysis.report",
    "write_html": "harness.analysis.report",
    "render_terminal": "harness.analysis.writers",
    "write_csv": "harness.analysis.writers",
    "write_markdown": "harness.analysis.writers",
}

__all__ = [
    "Comparison",
    "compare",
    "render_html",
    "render_terminal",
    "write_csv",
    "write_html",
    "write_markdown",
]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib  # each name loads its module on first use: the reports pull in matplotlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
