"""`./bidbench demo`: the README's main command, from a fresh clone to a comparison and an HTML report.

set up the tools → seed the embedded database → build the three apps → load ladders of java, node and
php (a calibration each, then 3 ladders each, interleaved; docs/method.md "The ladder") → the scaling
sweep as java ladders with 1 and 2 instances → the ladder table, the comparison and the HTML report. If
this machine cannot give valid runs, the demo says so instead of printing numbers.
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from harness import paths
from harness.apps import IMPLS, driver
from harness.console import UserError, console
from harness.engine.driver import LoadSettings
from harness.engine.session import RunOutcome, RunPlan
from harness.engine.sizing import default_instance_cpus, machine_cores
from harness.engine.validity import Slo
from harness.regimes.floor import floor_after_ladders
from harness.regimes.ladder import LadderPlan, LadderSettings, run_ladders
from harness.tools import toolchain

MIN_CORES = 2


@dataclass(frozen=True)
class DemoPlan:
    cpus: float
    repetitions: int
    ladder: LadderSettings
    scaling_impls: tuple[str, ...]
    scaling_instances: int


# What the demo runs: not the fault proxy or the report's browser check (`./bidbench setup` installs all).
DEMO_TOOLS = ("db", "java", "node", "php", "load")


def sizing() -> DemoPlan:
    """The demo at the machine sizing rule (harness/engine/sizing.py: 0.5 CPU per instance on 2 cores), so the load
    driver and PostgreSQL, sharing the rest, can drive the app past its capacity with valid runs. At 0.25 core the
    quota's stalls (GC, JIT) decided p99 more than the load did, and the capacity could not be reproduced
    by fixed-rate runs."""
    cores = machine_cores()
    if cores < MIN_CORES:
        raise UserError(
            f"this machine has {cores} core; the demo needs at least {MIN_CORES} (one for the app under test, one "
            "for the load driver and PostgreSQL). On one core no run could be valid, so the demo prints no numbers."
        )
    # The driver must be able to push an instance past its capacity with the CPU left over, or every search
    # ends at the load generator's limit; an app needs ~0.2-0.5 ms of CPU per request.
    cpus = default_instance_cpus(cores)
    return DemoPlan(
        cpus=cpus,
        repetitions=3,
        # Up to 12 steps of 1.25 s after a pre-warm of at most 30 s and an 8 s warm-up: 2 coarse ones below
        # half the calibration's break, then 1.17 apart up to twice it; a ladder stops two steps past its
        # break. The cost per request is a slope, and its precision comes from the steps below saturation:
        # 6 steps of 2.5 s left 2-3 of them, and the cost's CV over fresh starts was 19-40 %; ladders that
        # kept 5-9 had 2-5 %. On one grid 1.35 apart (8 steps of 1.5 s, 9.4 min) the capacity hung on
        # whether the step at an app's quota held; the finer steps cost more of them, so they are 1.25 s,
        # and a step near php's capacity still holds about 1,200 requests. With 13 steps 1.15 apart and
        # three overloaded steps to stop (as `ladder` and `aa`) the demo took 10.2 min. node and php
        # settle within the pre-warm's first blocks; a fresh JVM at 0.5 CPU idles its JIT compiler after
        # 30-54 s (sooner at the higher pre-warm rate a finer ladder gives); one still compiling at 30 s is
        # named in its manifest. One pass: two more passes of the lowest steps steady the cost
        # (docs/method.md §6) but add about 10 s a ladder, 2 min a demo.
        # The warm-up is where a JVM settles inside its quota again after the pre-warm without it (about 10 s;
        # `ladder` and `aa` give it 12). With 3 s the demo took 9.9 min, but 2 of its 3 java ladders broke the
        # SLO at 926 req/s, inside that settling, and read capacities of 837-839 req/s against 2,292 for the
        # third; with 8 s it took 11.0 min and java's ladders held 1,690-2,273. JVMs settled in 16-30 s of
        # pre-warm, so a cap of 30 s; a calibration only needs where the load breaks, many steps after its
        # 2 s warm-up.
        ladder=LadderSettings(
            steps=12,
            steps_below_middle=2,
            stop_after=2,
            step_s=1.25,
            warmup_s=8.0,
            prewarm_max_s=30.0,
            calibration_step_s=1.5,
            calibration_warmup_s=2.0,
            cost_passes=1,
        ),
        # Java uses the least CPU per request, so two of its instances still leave the load driver and
        # PostgreSQL room.
        scaling_impls=("java",),
        scaling_instances=2,
    )


def run_demo(results_dir: Path | None = None) -> int:
    began = time.monotonic()
    plan = sizing()
    console.rule("[bold]bidbench demo")
    console.print(
        f"This compares the Java, Node.js and PHP apps on this machine with load ladders: each fresh start "
        f"of an app runs up to {plan.ladder.steps} steps of {plan.ladder.step_s:g} s from well below to past where it "
        f"breaks the SLO (p99 <= 50 ms, mean <= 8 ms), {plan.repetitions} ladders each, every instance capped at "
        f"{plan.cpus:g} CPU; then java with 2 instances. Expect about 10 minutes."
    )
    console.rule("1/5 tools")
    toolchain.ensure(DEMO_TOOLS, quiet=False)
    console.rule("2/5 database")
    from harness.db.ready import ensure_seeded

    ensure_seeded(1, 42)
    console.rule("3/5 build")
    for impl in IMPLS:
        console.print(f"building {impl} ...")
        driver(impl).ensure_built()

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    base = RunPlan(
        impl="java",
        load=LoadSettings(targets=[], mix="browse"),
        cpus=plan.cpus,
        variant="default",
        slo=Slo(),
        results_dir=results_dir,
    )
    from harness.analysis.ladder_tables import print_ladder_outcome, print_ladder_table

    console.rule("4/5 ladders: a calibration per app, then its ladders, interleaved")
    ladders = run_ladders(
        LadderPlan(list(IMPLS), base, plan.repetitions, (1,), plan.ladder), on_outcome=print_ladder_outcome
    )
    # The driver against a static responder at the highest app's rates: the p99 below which a step says
    # more about the machine than about the app.
    floor = floor_after_ladders(LadderPlan(list(IMPLS), base, 1, (1,), plan.ladder), ladders)
    console.rule(f"5/5 scaling: {', '.join(plan.scaling_impls)} with {plan.scaling_instances} instances")
    # n instances should carry about n times one instance's load: its ladder's rates, scaled.
    scaled = {
        impl: tuple(rate * plan.scaling_instances for rate in _rates(ladders[(impl, 1)]))
        for impl in plan.scaling_impls
    }
    scaling = run_ladders(
        LadderPlan(
            list(plan.scaling_impls),
            base,
            1,
            (plan.scaling_instances,),
            plan.ladder,
            {impl: rates for impl, rates in scaled.items() if rates},
        ),
        on_outcome=print_ladder_outcome,
    )
    all_runs = {**ladders, **scaling}
    print_ladder_table(
        f"ladders, {plan.cpus:g} CPU per instance", {f"{i} x{n}": runs for (i, n), runs in all_runs.items()}
    )
    run_dirs = [str(o.folder.path) for runs in all_runs.values() for o in runs]
    if floor is not None:
        run_dirs.append(str(floor.folder.path))
    invalid = [o for runs in all_runs.values() for o in runs if not (o.verdict and o.verdict.valid)]
    report = (results_dir or paths.RESULTS) / f"demo-{stamp}.html"
    console.rule("comparison")
    code = subprocess.call([sys.executable, str(paths.ROOT / "compare.py"), *run_dirs, "--html", str(report)])
    minutes = (time.monotonic() - began) / 60
    if invalid:
        console.print(
            f"[bold yellow]{len(invalid)} of {len(run_dirs)} ladders are not valid[/] (see the report's exclusions): "
            "this machine was too busy or too small for some of them, and they are not compared."
        )
    console.print(f"demo finished in {minutes:.1f} min; HTML report: {report}")
    console.print(
        f"every run is in {results_dir or paths.RESULTS} (index.jsonl lists them); group demo-{stamp}"
    )
    return code


def _rates(outcomes: list[RunOutcome]) -> tuple[float, ...]:
    """The rates the ladders of one implementation ran (every ladder of a set runs the same ones)."""
    for outcome in outcomes:
        rates = ((outcome.metrics or {}).get("ladder") or {}).get("rates")
        if rates:
            return tuple(float(r) for r in rates)
    return ()
