"""A ladder run's steps, digested: each step's load figures from the driver's summary, and the CPU,
memory and host figures the sampler saw in exactly that step's window. Then the ladder's yield (cost per
request, bracketed capacity, saturation: harness/model/ladder_math.py) and its validity."""

from __future__ import annotations

import math
from typing import Any

from harness.engine.resources import HARNESS_COMPONENT
from harness.engine.sampler import Sampler
from harness.engine.validity import (
    DB_MAX_SHARE,
    DISTURBED,
    HOST_MAX_BUSY_PCT,
    LOADGEN_MAX_SHARE,
    OPEN_RATE_TOLERANCE,
    Check,
    Slo,
    Verdict,
    tenant_disturbance,
)
from harness.model import ladder_math as yields
from harness.record.folders import finite
from harness.record.upgrade import GROUP as LOADGEN_GROUP

# A step kept up when it completed at least this share of its offered rate.
KEPT_UP_SHARE = 1.0 - OPEN_RATE_TOLERANCE


def fully_accounted(sampler: Sampler, instance_names: list[str]) -> bool:
    """Whether every process of the run is measured here, so that the machine's unexplained share is
    another tenant's: with an external database or remote instances, their CPU would read as one."""
    return bool(instance_names) and {"postgres", HARNESS_COMPONENT} <= set(sampler.components)


def step_judgement(step: dict[str, Any], step_s: float, slo: Slo) -> tuple[bool, bool]:
    """Whether a driver's step kept up with its offered rate, and whether it met the SLO."""
    requests = int(step["requests"])
    # Responses that arrived within the step's window: past saturation the target completes fewer than
    # were due, however long the driver then waits for the rest.
    finished = int(step.get("finished_in_window", requests))
    share = int(step["sys_errors"]) / requests if requests else 1.0
    latency = step.get("latency_ms") or {}
    p99, mean = latency.get("p99"), latency.get("mean")
    kept_up = finished / step_s >= KEPT_UP_SHARE * float(step["rate"]) and share < slo.max_sys_error_share
    slo_met = (
        kept_up
        and p99 is not None
        and p99 <= slo.p99_ms
        and mean is not None
        and mean <= slo.mean_ms
        and int(step["late_sends"]) == 0
    )
    return kept_up, slo_met


def step_records(
    summary: dict[str, Any],
    sampler: Sampler,
    instance_names: list[str],
    t_measure: float,
    slo: Slo,
    spare_cores: float,
) -> list[dict[str, Any]]:
    """One record per finished step. `t_measure` is the measurement's start on the sampler's clock;
    `spare_cores` what the instances leave the load driver and PostgreSQL each."""
    step_s = float(summary["ladder"]["step_s"])
    accounted = fully_accounted(sampler, instance_names)
    records = []
    for step in summary.get("steps") or []:
        start = t_measure + (float(step["start_unix"]) - float(summary["measure_start_unix"]))
        end = start + step_s
        latency = step.get("latency_ms") or {}
        requests = int(step["requests"])
        finished = int(step.get("finished_in_window", requests))
        kept_up, slo_met = step_judgement(step, step_s, slo)
        # A deployment bidbench did not start (the noise floor's nginx) has no instance to measure.
        instance_cpu = (
            sum(sampler.cpu_seconds_between(name, start, end) for name in instance_names)
            if instance_names
            else math.nan
        )
        db_cpu = sampler.cpu_seconds_between("postgres", start, end)  # NaN with an external database
        driver_cpu = sampler.cpu_seconds_between(LOADGEN_GROUP, start, end)
        memory = [sampler.window_memory(name, start, end) for name in instance_names]
        record: dict[str, Any] = {
            "index": int(step["index"]),
            "rate": float(step["rate"]),
            "step_s": step_s,
            "requests": requests,
            "completed": finished,
            "ok": int(step["ok"]),
            "app_errors": int(step["app_errors"]),
            "sys_errors": int(step["sys_errors"]),
            "late_sends": int(step["late_sends"]),
            "throughput_rps": finished / step_s,
            "finished_in_window": finished,
            "p50_ms": latency.get("p50"),
            "p99_ms": latency.get("p99"),
            "mean_ms": latency.get("mean"),
            "latency_ms": step.get("latency_ms"),
            "latency_sent_ms": step.get("latency_sent_ms"),
            "server_timing_ms": step.get("server_timing_ms"),
            "instance_cpu_s": finite(instance_cpu),
            "instance_cpu_pct": finite(instance_cpu / step_s * 100),
            "db_cpu_s": finite(db_cpu),
            "db_cpu_pct": finite(db_cpu / step_s * 100),
            "loadgen_cpu_pct": finite(driver_cpu / step_s * 100),
            "host_busy_pct": finite(sampler.host_busy_pct(start, end)),
            "steal_pct": finite(sampler.host_steal_pct(start, end)),
            "unaccounted_pct": finite(sampler.unaccounted_pct(start, end)) if accounted else None,
            "pss_mb": finite(sum(m["pss_steady_mb"] for m in memory) / len(memory)) if memory else None,
            "rss_mb": finite(sum(m["rss_steady_mb"] for m in memory) / len(memory)) if memory else None,
            "kept_up": kept_up,
            "slo_met": slo_met,
        }
        record["throttling"] = [sampler.window_throttling(name, start, end) for name in instance_names]
        record["throttled_share"] = max(
            (t["throttled_share"] for t in record["throttling"] if t), default=None
        )
        record["problems"] = _step_problems(record, spare_cores)
        record["disturbances"] = _step_disturbances(record)
        record["valid"] = not record["problems"] and not record["disturbances"]
        records.append(record)
    return records


def _step_problems(step: dict[str, Any], spare_cores: float) -> list[str]:
    """What of the measurement itself makes a step unfit: the driver or PostgreSQL short of CPU."""
    problems = []
    driver_limit = max(spare_cores, 0.5) * 100 * LOADGEN_MAX_SHARE
    if step["loadgen_cpu_pct"] is not None and step["loadgen_cpu_pct"] > driver_limit:
        problems.append(
            f"the load driver used {step['loadgen_cpu_pct']:.0f} % CPU (limit {driver_limit:.0f} %)"
        )
    db_limit = max(spare_cores, 0.5) * 100 * DB_MAX_SHARE
    if step["db_cpu_pct"] is not None and step["db_cpu_pct"] > db_limit:
        problems.append(f"PostgreSQL used {step['db_cpu_pct']:.0f} % CPU (limit {db_limit:.0f} %)")
    return problems


def _step_disturbances(step: dict[str, Any]) -> list[str]:
    """What the host did to a step from outside the measurement: a full machine, or another tenant's work.
    A fresh start unfit for these alone may be run again (harness/claims/ladders.py)."""
    disturbances = []
    if step["host_busy_pct"] is not None and step["host_busy_pct"] > HOST_MAX_BUSY_PCT:
        disturbances.append(f"the host was {step['host_busy_pct']:.0f} % busy")
    disturbance = tenant_disturbance(step.get("unaccounted_pct"), step.get("steal_pct"))
    if disturbance:
        disturbances.append(disturbance)
    return disturbances


def ladder_yield(
    records: list[dict[str, Any]], slo: Slo, idle_cpu_pct: tuple[float | None, float | None] = (None, None)
) -> dict[str, Any]:
    """`idle_cpu_pct`: the instances' and PostgreSQL's CPU read with no load after the pre-warm. Each cost's
    intercept is its idle CPU where it was read, and fitted where not."""
    instances_idle, db_idle = idle_cpu_pct
    cost = yields.cost_fit(records, "instance_cpu_s", instances_idle)
    db_cost = yields.cost_fit(records, "db_cpu_s", db_idle)
    cap = yields.capacity(records, slo.p99_ms)
    return {
        "cpu_cost": cost.to_json() if cost else None,
        "db_cost": db_cost.to_json() if db_cost else None,
        "capacity": cap.to_json() if cap else None,
        "saturation_rps": yields.saturation(records),
    }


def ladder_verdict(records: list[dict[str, Any]], outcome: dict[str, Any], slo: Slo, stopped: str) -> Verdict:
    """Valid when every step that decides a figure is valid: the steps up to the capacity's failing step
    (past it the app is overloaded on purpose, and queued requests may go out late)."""
    cap = outcome.get("capacity")
    deciding = [s for s in records if cap is None or s["rate"] <= (cap.get("above") or cap["rps"])]
    checks: dict[str, Check] = {}
    problems = [f"step {s['index']} ({s['rate']:g} req/s): {p}" for s in deciding for p in s["problems"]]
    checks["steps"] = Check(
        not problems, len(problems), 0, "; ".join(problems) or "every deciding step valid"
    )
    disturbed = [
        f"step {s['index']} ({s['rate']:g} req/s): {d}" for s in deciding for d in s.get("disturbances", ())
    ]
    checks[DISTURBED] = Check(
        not disturbed, len(disturbed), 0, "; ".join(disturbed) or "no deciding step disturbed by the host"
    )
    # The failing step right above the capacity may send late: an app at its quota holds the driver's
    # connections (harness/model/ladder_math.py host_limited). Below it, a late send is a stall.
    passing_top = (cap.get("below") or cap["rps"]) if cap else None
    late = [s for s in deciding if s["late_sends"] and (passing_top is None or s["rate"] <= passing_top)]
    checks["late_sends"] = Check(
        not late,
        sum(s["late_sends"] for s in late),
        0,
        f"requests sent late below the capacity in steps {[s['index'] for s in late]}"
        if late
        else "none below the capacity",
    )
    if not records:
        checks["steps_done"] = Check(False, 0, 1, f"no step finished ({stopped})")
    elif cap is None:
        checks["first_step"] = Check(False, records[0]["rate"], None, _first_step_missed(records[0], slo))
    measured = any(s["instance_cpu_s"] is not None for s in records)
    if outcome.get("cpu_cost") is None and records and measured:
        checks["cost_fit"] = Check(
            False, None, 2, "fewer than two steps below saturation: no cost per request"
        )
    reasons = [c.detail for c in checks.values() if not c.ok]
    return Verdict(
        valid=not reasons,
        reasons=reasons,
        checks=checks,
        slo={
            "definition": slo.describe() + ", per step; completed >= 95 % of offered, no late sends",
            "met": bool(cap and cap.get("bracketed")),
            "capacity": cap,
            "stopped": stopped,
        },
    )


def _first_step_missed(first: dict[str, Any], slo: Slo) -> str:
    """Why a ladder has no capacity, with the first step's latency beside the SLO's bounds: a mean above its
    bound at a low rate is the app's latency at any load (a connection opened per request), which no
    lower start changes."""

    def ms(value: Any) -> str:
        return "-" if value is None else f"{float(value):.1f} ms"

    return (
        f"the first step ({first['rate']:g} req/s) already missed the SLO (p99 {ms(first.get('p99_ms'))}, "
        f"mean {ms(first.get('mean_ms'))}; {slo.describe()}): lower the ladder's start rate, unless that "
        "latency is the app's at any load"
    )
