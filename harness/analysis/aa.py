"""A/A (issue #28): the same app against itself, two interleaved groups of fresh-start ladders (A, B, A, B,
...) at the same rates, then the verdict table for every ladder metric. Nothing differs between the groups
but chance, so a "differs" is a false positive: the standing check that the statistics do not invent
differences. With K metrics tested at alpha each, about 1 - (1 - alpha)^K of A/A runs show at least one
by chance alone (K = 6, alpha = 0.05: 26 %); the Holm-adjusted p says whether one survives the family.
A metric computed from another one is shown and not tested: it would count one finding twice.
The ladders are run by harness/regimes/aa.py; this is their verdict table.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from harness.analysis.load import Run
from harness.analysis.metrics import ALL_METRICS
from harness.model.stats import MIN_N_INFERENCE, two_sample_test

AA_METRICS = (
    "cpu_us_per_request",
    "db_us_per_request",
    "capacity",
    "saturation_rps",
    "memory",
    "rps_per_mb",
    "normalized_throughput",
)
DERIVED_FROM = {"normalized_throughput": "cpu_us_per_request"}
"""Normalized throughput (req/s per CPU %) is 10,000 / the CPU µs per request: testing both would count one
finding twice (docs/method.md, "7. Reading ladders"; the lab log (docs/lab/), demo shape and calibration)."""
SAME = "no significant difference"
DIFFERS = "differs"


@dataclass(frozen=True)
class AaRow:
    metric: str
    title: str
    unit: str
    n_a: int
    n_b: int
    mean_a: float | None
    mean_b: float | None
    difference: float | None
    """mean(B) - mean(A)."""
    difference_ci: tuple[float, float] | None
    test: str
    p_value: float | None
    holm_p: float | None
    verdict: str

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["difference_ci"] = list(self.difference_ci) if self.difference_ci else None
        return out


def _welch_ci(a: np.ndarray, b: np.ndarray, confidence: float) -> tuple[float, float] | None:
    """Welch's interval for mean(b) - mean(a), the same test's interval (scipy)."""
    if np.all(a == a[0]) and np.all(b == b[0]):
        diff = float(b[0] - a[0])
        return (diff, diff)
    interval = sps.ttest_ind(b, a, equal_var=False).confidence_interval(confidence)
    low, high = float(interval.low), float(interval.high)
    return (low, high) if math.isfinite(low) and math.isfinite(high) else None


def aa_verdicts(
    group_a: Sequence[Run],
    group_b: Sequence[Run],
    alpha: float = 0.05,
    metrics: Sequence[str] = AA_METRICS,
    include_invalid: bool = False,
) -> list[AaRow]:
    """One row per metric over the valid ladders of each group: Welch's test (harness/model/stats.py
    two_sample_test), the difference with its interval and the verdict. A metric that is only a lower
    bound in some ladder (a capacity no step failed) is not tested, as in the comparison report.
    include_invalid: every completed ladder counts, as compare.py --include-invalid does."""

    def usable(run: Run) -> bool:
        return run.is_valid or (include_invalid and run.status == "completed" and run.metrics is not None)

    valid_a = [r for r in group_a if usable(r)]
    valid_b = [r for r in group_b if usable(r)]
    rows: list[AaRow] = []
    for key in metrics:
        metric = ALL_METRICS[key]
        bounded = [r for r in (*valid_a, *valid_b) if metric.bound(r) is not None]
        a = np.asarray([v for v in (metric.value(r) for r in valid_a) if v is not None], dtype=float)
        b = np.asarray([v for v in (metric.value(r) for r in valid_b) if v is not None], dtype=float)
        mean_a = float(a.mean()) if a.size else None
        mean_b = float(b.mean()) if b.size else None
        diff = mean_b - mean_a if mean_a is not None and mean_b is not None else None
        row = dict(
            metric=key,
            title=metric.title,
            unit=metric.unit,
            n_a=int(a.size),
            n_b=int(b.size),
            mean_a=mean_a,
            mean_b=mean_b,
            difference=diff,
            difference_ci=None,
            test="none",
            p_value=None,
            holm_p=None,
        )
        if key in DERIVED_FROM:
            verdict = f"not tested: derived from {ALL_METRICS[DERIVED_FROM[key]].title} (its own row)"
        elif bounded:
            verdict = f"not tested: {len(bounded)} ladder(s) give only a lower bound"
        elif a.size < MIN_N_INFERENCE or b.size < MIN_N_INFERENCE:
            verdict = f"not tested: n < {MIN_N_INFERENCE} in a group"
        else:
            name, p, note = two_sample_test(a, b, "welch")
            row.update(test=name, p_value=p, difference_ci=_welch_ci(a, b, 1 - alpha))
            verdict = f"not tested: {note}" if p is None else DIFFERS if p < alpha else SAME
        rows.append(AaRow(**row, verdict=verdict))
    tested = [i for i, r in enumerate(rows) if r.p_value is not None]
    if tested:
        adjusted = multipletests([rows[i].p_value for i in tested], alpha=alpha, method="holm")[1]
        for i, holm in zip(tested, adjusted, strict=True):
            rows[i] = replace(rows[i], holm_p=float(holm))
    return rows
