"""The ladder tables' rows (docs/method.md, "The ladder"): a figure over fresh starts with its interval and
CV, and one implementation's ladders summarized. What one ladder yields is harness/model/ladder_math.py."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.analysis.host_factor import postgres_adjusted, shared_factor_r
from harness.model.ladder_math import _finite
from harness.model.stats import mean_ci


@dataclass(frozen=True)
class Spread:
    """A figure over fresh starts: mean with its 95 % t-interval and the coefficient of variation."""

    n: int
    mean: float | None
    low: float | None
    high: float | None
    cv_pct: float | None

    def text(self, digits: int = 0) -> str:
        if self.mean is None:
            return "-"
        if self.low is None or self.high is None:
            return f"{self.mean:,.{digits}f} (n={self.n})"
        cv = f", CV {self.cv_pct:.1f} %" if self.cv_pct is not None else ""
        return f"{self.mean:,.{digits}f} [{self.low:,.{digits}f}, {self.high:,.{digits}f}]{cv}"


def spread(values: Sequence[float | None]) -> Spread:
    clean = [float(v) for v in values if _finite(v)]
    if not clean:
        return Spread(0, None, None, None, None)
    mean = sum(clean) / len(clean)
    interval = mean_ci(clean)
    cv = None
    if len(clean) >= 2 and mean:
        sd = math.sqrt(sum((v - mean) ** 2 for v in clean) / (len(clean) - 1))
        cv = sd / abs(mean) * 100
    return Spread(
        len(clean), mean, interval.low if interval else None, interval.high if interval else None, cv
    )


@dataclass(frozen=True)
class LadderRow:
    """One implementation's ladders, summarized: what the demo's and `./bidbench ladder`'s tables show."""

    label: str
    ladders: int
    valid: int
    cost_us: Spread
    cost_adjusted_us: Spread
    """The cost with the host's share of its spread taken out (host_factor.postgres_adjusted): how steady the app
    itself was. Shown, not compared: its level is the raw cost's."""
    db_cost_us: Spread
    host_r: float | None
    """How closely the app's CPU per request followed the load driver's, step by step (host_factor.py)."""
    capacity: Spread
    capacity_text: str
    saturation: Spread
    memory_mb: Spread
    rps_per_mb: Spread


def ladder_row(label: str, metrics: Sequence[Mapping[str, Any] | None], valid: Sequence[bool]) -> LadderRow:
    """Valid ladders only. A capacity is averaged only when every ladder bracketed it; otherwise the row
    says "at least" the smallest lower bound, never a mean of bounds."""
    kept = [m for m, ok in zip(metrics, valid, strict=True) if m is not None and ok]
    ladders = [m["ladder"]["steps"] for m in kept if (m.get("ladder") or {}).get("steps")]
    bracketed = [m.get("capacity_rps") for m in kept]
    bounds = [m.get("capacity_at_least_rps") for m in kept if m.get("capacity_at_least_rps") is not None]
    capacity = spread(bracketed if not bounds else [])
    costs = [m.get("cpu_us_per_request") for m in kept]
    db_costs = [m.get("db_us_per_request") for m in kept]
    if bounds:
        text = f">= {min(bounds):,.0f} ({len(bounds)} of {len(kept)} ladders never failed)"
    else:
        text = capacity.text()
    return LadderRow(
        label=label,
        ladders=len(metrics),
        valid=len(kept),
        cost_us=spread(costs),
        cost_adjusted_us=spread(postgres_adjusted(costs, db_costs)),
        db_cost_us=spread(db_costs),
        host_r=shared_factor_r(ladders),
        capacity=capacity,
        capacity_text=text,
        saturation=spread([m.get("saturation_rps") for m in kept]),
        memory_mb=spread([m.get("memory_per_instance_mb") for m in kept]),
        rps_per_mb=spread([m.get("rps_per_mb") for m in kept]),
    )
