"""The verdict of one comparison from per-run numbers (docs/design.md §8; pure, no runs).

The statistic is the ratio of means B / A with its seeded bootstrap 95 % interval (harness.analysis.stats).
- replicated: the whole interval lies on the expected side (or, for `similar`, within 1 ± tolerance);
- contradicted: the whole interval lies on the opposite side (for `similar`: entirely outside the band);
- inconclusive: otherwise, or when a side has fewer than 3 valid runs.
`equivalent` is judged by TOST instead (harness/claims/equivalence.py): replicated when TOST rejects
non-equivalence at 5 %, contradicted when the 90 % interval lies wholly outside the margin band.
A capacity that a ladder did not bracket (no step failed above it: "at least X") is a lower bound, never a
figure: a comparison with one is inconclusive and says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.analysis.stats import MIN_N_INFERENCE, Interval, mean_ci, ratio_ci, stable_seed, two_sample_test
from harness.claims.equivalence import Tost, tost
from harness.claims.model import Comparison

REPLICATED = "replicated"
CONTRADICTED = "contradicted"
INCONCLUSIVE = "inconclusive"
NOT_RUNNABLE = "not runnable"


@dataclass
class Side:
    """The valid per-run values of one cell (impl x variant), and how many runs were excluded."""

    label: str
    values: list[float]
    invalid: int = 0
    unbracketed: list[float] = field(default_factory=list)
    """Lower bounds ("capacity >= X") of ladders that never failed a step: not values."""

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float | None:
        return sum(self.values) / len(self.values) if self.values else None

    @property
    def ci(self) -> Interval | None:
        return mean_ci(self.values)


@dataclass
class ComparisonResult:
    comparison: Comparison
    impl: str
    a: Side
    b: Side
    outcome: str
    ratio: float | None = None
    ratio_ci: Interval | None = None
    p_value: float | None = None
    reason: str = ""
    tost: Tost | None = None


@dataclass
class ClaimVerdict:
    claim_id: str
    outcome: str
    results: list[ComparisonResult] = field(default_factory=list)
    reason: str = ""
    notes: list[str] = field(default_factory=list)
    # (impl, variant) -> the per-run records behind the verdict: {"valid", "value", "run"}
    observations: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)


def _holds(relation: str, comparison: Comparison, low: float, high: float) -> tuple[bool, bool]:
    """(expected side holds, opposite side holds) for a ratio interval [low, high]."""
    if relation == "greater":
        return low > 1.0, high < 1.0
    if relation == "less":
        return high < 1.0, low > 1.0
    if relation == "ratio_at_least":
        bound = float(comparison.bound or 1.0)
        return low >= bound, high < bound
    if relation == "ratio_at_most":
        bound = float(comparison.bound or 1.0)
        return high <= bound, low > bound
    if relation == "similar":
        tol = float(comparison.tolerance or 0.0)
        lo_band, hi_band = 1.0 - tol, 1.0 + tol
        return lo_band <= low and high <= hi_band, low > hi_band or high < lo_band
    raise ValueError(f"unknown relation {relation!r}")


def judge(
    comparison: Comparison, impl: str, a: Side, b: Side, seed_parts: tuple[object, ...] = ()
) -> ComparisonResult:
    result = ComparisonResult(comparison, impl, a, b, INCONCLUSIVE)
    bounds = [(s, s.unbracketed) for s in (a, b) if s.unbracketed]
    if bounds:
        result.reason = (
            "capacity not bracketed: "
            + "; ".join(
                f"{s.label}: {len(u)} of {len(u) + s.n} ladders never failed a step (>= {min(u):,.0f} req/s)"
                for s, u in bounds
            )
            + ". A claim is not judged on lower bounds; the ladder's top step must fail"
        )
        return result
    if a.n < MIN_N_INFERENCE or b.n < MIN_N_INFERENCE:
        result.reason = (
            f"fewer than {MIN_N_INFERENCE} valid runs per side ({a.label}: {a.n} valid, {a.invalid} invalid; "
            f"{b.label}: {b.n} valid, {b.invalid} invalid)"
        )
        return result
    if not a.mean:
        result.reason = f"{a.label}'s mean is 0: no ratio"
        return result
    result.ratio = (b.mean or 0.0) / a.mean
    result.p_value = two_sample_test(a.values, b.values)[1]
    interval = ratio_ci(a.values, b.values, seed=stable_seed(*seed_parts, impl, a.label, b.label))
    result.ratio_ci = interval
    if comparison.relation == "equivalent":
        return _judge_equivalent(result, comparison, a, b)
    if interval is None:
        result.reason = "no bootstrap interval could be formed"
        return result
    expected, opposite = _holds(comparison.relation, comparison, interval.low, interval.high)
    if expected:
        result.outcome = REPLICATED
    elif opposite:
        result.outcome = CONTRADICTED
    else:
        result.reason = "the 95 % interval of the ratio straddles the expected boundary"
    return result


def _judge_equivalent(result: ComparisonResult, comparison: Comparison, a: Side, b: Side) -> ComparisonResult:
    if min(a.values + b.values) <= 0:
        result.reason = "TOST on the log ratio needs positive values"
        return result
    test = tost(a.values, b.values, comparison.band())
    result.tost = test
    low, high = test.ci90
    band = f"[{test.band[0]:.3g}, {test.band[1]:.3g}]"
    if test.equivalent:
        result.outcome = REPLICATED
        result.reason = (
            f"TOST p={test.p_value:.3g}: the 90 % interval [{low:.3g}, {high:.3g}] lies within {band}"
        )
    elif test.outside:
        result.outcome = CONTRADICTED
        result.reason = f"the 90 % interval [{low:.3g}, {high:.3g}] lies wholly outside {band}"
    else:
        need = f"{test.n_needed}" if test.n_needed else f"more than {200}"
        result.reason = (
            f"TOST p={test.p_value:.3g} >= 0.05: the 90 % interval [{low:.3g}, {high:.3g}] is not within {band}; "
            f"at this variance {need} runs per side give power 0.8 (n now {min(a.n, b.n)})"
        )
    return result


def combine(claim_id: str, results: list[ComparisonResult]) -> ClaimVerdict:
    """All replicated -> replicated; any contradicted -> contradicted; otherwise inconclusive."""
    outcomes = [r.outcome for r in results]
    if outcomes and all(o == REPLICATED for o in outcomes):
        outcome = REPLICATED
    elif any(o == CONTRADICTED for o in outcomes):
        outcome = CONTRADICTED
    else:
        outcome = INCONCLUSIVE
    return ClaimVerdict(claim_id, outcome, results)
