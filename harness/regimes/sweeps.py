"""The sweeping regimes (docs/design.md §6): concurrent users (the closed model) and payload size.

Each repeats every point R times from a fresh start, interleaving implementations (A B C A B C), and
goes through a Campaign, so an interrupted sweep resumes without redoing finished runs.
"""

from __future__ import annotations

from dataclasses import replace

from harness.engine.session import RunPlan
from harness.regimes.campaign import Campaign, PointResult

CONTRACT_BODY_LIMIT = 65536


def run_users(
    campaign: Campaign, impls: list[str], base: RunPlan, user_counts: list[int], repetitions: int
) -> list[PointResult]:
    campaign.planned_runs += len(impls) * len(user_counts) * repetitions
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
    if metrics["app_errors"]:
        return "413"
    return "ok" if metrics["ok"] else "error"
