"""`./bidbench demo`: the README's main command, from a fresh clone to a comparison and an HTML report.

set up the tools → seed the embedded database → build the three apps → side-by-side fresh starts of
java, node and php (docs/method.md, "Side by side": all three started, pre-warmed and measured in the
same seconds, then each one's capacity in turns) → the comparison in the terminal, as JSON and as HTML,
with the time each phase took. If this machine cannot give valid fresh starts, the demo says so instead
of printing numbers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from harness import paths
from harness.analysis.side_by_side_report import print_summary
from harness.apps import IMPLS, driver
from harness.console import UserError, console
from harness.engine.driver import LoadSettings
from harness.engine.session import RunPlan
from harness.engine.sizing import default_instance_cpus, machine_cores
from harness.engine.validity import Slo
from harness.model.side_by_side import SideBySideSpec, preset
from harness.model.side_by_side_math import summarize
from harness.regimes import side_by_side
from harness.tools import toolchain

MIN_CORES = 2
PRESET = "demo"


@dataclass(frozen=True)
class DemoPlan:
    cpus: float
    repetitions: int
    spec: SideBySideSpec


# What the demo runs: not the fault proxy or the report's browser check (`./bidbench setup` installs all).
DEMO_TOOLS = ("db", "java", "node", "php", "load")


def sizing() -> DemoPlan:
    """Three apps side by side at the machine sizing rule (harness/engine/sizing.py), three fresh starts:
    the fewest that give an interval on every ratio."""
    cores = machine_cores()
    if cores < MIN_CORES:
        raise UserError(
            f"this machine has {cores} core; the demo needs at least {MIN_CORES} (the apps under test, the load "
            "drivers and PostgreSQL). On one core no fresh start could be valid, so the demo prints no numbers."
        )
    return DemoPlan(cpus=default_instance_cpus(cores), repetitions=3, spec=preset(PRESET))


class Phases:
    """The wall time of each phase, printed at the end."""

    def __init__(self) -> None:
        self.began = time.monotonic()
        self.last = self.began
        self.done: list[tuple[str, float]] = []

    def start(self, number: int, total: int, name: str) -> None:
        self.mark()
        console.rule(f"{number}/{total} {name}")
        self.current = name

    def mark(self) -> None:
        now = time.monotonic()
        if getattr(self, "current", None):
            self.done.append((self.current, now - self.last))
        self.last = now

    def text(self) -> str:
        self.mark()
        self.current = ""
        parts = ", ".join(f"{name} {seconds / 60:.1f} min" for name, seconds in self.done)
        return f"{parts}; in all {(time.monotonic() - self.began) / 60:.1f} min"


def run_demo(results_dir: Path | None = None) -> int:
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
    from harness.db.ready import ensure_seeded

    ensure_seeded(1, 42)
    phases.start(3, 4, "build")
    for impl in IMPLS:
        console.print(f"building {impl} ...")
        driver(impl).ensure_built()
    phases.start(4, 4, "side by side")
    base = RunPlan(
        impl=IMPLS[0],
        load=LoadSettings(targets=[], mix="browse"),
        cpus=plan.cpus,
        slo=Slo(),
        results_dir=results_dir,
    )
    groups = side_by_side.groups_for(list(IMPLS), False, base)
    records = side_by_side.run(
        groups,
        plan.spec,
        plan.repetitions,
        name=PRESET,
        results_dir=results_dir,
        say=console.print,
        rule=console.rule,
    )
    phases.mark()
    phases.current = ""
    console.rule("comparison")
    summary = summarize(records)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    base_dir = results_dir or paths.RESULTS
    report = base_dir / f"demo-{stamp}.html"
    print_summary(summary, base_dir / f"demo-{stamp}.json", report)
    if summary["valid"] < len(records):
        console.print(
            f"[bold yellow]{len(records) - summary['valid']} of {len(records)} fresh starts are not valid[/] (listed "
            "above): this machine was too busy for them, and they are not compared."
        )
    console.print(f"demo finished: {phases.text()}")
    console.print(f"HTML report: {report}")
    console.print(
        f"every fresh start is in {base_dir} (index.jsonl lists them); recompute with ./bidbench side-by-side "
        + " ".join(f"--from {r['folder']}" for r in records)
    )
    return 0 if summary["valid"] >= 2 else 1
