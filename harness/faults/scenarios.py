"""The four fault scenarios (issue #12) and their schedules, in seconds into the measurement window.

Every scenario has a fixed total length; `quick` gives the short, bounded versions the tests run. The load is
the `mixed` mix (reads plus bids, so the bid invariants have something to check) at a fixed arrival rate: a
share of the measured capacity (see runner.fault_rate).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

NAMES = ("db-outage", "slow-db", "overload", "kill-instance")
OVERLOAD_RAMP_S = 1.0
"""overload: the rate ramps linearly to the peak over this long at the fault's start, and back at its end."""


@dataclass(frozen=True)
class Step:
    at_s: float
    action: str
    """db-stop, db-start, latency, reset, clear, kill, mark"""
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    warmup_s: float
    duration_s: float
    steps: tuple[Step, ...]
    fault_start_s: float
    fault_end_s: float
    """The fault window: from the first fault action to the point recovery is measured from."""
    instances: int = 1
    overload_factor: float = 0.0
    """overload: the rate during the fault window, as a multiple of the measured capacity."""

    def stages(self, rate: float, capacity: float) -> str:
        """The driver's BB_STAGES for the overload profile (empty for a constant rate)."""
        if not self.overload_factor:
            return ""
        peak = round(self.overload_factor * capacity)
        base = round(rate)
        ramp = OVERLOAD_RAMP_S
        return ",".join(
            [
                f"{self.fault_start_s:g}s:{base}",
                f"{ramp:g}s:{peak}",
                f"{self.fault_end_s - self.fault_start_s - ramp:g}s:{peak}",
                f"{ramp:g}s:{base}",
                f"{self.duration_s - self.fault_end_s - ramp:g}s:{base}",
            ]
        )


def _one_window(
    name: str,
    description: str,
    quick: bool,
    length: float,
    after: float,
    begin: Step,
    end: Step,
    **extra: Any,
) -> Scenario:
    """A fault from `begin` to `end` after the usual lead-in, `length` s long, then `after` s of recovery."""
    start = 5.0 if quick else 15.0
    return Scenario(
        name=name,
        description=description,
        warmup_s=2.0 if quick else 5.0,
        duration_s=start + length + after,
        steps=(replace(begin, at_s=start), replace(end, at_s=start + length)),
        fault_start_s=start,
        fault_end_s=start + length,
        **extra,
    )


def db_outage(quick: bool = False, outage_s: float | None = None) -> Scenario:
    length = outage_s or (6.0 if quick else 10.0)
    return _one_window(
        "db-outage",
        f"PostgreSQL stopped (fast shutdown) for {length:g} s, then started again",
        quick,
        length,
        10.0 if quick else 25.0,
        Step(0.0, "db-stop"),
        Step(0.0, "db-start"),
    )


def slow_db(quick: bool = False, latency_ms: int = 100) -> Scenario:
    lat, gap, reset, after = ((5.0, 5.0), 2.0, 4.0, 8.0) if quick else ((15.0, 15.0), 10.0, 10.0, 20.0)
    lat_end = lat[0] + lat[1]
    reset_start = lat_end + gap
    reset_end = reset_start + reset
    return Scenario(
        name="slow-db",
        description=(
            f"Toxiproxy between the app and PostgreSQL: {latency_ms} ms latency for {lat[1]:g} s, "
            f"then every connection reset for {reset:g} s"
        ),
        warmup_s=2.0 if quick else 5.0,
        duration_s=reset_end + after,
        steps=(
            Step(lat[0], "latency", {"latency_ms": latency_ms}),
            Step(lat_end, "clear"),
            Step(reset_start, "reset"),
            Step(reset_end, "clear"),
        ),
        fault_start_s=lat[0],
        fault_end_s=reset_end,
    )


def overload(quick: bool = False, factor: float = 2.0, seconds: float | None = None) -> Scenario:
    length = seconds or (8.0 if quick else 60.0)
    return _one_window(
        "overload",
        f"{factor:g}x the measured capacity for {length:g} s, then back to the base rate",
        quick,
        length,
        10.0 if quick else 30.0,
        Step(0.0, "mark", {"what": "overload-start"}),
        Step(0.0, "mark", {"what": "overload-end"}),
        overload_factor=factor,
    )


def kill_instance(quick: bool = False) -> Scenario:
    start = 5.0 if quick else 15.0
    after = 9.0 if quick else 25.0
    return Scenario(
        name="kill-instance",
        description="two instances; kill -9 the second one's processes mid-run",
        warmup_s=2.0 if quick else 5.0,
        duration_s=start + after,
        steps=(Step(start, "kill", {"instance": 1}),),
        fault_start_s=start,
        fault_end_s=start,
        instances=2,
    )


def scenario(name: str, quick: bool = False, **options: Any) -> Scenario:
    builders = dict(zip(NAMES, (db_outage, slow_db, overload, kill_instance), strict=True))
    if name not in builders:
        raise ValueError(f"unknown scenario {name!r}; choose from {', '.join(NAMES)}")
    return builders[name](quick, **{k: v for k, v in options.items() if v is not None})
