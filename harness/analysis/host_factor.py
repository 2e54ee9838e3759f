"""How much of a ladder group's spread in CPU per request the host explains (docs/method.md, "The host
factor").

On a shared host the CPU time one request costs moves between fresh starts, and it moves for every process
of the run at once. The load driver does the same work in every ladder of one app at one rate (the same
requests, the same responses), so its CPU per request there, over the median of the ladders, is the host's
speed in that step. Pearson's r between that and the app's CPU per request (also over its median at the
rate) says how closely the app followed the host: near 1, the host, not the app, set the spread.

It describes a group of ladders of one app at the same rates, not one folder alone.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from harness.model.ladder_math import below_saturation

Step = Mapping[str, Any]
MIN_STEPS = 3


def driver_s_per_request(step: Step) -> float | None:
    """The load driver's CPU seconds per completed request in one step; None where either is unknown."""
    pct, completed, step_s = step.get("loadgen_cpu_pct"), step.get("completed"), step.get("step_s")
    if not isinstance(pct, (int, float)) or not math.isfinite(pct) or pct <= 0 or not completed or not step_s:
        return None
    return pct / 100 * float(step_s) / float(completed)


def app_s_per_request(step: Step) -> float | None:
    """The instances' CPU seconds per completed request in one step; None where either is unknown."""
    cpu, completed = step.get("instance_cpu_s"), step.get("completed")
    if not isinstance(cpu, (int, float)) or not math.isfinite(cpu) or not completed:
        return None
    return float(cpu) / float(completed)


def relative_to_median(
    ladders: Sequence[Sequence[Step]], per_request: Callable[[Step], float | None]
) -> dict[tuple[int, int], float]:
    """(ladder, step index) -> the step's figure over the median of every ladder's figure at its rate,
    over the steps below saturation."""
    figures: dict[tuple[int, int], tuple[int, float]] = {}
    by_rate: dict[int, list[float]] = {}
    for number, steps in enumerate(ladders):
        for step in below_saturation(steps):
            value = per_request(step)
            if value is not None:
                rate = round(float(step["rate"]))
                figures[(number, int(step["index"]))] = (rate, value)
                by_rate.setdefault(rate, []).append(value)
    medians = {rate: statistics.median(values) for rate, values in by_rate.items()}
    return {key: value / medians[rate] for key, (rate, value) in figures.items() if medians[rate] > 0}


def shared_factor_r(ladders: Sequence[Sequence[Step]]) -> float | None:
    """Pearson's r over every step below saturation between the app's and the driver's CPU per request,
    each over its median at the step's rate. None with fewer than 3 steps, or where either never varied."""
    app = relative_to_median(ladders, app_s_per_request)
    host = relative_to_median(ladders, driver_s_per_request)
    keys = sorted(app.keys() & host.keys())
    if len(keys) < MIN_STEPS:
        return None
    x = np.array([app[k] for k in keys])
    y = np.array([host[k] for k in keys])
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def postgres_adjusted(costs: Sequence[float | None], db_costs: Sequence[float | None]) -> list[float | None]:
    """Each ladder's CPU cost per request with the host's share of the spread taken out: times the group's
    median PostgreSQL cost per request over the ladder's own. PostgreSQL runs the same statements for every
    request of one app, so its cost moves only with the host, and the app's and PostgreSQL's costs per ladder
    follow each other closely (the lab log (docs/lab/), host adjusted cost). The group's level
    stays the app's own, so it is comparable between apps only as the raw cost is. None for a ladder
    without both figures."""
    pairs = [
        (c, d) if c is not None and d is not None and d > 0 else None
        for c, d in zip(costs, db_costs, strict=True)
    ]
    known = [pair[1] for pair in pairs if pair is not None]
    middle = statistics.median(known) if known else None
    return [pair[0] * middle / pair[1] if pair is not None and middle else None for pair in pairs]
