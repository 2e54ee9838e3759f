"""Paired comparisons of positive quantities (docs/method.md, "Side by side").

A side-by-side fresh start measures every group in the same seconds, so the host's drift cancels in their
ratio: each fresh start (the block) gives one ratio per group, and the comparison is their geometric mean with
a t-interval on the logs. Every interval here lives on the log scale, so it never reaches zero or below.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from scipy import stats

CONFIDENCE = 0.95


@dataclass(frozen=True)
class LogInterval:
    """A geometric mean with its t-interval on the log scale. `low`/`high` are None below 2 values."""

    n: int
    centre: float
    low: float | None
    high: float | None
    cv_pct: float | None
    """The values' own coefficient of variation (sample SD over mean), None below 2 values."""
    confidence: float = CONFIDENCE

    @property
    def half_width_pct(self) -> float | None:
        """The interval's larger half-width as a share of its centre: the precision a reader can quote."""
        if self.low is None or self.high is None or self.centre <= 0:
            return None
        return 100 * max(self.high / self.centre - 1, 1 - self.low / self.centre)

    def to_json(self) -> dict[str, float | int | None]:
        return asdict(self)


def cv_pct(values: Sequence[float]) -> float | None:
    if len(values) < 2:
        return None
    mean = sum(values) / len(values)
    if mean == 0:
        return None
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    return 100 * sd / abs(mean)


def log_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> LogInterval:
    """The geometric mean of positive values with its t-interval on the logs. Refuses a value that is not
    positive: a cost, capacity or memory of zero or less is a measuring error, not a figure."""
    if not values:
        raise ValueError("no values")
    bad = [v for v in values if not (v > 0 and math.isfinite(v))]
    if bad:
        raise ValueError(f"a log-scale interval needs positive, finite values; got {bad}")
    logs = [math.log(v) for v in values]
    n = len(logs)
    mean = sum(logs) / n
    if n < 2:
        return LogInterval(n, math.exp(mean), None, None, None, confidence)
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (n - 1))
    half = float(stats.t.ppf((1 + confidence) / 2, n - 1)) * sd / math.sqrt(n)
    return LogInterval(
        n, math.exp(mean), math.exp(mean - half), math.exp(mean + half), cv_pct(values), confidence
    )


def paired_ratio(
    numerators: Sequence[float], denominators: Sequence[float], confidence: float = CONFIDENCE
) -> LogInterval:
    """The ratio numerator/denominator over blocks measured together (index k of each is one fresh start):
    the geometric mean of the per-block ratios with its t-interval, paired by block."""
    if len(numerators) != len(denominators):
        raise ValueError(f"paired values need equal counts; got {len(numerators)} and {len(denominators)}")
    return log_interval([a / b for a, b in zip(numerators, denominators, strict=True)], confidence)


def unpaired_ratio(
    numerators: Sequence[float], denominators: Sequence[float], confidence: float = CONFIDENCE
) -> LogInterval:
    """The ratio of two groups measured apart: the difference of mean logs with a Welch t-interval. Its
    `cv_pct` is the CV the ratio of two independently drawn values would have (from the logs' variances)."""
    a = [math.log(v) for v in numerators]
    b = [math.log(v) for v in denominators]
    if len(a) < 2 or len(b) < 2:
        centre = math.exp(sum(a) / len(a) - sum(b) / len(b))
        return LogInterval(min(len(a), len(b)), centre, None, None, None, confidence)
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    va = sum((x - ma) ** 2 for x in a) / (len(a) - 1)
    vb = sum((x - mb) ** 2 for x in b) / (len(b) - 1)
    se2 = va / len(a) + vb / len(b)
    if se2 == 0:
        centre = math.exp(ma - mb)
        return LogInterval(min(len(a), len(b)), centre, centre, centre, 0.0, confidence)
    df = se2**2 / ((va / len(a)) ** 2 / (len(a) - 1) + (vb / len(b)) ** 2 / (len(b) - 1))
    half = float(stats.t.ppf((1 + confidence) / 2, df)) * math.sqrt(se2)
    centre = math.exp(ma - mb)
    return LogInterval(
        min(len(a), len(b)),
        centre,
        math.exp(ma - mb - half),
        math.exp(ma - mb + half),
        100 * math.sqrt(math.exp(va + vb) - 1),
        confidence,
    )
