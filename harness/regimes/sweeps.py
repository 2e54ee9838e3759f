"""The sweeping regimes (docs/design.md §6): scaling over instances, concurrent users, payload size.

Each repeats every point R times from a fresh start, interleaving implementations (A B C A B C), and
goes through a Campaign, so an interrupted sweep resumes without redoing finished runs.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import psutil

from harness.console import UserError, console
from harness.engine.session import RunPlan
from harness.regimes.campaign import Campaign, PointResult
from harness.regimes.capacity import CapacityPlan, SearchSettings, refile_capacity, run_capacity

CONTRACT_BODY_LIMIT = 65536
PAYLOAD_SIZES = (256, 1024, 4096, 16384, 32768, 65535, 65536, 65537, 131072)


def scaling_sizing(requested: int | None, cpus: float) -> tuple[int, list[str]]:
    """The sizing rule: instances x CPU limit must leave at least one core (two on big machines) for the load driver
    and PostgreSQL. Returns the largest instance count that fits, and warnings."""
    cores = psutil.cpu_count(logical=True) or 1
    reserve = 1.0 if cores <= 4 else 2.0
    fits = int((cores - reserve) // cpus) if cpus else 1
    warnings = []
    if fits < 1:
        raise UserError(
            f"this machine has {cores} cores; with {reserve:g} reserved for the load driver and PostgreSQL, not even one "
            f"instance of {cpus:g} CPU fits. Use a smaller --cpus (e.g. {max((cores - reserve) / 2, 0.25):g})."
        )
    if requested is not None and requested > fits:
        warnings.append(
            f"{requested} instances x {cpus:g} CPU do not fit on {cores} cores with {reserve:g} reserved for the load driver and "
            f"PostgreSQL; the sweep stops at {fits} (the rest would be invalid runs)."
        )
    return min(requested or fits, fits), warnings


def run_scaling(
    campaign: Campaign,
    impls: list[str],
    base: RunPlan,
    max_instances: int | None,
    repetitions: int,
    settings: SearchSettings,
    one_instance: dict[str, float] | None = None,
    searched_one: dict[str, list[dict[str, Any]]] | None = None,
) -> dict[int, dict[str, list[dict[str, Any]]]]:
    """Capacity searches at 1..N instances. `one_instance` (impl -> req/s), when known, is where the
    searches start. `searched_one` (impl -> capacity records of one instance under the same plan, e.g.
    the demo's capacity comparison) is filed as the 1-instance point instead of searching it again."""
    per_instance: dict[str, float] = dict(one_instance or {})
    top, warnings = scaling_sizing(max_instances, base.cpus or 1.0)
    for warning in warnings:
        console.print(f"[yellow]warning:[/] {warning}")
    out: dict[int, dict[str, list[dict[str, Any]]]] = {}
    for count in range(1, top + 1):
        # Start each search near its answer: n instances should carry about n times one instance's load.
        hints = {impl: per_instance[impl] * count for impl in impls if per_instance.get(impl)}
        plan = CapacityPlan(
            impls=impls,
            base=replace(base, instances=count),
            repetitions=repetitions,
            settings=settings,
            regime="scaling",
            point={"instances": count},
        )
        if count == 1 and searched_one and all(impl in searched_one for impl in impls):
            out[count] = {
                impl: [
                    refile_capacity(campaign, plan, impl, rep, record)
                    for rep, record in enumerate(searched_one[impl])
                ]
                for impl in impls
            }
        else:
            out[count] = run_capacity(campaign, plan, hints)
        for impl, rows in out[count].items():
            found = [r["capacity_rps"] / count for r in rows if r.get("capacity_rps")]
            if found:
                per_instance[impl] = sum(found) / len(found)
    return out


def run_users(
    campaign: Campaign, impls: list[str], base: RunPlan, user_counts: list[int], repetitions: int
) -> list[PointResult]:
    campaign.planned_runs += len(impls) * len(user_counts) * repetitions
    campaign.planned_starts += len(impls) * len(user_counts) * repetitions
    results = []
    for users in user_counts:
        for repetition in range(repetitions):
            for impl in impls:
                plan = replace(
                    base,
                    impl=impl,
                    load=replace(base.load, model="closed", users=users),
                    regime="users",
                    group=campaign.key("users", impl, f"users={users}"),
                    point={"users": users},
                    repetition=repetition,
                    expect_below_capacity=False,
                )
                results.append(
                    campaign.run_point(plan, f"{impl} {users} users rep {repetition + 1}/{repetitions}")
                )
    return results


def run_payload(
    campaign: Campaign, impls: list[str], base: RunPlan, sizes: list[int], repetitions: int
) -> list[tuple[str, int, PointResult]]:
    campaign.planned_runs += len(impls) * len(sizes) * repetitions
    campaign.planned_starts += len(impls) * len(sizes) * repetitions
    results = []
    for size in sizes:
        for repetition in range(repetitions):
            for impl in impls:
                plan = replace(
                    base,
                    impl=impl,
                    load=replace(base.load, mix="payload", payload_bytes=size),
                    regime="payload",
                    group=campaign.key("payload", impl, f"bytes={size}"),
                    point={"bytes": size},
                    repetition=repetition,
                    expect_below_capacity=size <= CONTRACT_BODY_LIMIT,
                )
                results.append(
                    (impl, size, campaign.run_point(plan, f"{impl} payload {size} B rep {repetition + 1}"))
                )
    return results


def payload_outcome(result: PointResult) -> str:
    """ok, 413 or error, by what the runs' requests got (STEP Table 4)."""
    metrics = result.metrics
    if not metrics:
        return "error"
    per_type = metrics.get("per_type", {}).get("payload", {})
    statuses = per_type.get("statuses") or metrics.get("statuses") or {}
    if statuses:
        top = max(statuses.items(), key=lambda kv: kv[1])[0]
        return "ok" if str(top).startswith("2") else str(top)
    if metrics["sys_errors"]:
        return "error"
    return (
        "ok" if metrics["ok"] and not metrics["app_errors"] else "413" if metrics["app_errors"] else "error"
    )
