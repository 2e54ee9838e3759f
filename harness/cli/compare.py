"""The command line behind `python compare.py` (and `./bidbench compare`)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from harness.analysis.metrics import ALL_METRICS, DEFAULT_METRICS

DESCRIPTION = """\
Compare bidbench runs with statistics you can trust.

Give it result folders (results/<run>), a folder of them (results/) or the run index
(results/index.jsonl). Runs are grouped by implementation, variant, regime and point;
repetitions of the same configuration are the samples. For every metric and group it
prints the mean and median with 95 % confidence intervals, and compares the groups:

  2 groups      Welch's t-test (or Mann-Whitney U with --test mannwhitney)
  3+ groups     one-way ANOVA, then Tukey HSD; Welch's ANOVA and Games-Howell when
                Levene's test finds unequal variances
  ratios        ratio of means with a seeded bootstrap 95 % interval

The verdict table reads like Go's benchstat: a change in per cent is printed only where
it is significant at --alpha, and "~" (no significant difference) otherwise, always with
the p-value and the number of runs. With fewer than 3 runs a group gets no test; with
fewer than 5 you get a warning.

Runs that failed or broke a validity rule (docs/design.md §7: the load generator was the
bottleneck, it sent requests late, ...) are excluded, and the output says how many and
why. --include-invalid uses them anyway and marks them "!" everywhere.
"""

EPILOG = (
    """\
examples:
  python compare.py results/                          every run in results/
  python compare.py results/2026*-java-* results/2026*-node-*
  python compare.py --index results/index.jsonl --html report.html
  python compare.py results/ --metric throughput,p99 --alpha 0.01 --markdown cmp.md
  python compare.py results/ --csv cmp.csv            also writes cmp.pairs.csv
  python compare.py results/ --json cmp.json          every table for scripts and dashboards

metrics (--metric, repeatable or comma-separated):
"""
    + "\n".join(f"  {key:<22} {metric.explanation}" for key, metric in ALL_METRICS.items())
    + f"""

default metrics: {", ".join(DEFAULT_METRICS)}
exit status: 0 done, 2 bad input (nothing to compare, unknown metric, bad folder).
"""
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="compare.py",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="RESULTS",
        help="result folders, folders holding them, or index.jsonl files (default: results/)",
    )
    parser.add_argument("--index", metavar="FILE", help="read the runs listed in this index.jsonl")
    parser.add_argument(
        "--include-invalid",
        action="store_true",
        help="also use failed or invalid runs that have metrics (marked '!', with a banner)",
    )
    parser.add_argument(
        "--metric", action="append", metavar="NAME", help="compare only these metrics (see the list below)"
    )
    parser.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="significance level; intervals are (1 - alpha) confidence (default 0.05)",
    )
    parser.add_argument(
        "--test", choices=("welch", "mannwhitney"), default="welch", help="two-group test (default welch)"
    )
    parser.add_argument(
        "--baseline",
        metavar="LABEL",
        help="the group others are compared with, e.g. java or java/temurin (default: first by name)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of every bootstrap (default 0)")
    parser.add_argument("--resamples", type=int, default=9999, help="bootstrap resamples (default 9999)")
    parser.add_argument(
        "--csv", metavar="FILE", help="write per-group statistics to FILE (and FILE.pairs.csv)"
    )
    parser.add_argument("--markdown", metavar="FILE", help="write the tables as Markdown")
    parser.add_argument("--html", metavar="FILE", help="write the self-contained HTML report with plots")
    parser.add_argument(
        "--json",
        metavar="FILE",
        help="write every table as JSON for scripts and dashboards: each cell's text, value, CI bounds and "
        "unit (numbers as numbers), and the run ids used",
    )
    parser.add_argument("--full", action="store_true", help="also print the ANOVA and ratio tables")
    parser.add_argument("--quiet", action="store_true", help="print nothing but the paths written")
    return parser


def main(argv: Sequence[str] | None = None, console: Console | None = None) -> int:
    from harness.analysis.comparison import compare
    from harness.analysis.load import AnalysisError

    args = build_parser().parse_args(argv)
    console = console or Console(width=None if sys.stdout.isatty() else 160)
    err = Console(stderr=True)
    started = time.monotonic()
    other_runs = _has_other_runs(args.paths)
    try:
        side_by_side = _side_by_side(args, console, write=not other_runs)
    except ValueError as exc:
        err.print(f"[bold red]error:[/] {exc}", soft_wrap=True)
        return 2
    if side_by_side and not other_runs:
        return 0
    try:
        comparison = compare(
            args.paths,
            index=args.index,
            include_invalid=args.include_invalid,
            metrics=args.metric,
            alpha=args.alpha,
            test=args.test,
            baseline=args.baseline,
            seed=args.seed,
            n_resamples=args.resamples,
        )
    except (AnalysisError, ValueError) as exc:
        err.print(f"[bold red]error:[/] {exc}", soft_wrap=True)
        return 2
    if not args.quiet:
        from harness.analysis.writers import render_terminal

        render_terminal(comparison, console, full=args.full)
    written = []
    if args.csv:
        from harness.analysis.writers import write_csv

        written += write_csv(comparison, args.csv)
    if args.markdown:
        from harness.analysis.writers import write_markdown

        written.append(write_markdown(comparison, args.markdown))
    if args.html:
        from harness.analysis.report import write_html

        written.append(write_html(comparison, args.html))
    if args.json:
        from harness.analysis.writers import write_json

        written.append(write_json(comparison, args.json))
    for path in written:
        console.print(f"wrote {path}", markup=False, soft_wrap=True)
    if not args.quiet:
        console.print(f"[dim]analysed {len(comparison.runs)} runs in {time.monotonic() - started:.1f} s[/]")
    return 0


def _side_by_side(args: argparse.Namespace, console: Console, write: bool) -> bool:
    """Side-by-side fresh starts among the paths are compared as such, one comparison per run of them.
    With nothing else to compare, the files asked for are theirs (one comparison only: two would write
    the same file); beside other runs, the files stay the other runs' and `side-by-side --from` writes these."""
    from harness.analysis.side_by_side import by_comparison, load_records
    from harness.analysis.side_by_side_report import print_summary, write_outputs
    from harness.model.side_by_side_math import summarize

    folders = [Path(p) for p in args.paths if Path(p).is_dir()]
    grouped = by_comparison(load_records(folders))
    files = {
        "json_out": args.json,
        "html": args.html,
        "markdown_out": args.markdown,
        "csv_out": args.csv,
    }
    asked = {key: Path(value) for key, value in files.items() if value}
    if write and asked and len(grouped) > 1:
        raise ValueError(
            f"these folders hold {len(grouped)} side-by-side comparisons ({', '.join(grouped)}); give the "
            "folders of one to write files"
        )
    for name, records in grouped.items():
        console.rule(f"side by side: {name}")
        summary = summarize(records)
        if not args.quiet:
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


def _has_other_runs(paths: Sequence[str]) -> bool:
    from harness.analysis.load import SIDE_BY_SIDE_RECORD, is_run_folder

    for raw in paths:
        path = Path(raw)
        if path.is_file() or not path.exists():
            # compare() reads it, or says why it cannot
            return True
        candidates = [path] if is_run_folder(path) else [p for p in path.iterdir() if is_run_folder(p)]
        if any(not (p / SIDE_BY_SIDE_RECORD).exists() for p in candidates):
            return True
    return False


if __name__ == "__main__":
    sys.exit(main())
