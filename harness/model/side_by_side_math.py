"""The side-by-side comparison over fresh starts, from their records' figures alone (docs/method.md, "Side
by side"): each fresh start is a block; each group's absolute figures get a geometric mean with a
log-scale interval, each group against the baseline the paired ratio. Pure functions over the stored
records (harness/analysis/side_by_side.py reads them and words the results)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from harness.model.paired import log_interval, paired_ratio


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    unit: str
    better: str  # "lower" or "higher"


METRICS: tuple[Metric, ...] = (
    Metric("app_us", "app CPU per request", "µs", "lower"),
    Metric("stack_us", "app + PostgreSQL CPU per request", "µs", "lower"),
    Metric("db_us", "PostgreSQL CPU per request", "µs", "lower"),
    Metric("capacity_rps", "SLO capacity", "req/s", "higher"),
    Metric("pss_mb", "memory per deployment", "MiB", "lower"),
    Metric("mean_ms", "mean latency at the shared rates", "ms", "lower"),
)


def figures(record: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    """Per group, the fresh start's figures that the comparison pairs. A capacity that is only a lower
    bound (no rung failed) is not a figure to pair: it is left out and counted apart."""
    out: dict[str, dict[str, float | None]] = {}
    cost_steps = record.get("cost") or {}
    capacity = record.get("capacity") or {}
    for label, cost in (cost_steps.get("groups") or {}).items():
        found = (capacity.get(label) or {}).get("capacity") or {}
        out[label] = {key: cost.get(key) for key in ("app_us", "stack_us", "db_us", "pss_mb")}
        out[label]["capacity_rps"] = found.get("rps") if found.get("bracketed") else None
        out[label]["mean_ms"] = paired_mean_latency(
            (cost_steps.get("steps") or {}).get(label) or [], cost_steps.get("paired_steps") or []
        )
    return out


def paired_mean_latency(steps: Sequence[dict[str, Any]], paired: Sequence[int]) -> float | None:
    """A group's mean latency over the cost steps its cost was read from (every group at the same rate in
    the same seconds, the host neither too busy nor any group throttled), each step weighted by the
    requests it finished. None unless every paired step has a latency: a mean over part of them would be
    of other rates than the other groups'."""
    kept = set(paired)
    rows = [s for s in steps if s.get("index") in kept]
    if not rows or len(rows) != len(kept):
        return None
    weights = [s.get("completed") or 0 for s in rows]
    latencies = [s.get("mean_ms") for s in rows]
    if sum(weights) <= 0 or any(v is None or not math.isfinite(v) or v <= 0 for v in latencies):
        return None
    return sum(w * v for w, v in zip(weights, latencies, strict=True)) / sum(weights)


def _mean(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None and math.isfinite(v)]
    return sum(kept) / len(kept) if kept else None


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The comparison over fresh starts: only valid ones, the first group the baseline."""
    if not records:
        raise ValueError("no side-by-side records")
    labels = list(records[0]["groups"])
    mismatched = [r.get("folder", "?") for r in records if list(r["groups"]) != labels]
    if mismatched:
        raise ValueError(f"these records compare other groups than {labels}: {mismatched}")
    valid = [r for r in records if r.get("valid")]
    per_start = [figures(r) for r in valid]
    groups: dict[str, dict[str, Any]] = {}
    for label in labels:
        groups[label] = {}
        for metric in METRICS:
            values = [f[label][metric.key] for f in per_start if f.get(label, {}).get(metric.key)]
            groups[label][metric.key] = {
                "values": values,
                # Aligned with the valid fresh starts (None where this one gave no figure), so an order can
                # be read within each fresh start.
                "per_fresh_start": [f.get(label, {}).get(metric.key) or None for f in per_start],
                "interval": log_interval(values).to_json() if values else None,
            }
        lower_bounds = [((r.get("capacity") or {}).get(label) or {}).get("capacity") or {} for r in valid]
        groups[label]["capacity_at_least"] = [c["rps"] for c in lower_bounds if c and not c.get("bracketed")]
    baseline = labels[0]
    pairs = {
        f"{second}/{first}": {metric.key: _paired(per_start, second, first, metric.key) for metric in METRICS}
        for first, second in combinations(labels, 2)
    }
    ratios = {label: pairs[f"{label}/{baseline}"] for label in labels[1:]}
    # The host's figures of every fresh start that measured cost steps, valid or not: a host too busy for
    # any step to count is exactly what a reader must see.
    cost = [r.get("cost") or {} for r in records if r.get("cost")]
    return {
        "groups_compared": labels,
        "baseline": baseline,
        "fresh_starts": len(records),
        "valid": len(valid),
        "invalid": [
            {"folder": r.get("folder"), "reason": r.get("reason"), "failed_group": r.get("failed_group")}
            for r in records
            if not r.get("valid")
        ],
        "groups": groups,
        "ratios": ratios,
        "pairs": pairs,
        "host": {
            "busiest_cost_step_pct": max(
                (c["busiest_step_pct"] for c in cost if c.get("busiest_step_pct")), default=None
            ),
            "flagged_steps": sum(len(c.get("flagged_host_busy") or []) for c in cost),
            "throttled_steps": sum(len(c.get("flagged_throttled") or []) for c in cost),
            "cost_steps": sum(len(c.get("rates") or []) for c in cost),
            "steal_pct_per_fresh_start": [_mean(c.get("steal_pct") or []) for c in cost],
            "unaccounted_pct_per_fresh_start": [_mean(c.get("unaccounted_pct") or []) for c in cost],
        },
        "folders": [r.get("folder") for r in records],
    }


def _paired(
    per_start: list[dict[str, dict[str, float | None]]], label: str, baseline: str, key: str
) -> dict[str, Any] | None:
    values = [
        (f[label][key], f[baseline][key])
        for f in per_start
        if f.get(label, {}).get(key) and f.get(baseline, {}).get(key)
    ]
    if not values:
        return None
    return {
        "per_fresh_start": [a / b for a, b in values],
        "interval": paired_ratio([a for a, _ in values], [b for _, b in values]).to_json(),
    }
