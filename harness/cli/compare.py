"""`./bidbench compare`, also run alone as `python compare.py`."""

from __future__ import annotations

import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.console import Console

from harness.analysis.load import AnalysisError, is_run_folder
from harness.analysis.metrics import ALL_METRICS, DEFAULT_METRICS
from harness.model.side_by_side import RECORD as SIDE_BY_SIDE_RECORD

# One line per paragraph: rich keeps a help text's line breaks and wraps each line to the terminal.
DESCRIPTION = "\n\n".join(
    [
        "Compare bidbench runs with statistics you can trust.",
        "Give it result folders (results/<run>), a folder of them (results/) or the run index (results/index.jsonl). Runs are grouped by implementation, variant, regime and point; repetitions of the same configuration are the samples. For every metric and group it prints the mean and median with 95 % confidence intervals, and compares the groups:",
        """  2 groups     Welch's t-test (or Mann-Whitney U with --test mannwhitney)
  3+ groups    one-way ANOVA, then Tukey HSD; Welch's ANOVA and Games-Howell
               when Levene's test finds unequal variances
  ratios       ratio of means with a seeded bootstrap 95 % interval""",
        'The verdict table reads like Go\'s benchstat: a change in per cent is printed only where it is significant at --alpha, and "~" (no significant difference) otherwise, always with the p-value and the number of runs. With fewer than 3 runs a group gets no test; with fewer than 5 you get a warning.',
        'Runs that failed or broke a validity rule (docs/design.md §7: the load generator was the bottleneck, it sent requests late, ...) are excluded, and the output says how many and why. --include-invalid uses them anyway and marks them "!" everywhere.',
    ]
)

EPILOG = (
    """\
examples:
  python compare.py results/                        every run in results/
  python compare.py results/2026*-java-* results/2026*-node-*
  python compare.py --index results/index.jsonl --html report.html
  python compare.py --metric throughput,p99 --alpha 0.01 --markdown cmp.md
  python compare.py results/ --csv cmp.csv          also writes cmp.pairs.csv
  python compare.py results/ --json cmp.json        every table for scripts

metrics (--metric, repeatable or comma-separated):
"""
    + "\n".join(
        textwrap.fill(metric.explanation, 78, initial_indent=f"  {key:<22} ", subsequent_indent=" " * 25)
        for key, metric in ALL_METRICS.items()
    )
    + f"""

default metrics: {", ".join(DEFAULT_METRICS)}
exit status: 0 done, 2 bad input (nothing to compare, unknown metric, bad folder).
"""
)


def _show_help(ctx: typer.Context, value: bool) -> None:
    """`--help-compare`, the old spelling of --help."""
    if value:
        typer.echo(ctx.get_help(), nl=False)
        raise typer.Exit()


def compare(
    ctx: typer.Context,
    results: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="RESULTS",
            show_default=False,
            help="result folders, folders holding them, or index.jsonl files (default: results/)",
        ),
    ] = None,
    index: Annotated[
        str | None, typer.Option(metavar="FILE", help="read the runs listed in this index.jsonl")
    ] = None,
    include_invalid: Annotated[
        bool,
        typer.Option(
            "--include-invalid",
            help="also use failed or invalid runs that have metrics (marked '!', with a banner)",
        ),
    ] = False,
    metric: Annotated[
        list[str] | None, typer.Option(metavar="NAME", help="compare only these metrics (see the list below)")
    ] = None,
    alpha: Annotated[
        float, typer.Option(help="significance level; intervals are (1 - alpha) confidence")
    ] = 0.05,
    test: Annotated[Literal["welch", "mannwhitney"], typer.Option(help="two-group test")] = "welch",
    baseline: Annotated[
        str | None,
        typer.Option(
            metavar="LABEL",
            help="the group others are compared with, e.g. java or java/temurin (default: first by name)",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="seed of every bootstrap")] = 0,
    resamples: Annotated[int, typer.Option(help="bootstrap resamples")] = 9999,
    csv: Annotated[
        str | None,
        typer.Option(metavar="FILE", help="write per-group statistics to FILE (and FILE.pairs.csv)"),
    ] = None,
    markdown: Annotated[str | None, typer.Option(metavar="FILE", help="write the tables as Markdown")] = None,
    html: Annotated[
        str | None, typer.Option(metavar="FILE", help="write the self-contained HTML report with plots")
    ] = None,
    json: Annotated[
        str | None,
        typer.Option(
            metavar="FILE",
            help="write every table as JSON for scripts and dashboards: each cell's text, value, CI bounds and "
            "unit (numbers as numbers), and the run ids used",
        ),
    ] = None,
    full: Annotated[bool, typer.Option("--full", help="also print the ANOVA and ratio tables")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="print nothing but the paths written")] = False,
    _help_compare: Annotated[
        bool, typer.Option("--help-compare", hidden=True, is_eager=True, callback=_show_help)
    ] = False,
) -> None:
    from harness.analysis.comparison import compare
    from harness.analysis.writers import render_terminal, write_csv, write_json, write_markdown

    results = results or []
    console = ctx.obj or Console(width=None if sys.stdout.isatty() else 160)
    started = time.monotonic()
    other_runs = _has_other_runs(results)
    files = {"json_out": json, "html": html, "markdown_out": markdown, "csv_out": csv}
    try:
        if _side_by_side(results, files, quiet, console, write=not other_runs) and not other_runs:
            return
        comparison = compare(
            results,
            index=index,
            include_invalid=include_invalid,
            metrics=metric,
            alpha=alpha,
            test=test,
            baseline=baseline,
            seed=seed,
            n_resamples=resamples,
        )
    except (AnalysisError, ValueError) as exc:
        Console(stderr=True).print(f"[bold red]error:[/] {exc}", soft_wrap=True)
        raise typer.Exit(2) from None
    if not quiet:
        render_terminal(comparison, console, full=full)
    written = write_csv(comparison, csv) if csv else []
    if markdown:
        written.append(write_markdown(comparison, markdown))
    if html:
        from harness.analysis.report import write_html

        written.append(write_html(comparison, html))
    if json:
        written.append(write_json(comparison, json))
    for path in written:
        console.print(f"wrote {path}", markup=False, soft_wrap=True)
    if not quiet:
        console.print(f"[dim]analysed {len(comparison.runs)} runs in {time.monotonic() - started:.1f} s[/]")


def _side_by_side(
    results: Sequence[str], files: dict[str, str | None], quiet: bool, console: Console, write: bool
) -> bool:
    """Side-by-side fresh starts among the paths are compared as such, one comparison per run of them.
    With nothing else to compare, the files asked for are theirs (one comparison only: two would write
    the same file); beside other runs, the files stay the other runs' and `side-by-side --from` writes these."""
    from harness.analysis.side_by_side import by_comparison, load_records
    from harness.analysis.side_by_side_report import print_summary, write_outputs
    from harness.model.side_by_side_math import summarize

    grouped = by_comparison(load_records([Path(p) for p in results if Path(p).is_dir()]))
    asked = {key: Path(value) for key, value in files.items() if value}
    if write and asked and len(grouped) > 1:
        raise ValueError(
            f"these folders hold {len(grouped)} side-by-side comparisons ({', '.join(grouped)}); give the "
            "folders of one to write files"
        )
    for name, records in grouped.items():
        console.rule(f"side by side: {name}")
        summary = summarize(records)
        if not quiet:
            print_summary(summary)
        if write:
            for path in write_outputs(summary, **asked):
                console.print(f"wrote {path}", markup=False, soft_wrap=True)
        elif asked:
            console.print(
                "The files asked for hold the other runs; this comparison's: ./bidbench side-by-side "
                + " ".join(f"--from {r['folder']}" for r in records)
                + " --json FILE --html FILE",
                markup=False,
                soft_wrap=True,
            )
    return bool(grouped)


def _has_other_runs(results: Sequence[str]) -> bool:
    for raw in results:
        path = Path(raw)
        if path.is_file() or not path.exists():
            # compare() reads it, or says why it cannot
            return True
        candidates = [path] if is_run_folder(path) else [p for p in path.iterdir() if is_run_folder(p)]
        if any(not (p / SIDE_BY_SIDE_RECORD).exists() for p in candidates):
            return True
    return False


def register(app: typer.Typer) -> None:
    app.command(
        help=DESCRIPTION,
        epilog=EPILOG,
        short_help="Statistics over result folders (same as `python compare.py`): pass run folders, results/ or "
        "results/index.jsonl, and --html/--csv/--markdown/--json FILE. `./bidbench compare --help` lists its options.",
    )(compare)


def main(argv: Sequence[str] | None = None, console: Console | None = None) -> int:
    """`python compare.py`: the command alone; its exit status (0 done, 2 bad input) is returned."""
    app = typer.Typer(add_completion=False, rich_markup_mode="rich", pretty_exceptions_enable=False)
    register(app)
    try:
        app(None if argv is None else list(argv), prog_name="compare.py", obj=console)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0
