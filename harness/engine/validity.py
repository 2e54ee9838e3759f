"""Validity rules of a measured run (docs/design.md §7) and the SLO verdict (docs/design.md §6): pure
functions over the run's digested figures, so every verdict can be recomputed from a result folder.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

from harness.record.verdict import Check, Verdict

LOADGEN_MAX_SHARE = 0.80
DB_MAX_SHARE = 0.80
HOST_MAX_BUSY_PCT = 95.0
UNACCOUNTED_MAX_PCT = 10.0
"""The machine's busy share that no measured process explains (another tenant), above which a ladder step or
a fixed-rate run is not judged (docs/method.md §2)."""
OWN_MAX_BUSY_PCT_FOR_HELD_UP = 50.0
"""The machine's busy share the measured processes may take for a late send to count as the host's: on a
machine they leave half idle, they cannot have kept the driver off every core."""
DISTURBED = "host"
"""The check that fails when, and only when, another tenant's work disturbed the measurement: the same fresh
start at another time may well be valid, so a claim runs it again (harness/claims/ladders.py)."""
SYS_ERROR_MAX_SHARE = 0.001
OPEN_RATE_TOLERANCE = 0.05
LITTLE_TOLERANCE = 0.20
STEADY_MAX_DRIFT = 0.25
STEADY_MIN_SAMPLES = 10  # per-second samples; thirds of fewer are noise
STEADY_ABS_SLACK_PCT = 10.0  # points of CPU %: below this, drift is noise at low load


@dataclass(frozen=True)
class Slo:
    p99_ms: float = 50.0
    mean_ms: float = 8.0
    max_sys_error_share: float = SYS_ERROR_MAX_SHARE

    def describe(self) -> str:
        return f"p99 <= {self.p99_ms:g} ms, mean <= {self.mean_ms:g} ms, system errors < {self.max_sys_error_share:.1%}"


@dataclass(frozen=True)
class RunFigures:
    """What the validity rules look at, all over the measurement window."""

    model: str
    window_s: float
    requests: int
    ok: int
    sys_errors: int
    late_sends: int
    mean_latency_ms: float
    p99_latency_ms: float
    offered_rps: float | None
    users: int | None
    think_ms: float
    loadgen_cpu_pct: float
    loadgen_allotment_cores: float
    db_cpu_pct: float
    db_allotment_cores: float
    host_busy_pct: float
    instance_cpu_per_second: list[float]
    expect_below_capacity: bool = True
    unaccounted_pct: float = math.nan
    """The machine's busy share that no measured process explains (NaN where not read)."""
    steal_pct: float = math.nan
    max_inflight: int | None = None
    """The most requests the driver had in flight at once, and how many connections it may open."""
    max_conns: int | None = None
    instances_throttled: bool | None = None
    """Whether any instance's CPU quota throttled it in the window (None: no quota, or not readable)."""


def _finite(value: float | None) -> bool:
    return value is not None and not math.isnan(value)


def late_sends_held_up_driver(fig: RunFigures) -> bool:
    """Whether the run's late sends can only be the host's doing: the driver never had all its connections
    busy, so no app held its requests back; no instance was throttled, so none took more than its quota of
    the cores the driver shares; and the measured processes left most of the machine idle. What is left to
    starve the driver of CPU is the host (another tenant, the hypervisor). Unknown counts as no."""
    own_busy = fig.host_busy_pct - fig.unaccounted_pct
    return (
        fig.late_sends > 0
        and fig.max_inflight is not None
        and fig.max_conns is not None
        and fig.max_inflight < fig.max_conns
        and fig.instances_throttled is False
        and _finite(own_busy)
        and own_busy <= OWN_MAX_BUSY_PCT_FOR_HELD_UP
    )


def tenant_disturbance(unaccounted_pct: float | None, steal_pct: float | None) -> str | None:
    """Why another tenant's work leaves a measurement unjudged, or None when it does not."""
    if not _finite(unaccounted_pct) or unaccounted_pct <= UNACCOUNTED_MAX_PCT:
        return None
    # the hypervisor's steal is another tenant's too, and the one the guest can name
    stolen = (
        f"the hypervisor's steal {steal_pct:.0f} % of the machine; "
        if steal_pct and _finite(steal_pct)
        else ""
    )
    return (
        f"{unaccounted_pct:.0f} % of the machine was busy with work no measured process explains "
        f"(another tenant; {stolen}limit {UNACCOUNTED_MAX_PCT:.0f} %)"
    )


def disturbed_only(verdict: Verdict | dict[str, Any] | None) -> bool:
    """Whether a run or a ladder is invalid only because another tenant disturbed it: nothing of the app or
    of the measurement itself was wrong. Takes the record or its JSON."""
    if isinstance(verdict, dict):
        verdict = Verdict.from_json(verdict) if verdict else None
    if verdict is None or verdict.valid:
        return False
    return {name for name, check in verdict.checks.items() if not check.ok} == {DISTURBED}


def check_run(fig: RunFigures) -> dict[str, Check]:
    checks: dict[str, Check] = {}

    limit = fig.loadgen_allotment_cores * 100 * LOADGEN_MAX_SHARE
    checks["loadgen_cpu"] = Check(
        ok=_finite(fig.loadgen_cpu_pct) and fig.loadgen_cpu_pct <= limit,
        value=fig.loadgen_cpu_pct,
        threshold=limit,
        detail=f"the load driver used {fig.loadgen_cpu_pct:.0f} % CPU of its {fig.loadgen_allotment_cores:g}-core allotment "
        f"(limit {LOADGEN_MAX_SHARE:.0%})",
    )
    held_up = late_sends_held_up_driver(fig)
    checks["late_sends"] = Check(
        ok=fig.late_sends == 0 or held_up,
        value=fig.late_sends,
        threshold=0,
        detail=f"the load driver sent {fig.late_sends} requests later than its bound after their schedule"
        + (
            f" with at most {fig.max_inflight} of its {fig.max_conns} connections busy: counted under {DISTURBED}"
            if held_up
            else ""
        ),
    )
    db_limit = fig.db_allotment_cores * 100 * DB_MAX_SHARE
    db_ok = _finite(fig.db_cpu_pct) and fig.db_cpu_pct <= db_limit
    host_ok = not _finite(fig.host_busy_pct) or fig.host_busy_pct <= HOST_MAX_BUSY_PCT
    checks["database_host"] = Check(
        ok=db_ok and host_ok,
        value=fig.db_cpu_pct,
        threshold=db_limit,
        detail=f"PostgreSQL used {fig.db_cpu_pct:.0f} % CPU (limit {db_limit:.0f} %); "
        f"the host was {fig.host_busy_pct:.0f} % busy (limit {HOST_MAX_BUSY_PCT:.0f} %)",
    )
    disturbances = [tenant_disturbance(fig.unaccounted_pct, fig.steal_pct)]
    if held_up:
        disturbances.append(
            f"the load driver sent {fig.late_sends} requests late with at most {fig.max_inflight} of its "
            f"{fig.max_conns} connections busy and no instance throttled: the host held the driver up"
        )
    disturbed = "; ".join(d for d in disturbances if d)
    checks[DISTURBED] = Check(
        ok=not disturbed,
        value=fig.unaccounted_pct if _finite(fig.unaccounted_pct) else None,
        threshold=UNACCOUNTED_MAX_PCT,
        detail=disturbed
        or "no other tenant's work beyond the limit, and no late send the host alone explains",
    )
    share = fig.sys_errors / fig.requests if fig.requests else 1.0
    checks["system_errors"] = Check(
        ok=(share < SYS_ERROR_MAX_SHARE) or not fig.expect_below_capacity,
        value=share,
        threshold=SYS_ERROR_MAX_SHARE,
        detail=f"{fig.sys_errors} system errors in {fig.requests} requests ({share:.2%})"
        + (
            ""
            if fig.expect_below_capacity
            else "; probing past capacity, so errors are a result, not a fault"
        ),
    )
    checks["littles_law"] = _littles_law(fig)
    checks["steady_state"] = _steady(fig.instance_cpu_per_second)
    if fig.requests == 0:
        checks["requests"] = Check(False, 0, 1, "no request completed in the measurement window")
    return checks


def _littles_law(fig: RunFigures) -> Check:
    throughput = fig.requests / fig.window_s if fig.window_s > 0 else 0.0
    if fig.model == "closed" and fig.users:
        # N = X (R + Z): users = throughput x (response time + think time).
        predicted = throughput * (fig.mean_latency_ms + fig.think_ms) / 1000
        error = abs(predicted - fig.users) / fig.users
        return Check(
            ok=error <= LITTLE_TOLERANCE,
            value=error,
            threshold=LITTLE_TOLERANCE,
            detail=f"Little's law predicts {predicted:.1f} users from X={throughput:.1f}/s and R+Z; the driver ran {fig.users}",
        )
    if fig.offered_rps:
        # Open model: what arrived must be what was offered, or the generator fell behind.
        error = abs(throughput - fig.offered_rps) / fig.offered_rps
        return Check(
            ok=error <= OPEN_RATE_TOLERANCE,
            value=error,
            threshold=OPEN_RATE_TOLERANCE,
            detail=f"arrivals {throughput:.1f}/s vs offered {fig.offered_rps:.1f}/s "
            f"(in flight by Little's law: {throughput * fig.mean_latency_ms / 1000:.2f})",
        )
    return Check(True, None, None, "not applicable")


def _steady(cpu_per_second: list[float]) -> Check:
    """The instances' CPU in the first and last third of the window must agree: no warm-up left over."""
    if len(cpu_per_second) < STEADY_MIN_SAMPLES:
        return Check(
            True, None, None, f"window shorter than {STEADY_MIN_SAMPLES} s: too short to judge steadiness"
        )
    third = len(cpu_per_second) // 3
    first = statistics.fmean(cpu_per_second[:third])
    last = statistics.fmean(cpu_per_second[-third:])
    drift = abs(first - last) / max(last, first, 1e-9)
    ok = drift <= STEADY_MAX_DRIFT or abs(first - last) <= STEADY_ABS_SLACK_PCT
    return Check(
        ok=ok,
        value=drift,
        threshold=STEADY_MAX_DRIFT,
        detail=f"instance CPU {first:.0f} % in the first third vs {last:.0f} % in the last third",
    )


def verdict(fig: RunFigures, slo: Slo) -> Verdict:
    checks = check_run(fig)
    reasons = [check.detail for check in checks.values() if not check.ok]
    valid = not reasons
    share = fig.sys_errors / fig.requests if fig.requests else 1.0
    slo_parts = {
        "p99": fig.p99_latency_ms <= slo.p99_ms,
        "mean": fig.mean_latency_ms <= slo.mean_ms,
        "system_errors": share < slo.max_sys_error_share,
    }
    return Verdict(
        valid=valid,
        reasons=reasons,
        checks=checks,
        slo={
            "definition": slo.describe(),
            "met": valid and all(slo_parts.values()),
            "parts": slo_parts,
            "p99_ms": fig.p99_latency_ms,
            "mean_ms": fig.mean_latency_ms,
            "system_error_share": share,
        },
    )
