"""The verdict of a claim's rows from per-run numbers (pure, no runs; docs/replication/README.md, "How a
row is judged", states the method and its labels).

Every row is B/A on a positive quantity with a multiplicative spread, so all of it happens on the logs:
paired by fresh start when the variants ran side by side (harness/model/paired.py `paired_ratio`), Welch
when they ran apart (`unpaired_ratio`). Direction: the two-sided t-test, Holm across the claim's rows;
magnitude and `equivalent` rows: TOST within the band the YAML fixed before any run. No bootstrap: at
3-12 fresh starts its interval is too narrow, as it ignores the t quantile and has few distinct resamples
(tests/claims/test_calibration.py).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats
from statsmodels.stats.multitest import multipletests

from harness.claims.model import Comparison
from harness.model.paired import LogInterval, paired_ratio, unpaired_ratio
from harness.model.stats import MIN_N_INFERENCE

ALPHA = 0.05
POWER = 0.8
MAX_N = 200

REPLICATED = "replicated"
DIRECTION_ONLY = "direction only"
CONTRADICTED = "contradicted"
INCONCLUSIVE = "inconclusive"
NOT_TESTABLE = "not testable here"
NOT_RUNNABLE = "not runnable"

ABOVE, BELOW, STRADDLES = "above 1", "below 1", "straddles 1"
WITHIN, EXCLUDED, UNDECIDED = "within", "excluded", "undecided"


@dataclass
class Side:
    """The valid per-run values of one cell (impl x variant), and how many runs were excluded."""

    label: str
    values: list[float]
    invalid: int = 0
    unbracketed: list[float] = field(default_factory=list)
    """Lower bounds ("capacity >= X") of ladders that never failed a step: not values."""
    blocks: list[Any] = field(default_factory=list)
    """The fresh start of each value when the variants ran side by side (the pairing key); else empty."""
    invalid_why: list[str] = field(default_factory=list)
    """Why each excluded run was excluded (its first validity reason), where the runs said."""
    below: list[float] = field(default_factory=list)
    """Upper bounds ("capacity < X") of ladders whose every step missed the SLO from the first, at X req/s:
    the app's latency at the lightest load already exceeds it, so no lower rate would pass. Not values."""

    @property
    def n(self) -> int:
        return len(self.values)


@dataclass(frozen=True)
class Tost:
    """TOST of B/A within a band on the log scale: both one-sided t-tests on the log ratio must reject."""

    p_value: float
    ci90: tuple[float, float]
    """The 90 % interval of B/A: TOST at 5 % holds iff it lies in the band."""
    band: tuple[float, float]
    n_needed: int | None
    """Fresh starts per side for power 0.8 at the observed ratio and spread; None beyond MAX_N."""

    @property
    def outside(self) -> bool:
        """The whole interval lies outside the band: the difference is larger than the margin."""
        low, high = self.ci90
        return high < self.band[0] or low > self.band[1]


@dataclass(frozen=True)
class EffectTest:
    """Whether the data exclude a qualitative row's expected effect (`Comparison.tests_expected_effect`):
    the one-sided t-test on the log ratio of H0 "B/A is the expected effect or further from 1"."""

    effect: float
    p_value: float
    bound: float
    """The one-sided 95 % bound of B/A on the expected effect's side of the estimate: the data exclude
    every effect beyond it."""


# --- the log-ratio statistics, on arrays so that the calibration simulates exactly this code -------------


def log_ratio_stats(
    la: np.ndarray, lb: np.ndarray, paired: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean log ratio, its standard error, degrees of freedom) of log B - log A along the last axis.
    Paired: the per-block differences, df n-1. Apart: Welch, df by Welch-Satterthwaite."""
    if paired:
        d = lb - la
        n = d.shape[-1]
        return d.mean(axis=-1), d.std(axis=-1, ddof=1) / math.sqrt(n), np.full(d.shape[:-1], n - 1.0)
    na, nb = la.shape[-1], lb.shape[-1]
    va, vb = la.var(axis=-1, ddof=1) / na, lb.var(axis=-1, ddof=1) / nb
    se2 = va + vb
    with np.errstate(divide="ignore", invalid="ignore"):
        df = se2**2 / (va**2 / (na - 1) + vb**2 / (nb - 1))
    df = np.where(np.isfinite(df), df, na + nb - 2.0)
    return lb.mean(axis=-1) - la.mean(axis=-1), np.sqrt(se2), df


def floor_stats(lo: np.ndarray, log_floor: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean log ratio to the floor, its standard error, degrees of freedom) of one side's logs against the
    other side's floor, a bound that every value of the other side lies below: a one-sample t on the logs."""
    n = lo.shape[-1]
    return (
        lo.mean(axis=-1) - log_floor,
        lo.std(axis=-1, ddof=1) / math.sqrt(n),
        np.full(lo.shape[:-1], n - 1.0),
    )


def _t(est: np.ndarray, se: np.ndarray, shift: float = 0.0) -> np.ndarray:
    # identical values: no spread, so the sign of the difference is certain (0 only when there is none)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(se > 0, (est - shift) / se, np.sign(est - shift) * np.inf)


def two_sided_p(est: np.ndarray, se: np.ndarray, df: np.ndarray) -> np.ndarray:
    """H0: B/A = 1. Its rejection at ALPHA is exactly the 95 % t-interval of the ratio excluding 1."""
    t = _t(est, se)
    return np.where(np.isnan(t), 1.0, 2 * stats.t.sf(np.abs(np.nan_to_num(t, nan=0.0)), df))


def tost_p(est: np.ndarray, se: np.ndarray, df: np.ndarray, band: tuple[float, float]) -> np.ndarray:
    """TOST of B/A within band on the log scale: the larger of the two one-sided p-values."""
    low, high = math.log(band[0]), math.log(band[1])
    p_low = stats.t.sf(np.nan_to_num(_t(est, se, low), nan=0.0), df)
    p_high = stats.t.cdf(np.nan_to_num(_t(est, se, high), nan=0.0), df)
    return np.maximum(p_low, p_high)


def effect_p(est: np.ndarray, se: np.ndarray, df: np.ndarray, effect: float) -> np.ndarray:
    """One-sided p of H0 "the true B/A is `effect` or further from 1": small when the data exclude it."""
    t = np.nan_to_num(_t(est, se, math.log(effect)), nan=0.0)
    return stats.t.sf(t, df) if effect < 1 else stats.t.cdf(t, df)


def interval(
    est: np.ndarray, se: np.ndarray, df: np.ndarray, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    half = stats.t.ppf((1 + confidence) / 2, df) * se
    return np.exp(est - half), np.exp(est + half)


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error at most ALPHA across a claim's rows)."""
    return [float(p) for p in multipletests(p_values, method="holm")[1]] if p_values else []


# --- how many fresh starts a question needs -------------------------------------------------------------


def _df_se(n: int, sd_log: float, paired: bool) -> tuple[int, float]:
    """The log ratio's degrees of freedom and standard error with n fresh starts per side."""
    return (n - 1, sd_log / math.sqrt(n)) if paired else (2 * n - 2, sd_log * math.sqrt(2.0 / n))


def direction_power(n: int, sd_log: float, effect: float, paired: bool, alpha: float = ALPHA) -> float:
    """Power of the two-sided t-test on the log ratio with n fresh starts per side at a true ratio `effect`
    (noncentral t; sd_log is the per-block log ratio's SD when paired, one value's log SD when apart)."""
    if n < 2 or effect <= 0:
        return 0.0
    delta = abs(math.log(effect))
    if sd_log <= 0:
        return 1.0 if delta > 0 else 0.0
    df, se = _df_se(n, sd_log, paired)
    t_c = float(stats.t.ppf(1 - alpha / 2, df))
    return float(stats.nct.sf(t_c, df, delta / se) + stats.nct.cdf(-t_c, df, delta / se))


def tost_power_at(
    n: int, sd_log: float, band: tuple[float, float], true_ratio: float, paired: bool, alpha: float = ALPHA
) -> float:
    """Power of TOST within band at a true ratio (noncentral t approximation, both one-sided tests)."""
    if n < 2 or true_ratio <= 0:
        return 0.0
    if sd_log <= 0:
        return 1.0 if band[0] < true_ratio < band[1] else 0.0
    df, se = _df_se(n, sd_log, paired)
    t_c = float(stats.t.ppf(1 - alpha, df))
    delta = math.log(true_ratio)
    lower, upper = math.log(band[0]), math.log(band[1])
    power = stats.nct.cdf(-t_c, df, (delta - upper) / se) - stats.nct.cdf(t_c, df, (delta - lower) / se)
    return max(0.0, float(power))


def runs_needed(power_at: Any, start: int = MIN_N_INFERENCE) -> int | None:
    """The smallest n (fresh starts per side) whose power reaches POWER; None beyond MAX_N."""
    return next((n for n in range(max(start, 2), MAX_N + 1) if power_at(n) >= POWER), None)


# --- one row ----------------------------------------------------------------------------------------------


@dataclass
class ComparisonResult:
    comparison: Comparison
    impl: str
    a: Side
    b: Side
    outcome: str
    ratio: float | None = None
    """The ratio of geometric means (apart) or the geometric mean of per-start ratios (paired)."""
    ratio_ci: LogInterval | None = None
    p_value: float | None = None
    """Two-sided p of B/A = 1 (Welch or paired t on the logs), before Holm."""
    p_holm: float | None = None
    reason: str = ""
    tost: Tost | None = None
    tost_p_holm: float | None = None
    paired: bool = False
    direction: str | None = None
    magnitude: str | None = None
    n_needed: int | None = None
    sd_log: float | None = None
    rows_in_family: int = 1
    effect_test: EffectTest | None = None
    effect_p_holm: float | None = None
    bound: tuple[str, float] | None = None
    """When one side has upper bounds (`Side.below`): B/A is known only as "> x" or "< x", the 95 % bound
    from the other side's t-interval and that side's ceiling. `ratio` and `ratio_ci` stay None."""
    floor: float | None = None
    """The bounded side's ceiling, req/s: the highest first step its ladders missed, or of its capacities."""
    _stats: tuple[float, float, float] | None = None


def _paired_values(a: Side, b: Side) -> tuple[list[float], list[float]] | None:
    """The values of both sides from the same fresh starts, in block order; None when not side by side."""
    if not a.blocks or not b.blocks or len(a.blocks) != a.n or len(b.blocks) != b.n:
        return None
    bv = dict(zip(b.blocks, b.values, strict=True))
    common = [(va, bv[k]) for k, va in zip(a.blocks, a.values, strict=True) if k in bv]
    return [x for x, _ in common], [y for _, y in common]


def measure(comparison: Comparison, impl: str, a: Side, b: Side) -> ComparisonResult:
    """The row's statistics before any decision (the decision needs every row's p for Holm)."""
    result = ComparisonResult(comparison, impl, a, b, INCONCLUSIVE)
    if comparison.not_testable:
        result.outcome = NOT_TESTABLE
        result.reason = comparison.not_testable
        return result
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
    if a.below or b.below:
        return _measure_floor(result, a, b)
    pairs = _paired_values(a, b)
    xa, xb = pairs if pairs else (a.values, b.values)
    if len(xa) < MIN_N_INFERENCE or len(xb) < MIN_N_INFERENCE:
        result.reason = (
            f"fewer than {MIN_N_INFERENCE} valid runs per side ({a.label}: {a.n} valid, {a.invalid} invalid; "
            f"{b.label}: {b.n} valid, {b.invalid} invalid)"
            + (f"; {len(xa)} fresh starts with both" if pairs else "")
            + _why_invalid_text(a, b)
        )
        return result
    if min(xa + xb) <= 0:
        result.reason = "a ratio on the log scale needs positive values"
        return result
    result.paired = pairs is not None
    la, lb = np.log(np.array(xa)), np.log(np.array(xb))
    est, se, df = log_ratio_stats(la, lb, result.paired)
    result._stats = (float(est), float(se), float(df))
    result.ratio_ci = paired_ratio(xb, xa) if result.paired else unpaired_ratio(xb, xa)
    result.ratio = result.ratio_ci.centre
    result.p_value = float(two_sided_p(est, se, df))
    result.sd_log = (
        float(np.std(lb - la, ddof=1))
        if result.paired
        else math.sqrt((np.var(la, ddof=1) + np.var(lb, ddof=1)) / 2)
    )
    band = comparison.band() if comparison.relation == "equivalent" else comparison.magnitude_band()
    if band:
        p = float(tost_p(est, se, df, band))
        low, high = (float(v) for v in interval(est, se, df, 1 - 2 * ALPHA))
        # the runs needed at the observed effect: at the band's centre they would promise what the data deny
        observed = math.exp(est)
        need = runs_needed(lambda n: tost_power_at(n, result.sd_log or 0.0, band, observed, result.paired))
        result.tost = Tost(p, (low, high), band, need)
    effect = comparison.expected_effect
    if comparison.tests_expected_effect and effect:
        t95 = float(stats.t.ppf(1 - ALPHA, df)) * float(se)
        bound = math.exp(float(est) - t95 if effect < 1 else float(est) + t95)
        result.effect_test = EffectTest(effect, float(effect_p(est, se, df, effect)), bound)
    return result


def _measure_floor(result: ComparisonResult, a: Side, b: Side) -> ComparisonResult:
    """A row where some ladders of one side missed the SLO at every step from their first (docs/replication/
    README.md): B/A is bounded by the other side's values over that side's ceiling, since replacing its
    values by a bound none of them exceeds can only shrink the gap (tests/claims/test_calibration.py)."""
    if a.below and b.below:
        result.reason = (
            f"both sides have ladders that missed the SLO from their first step ({a.label} below "
            f"{max(a.below):g} req/s, {b.label} below {max(b.below):g} req/s): no capacity to compare"
        )
        return result
    floored, other = (a, b) if a.below else (b, a)
    if (
        len(floored.below) + floored.n < MIN_N_INFERENCE
        or other.n < MIN_N_INFERENCE
        or min(other.values) <= 0
    ):
        result.reason = (
            f"fewer than {MIN_N_INFERENCE} runs per side ({floored.label}: {len(floored.below)} below their "
            f"first step, {floored.n} valid, {floored.invalid} invalid; {other.label}: {other.n} valid, "
            f"{other.invalid} invalid)" + _why_invalid_text(a, b)
        )
        return result
    ceiling = max(floored.below + floored.values)
    est, se, df = floor_stats(np.log(np.array(other.values)), math.log(ceiling))
    low = float(interval(est, se, df, 0.95)[0])
    result.floor = ceiling
    result.bound = (">", low) if floored is a else ("<", 1.0 / low)
    # one-sided by construction: only the other side clearing the ceiling says anything about B/A
    result.p_value = float(two_sided_p(est, se, df)) if est > 0 else 1.0
    result.sd_log = float(np.std(np.log(other.values), ddof=1))
    result._stats = (float(est), float(se), float(df))
    return result


def _decide_floor(result: ComparisonResult, p_holm: float | None, rows: int) -> None:
    """The labels of a row bounded by a floor: the direction only where the other side clears the floor;
    a magnitude only where the bound lies wholly outside the published figure's band."""
    assert result.bound is not None and result.floor is not None
    comparison = result.comparison
    side, value = result.bound
    floored, other = (result.a, result.b) if side == ">" else (result.b, result.a)
    runs = len(floored.below) + floored.n
    missed = (
        f"all {runs} ladders missed the SLO at every step from their first"
        if not floored.values
        else f"{len(floored.below)} of {runs} ladders missed the SLO at every step from their first "
        f"(below {max(floored.below):g} req/s) and the others reached at most {max(floored.values):,.3g} req/s"
    )
    bound_text = (
        f"{floored.label}: {missed}, so no capacity of it exceeded {result.floor:,.3g} req/s; B/A {side} "
        f"{value:.3g} (the 95 % bound from {other.label}'s values over that ceiling)"
    )
    band = comparison.band() if comparison.relation == "equivalent" else comparison.magnitude_band()
    beyond = band is not None and (value > band[1] if side == ">" else value < band[0])
    if comparison.relation == "equivalent":
        result.magnitude = EXCLUDED if beyond else UNDECIDED
        result.outcome = CONTRADICTED if beyond else INCONCLUSIVE
        result.reason = bound_text + (
            "; wholly outside the band" if beyond else "; a bound cannot show equivalence"
        )
        return
    result.p_holm, result.rows_in_family = p_holm, rows
    significant = p_holm is not None and p_holm < ALPHA
    result.direction = (ABOVE if side == ">" else BELOW) if significant else STRADDLES
    if comparison.asks_magnitude:
        result.magnitude = EXCLUDED if beyond else UNDECIDED
    else:
        result.magnitude = "not tested" if comparison.magnitude_untested else "no figure"
    p_text = f"one-sample p={result.p_value:.3g}" + (
        f", Holm p={p_holm:.3g} over {rows} rows" if rows > 1 else ""
    )
    expected = ABOVE if comparison.relation == "greater" else BELOW
    if not significant:
        result.outcome = INCONCLUSIVE
        result.reason = f"{bound_text}; the bound does not clear 1 ({p_text})"
    elif result.direction != expected:
        result.outcome = CONTRADICTED
        result.reason = f"the opposite direction: {bound_text} ({p_text})"
    else:
        result.outcome = REPLICATED if result.magnitude == "no figure" else DIRECTION_ONLY
        result.reason = f"direction {result.direction}: {bound_text} ({p_text})" + (
            f"; magnitude {result.magnitude}" if result.magnitude != "no figure" else ""
        )


def _tost_runs(test: Tost, observed: float | None) -> str:
    """The fresh starts TOST would need at the observed ratio and spread, or why no number would do."""
    at = f"at the observed ratio {observed:.3g}" if observed else "at the observed ratio"
    if test.n_needed:
        return f"{at} and this spread, {test.n_needed} fresh starts per side would give power {POWER:g}"
    return (
        f"{at}, at or past the band's edge, even {MAX_N} fresh starts per side would not show it "
        "within the band (power below 0.8)"
    )


def _effect_text(test: EffectTest, p_holm: float, rows: int) -> str:
    side = "lower" if test.effect < 1 else "upper"
    p_text = f"p={test.p_value:.3g}" + (f", Holm p={p_holm:.3g} over {rows} rows" if rows > 1 else "")
    return (
        f"the expected effect {test.effect:g} is {'excluded' if p_holm < ALPHA else 'not excluded'}: "
        f"the one-sided 95 % {side} bound of B/A is {test.bound:.3g} ({p_text})"
    )


def decide(
    result: ComparisonResult,
    p_holm: float | None,
    tost_p_holm: float | None,
    rows: int,
    effect_p_holm: float | None = None,
    effect_rows: int = 1,
) -> None:
    """The row's labels from its Holm-adjusted p-values (judge_rows decides only measured rows)."""
    if result.bound is not None:
        _decide_floor(result, p_holm, rows)
        return
    comparison = result.comparison
    result.p_holm, result.tost_p_holm, result.rows_in_family = p_holm, tost_p_holm, rows
    n = min(result.a.n, result.b.n)
    holm_note = f" (Holm over {rows} rows)" if rows > 1 else ""
    test = result.tost  # present exactly when the row asks a TOST question (equivalence or a magnitude)
    if test is not None:
        assert tost_p_holm is not None
        band = f"[{test.band[0]:.3g}, {test.band[1]:.3g}]"
        ci90 = f"the 90 % interval [{test.ci90[0]:.3g}, {test.ci90[1]:.3g}]"
        result.magnitude = WITHIN if tost_p_holm < ALPHA else EXCLUDED if test.outside else UNDECIDED
    if comparison.relation == "equivalent":
        assert test is not None and tost_p_holm is not None
        if result.magnitude == WITHIN:
            result.outcome = REPLICATED
            result.reason = f"TOST p={tost_p_holm:.3g}{holm_note}: {ci90} lies within {band}"
        elif result.magnitude == EXCLUDED:
            result.outcome = CONTRADICTED
            result.reason = f"{ci90} lies wholly outside {band}"
        else:
            result.outcome = INCONCLUSIVE
            result.n_needed = test.n_needed
            result.reason = (
                f"TOST p={tost_p_holm:.3g}{holm_note} >= {ALPHA:g}: {ci90} is not within {band}; "
                f"{_tost_runs(test, result.ratio)} (n now {n})"
            )
        return
    assert result.ratio_ci is not None and p_holm is not None
    low, high = result.ratio_ci.low or 0.0, result.ratio_ci.high or 0.0
    result.direction = ABOVE if low > 1.0 else BELOW if high < 1.0 else STRADDLES
    up = (result.ratio or 1.0) > 1.0
    expected_up = comparison.relation == "greater"
    significant = p_holm < ALPHA
    magnitude_text = ""
    if test is not None:
        if result.magnitude == WITHIN:
            magnitude_text = f"magnitude: TOST p={tost_p_holm:.3g} puts {comparison.published_ratio:.3g} ± its tolerance {band} around the ratio"
        elif result.magnitude == EXCLUDED:
            magnitude_text = (
                f"magnitude excluded: {ci90} lies wholly outside the published {comparison.published_ratio:.3g}'s "
                f"band {band}"
            )
        else:
            magnitude_text = (
                f"magnitude undecided: TOST p={tost_p_holm:.3g} for {band}; {_tost_runs(test, result.ratio)}"
            )
    elif comparison.magnitude_untested:
        result.magnitude = "not tested"
        magnitude_text = f"magnitude not tested: {comparison.magnitude_untested}"
    else:
        result.magnitude = "no figure"
    p_text = f"{'paired' if result.paired else 'Welch'} p={result.p_value:.3g}" + (
        f", Holm p={p_holm:.3g} over {rows} rows" if rows > 1 else ""
    )
    effect_excluded = False
    if result.effect_test is not None and effect_p_holm is not None:
        result.effect_p_holm = effect_p_holm
        effect_excluded = effect_p_holm < ALPHA
        effect_text = _effect_text(result.effect_test, effect_p_holm, effect_rows)
        magnitude_text = f"{magnitude_text}; {effect_text}" if magnitude_text else effect_text
    if significant and up != expected_up:
        result.outcome = CONTRADICTED
        result.reason = f"the opposite direction: the ratio is {result.direction} ({p_text})"
        return
    if significant:
        full = result.magnitude in (WITHIN, "no figure") and not effect_excluded
        result.outcome = REPLICATED if full else DIRECTION_ONLY
        result.reason = f"direction {result.direction} ({p_text})" + (
            f"; {magnitude_text}" if magnitude_text else ""
        )
        return
    why = (
        "the 95 % interval straddles 1"
        if result.direction == STRADDLES
        else f"the 95 % interval excludes 1 but not after Holm over {rows} rows"
    )
    if effect_excluded:
        result.outcome = CONTRADICTED
        result.reason = f"{why} ({p_text}), and {magnitude_text}"
    else:
        result.outcome = INCONCLUSIVE
        sd, effect = result.sd_log or 0.0, result.ratio or 1.0
        need = runs_needed(lambda k: direction_power(k, sd, effect, result.paired, ALPHA / rows), n)
        result.n_needed = need
        if effect != 1.0 and up != expected_up:
            # More fresh starts at this ratio would decide against the claim: the number must not read as
            # the cost of replicating it.
            runs = f"the observed ratio {effect:.3g} lies on the other side of 1 from the expected one: " + (
                f"at it, {need} fresh starts per side would give power {POWER:g} to show that opposite "
                "direction, and no number of them the expected one"
                if need
                else f"at it, even {MAX_N} fresh starts per side would show neither direction with power {POWER:g}"
            )
        else:
            runs = (
                f"{need} fresh starts per side would give power {POWER:g} at the observed ratio {effect:.3g}"
                if need
                else f"more than {MAX_N} fresh starts per side at the observed ratio {effect:.3g}"
            )
        result.reason = f"{why} ({p_text}); {runs} (n now {n})" + (
            f"; {magnitude_text}" if magnitude_text else ""
        )


def judge_rows(rows: list[ComparisonResult]) -> list[ComparisonResult]:
    """Decide every measured row of one claim, Holm-adjusting the direction and the TOST p-values across
    the rows that asked each question."""
    measured = [r for r in rows if r._stats is not None]
    directional = [r for r in measured if r.comparison.relation != "equivalent"]
    dir_adj = dict(zip(map(id, directional), holm([r.p_value or 1.0 for r in directional]), strict=True))
    tested = [r for r in measured if r.tost is not None]
    tost_adj = dict(zip(map(id, tested), holm([r.tost.p_value for r in tested if r.tost]), strict=True))
    effects = [r for r in measured if r.effect_test is not None]
    effect_adj = dict(
        zip(map(id, effects), holm([r.effect_test.p_value for r in effects if r.effect_test]), strict=True)
    )
    for r in measured:
        family = len(directional) if r.comparison.relation != "equivalent" else len(tested)
        decide(
            r, dir_adj.get(id(r)), tost_adj.get(id(r)), max(family, 1), effect_adj.get(id(r)), len(effects)
        )
    return rows


def _why_invalid_text(*sides: Side) -> str:
    """The excluded runs' reasons, each once with how many runs gave it: what a rerun would have to change."""
    counts = Counter(f"{s.label}: {why}" for s in sides for why in s.invalid_why)
    return "".join(f"; {why}" + (f" ({n} runs)" if n > 1 else "") for why, n in counts.items())


def judge(comparison: Comparison, impl: str, a: Side, b: Side) -> ComparisonResult:
    """One row judged alone (a family of one)."""
    return judge_rows([measure(comparison, impl, a, b)])[0]


@dataclass
class ClaimVerdict:
    claim_id: str
    outcome: str
    results: list[ComparisonResult] = field(default_factory=list)
    reason: str = ""
    notes: list[str] = field(default_factory=list)
    # (impl, variant) -> the per-run records behind the verdict: {"valid", "value", "run"}
    observations: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)


def combine(claim_id: str, results: list[ComparisonResult]) -> ClaimVerdict:
    """Any contradicted -> contradicted; all replicated -> replicated; every row's direction holding ->
    direction only; otherwise inconclusive. Rows declared not testable are left out of the claim's label."""
    outcomes = [r.outcome for r in results if r.outcome != NOT_TESTABLE]
    if not outcomes:
        outcome = NOT_TESTABLE if results else INCONCLUSIVE
    elif CONTRADICTED in outcomes:
        outcome = CONTRADICTED
    elif set(outcomes) == {REPLICATED}:
        outcome = REPLICATED
    elif set(outcomes) <= {REPLICATED, DIRECTION_ONLY}:
        outcome = DIRECTION_ONLY
    else:
        outcome = INCONCLUSIVE
    return ClaimVerdict(claim_id, outcome, results)
