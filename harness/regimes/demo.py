"""`./bidbench demo`: the README's main command, from a fresh clone to a comparison and an HTML report.

set up the tools → seed the embedded database → build the three apps → side-by-side fresh starts of
java, node and php (docs/method.md, "Side by side": all three started, pre-warmed and measured in the
same seconds, then each one's capacity in turns) → the comparison in the terminal, as JSON and as HTML,
with the time each phase took. If this machine cannot give valid fresh starts, the demo says so instead
of printing numbers. Here: what the demo runs and its phases' clock; the command is harness/cli/demo.py.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from harness.console import UserError, console
from harness.engine.sizing import default_instance_cpus, machine_cores
from harness.model.side_by_side import SideBySideSpec, preset

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
        self.began = self.last = time.monotonic()
        self.current = ""
        self.done: list[tuple[str, float]] = []

    def start(self, number: int, total: int, name: str) -> None:
        self.end_phase()
        console.rule(f"{number}/{total} {name}")
        self.current = name

    def end_phase(self) -> None:
        now = time.monotonic()
        if self.current:
            self.done.append((self.current, now - self.last))
        self.last = now
        self.current = ""

    def text(self) -> str:
        self.end_phase()
        parts = ", ".join(f"{name} {seconds / 60:.1f} min" for name, seconds in self.done)
        return f"{parts}; in all {(time.monotonic() - self.began) / 60:.1f} min"
