"""The machine sizing rule (docs/design.md §6): how much CPU one app instance gets by default on this
machine, leaving the load driver and PostgreSQL enough to push it past its capacity.
"""

from __future__ import annotations

import psutil

MAX_INSTANCE_CPUS = 1.0
"""The thesis's limit: one core per instance."""
CORES_PER_INSTANCE = 4
"""A quarter of the cores per instance: on 2 cores the load driver and PostgreSQL then keep room to push an
instance past its capacity (docs/method.md, "5. Leaving CPU for the driver and the database")."""


def machine_cores() -> int:
    return psutil.cpu_count(logical=True) or 1


def default_instance_cpus(cores: int | None = None) -> float:
    """A quarter of the machine's cores per instance, at most one core: 0.5 on 2 cores, 1.0 from 4 cores."""
    return min(MAX_INSTANCE_CPUS, (cores or machine_cores()) / CORES_PER_INSTANCE)


UNLIMITED_COUNTS_AS_CORES = 1.0
"""An instance without a CPU limit counts as one core where a rate or an idle threshold scales with the
limit: it may use every core, but one core keeps the pre-warm's rate and the idle test as strict as a limit of 1."""


def nominal_cores(cpus: float | None) -> float:
    """The cores that rates and idle thresholds scale with: the limit, or UNLIMITED_COUNTS_AS_CORES."""
    return cpus or UNLIMITED_COUNTS_AS_CORES


def usable_cores(cpus: float | None, cores: int | None = None) -> float:
    """The cores an instance can take from the machine: its limit, or every core without one."""
    return cpus or float(cores or machine_cores())


def cpu_limit(given: float | None, cores: int | None = None) -> float | None:
    """What --cpus means, everywhere: a number of cores per instance; 0: no limit (None); absent: the
    sizing rule. Applied once, where a command reads its options."""
    if given is None:
        return default_instance_cpus(cores)
    if given < 0:
        raise ValueError(f"--cpus takes a number of cores, 0 for no limit; got {given:g}")
    return given or None
