"""`./bidbench ladder`: load ladders per fresh start (docs/method.md, "The ladder")."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from harness.console import UserError, console

LADDER_HELP = """Run load ladders: each fresh start of an app runs K fixed-rate steps of equal length in one driver
session, from well below to past where it breaks the SLO, and stops after two overloaded steps. Each
ladder yields the app's CPU cost per request (the slope of its CPU time on completed requests, with a
95 % interval), PostgreSQL's cost per request, the SLO capacity bracketed by a passing and a failing
step (or "at least" when no step failed), the saturation throughput and the memory per instance.
One ladder is one repetition; apps are interleaved. A short calibration ladder per app sizes its steps
first, unless --rates gives them.

Example: ./bidbench ladder --impl java,node --repetitions 5
Runtime floor (no database work): ./bidbench ladder --endpoint health"""


def register(app: typer.Typer) -> None:
    @app.command(help=LADDER_HELP)
    def ladder(
        impl: Annotated[
            str, typer.Option(help="Comma-separated implementations: java,node,php.")
        ] = "java,node,php",
        repetitions: Annotated[int, typer.Option("--repetitions", "-r", min=1, help="Ladders per app.")] = 3,
        cpus: Annotated[
            float | None, typer.Option(help="CPU limit per instance (default: the sizing rule). 0: none.")
        ] = None,
        instances: Annotated[str, typer.Option(help="Instance counts, e.g. 1,2 (a ladder set each).")] = "1",
        mix: Annotated[str, typer.Option(help="Request mix: browse, bid, mixed.")] = "browse",
        endpoint: Annotated[
            str, typer.Option(help="crud: the mix; health: GET /health only, each runtime's HTTP floor.")
        ] = "crud",
        steps: Annotated[int, typer.Option(min=3, help="Steps per ladder.")] = 8,
        step: Annotated[str, typer.Option(help="Length of each step.")] = "4s",
        rates: Annotated[
            str | None, typer.Option(help="The steps' rates, e.g. 200,300,450 (skips the calibration).")
        ] = None,
        slo_p99: Annotated[float, typer.Option(help="SLO p99 bound (ms).")] = 50.0,
        slo_mean: Annotated[float, typer.Option(help="SLO mean bound (ms).")] = 8.0,
        floor: Annotated[
            bool, typer.Option(help="Then the noise floor: the driver against static nginx at the top rates.")
        ] = False,
    ) -> None:
        from dataclasses import replace

        from harness.cli.main import _parse_duration
        from harness.cli.regimes import _base_plan, _impls, _sized_cpus
        from harness.regimes.ladder import LadderPlan, LadderSettings, run_ladders

        if endpoint not in ("crud", "health"):
            raise UserError(f"--endpoint takes crud or health; got {endpoint!r}")
        impls = _impls(impl)
        counts = tuple(_positive_ints(instances, "--instances"))
        given = tuple(_positive_floats(rates, "--rates")) if rates else ()
        settings = replace(LadderSettings(), steps=len(given) or steps, step_s=_parse_duration(step))
        chosen_mix = "bare" if endpoint == "health" else mix
        # The runtime floor is a variant of its own, so comparisons keep it apart from the CRUD ladders.
        variant = "health" if endpoint == "health" else "default"
        base = _base_plan(
            chosen_mix, 0.0, settings.warmup_s, _sized_cpus(cpus), {}, variant, 1, 42, slo_p99, slo_mean
        )
        plan = LadderPlan(
            impls, base, repetitions, counts, settings, {i: given for i in impls} if given else {}
        )
        console.print(
            f"ladders: {', '.join(impls)} x{'/'.join(map(str, counts))}, {repetitions} each, "
            f"{settings.steps} steps of {settings.step_s:g} s, {chosen_mix} mix"
        )
        outcomes = run_ladders(plan, on_outcome=_print_outcome)
        if floor:
            from harness.regimes.floor import floor_after_ladders

            floor_after_ladders(plan, outcomes)
        print_ladder_table(
            f"ladders ({chosen_mix} mix, {_sized_cpus(cpus):g} CPU per instance)",
            {f"{i} x{n}": runs for (i, n), runs in outcomes.items()},
        )


def _positive_ints(text: str, option: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UserError(f"{option} takes whole numbers like 1,2; got {text!r}") from None
    if not values or min(values) < 1:
        raise UserError(f"{option} takes whole numbers of at least 1; got {text!r}")
    return values


def _positive_floats(text: str, option: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UserError(f"{option} takes rates like 200,300,450; got {text!r}") from None
    if len(values) < 3 or min(values) <= 0 or values != sorted(values):
        raise UserError(f"{option} takes at least 3 increasing rates above 0; got {text!r}")
    return values


def _print_outcome(impl: str, instances: int, repetition: int, outcome: object) -> None:
    from harness.engine.session import RunOutcome

    assert isinstance(outcome, RunOutcome)
    what = "calibration" if repetition < 0 else f"ladder {repetition + 1}"
    metrics = outcome.metrics or {}
    ladder = metrics.get("ladder") or {}
    cost = metrics.get("cpu_us_per_request")
    cap = (ladder.get("capacity") or {}) if ladder else {}
    parts = [f"{impl} x{instances} {what}: {outcome.status}"]
    if outcome.verdict is not None and not outcome.verdict.valid:
        parts.append("INVALID (" + "; ".join(outcome.verdict.reasons) + ")")
    if ladder:
        parts.append(f"{ladder.get('completed_steps')} steps ({ladder.get('stopped')})")
    if cost is not None:
        parts.append(f"{cost:,.0f} us/request")
    if cap:
        parts.append(("capacity " if cap.get("bracketed") else "capacity >= ") + f"{cap['rps']:,.0f} req/s")
    if outcome.reason:
        parts.append(outcome.reason)
    console.print("  " + ", ".join(parts) + f"  -> {outcome.folder.path.name}")


def print_ladder_table(title: str, outcomes: dict[str, list[object]]) -> None:
    from harness.analysis.ladder import ladder_row

    table = Table(title=title + ": mean [95 % CI], CV over fresh starts")
    for column in (
        "app",
        "ladders valid",
        "CPU us/request",
        "PostgreSQL us/request",
        "SLO capacity req/s",
        "saturation req/s",
        "memory MiB",
        "req/s per MiB",
    ):
        table.add_column(column, justify="left" if column == "app" else "right")
    for label, runs in outcomes.items():
        row = ladder_row(
            label,
            [getattr(r, "metrics", None) for r in runs],
            [bool(getattr(r, "verdict", None) and r.verdict.valid) for r in runs],  # type: ignore[attr-defined]
        )
        table.add_row(
            label,
            f"{row.valid}/{row.ladders}",
            row.cost_us.text(),
            row.db_cost_us.text(),
            row.capacity_text,
            row.saturation.text(),
            row.memory_mb.text(1),
            row.rps_per_mb.text(1),
        )
    console.print(table)
    console.print(
        "CPU us/request is the slope of the instances' CPU time on completed requests below saturation; "
        "the thesis's normalized throughput (req/s per CPU %) is 10,000 / it."
    )
