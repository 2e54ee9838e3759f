"""`./bidbench ladder`: load ladders per fresh start (docs/method.md, "The ladder")."""

from __future__ import annotations

from typing import Annotated

import typer

from harness.analysis.ladder_tables import print_ladder_outcome, print_ladder_table
from harness.cli import options
from harness.console import UserError, console
from harness.regimes.floor import floor_after_ladders
from harness.regimes.ladder import LadderPlan, run_ladders

LADDER_HELP = """Run load ladders: each fresh start of an app runs K fixed-rate steps of equal length in one driver
session, from well below to past where it breaks the SLO (finer from half the calibration's break up), and
stops after three overloaded steps. Each
ladder yields the app's CPU cost per request (the slope of its CPU time on completed requests, with a
95 % interval), PostgreSQL's cost per request, the SLO capacity bracketed by a passing and a failing
step (or "at least" when no step failed), the saturation throughput and the memory per instance.
One ladder is one repetition; apps are interleaved. A short calibration ladder per app sizes its steps
first, unless --rates gives them. Before the whole ladder, its steps below the middle run twice more
(--cost-passes 3): more steps below saturation for the cost's fit.

Example: ./bidbench ladder --impl java,node --repetitions 5
Runtime floor (no database work): ./bidbench ladder --endpoint health"""


def register(app: typer.Typer) -> None:
    @app.command(help=LADDER_HELP)
    def ladder(
        impl: options.IMPLS = "java,node,php",
        repetitions: Annotated[int, options.repetitions_option("Ladders per app.")] = 3,
        cpus: options.CPUS = None,
        instances: Annotated[str, typer.Option(help="Instance counts, e.g. 1,2 (a ladder set each).")] = "1",
        mix: options.LADDER_MIX = "browse",
        endpoint: Annotated[
            str, typer.Option(help="crud: the mix; health: GET /health only, each runtime's HTTP floor.")
        ] = "crud",
        steps: options.STEPS = options.LADDER.steps,
        step: options.STEP = options.LADDER_STEP,
        cost_passes: options.COST_PASSES = options.LADDER.cost_passes,
        rates: options.RATES = None,
        slo_p99: options.SLO_P99 = 50.0,
        slo_mean: options.SLO_MEAN = 8.0,
        floor: Annotated[
            bool, typer.Option(help="Then the noise floor: the driver against static nginx at the top rates.")
        ] = False,
    ) -> None:
        if endpoint not in ("crud", "health"):
            raise UserError(f"--endpoint takes crud or health; got {endpoint!r}")
        impls = options.parse_impls(impl)
        counts = tuple(options.parse_positive_ints(instances, "--instances"))
        given = tuple(options.parse_rates(rates, "--rates")) if rates else ()
        settings = options.ladder_settings(given, steps, step, cost_passes)
        chosen_mix = "bare" if endpoint == "health" else mix
        # The runtime floor is a variant of its own, so comparisons keep it apart from the CRUD ladders.
        variant = "health" if endpoint == "health" else "default"
        base = options.base_run_plan(
            chosen_mix, 0.0, settings.warmup_s, options.instance_cpus(cpus), variant, slo_p99, slo_mean
        )
        plan = LadderPlan(
            impls, base, repetitions, counts, settings, {i: given for i in impls} if given else {}
        )
        console.print(
            f"ladders: {', '.join(impls)} x{'/'.join(map(str, counts))}, {repetitions} each, "
            f"{settings.steps} steps of {settings.step_s:g} s (its lowest steps "
            f"{settings.cost_passes} times in all), {chosen_mix} mix"
        )
        outcomes = run_ladders(plan, on_outcome=print_ladder_outcome)
        if floor:
            floor_after_ladders(plan, outcomes)
        print_ladder_table(
            f"ladders ({chosen_mix} mix, {options.cpus_label(base.cpus)} per instance)",
            {f"{i} x{n}": runs for (i, n), runs in outcomes.items()},
        )
