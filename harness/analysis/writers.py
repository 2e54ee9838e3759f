"""Plain outputs: the terminal (rich), CSV, Markdown and JSON. The HTML report lives in report.py."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.panel import Panel

from harness import __version__
from harness.analysis.claims_section import claim_tables
from harness.analysis.comparison import Comparison
from harness.analysis.ladder_report import first_screen, step_table
from harness.analysis.manifest import manifest_tables
from harness.analysis.resilience import fault_runs, latest, resilience_table
from harness.analysis.table_render import (
    VERDICT_LOOK,
    escape_markup,
    json_table,
    markdown_table,
    rich_table,
    write_records_csv,
    write_text,
)
from harness.analysis.tables import (
    Table,
    anova_table,
    details_table,
    excluded_table,
    ratio_table,
    runs_table,
    source_tables,
    verdict_tables,
)

MAX_EXCLUDED_LISTED = 12


def _compact(table: Table) -> Table | None:
    """The terminal's shorter form of a source table (the HTML and Markdown have every row)."""
    if table.id == "breakdown-by-point":
        return None
    if table.id == "table-breakdown":
        type_col = table.columns.index("request type")
        rows = [row for row in table.rows if row[type_col] == "all"]
        return replace(table, title=table.title + ", all request types", rows=rows)
    return table


def condense_warnings(warnings: list[str]) -> list[str]:
    """Sample-size warnings repeat per set and metric; print each message once, with how often it occurs."""
    counts = Counter(w.split(": ", 2)[-1] if w.count(": ") >= 2 else w for w in warnings)
    return [
        text + (f" (in {count} comparisons)" if count > 1 else "") for text, count in counts.most_common()
    ]


def render_terminal(comparison: Comparison, console: Console | None = None, *, full: bool = False) -> None:
    """Print the verdict tables, warnings, exclusions and the source texts' tables that have data."""
    console = console or Console()
    runset = comparison.runset
    if runset.invalid_included:
        console.print(
            Panel(
                f"[bold]INCLUDES {len(runset.invalid_included)} INVALID OR FAILED RUN(S)[/] (--include-invalid). "
                "Values marked ! rest partly on runs that failed validity (docs/design.md §7).",
                style="bold red",
                title="invalid runs included",
            )
        )
    if runset.excluded:
        reasons = runset.reason_text()
        console.print(
            Panel(
                f"excluded {len(runset.excluded)} run(s) as failed or invalid: {escape_markup(reasons)}",
                style="yellow",
                title="excluded",
            )
        )
    console.print(
        f"{len(comparison.runs)} runs used from {escape_markup(' '.join(runset.sources))}; "
        f"{len(comparison.sets)} comparison set(s); alpha={comparison.alpha:g}, "
        f"{comparison.confidence:.0%} confidence intervals."
    )
    glance = first_screen(comparison)
    if glance is not None:
        for sentence in glance.sentences:
            console.print(f"[bold]-[/] {escape_markup(sentence)}")
        console.print(rich_table(glance.table))
    console.print(
        "[dim]Each cell: mean ± half its confidence interval (as % of the mean), with n. The last columns compare "
        "with the first group: the change where significant, '~' where not, with p and n.[/]"
    )
    for table in verdict_tables(comparison):
        console.print(rich_table(table, look=VERDICT_LOOK))
        for note in table.notes:
            console.print(f"  [dim]{escape_markup(note)}[/]")
    anova = anova_table(comparison)
    if full and not anova.is_empty:
        console.print(rich_table(anova))
    for table in source_tables(comparison):
        shown = table if full else _compact(table)
        if shown is not None and not shown.is_empty:
            console.print(rich_table(shown))
            for note in shown.notes:
                console.print(f"  [dim]{escape_markup(note)}[/]")
    if full:
        console.print(rich_table(ratio_table(comparison)))
    faults = latest(fault_runs(comparison))
    if faults:
        console.print(rich_table(resilience_table(faults)))
    for table in claim_tables(comparison):
        console.print(rich_table(table))
    if comparison.warnings:
        console.print("[yellow]warnings:[/]")
        for warning in condense_warnings(comparison.warnings):
            console.print(f"  [yellow]-[/] {escape_markup(warning)}")
    if runset.excluded:
        console.print("[yellow]excluded runs:[/]")
        for item in runset.excluded[:MAX_EXCLUDED_LISTED]:
            console.print(
                f"  - {escape_markup(item.run_id)} ({escape_markup(item.label)}, {item.regime} {item.point}): "
                f"{escape_markup(item.reason)}"
            )
        if len(runset.excluded) > MAX_EXCLUDED_LISTED:
            console.print(
                f"  ... and {len(runset.excluded) - MAX_EXCLUDED_LISTED} more (see --csv or --html)"
            )


CSV_COLUMNS = [
    "regime",
    "point",
    "metric",
    "unit",
    "label",
    "n",
    "mean",
    "mean_ci_low",
    "mean_ci_high",
    "median",
    "median_ci_low",
    "median_ci_high",
    "median_ci_method",
    "std",
    "baseline",
    "ratio_to_baseline",
    "ratio_ci_low",
    "ratio_ci_high",
    "delta_pct",
    "test",
    "p_value",
    "significant",
    "verdict",
    "invalid_runs_included",
]
PAIR_COLUMNS = [
    "regime",
    "point",
    "metric",
    "a",
    "b",
    "n_a",
    "n_b",
    "mean_a",
    "mean_b",
    "ratio",
    "ratio_ci_low",
    "ratio_ci_high",
    "delta_pct",
    "test",
    "p_value",
    "significant",
    "omnibus",
    "omnibus_p",
    "note",
]


def pair_records(comparison: Comparison) -> Iterator[dict[str, Any]]:
    """Every pairwise comparison of every set and metric, in PAIR_COLUMNS."""
    for cset in comparison.sets:
        for result in cset.results:
            for pair in result.pairs:
                yield {
                    **{column: getattr(pair, column, None) for column in PAIR_COLUMNS},
                    "regime": cset.regime,
                    "point": cset.point,
                    "metric": result.metric,
                    "ratio_ci_low": pair.ratio_ci.low if pair.ratio_ci else None,
                    "ratio_ci_high": pair.ratio_ci.high if pair.ratio_ci else None,
                    "omnibus": result.omnibus.test if result.omnibus else None,
                    "omnibus_p": result.omnibus.p_value if result.omnibus else None,
                }


def write_csv(comparison: Comparison, path: str | Path) -> list[Path]:
    """One row per (regime, point, metric, group) with its statistics and its comparison with the baseline;
    beside it, `<name>.pairs.csv` with every pairwise comparison. Returns both paths."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    records = (record for table in verdict_tables(comparison) for record in table.records)
    write_records_csv(target, CSV_COLUMNS, records)
    pairs_path = target.with_name(target.stem + ".pairs.csv")
    write_records_csv(pairs_path, PAIR_COLUMNS, pair_records(comparison))
    return [target, pairs_path]


def render_markdown(comparison: Comparison) -> str:
    runset = comparison.runset
    parts = ["# bidbench comparison", ""]
    if runset.invalid_included:
        parts += [
            f"> **WARNING: INCLUDES {len(runset.invalid_included)} INVALID OR FAILED RUN(S)** "
            "(--include-invalid). Values marked `!` rest partly on runs that failed validity (docs/design.md §7).",
            "",
        ]
    if runset.excluded:
        parts += [f"> Excluded {len(runset.excluded)} failed or invalid run(s): {runset.reason_text()}.", ""]
    parts += [
        f"{len(comparison.runs)} runs from `{' '.join(runset.sources)}`; alpha = {comparison.alpha:g}; "
        f"{comparison.confidence:.0%} confidence intervals. A delta is printed only where significant; `~` otherwise.",
        "",
    ]
    glance = first_screen(comparison)
    if glance is not None:
        parts += [f"## At a glance: {glance.title}", ""] + [f"- {t}" for t in glance.sentences] + [""]
        parts += [markdown_table(glance.table)]
    parts += [
        "## Verdicts",
        "",
        f"Each cell: mean ± half its {comparison.confidence:.0%} confidence interval (as % of the mean), with n. "
        "The last columns compare with the first group: the change in per cent where significant, `~` where not, "
        "always with p and n.",
        "",
    ]
    parts += [markdown_table(t) for t in verdict_tables(comparison)]
    parts += [
        "## Statistics",
        "",
        markdown_table(anova_table(comparison)),
        markdown_table(ratio_table(comparison)),
    ]
    steps = step_table(comparison)
    if not steps.is_empty:
        parts += ["## Ladder steps", "", markdown_table(steps)]
    parts += ["## The source texts' tables", ""]
    parts += [markdown_table(t) for t in source_tables(comparison)]
    parts += ["## Manifests", ""]
    parts += [markdown_table(t) for t in manifest_tables(comparison.runs)]
    parts += ["## Runs excluded", "", markdown_table(excluded_table(comparison))]
    if comparison.warnings:
        parts += ["## Warnings", ""] + [f"- {w}" for w in condense_warnings(comparison.warnings)] + [""]
    return "\n".join(parts)


def write_markdown(comparison: Comparison, path: str | Path) -> Path:
    return write_text(path, render_markdown(comparison))


def comparison_tables(comparison: Comparison) -> list[Table]:
    """Every table of the comparison, in the Markdown's order (with the per-group details and the faults)."""
    glance = first_screen(comparison)
    faults = latest(fault_runs(comparison))
    return [
        *([glance.table] if glance is not None else []),
        *verdict_tables(comparison),
        details_table(comparison),
        anova_table(comparison),
        ratio_table(comparison),
        step_table(comparison),
        *source_tables(comparison),
        *([resilience_table(faults)] if faults else []),
        *claim_tables(comparison),
        *manifest_tables(comparison.runs),
        runs_table(comparison),
        excluded_table(comparison),
    ]


def render_json(comparison: Comparison) -> dict[str, Any]:
    """For scripts and dashboards (as hyperfine's --export-json): every table with each cell's text, value,
    interval bounds and unit, and the runs behind them."""
    runset = comparison.runset
    return {
        "bidbench": __version__,
        "sources": list(runset.sources),
        "alpha": comparison.alpha,
        "confidence": comparison.confidence,
        "runs_used": [run.run_id for run in comparison.runs],
        "runs_excluded": [{"run_id": e.run_id, "reason": e.reason} for e in runset.excluded],
        "warnings": condense_warnings(comparison.warnings),
        "tables": [json_table(table) for table in comparison_tables(comparison)],
    }


def _json_number(value: Any) -> Any:
    """numpy scalars that reach a cell are written as the plain numbers they hold."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def write_json(comparison: Comparison, path: str | Path) -> Path:
    text = json.dumps(render_json(comparison), indent=2, ensure_ascii=False, default=_json_number)
    return write_text(path, text + "\n")
