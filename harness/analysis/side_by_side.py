"""Side-by-side comparisons, from their stored records alone (docs/method.md, "Side by side"): the records
read from their folders, and the comparison's rankings and verdicts in words. The comparison itself (each
fresh start a block, geometric means and paired ratios) is harness/model/side_by_side_math.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.model.side_by_side import RECORD
from harness.model.side_by_side_math import METRICS, Metric


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
    digits = digits_of(metric)

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


def digits_of(metric: Metric) -> int:
    return {"MiB": 1, "ms": 2}.get(metric.unit, 0)


def ratio_text(interval: dict[str, Any] | None) -> str:
    return interval_text(interval, 3, " (n < 2: no interval)")


def interval_text(interval: dict[str, Any] | None, digits: int, without_bounds: str = "") -> str:
    """'centre [low, high], CV x %', each figure written by positive_text (never 0 or below)."""
    if not interval:
        return "-"
    low, high = interval.get("low"), interval.get("high")
    cv = interval.get("cv_pct")
    bounds = (
        f" [{positive_text(low, digits)}, {positive_text(high, digits)}]"
        if low is not None and high is not None
        else without_bounds
    )
    return positive_text(interval["centre"], digits) + bounds + (f", CV {cv:.1f} %" if cv is not None else "")


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
