"""Side-by-side comparisons, from their stored records alone (docs/method.md, "Side by side").

Each fresh start is a block: it gives every group's figures from the same seconds of the host. Each
group's absolute figures get a geometric mean with a log-scale interval (they depend on the host, and
say so); each group against the baseline gets the paired ratio: the geometric mean of the per-fresh-start
ratios with its t-interval on the logs, and the CV of those ratios.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.model.paired import log_interval, paired_ratio

RECORD = "side-by-side.json"


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
)


def load_records(folders: Iterable[Path]) -> list[dict[str, Any]]:
    """The side-by-side record of every folder given (a folder, or a parent holding several)."""
    found: list[Path] = []
    for folder in folders:
        folder = Path(folder)
        if (folder / RECORD).exists():
            found.append(folder / RECORD)
        else:
            found += sorted(folder.glob(f"*/{RECORD}"))
    records = []
    for path in found:
        record = json.loads(path.read_text())
        record["folder"] = str(path.parent)
        try:
            manifest = json.loads((path.parent / "manifest.json").read_text())
            record["comparison"] = (manifest.get("regime") or {}).get("group") or "+".join(record["groups"])
        except (OSError, ValueError):
            record["comparison"] = "+".join(record["groups"])
        records.append(record)
    return records


def by_comparison(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Fresh starts grouped by the comparison they were run for, in the order found."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        grouped.setdefault(record.get("comparison") or "+".join(record["groups"]), []).append(record)
    return grouped


def figures(record: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    """Per group, the fresh start's figures that the comparison pairs. A capacity that is only a lower
    bound (no rung failed) is not a figure to pair: it is left out and counted apart."""
    out: dict[str, dict[str, float | None]] = {}
    capacity = record.get("capacity") or {}
    for label, cost in ((record.get("cost") or {}).get("groups") or {}).items():
        found = (capacity.get(label) or {}).get("capacity") or {}
        out[label] = {
            "app_us": cost.get("app_us"),
            "stack_us": cost.get("stack_us"),
            "db_us": cost.get("db_us"),
            "pss_mb": cost.get("pss_mb"),
            "capacity_rps": found.get("rps") if found.get("bracketed") else None,
        }
    return out


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
    ratios: dict[str, dict[str, Any]] = {}
    for label in labels[1:]:
        ratios[label] = {}
        for metric in METRICS:
            pairs = [
                (f[label][metric.key], f[baseline][metric.key])
                for f in per_start
                if f.get(label, {}).get(metric.key) and f.get(baseline, {}).get(metric.key)
            ]
            ratios[label][metric.key] = (
                {
                    "per_fresh_start": [a / b for a, b in pairs],
                    "interval": paired_ratio([a for a, _ in pairs], [b for _, b in pairs]).to_json(),
                }
                if pairs
                else None
            )
    pairs: dict[str, dict[str, Any]] = {}
    for i, first in enumerate(labels):
        for second in labels[i + 1 :]:
            pairs[f"{second}/{first}"] = {
                metric.key: _paired(per_start, second, first, metric.key) for metric in METRICS
            }
    # The host's figures of every fresh start that measured cost steps, valid or not: a host too busy for
    # any step to count is exactly what a reader must see.
    cost = [r.get("cost") or {} for r in records if r.get("cost")]
    steal = [_mean(c.get("steal_pct") or []) for c in cost]
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
            "cost_steps": sum(len(c.get("rates") or []) for c in cost),
            "steal_pct_per_fresh_start": steal,
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


def _pair(summary: dict[str, Any], a: str, b: str, key: str) -> tuple[dict[str, Any] | None, bool]:
    """The paired interval of a/b (inverting b/a when that is the one stored), and whether it was inverted."""
    found = (summary["pairs"].get(f"{a}/{b}") or {}).get(key)
    if found:
        return found["interval"], False
    found = (summary["pairs"].get(f"{b}/{a}") or {}).get(key)
    return (found["interval"], True) if found else (None, False)


def differs(interval: dict[str, Any] | None) -> bool:
    return bool(
        interval and interval.get("low") is not None and (interval["low"] > 1 or interval["high"] < 1)
    )


def ranking(summary: dict[str, Any], metric: Metric) -> str:
    """All groups in order, best first, each neighbour pair joined by what its paired interval shows:
    "java (200 µs) < node (300) = php (310, ratio 1.03 [0.97, 1.09])"."""
    rows = [
        (label, ((summary["groups"][label].get(metric.key) or {}).get("interval") or {}).get("centre"))
        for label in summary["groups_compared"]
    ]
    rows = [(label, centre) for label, centre in rows if centre]
    if not rows:
        return "no figures"
    rows.sort(key=lambda row: row[1], reverse=metric.better == "higher")
    digits = 1 if metric.unit == "MiB" else 0

    def few(label: str) -> str:
        # A capacity that was only a lower bound in some fresh starts rests on the others alone.
        n = len((summary["groups"][label].get(metric.key) or {}).get("values") or [])
        return f", from {n} of {summary['valid']} fresh starts" if n < summary["valid"] else ""

    first = rows[0][0]
    parts = [f"{first} ({positive_text(rows[0][1], digits)} {metric.unit}{few(first)})"]
    for (before, _), (label, centre) in zip(rows, rows[1:], strict=False):
        interval, inverted = _pair(summary, label, before, metric.key)
        if interval is None:
            parts.append(f"? {label} ({positive_text(centre, digits)}{few(label)}, not paired)")
            continue
        ratio = 1 / interval["centre"] if inverted else interval["centre"]
        if interval.get("low") is None:
            sign = "?"
        else:
            sign = ("<" if metric.better == "lower" else ">") if differs(interval) else "≈"
        parts.append(
            f"{sign} {label} ({positive_text(centre, digits)}{few(label)}, x{positive_text(ratio, 2)})"
        )
    return " ".join(parts)


def sure(summary: dict[str, Any], metric: Metric) -> tuple[bool, str]:
    """One plain answer: is every neighbour in the ranking told apart, and did the order hold in every
    fresh start?"""
    labels = summary["groups_compared"]
    aligned = {
        label: (summary["groups"][label].get(metric.key) or {}).get("per_fresh_start") or []
        for label in labels
    }
    starts = min((len(values) for values in aligned.values()), default=0)
    complete = [k for k in range(starts) if all(aligned[label][k] for label in labels)]
    n = len(complete)
    if n < 2:
        found = f"only {n} of {starts} fresh starts" if n else f"none of {starts} fresh starts"
        if metric.key == "capacity_rps":
            return False, (
                f"not sure: {found} found every group's capacity (the others gave some group only a lower bound)"
            )
        return False, f"not sure: {found} gave a figure for every group"
    orders = {tuple(sorted(labels, key=lambda lab: aligned[lab][k])) for k in complete}
    held = len(orders) == 1
    pairs_apart = all(
        differs((pair.get(metric.key) or {}).get("interval")) for pair in summary["pairs"].values()
    )
    if held and pairs_apart:
        return True, f"sure: every pair differs and the order held in all {n} fresh starts"
    if held:
        return False, f"partly: the order held in all {n} fresh starts, but not every pair is told apart"
    return False, f"not sure: the order changed between fresh starts ({len(orders)} different orders in {n})"


def positive_text(value: float, digits: int) -> str:
    """A positive figure at `digits` decimals; one too small for them is "<0.001" (or "<1"), never a zero
    that reads as a cost, capacity or ratio of nothing. Zero or less is printed as it is: a fault to see."""
    step = 10.0**-digits
    if 0 < value < step / 2:
        return f"<{step:.{digits}f}"
    return f"{value:,.{digits}f}"


def ratio_text(interval: dict[str, Any] | None) -> str:
    if not interval:
        return "-"
    low, high = interval.get("low"), interval.get("high")
    cv = interval.get("cv_pct")
    bounds = (
        f" [{positive_text(low, 3)}, {positive_text(high, 3)}]"
        if low is not None and high is not None
        else " (n < 2: no interval)"
    )
    return f"{positive_text(interval['centre'], 3)}{bounds}" + (f", CV {cv:.1f} %" if cv is not None else "")


def value_text(interval: dict[str, Any] | None, digits: int = 0) -> str:
    if not interval:
        return "-"
    low, high = interval.get("low"), interval.get("high")
    cv = interval.get("cv_pct")
    bounds = (
        f" [{positive_text(low, digits)}, {positive_text(high, digits)}]"
        if low is not None and high is not None
        else ""
    )
    return positive_text(interval["centre"], digits) + bounds + (f", CV {cv:.1f} %" if cv is not None else "")


def verdict_line(label: str, baseline: str, metric: Metric, interval: dict[str, Any] | None) -> str:
    """One plain sentence per ratio: which group needs more, by how much, and whether the interval says so."""
    if not interval or interval.get("low") is None:
        return f"{label} vs {baseline}, {metric.label}: not enough paired fresh starts for an interval"
    centre, low, high = interval["centre"], interval["low"], interval["high"]
    if low > 1 or high < 1:
        word = "more" if centre > 1 else "less"
        return (
            f"{label} vs {baseline}, {metric.label}: {label} has {abs(centre - 1) * 100:.1f} % {word} "
            f"(ratio {centre:.3f}, 95 % interval {positive_text(low, 3)} to {positive_text(high, 3)}): a difference"
        )
    return (
        f"{label} vs {baseline}, {metric.label}: no difference shown (ratio {centre:.3f}, 95 % interval "
        f"{positive_text(low, 3)} to {positive_text(high, 3)} contains 1)"
    )


AA_BAND = (0.97, 1.03)
"""An A/A ratio's interval must contain 1 and lie inside this band: a set-up that favours one position by
more than 3 %, or a host too noisy to tell 3 % apart, cannot support the comparisons."""


def aa_check(summary: dict[str, Any]) -> list[str]:
    """For an A/A comparison (two groups of one app, "node-a" and "node-b"), one line per cost metric:
    does B/A contain 1, and does its interval lie within AA_BAND? Empty for other comparisons."""
    labels = summary["groups_compared"]
    if len(labels) != 2 or labels[0][:-2] != labels[1][:-2] or not labels[0].endswith("-a"):
        return []
    lines = []
    for metric in METRICS[:2]:
        interval = (summary["ratios"][labels[1]].get(metric.key) or {}).get("interval")
        if not interval or interval.get("low") is None:
            lines.append(f"A/A {metric.label}: not enough fresh starts for an interval")
            continue
        contains = interval["low"] <= 1 <= interval["high"]
        inside = AA_BAND[0] <= interval["low"] and interval["high"] <= AA_BAND[1]
        lines.append(
            f"A/A {metric.label}: B/A {ratio_text(interval)}; "
            f"contains 1: {'yes' if contains else 'NO'}; within [{AA_BAND[0]}, {AA_BAND[1]}]: "
            f"{'yes' if inside else 'NO'}"
        )
    return lines
