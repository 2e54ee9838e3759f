"""`./bidbench side-by-side`: the compared groups measured in the same seconds (harness/engine/side_by_side.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from harness.cli import options
from harness.console import UserError, console
from harness.model.side_by_side import PRESETS

HELP = """Compare apps (or one app against itself with --aa) side by side: every fresh start starts all
groups together, pre-warms them together, then sends the same rates and the same requests to every
group at once, reading each group's CPU, its share of PostgreSQL's CPU and its memory from the same
seconds of the host. The host's drift moves every group alike and cancels in their ratios. Then each
group's capacity, rung by rung, the groups taking turns (the standard preset searches each twice and
takes the mean). The comparison is the ratio of each group to
the first (the baseline), paired by fresh start, with its 95 % interval on the log scale.

Examples:
  ./bidbench side-by-side                              java, node, php; 5 fresh starts (about 45 minutes)
  ./bidbench side-by-side --impl node --aa -r 5        A/A: node against node; the ratio must come out 1
  ./bidbench side-by-side --preset cost-only           no capacity rungs: costs and memory only
  ./bidbench side-by-side --from results/              recompute the comparison from stored fresh starts"""


def register(app: typer.Typer) -> None:
    @app.command("side-by-side", help=HELP)
    def side_by_side(
        impl: Annotated[
            str, typer.Option(help="Comma-separated apps; the first is the baseline.")
        ] = "java,node,php",
        repetitions: Annotated[int, options.repetitions_option("Fresh starts.")] = 5,
        aa: Annotated[
            bool, typer.Option("--aa", help="Two groups of the one app given: an A/A check.")
        ] = False,
        preset: Annotated[
            str, typer.Option(help=f"The experiment's settings: {', '.join(PRESETS)}.")
        ] = "standard",
        keep_awake: Annotated[
            bool | None,
            typer.Option(
                "--keep-awake/--no-keep-awake",
                help="One lowest-priority spinner per core while measuring, so idle cores never halt "
                '(docs/method.md, "Side by side"). Default: the preset\'s.',
            ),
        ] = None,
        cpus: options.CPUS = None,
        mix: options.LADDER_MIX = "browse",
        slo_p99: options.SLO_P99 = 50.0,
        slo_mean: options.SLO_MEAN = 8.0,
        from_: Annotated[
            list[Path] | None,
            typer.Option(
                "--from",
                help="Recompute from a stored side-by-side folder, or a folder holding several (repeatable).",
            ),
        ] = None,
        json_out: Annotated[
            Path | None, typer.Option("--json", help="Also write the comparison as JSON here.")
        ] = None,
        html: Annotated[
            Path | None, typer.Option(help="Also write the comparison as an HTML page here.")
        ] = None,
    ) -> None:
        from harness.analysis.side_by_side import by_comparison, load_records
        from harness.analysis.side_by_side_report import print_summary
        from harness.model.side_by_side_math import summarize

        if from_:
            records = load_records(from_)
            if not records:
                raise UserError(
                    f"no side-by-side record (side-by-side.json) under {', '.join(map(str, from_))}"
                )
            grouped = by_comparison(records)
            if len(grouped) > 1 and (json_out or html):
                raise UserError(
                    f"these folders hold {len(grouped)} comparisons ({', '.join(grouped)}); give the folders of one "
                    "to write --json or --html"
                )
            for name, found in grouped.items():
                console.rule(f"side by side: {name}")
                print_summary(summarize(found), json_out, html)
            return
        impls = options.parse_impls(impl)
        run_and_print(
            impls, aa, preset, repetitions, cpus, mix, slo_p99, slo_mean, json_out, html, keep_awake
        )


def run_and_print(
    impls: list[str],
    aa: bool,
    preset: str,
    repetitions: int,
    cpus: float | None,
    mix: str,
    slo_p99: float,
    slo_mean: float,
    json_out: Path | None = None,
    html: Path | None = None,
    keep_awake: bool | None = None,
) -> None:
    from harness.analysis.side_by_side_report import print_summary
    from harness.model.side_by_side import preset as named_preset
    from harness.model.side_by_side_math import summarize
    from harness.regimes.side_by_side import groups_for, run

    try:
        spec = named_preset(preset)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if keep_awake is not None:
        spec = replace(spec, keep_cores_awake=keep_awake)
    base = options.base_run_plan(mix, 0.0, 0.0, options.instance_cpus(cpus), "default", slo_p99, slo_mean)
    groups = groups_for(impls, aa, base)
    console.print(
        f"side by side: {', '.join(g.label for g in groups)} at {options.cpus_label(base.cpus)} each, "
        f"{repetitions} fresh starts, preset {preset}"
    )
    records = run(groups, spec, repetitions, name=preset, say=console.print, rule=console.rule)
    print_summary(summarize(records), json_out, html)
