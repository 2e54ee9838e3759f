"""The sweeping regime commands' own table cells (docs/design.md §6): the users regime's QoS rows and the
payload regime's means. Means carry the one t-interval of harness/model/stats.py."""

from __future__ import annotations

import statistics
from typing import Any

from harness.analysis.table_model import Cell
from harness.model.stats import mean_ci


def mean_ci_text(values: list[float], digits: int = 0, unit: str = "") -> Cell:
    """The mean with its 95 % t-interval as "mean [low, high]"; "mean (n=1)" for one value; "-" for none."""
    clean = [v for v in values if v is not None]
    if not clean:
        return Cell("-")
    mean = statistics.fmean(clean)
    interval = mean_ci(clean)
    if interval is None:
        return Cell(f"{mean:,.{digits}f} (n=1)", mean, unit=unit)
    text = f"{mean:,.{digits}f} [{interval.low:,.{digits}f}, {interval.high:,.{digits}f}]"
    return Cell.measured(text, mean, interval, unit)


def users_cells(metrics: list[dict[str, Any]], valid: int) -> list[str]:
    """One user count's row of the `users` table, after the report's QoS table (harness/analysis/tables.py):
    the maximum is the largest of the runs, not a mean with a t-interval (over 3 heavy-tailed maxima that
    interval went below 0 ms), and the share over 1 s is of all the runs' requests."""
    requests = [float(m.get("requests") or 0) for m in metrics]
    over = [float(m.get("over_1s_pct") or 0.0) for m in metrics]
    total = sum(requests)
    over_pct = (
        sum(o * r for o, r in zip(over, requests, strict=True)) / total if total else statistics.fmean(over)
    )
    return [
        mean_ci_text([m["throughput_rps"] for m in metrics]),
        f"{max(m['latency_ms']['max'] for m in metrics):,.1f}",
        mean_ci_text([m["latency_ms"]["mean"] for m in metrics], 2),
        mean_ci_text([m["latency_ms"]["p50"] for m in metrics], 2),
        f"{over_pct:.2f}",
        str(sum(m["app_errors"] for m in metrics)),
        str(sum(m["sys_errors"] for m in metrics)),
        f"{valid}/{len(metrics)}",
    ]
