"""`./bidbench side-by-side`: the compared groups measured in the same seconds (harness/engine/side_by_side.py)."""

from __future__ import annotations

import json
import secrets
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from harness.cli.options import (
    LADDER_CPUS,
    LADDER_MIX,
    SLO_MEAN,
    SLO_P99,
    base_run_plan,
    parse_impls,
    sized_cpus,
)
from harness.console import UserError, console

HELP = """Compare apps (or one app against itself with --aa) side by side: every fresh start starts all
groups together, pre-warms them together, then sends the same rates and the same requests to every
group at once, reading each group's CPU, its share of PostgreSQL's CPU and its memory from the same
seconds of the host. The host's drift moves every group alike and cancels in their ratios. Then each
group's capacity, rung by rung, the groups taking turns. The comparison is the ratio of each group to
the first (the baseline), paired by fresh start, with its 95 % interval on the log scale.

Examples:
  ./bidbench side-by-side                              java, node, php; 5 fresh starts (about 20 minutes)
  ./bidbench side-by-side --impl node --aa -r 5        A/A: node against node; the ratio must come out 1
  ./bidbench side-by-side --preset cost-only           no capacity rungs: costs and memory only
  ./bidbench side-by-side --from results/              recompute the comparison from stored fresh starts"""


def _groups(impls: list[str], aa: bool, plan_of: object) -> list[tuple[str, str]]:
    if aa:
        if len(impls) != 1:
            raise UserError(f"--aa compares one app against itself: give one --impl, not {','.join(impls)}")
        return [(f"{impls[0]}-a", impls[0]), (f"{impls[0]}-b", impls[0])]
    if len(impls) < 2:
        raise UserError(
            "a side-by-side comparison needs at least two apps (or --aa for one app against itself)"
        )
    return [(impl, impl) for impl in impls]


def register(app: typer.Typer) -> None:
    @app.command("side-by-side", help=HELP)
    def side_by_side(
        impl: Annotated[
            str, typer.Option(help="Comma-separated apps; the first is the baseline.")
        ] = "java,node,php",
        repetitions: Annotated[int, typer.Option("--repetitions", "-r", min=1, help="Fresh starts.")] = 5,
        aa: Annotated[
            bool, typer.Option("--aa", help="Two groups of the one app given: an A/A check.")
        ] = False,
        preset: Annotated[
            str, typer.Option(help="The experiment's settings: standard, demo, cost-only or quick.")
        ] = "standard",
        cpus: LADDER_CPUS = None,
        mix: LADDER_MIX = "browse",
        slo_p99: SLO_P99 = 50.0,
        slo_mean: SLO_MEAN = 8.0,
        from_: Annotated[
            list[Path] | None,
            typer.Option(
                "--from", help="Recompute from stored side-by-side folders (or a folder holding them)."
            ),
        ] = None,
        json_out: Annotated[
            Path | None, typer.Option("--json", help="Also write the comparison as JSON here.")
        ] = None,
        html: Annotated[
            Path | None, typer.Option("--html", help="Also write the comparison as an HTML page here.")
        ] = None,
    ) -> None:
        from harness.analysis.side_by_side import load_records, summarize
        from harness.model.side_by_side import preset as named_preset

        if from_:
            records = load_records(from_)
            if not records:
                raise UserError(
                    f"no side-by-side record (side-by-side.json) under {', '.join(map(str, from_))}"
                )
            show(summarize(records), json_out, html)
            return
        try:
            spec = named_preset(preset)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        from harness.engine.side_by_side import Group, check_fits, run_fresh_start

        base = base_run_plan(mix, 0.0, 0.0, sized_cpus(cpus), {}, "default", 1, 42, slo_p99, slo_mean)
        groups = [
            Group(label, replace(base, impl=app_impl))
            for label, app_impl in _groups(parse_impls(impl), aa, base)
        ]
        check_fits(groups)
        labels = [g.label for g in groups]
        comparison = f"{'+'.join(labels)}/{preset}/{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"
        console.print(
            f"side by side: {', '.join(labels)} at {sized_cpus(cpus):g} CPU each, {repetitions} fresh starts, "
            f"preset {preset}"
        )
        records = []
        for repetition in range(repetitions):
            console.rule(f"fresh start {repetition + 1} of {repetitions}")
            outcome = run_fresh_start(
                groups,
                spec,
                repetition=repetition,
                seed=secrets.randbits(32),
                comparison=comparison,
                say=console.print,
            )
            state = "valid" if outcome.record.get("valid") else f"[red]{outcome.status}[/]: {outcome.reason}"
            console.print(f"fresh start {repetition + 1}: {state} ({outcome.folder.path})")
            record = dict(outcome.record, folder=str(outcome.folder.path))
            records.append(record)
            if outcome.failed_group and not outcome.record.get("cost"):
                # A group that cannot even start will not start next time either.
                if repetition == 0:
                    raise UserError(f"stopped: {outcome.reason}")
        show(summarize(records), json_out, html)


def show(summary: dict, json_out: Path | None = None, html: Path | None = None) -> None:
    """The comparison in the terminal (and as JSON and HTML): the answers, how sure, then the tables."""
    from harness.analysis.side_by_side import METRICS, ranking, ratio_text, sure, value_text
    from harness.analysis.side_by_side_report import QUESTIONS, host_text, write_html

    labels = summary["groups_compared"]
    table = Table(title=f"side by side: {summary['valid']} valid of {summary['fresh_starts']} fresh starts")
    table.add_column("group")
    for metric in METRICS:
        table.add_column(f"{metric.label} ({metric.unit})")
    for label in labels:
        row = summary["groups"][label]
        cells = []
        for metric in METRICS:
            text = value_text((row.get(metric.key) or {}).get("interval"), 1 if metric.unit == "MB" else 0)
            if metric.key == "capacity_rps" and row.get("capacity_at_least"):
                text += f" (+{len(row['capacity_at_least'])} lower bound(s))"
            cells.append(text)
        table.add_row(label, *cells)
    console.print(table)
    console.print(
        "[dim]Absolute figures depend on the host at the time; the ratios below are what compares.[/]"
    )
    ratios = Table(
        title=f"each group / {summary['baseline']}, paired by fresh start (95 % interval, CV of the ratio)"
    )
    ratios.add_column("group")
    for metric in METRICS:
        ratios.add_column(metric.label)
    for label in labels[1:]:
        ratios.add_row(
            label, *[ratio_text((summary["ratios"][label].get(m.key) or {}).get("interval")) for m in METRICS]
        )
    console.print(ratios)
    for metric in METRICS:
        if metric.key in QUESTIONS:
            console.print(f"- {QUESTIONS[metric.key]}: {ranking(summary, metric)}")
    console.print(f"- How sure: {sure(summary, METRICS[0])[1]}")
    console.print(host_text(summary))
    for bad in summary["invalid"]:
        console.print(f"[yellow]invalid fresh start[/] {bad['folder']}: {bad['reason']}")
    if json_out:
        json_out.write_text(json.dumps(summary, indent=2))
        console.print(f"wrote {json_out}")
    if html:
        console.print(f"HTML report: {write_html(summary, html)}")
