"""`./bidbench aa`: the same app against itself (harness/regimes/aa.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated

import typer
from rich.table import Table

from harness import paths
from harness.analysis.aa import DIFFERS, AaRow, aa_verdicts
from harness.analysis.ladder_tables import print_ladder_outcome, print_ladder_table
from harness.analysis.load import read_run
from harness.cli import options
from harness.cli.side_by_side import run_and_print
from harness.console import UserError, console
from harness.model.side_by_side import PRESETS
from harness.regimes.aa import AaPlan, run_aa

# One line per paragraph: rich keeps a help string's line breaks, and the terminal wraps it again.
AA_HELP = "\n\n".join(
    [
        "A/A: the same app against itself, to check that the comparison is fair and its statistics honest.",
        "By default side by side: two groups of the app (A and B) in every fresh start, each started first in turn, pre-warmed together and measured in the same seconds (`./bidbench side-by-side --aa`). Their paired ratio B/A must come out 1 within its 95 % interval; an interval that excludes 1, or one wider than [0.97, 1.03], says the set-up favours a group or the machine is too noisy for the comparisons.",
        "With --apart: the older check, two interleaved groups of fresh-start ladders (A, B, A, B, ...) at the same rates, tested metric by metric with Welch's test.",
        "Example: ./bidbench aa --impl node --repetitions 5   (5 fresh starts side by side, about 25 minutes)",
    ]
)


def register(app: typer.Typer) -> None:
    @app.command(help=AA_HELP)
    def aa(
        impl: Annotated[str, typer.Option(help="One implementation: java, node or php.")],
        repetitions: Annotated[
            int, options.repetitions_option("Fresh starts (side by side), or ladders per group with --apart.")
        ] = 5,
        cpus: options.CPUS = None,
        mix: options.LADDER_MIX = "browse",
        steps: options.STEPS = options.LADDER.steps,
        step: options.STEP = options.LADDER_STEP,
        cost_passes: options.COST_PASSES = options.LADDER.cost_passes,
        rates: options.RATES = None,
        slo_p99: options.SLO_P99 = 50.0,
        slo_mean: options.SLO_MEAN = 8.0,
        alpha: Annotated[float, typer.Option(help="Significance level of each test.")] = 0.05,
        include_invalid: Annotated[
            bool,
            typer.Option(help="Test every completed ladder, valid or not (flagged in the table's title)."),
        ] = False,
        apart: Annotated[
            bool,
            typer.Option("--apart", help="Interleaved ladders instead of side by side (the older check)."),
        ] = False,
        preset: Annotated[
            str,
            typer.Option(help=f"Side by side: the experiment's settings ({', '.join(PRESETS)})."),
        ] = "standard",
    ) -> None:
        chosen = options.parse_impls(impl)
        if len(chosen) != 1:
            raise UserError(f"--impl takes one implementation for an A/A run; got {impl!r}")
        if not apart:
            run_and_print(chosen, True, preset, repetitions, cpus, mix, slo_p99, slo_mean)
            return
        if not 0 < alpha < 0.5:
            raise UserError(f"--alpha must be between 0 and 0.5; got {alpha:g}")
        given = tuple(options.parse_rates(rates, "--rates")) if rates else ()
        settings = options.ladder_settings(given, steps, step, cost_passes)
        base = options.base_run_plan(
            mix, 0.0, settings.warmup_s, options.instance_cpus(cpus), "crud", slo_p99, slo_mean
        )
        plan = AaPlan(chosen[0], base, repetitions, settings, given)
        console.print(
            f"A/A: {plan.impl} against itself, {repetitions} + {repetitions} fresh starts interleaved, "
            f"{settings.steps} steps of {settings.step_s:g} s (its lowest steps "
            f"{settings.cost_passes} times in all), {mix} mix"
        )
        used, outcomes = run_aa(
            plan, on_outcome=lambda group, rep, outcome: print_ladder_outcome(f"A/A {group}", 1, rep, outcome)
        )
        # The stored folders, read back as the analysis reads them (so the table is the folders' table).
        group_a, group_b = ([read_run(o.folder.path) for o in outcomes[group]] for group in ("A", "B"))
        rows = aa_verdicts(group_a, group_b, alpha, include_invalid=include_invalid)
        print_aa_table(plan.impl, rows, group_a, group_b, alpha, include_invalid)
        both = {"A": outcomes["A"], "B": outcomes["B"], "A and B": [*outcomes["A"], *outcomes["B"]]}
        print_ladder_table(f"A/A {plan.impl}, the spread over fresh starts", both)
        record = {
            "impl": plan.impl,
            "created_utc": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "rates": list(used),
            "alpha": alpha,
            "include_invalid": include_invalid,
            "groups": {g: [str(o.folder.path) for o in runs] for g, runs in outcomes.items()},
            "rows": [r.to_json() for r in rows],
        }
        target = paths.RESULTS / "aa" / f"{record['created_utc'].replace(':', '')}-{plan.impl}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(record, indent=2))
        console.print(f"A/A table stored in {target}")


def _fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def print_aa_table(
    impl: str,
    rows: Sequence[AaRow],
    group_a: Sequence[object],
    group_b: Sequence[object],
    alpha: float,
    include_invalid: bool = False,
) -> None:
    valid_a, valid_b = (
        sum(1 for r in group if getattr(r, "is_valid", False)) for group in (group_a, group_b)
    )
    table = Table(
        title=f"A/A {impl}: group B against group A (valid ladders A {valid_a} of {len(group_a)}, "
        f"B {valid_b} of {len(group_b)})" + (": INVALID LADDERS INCLUDED" if include_invalid else "")
    )
    for column in ("metric", "A mean", "B mean", "B - A [95 % CI]", "test", "p", "Holm p", "verdict"):
        table.add_column(column, justify="left" if column in ("metric", "verdict", "test") else "right")
    for row in rows:
        ci = f" [{_fmt(row.difference_ci[0])}, {_fmt(row.difference_ci[1])}]" if row.difference_ci else ""
        verdict = f"[bold red]{row.verdict}[/]" if row.verdict == DIFFERS else row.verdict
        table.add_row(
            f"{row.title} ({row.unit})",
            f"{_fmt(row.mean_a)} (n={row.n_a})",
            f"{_fmt(row.mean_b)} (n={row.n_b})",
            _fmt(row.difference) + ci,
            row.test,
            _fmt(row.p_value, 3),
            _fmt(row.holm_p, 3),
            verdict,
        )
    console.print(table)
    tested = sum(1 for row in rows if row.p_value is not None)
    console.print(
        f"Welch's t-test per metric at alpha {alpha:g}. The groups differ only by chance, so each 'differs' "
        f"is a false positive; over {tested} tested metrics about {1 - (1 - alpha) ** tested:.0%} of A/A "
        "runs show one. The Holm-adjusted p corrects for testing them all."
    )
