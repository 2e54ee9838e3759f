"""`./bidbench demo`: the phases of harness/regimes/demo.py run in order, then the comparison in the
terminal, as JSON and as HTML."""

from __future__ import annotations

from datetime import UTC, datetime

from harness import paths
from harness.analysis.side_by_side_report import print_summary
from harness.apps import IMPLS, driver
from harness.console import console
from harness.db.ready import ensure_seeded
from harness.engine.driver import LoadSettings
from harness.engine.session import RunPlan
from harness.engine.validity import Slo
from harness.model.side_by_side_math import summarize
from harness.regimes import side_by_side
from harness.regimes.demo import DEMO_TOOLS, PRESET, Phases, sizing
from harness.tools import toolchain


def run_demo() -> int:
    plan = sizing()
    phases = Phases()
    console.rule("[bold]bidbench demo")
    console.print(
        f"This compares the Java, Node.js and PHP apps side by side: {plan.repetitions} fresh starts, each starting "
        f"all three together (every instance capped at {plan.cpus:g} CPU), sending them the same requests in the "
        "same seconds to read each one's CPU per request, then finding each one's capacity under the SLO "
        "(p99 <= 50 ms, mean <= 8 ms), the apps taking turns."
    )
    phases.start(1, 4, "tools")
    toolchain.ensure(DEMO_TOOLS, quiet=False)
    phases.start(2, 4, "database")
    ensure_seeded(1, 42)
    phases.start(3, 4, "build")
    for impl in IMPLS:
        console.print(f"building {impl} ...")
        driver(impl).ensure_built()
    phases.start(4, 4, "side by side")
    base = RunPlan(impl=IMPLS[0], load=LoadSettings(targets=[], mix="browse"), cpus=plan.cpus, slo=Slo())
    groups = side_by_side.groups_for(list(IMPLS), False, base)
    records = side_by_side.run(
        groups, plan.spec, plan.repetitions, name=PRESET, say=console.print, rule=console.rule
    )
    phases.end_phase()
    console.rule("comparison")
    summary = summarize(records)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    report = paths.RESULTS / f"demo-{stamp}.html"
    print_summary(summary, paths.RESULTS / f"demo-{stamp}.json", report)
    if summary["valid"] < len(records):
        console.print(
            f"[bold yellow]{len(records) - summary['valid']} of {len(records)} fresh starts are not valid[/] (listed "
            "above): this machine was too busy for them, and they are not compared."
        )
    console.print(f"demo finished: {phases.text()}")
    console.print(f"HTML report: {report}")
    console.print(
        f"every fresh start is in {paths.RESULTS} (index.jsonl lists them); recompute with ./bidbench side-by-side "
        + " ".join(f"--from {r['folder']}" for r in records)
    )
    return 0 if summary["valid"] >= 2 else 1
