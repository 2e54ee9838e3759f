"""Which CPUs the instances and PostgreSQL get, and which the load driver and the sampler get (issue #28).

Splitting keeps the driver's CPU bursts off the cores being measured. It only pays with cores to spare: on
two cores it would leave the system under test a single core, so it is off unless asked for.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

import psutil

from harness.console import UserError
from harness.engine.resources import format_cpuset, parse_cpuset

ENV = "BIDBENCH_CPUSETS"
MODES = ("auto", "split", "off")


@dataclass(frozen=True)
class Placement:
    cores: int
    mode: str
    """What BIDBENCH_CPUSETS asked for: auto, split or off."""
    split: bool
    system_cpus: str | None
    """CPUs of the instances and PostgreSQL; None = no pinning."""
    driver_cpus: str | None
    """CPUs of the load driver and the sampler thread; None = no pinning."""
    reason: str


def _mode(mode: str | None) -> str:
    value = (mode if mode is not None else os.environ.get(ENV, "auto")).strip().lower() or "auto"
    if value not in MODES:
        raise UserError(f"{ENV}={value!r} is not one of {', '.join(MODES)}")
    return value


def plan_cpus(cores: int, mode: str | None = None, cpus: set[int] | None = None) -> Placement:
    """The CPU split for `cores` usable CPUs (`cpus`, default: this process's affinity when it has `cores`
    CPUs, else 0..cores-1): the driver gets the highest-numbered quarter (at least one CPU), the instances
    and PostgreSQL the rest. Auto splits from 3 cores up."""
    chosen = _mode(mode)
    available = sorted(cpus) if cpus else sorted(os.sched_getaffinity(0))
    if len(available) != cores:
        available = list(range(cores))
    if cores < 2:
        return Placement(cores, chosen, False, None, None, "one CPU: nothing to split")
    if chosen == "off":
        return Placement(cores, chosen, False, None, None, f"{ENV}=off")
    if chosen == "auto" and cores < 3:
        why = f"{cores} cores: a driver core would leave the system under test too little; {ENV}=split forces it"
        return Placement(cores, chosen, False, None, None, why)
    driver_count = max(1, cores // 4)
    driver = set(available[-driver_count:])
    system = set(available[:-driver_count])
    why = f"{cores} cores: {len(system)} for the instances and PostgreSQL, {driver_count} for the driver"
    return Placement(cores, chosen, True, format_cpuset(system), format_cpuset(driver), why)


def plan_here(mode: str | None = None) -> Placement:
    """plan_cpus for this machine's CPUs (those this process may run on)."""
    cpus = os.sched_getaffinity(0)
    return plan_cpus(len(cpus), mode, cpus)


def pin_tree(root_pid: int, cpuset: str) -> list[int]:
    """Pin a process and its descendants to `cpuset` (PostgreSQL runs outside the harness's cgroups; new
    backends inherit the postmaster's affinity). Returns the pids pinned; processes that vanish or
    refuse are skipped, never an error."""
    wanted = parse_cpuset(cpuset)
    pinned: list[int] = []
    try:
        root = psutil.Process(root_pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return pinned
    for proc in procs:
        with contextlib.suppress(psutil.Error, OSError, ValueError):
            proc.cpu_affinity(sorted(wanted))
            pinned.append(proc.pid)
    return pinned
