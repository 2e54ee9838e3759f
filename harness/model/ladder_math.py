"""What one ladder yields, from its steps alone (docs/method.md, "The ladder"): the CPU cost per request
(a least-squares slope with its confidence interval), the SLO capacity bracketed by a passing and a
failing step, and the saturation throughput. Pure functions over step records, so every figure can be
recomputed from a result folder's metrics.json."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import takewhile
from typing import Any

import statsmodels.api as sm


@dataclass(frozen=True)
class CostFit:
    """CPU seconds a step used = idle + cost x requests: the slope is the cost per request."""

    us_per_request: float
    ci95: tuple[float, float] | None
    idle_pct: float
    steps_used: int
    r_squared: float | None
    idle_measured: bool = False
    """The intercept is the idle CPU read with no load, not fitted."""

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["ci95"] = list(self.ci95) if self.ci95 else None
        return out


@dataclass(frozen=True)
class Capacity:
    """The highest rate that meets the SLO. Bracketed: a passing step with a failing step right above it,
    interpolated between the two. Otherwise a lower bound ("at least"), never averaged as a figure."""

    rps: float
    bracketed: bool
    below: float | None
    above: float | None
    how: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def text(self) -> str:
        return f"{self.rps:,.0f}" if self.bracketed else f">= {self.rps:,.0f}"


def mean_capacity(rounds: Sequence[Capacity | None]) -> Capacity | None:
    """One group's capacity from several searches in one fresh start: the geometric mean when every round
    bracketed it; a lower bound at the least round's figure when any round gave only a bound (a bound is
    never averaged); None when a round found none."""
    if not rounds or any(found is None for found in rounds):
        return None
    found = [c for c in rounds if c is not None]
    if len(found) == 1:
        return found[0]
    figures = ", ".join(c.text() for c in found)
    if not all(c.bracketed for c in found):
        return Capacity(
            min(c.rps for c in found), False, None, None, f"the least of {len(found)} rounds ({figures})"
        )
    mean = math.exp(sum(math.log(c.rps) for c in found) / len(found))
    return Capacity(
        mean,
        True,
        min(c.below for c in found if c.below is not None),
        max(c.above for c in found if c.above is not None),
        f"geometric mean of {len(found)} rounds ({figures})",
    )


def below_saturation(steps: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The steps up to the last one whose completed rate kept up with the offered rate."""
    return list(takewhile(lambda step: step.get("kept_up"), sorted(steps, key=lambda s: s["rate"])))


def cost_fit(
    steps: Sequence[Mapping[str, Any]], cpu_key: str = "instance_cpu_s", idle_pct: float | None = None
) -> CostFit | None:
    """Least squares of a component's CPU seconds per step on the requests it completed, over the steps
    below saturation (past it they stop being proportional). With `idle_pct` the line goes through the idle
    CPU and only the slope is fitted (docs/method.md, "The intercept is the idle CPU")."""
    rows = [s for s in below_saturation(steps) if _finite(s.get(cpu_key)) and s.get("completed")]
    if idle_pct is not None and _finite(idle_pct) and rows:
        return _cost_through_idle(rows, cpu_key, float(idle_pct))
    if len(rows) < 2:
        return None
    step_s = float(rows[0]["step_s"])
    x = [float(s["completed"]) for s in rows]
    y = [float(s[cpu_key]) for s in rows]
    if len(rows) == 2:
        slope = (y[1] - y[0]) / (x[1] - x[0]) if x[1] != x[0] else math.nan
        idle = (y[0] - slope * x[0]) / step_s
        return CostFit(slope * 1e6, None, idle * 100, 2, None)
    fit = sm.OLS(y, sm.add_constant(x)).fit()
    low, high = fit.conf_int(0.05)[1]
    return CostFit(
        float(fit.params[1]) * 1e6,
        (float(low) * 1e6, float(high) * 1e6),
        float(fit.params[0]) / step_s * 100,
        len(rows),
        _r_squared(fit, y),
    )


def _cost_through_idle(rows: Sequence[Mapping[str, Any]], cpu_key: str, idle_pct: float) -> CostFit:
    x = [float(s["completed"]) for s in rows]
    above_idle = [float(s[cpu_key]) - idle_pct / 100 * float(s["step_s"]) for s in rows]
    fit = sm.OLS(above_idle, x).fit()
    interval = None
    if len(rows) >= 2:
        low, high = fit.conf_int(0.05)[0]
        interval = (float(low) * 1e6, float(high) * 1e6)
    return CostFit(
        float(fit.params[0]) * 1e6,
        interval,
        idle_pct,
        len(rows),
        _r_squared(fit, above_idle),
        idle_measured=True,
    )


def _r_squared(fit: Any, y: Sequence[float]) -> float | None:
    """R² of a fit over two steps or more; None for a flat line, which leaves R² no spread to explain
    (statsmodels would divide by zero)."""
    return float(fit.rsquared) if len(y) >= 2 and max(y) > min(y) else None


def capacity(
    steps: Sequence[Mapping[str, Any]], slo_p99_ms: float, host_bounds: bool = True
) -> Capacity | None:
    """The SLO capacity of one ladder: the highest passing step with a failing step right above it (lower
    failing steps are stalls, counted in the note). None when no step passed. With `host_bounds`, a failing
    step the host could not offer gives a lower bound (a calibration passes False)."""
    ordered = sorted(steps, key=lambda s: s["rate"])
    passing = [k for k, s in enumerate(ordered) if s.get("slo_met")]
    if not passing:
        return None
    top = passing[-1]
    isolated = sum(1 for s in ordered[:top] if not s.get("slo_met"))
    note = f"; {isolated} lower step(s) failed too" if isolated else ""
    here = ordered[top]
    if top + 1 == len(ordered):
        return _at_least(here, "no step above it failed: a lower bound" + note)
    above = ordered[top + 1]
    if host_bounds and host_limited(above):
        return _at_least(
            here,
            "the step above was not offered as scheduled (late sends, or a busy host or driver): "
            "the host, not the app, set the limit, so a lower bound" + note,
        )
    low, high = float(here["rate"]), float(above["rate"])
    p99_low, p99_high = here.get("p99_ms"), above.get("p99_ms")
    if _finite(p99_low) and _finite(p99_high) and p99_low < slo_p99_ms < p99_high:
        share = (slo_p99_ms - p99_low) / (p99_high - p99_low)
        how = "interpolated where p99 crosses the SLO"
    else:
        share, how = 0.5, "midway: the step above failed on errors, the mean or throughput"
    return Capacity(low + share * (high - low), True, low, high, how + note)


def _at_least(step: Mapping[str, Any], how: str) -> Capacity:
    rate = float(step["rate"])
    return Capacity(rate, False, rate, None, how)


THROTTLED_SHARE = 0.2
"""An instance that had more than this share of its CFS periods throttled in a step sat at its CPU quota there."""


def host_limited(step: Mapping[str, Any]) -> bool:
    """A step the driver could not offer as scheduled for the host's sake: the step is invalid (driver,
    database or host over budget, harness/engine/ladder_digest.py), or requests went out late while the app
    had CPU to spare. Its SLO miss may be the host's, so it brackets nothing (docs/method.md, "7. Reading
    ladders"); late sends from an app at its quota are the app's (it holds all the driver's connections)."""
    if step.get("valid") is False:
        return True
    return bool(step.get("late_sends")) and not at_quota(step.get("throttled_share"))


def at_quota(throttled_share: Any) -> bool:
    """At the CPU quota: more than THROTTLED_SHARE of the CFS periods throttled (no quota: False)."""
    return _finite(throttled_share) and throttled_share > THROTTLED_SHARE


def saturation(steps: Sequence[Mapping[str, Any]]) -> float | None:
    """The highest completed rate of any step (the plateau, once the ladder passed it)."""
    rates = [float(s["throughput_rps"]) for s in steps if _finite(s.get("throughput_rps"))]
    return max(rates) if rates else None


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)
