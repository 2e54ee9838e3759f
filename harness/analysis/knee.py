"""Where a latency-vs-throughput curve turns upward (thesis fig 7.4: "the critical point").

The knee is the point farthest below the chord from the first to the last point, with both axes scaled to
[0, 1] (the Kneedle idea). Latency that is flat and then climbs has its knee where the climb starts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MIN_POINTS = 3


@dataclass(frozen=True)
class Knee:
    x: float
    y: float


def find_knee(xs: Sequence[float], ys: Sequence[float]) -> Knee | None:
    """The knee of an increasing, convex-ish curve; None with fewer than three points or a straight line."""
    x = np.asarray(xs, dtype=float)
    y = np.asarray(ys, dtype=float)
    if x.size < MIN_POINTS or x.size != y.size:
        return None
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    span_x, span_y = x[-1] - x[0], y.max() - y.min()
    if span_x <= 0 or span_y <= 0:
        return None
    xn = (x - x[0]) / span_x
    yn = (y - y.min()) / span_y
    chord = yn[0] + (yn[-1] - yn[0]) * xn
    gap = chord - yn
    best = int(np.argmax(gap))
    if gap[best] <= 0.05:  # within 5 % of a straight line: no knee worth marking
        return None
    return Knee(float(x[best]), float(y[best]))
