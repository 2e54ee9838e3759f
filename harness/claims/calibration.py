"""How well the claims' statistics behave at the sample sizes the claims use: simulated fresh starts through
the very functions the verdicts use (harness/claims/verdict.py), for tests/claims/test_calibration.py and
the power per claim in docs/replication/REPORT.md.

The noise model is this machine's, as measured by A/A runs (docs/method.md, "Side by side"): fresh starts
run apart scatter by 10-15 % (CV) around their mean, mostly host drift; side by side, the groups share that
drift (10 %) and keep only their own few per cent, which cancel less well than the drift does.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

import numpy as np

from harness.claims.model import Claim, Comparison
from harness.claims.verdict import ALPHA, floor_stats, interval, log_ratio_stats, tost_p, two_sided_p

APART_CVS: tuple[float, ...] = (0.10, 0.15)
SHARED_DRIFT_CV = 0.10
OWN_CV_SIDE_BY_SIDE = 0.03
"""Each group's own scatter within a side-by-side fresh start: what the A/A band of [0.97, 1.03] allows."""
SIMULATIONS = 4000


def sd_log(cv: float) -> float:
    """The SD of the logs of a log-normal quantity with this coefficient of variation."""
    return math.sqrt(math.log1p(cv * cv))


def simulate(
    n: int, sims: int, true_ratio: float, paired: bool, cv: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Logs of `sims` data sets of n fresh starts per side (A, then B = A's level x true_ratio).
    Apart: every value draws its own drift at `cv`. Side by side: both groups of a fresh start share a drift
    at `cv` and add their own OWN_CV_SIDE_BY_SIDE."""
    shift = math.log(true_ratio)
    if paired:
        drift = rng.normal(0.0, sd_log(cv), (sims, n))
        own = sd_log(OWN_CV_SIDE_BY_SIDE)
        return drift + rng.normal(0.0, own, (sims, n)), drift + shift + rng.normal(0.0, own, (sims, n))
    s = sd_log(cv)
    return rng.normal(0.0, s, (sims, n)), shift + rng.normal(0.0, s, (sims, n))


@dataclass(frozen=True)
class Calibration:
    n: int
    design: str
    cv: float
    false_positive: float
    """Identical groups: the share of data sets whose 95 % interval of B/A excludes 1."""
    coverage: float
    """A true ratio of 1.25: the share of 95 % intervals that contain it."""
    tost_false_positive: float
    """A true ratio on the edge of a 10 % band: the share of TOST verdicts "within"."""
    sims: int

    @property
    def error(self) -> float:
        """The simulation's own standard error at a 5 % rate."""
        return math.sqrt(ALPHA * (1 - ALPHA) / self.sims)


def calibrate(n: int, paired: bool, cv: float, sims: int = SIMULATIONS, seed: int = 45) -> Calibration:
    rng = np.random.default_rng([seed, n, int(paired), int(cv * 1000)])
    la, lb = simulate(n, sims, 1.0, paired, cv, rng)
    false_positive = float(np.mean(two_sided_p(*log_ratio_stats(la, lb, paired)) < ALPHA))
    true = 1.25
    la, lb = simulate(n, sims, true, paired, cv, rng)
    low, high = interval(*log_ratio_stats(la, lb, paired), 0.95)
    coverage = float(np.mean((low <= true) & (true <= high)))
    band = (1 / 1.1, 1.1)
    la, lb = simulate(n, sims, band[1], paired, cv, rng)
    tost_fp = float(np.mean(tost_p(*log_ratio_stats(la, lb, paired), band) < ALPHA))
    return Calibration(n, "side by side" if paired else "apart", cv, false_positive, coverage, tost_fp, sims)


def floor_false_positive(
    n: int, cv: float, floor_sds: float, sims: int = SIMULATIONS, seed: int = 45
) -> tuple[float, float]:
    """(false positives, share of data sets that used a ceiling) of the whole capacity procedure on
    identical groups apart, when every ladder starts at a first step `floor_sds` log-SDs from the groups'
    level: a value below it is only known as "below the first step" (harness/claims/verdict.py
    `_measure_floor`). A side with such runs is bounded by its ceiling (the first step, or its largest
    value above it), against the other side's values; runs below on both sides are not judged; sides with
    values only take Welch on the logs. A false positive is any direction declared (either sign) at ALPHA."""
    rng = np.random.default_rng([seed, n, int(cv * 1000), int(floor_sds * 100) + 1000])
    la, lb = simulate(n, sims, 1.0, False, cv, rng)
    log_floor = floor_sds * sd_log(cv)
    a_low, b_low = (la < log_floor).sum(axis=-1), (lb < log_floor).sum(axis=-1)
    declared = (a_low == 0) & (b_low == 0) & (two_sided_p(*log_ratio_stats(la, lb, False)) < ALPHA)
    used = np.zeros(sims, dtype=bool)
    for floored, low_floored, other, low_other in ((la, a_low, lb, b_low), (lb, b_low, la, a_low)):
        ceiling = np.maximum(floored.max(axis=-1), log_floor)
        est, se, df = floor_stats(other, 0.0)
        est = est - ceiling
        bounded = (low_floored > 0) & (low_other == 0)
        used |= bounded
        declared |= bounded & (est > 0) & (two_sided_p(est, se, df) < ALPHA)
    return float(np.mean(declared)), float(np.mean(used))


def floor_coverage(
    n: int, cv: float, true_ratio: float, level_sds: float, sims: int = SIMULATIONS, seed: int = 45
) -> float:
    """How often the one-sided 95 % bound of a floored baseline ("B/A > x") lies at or below the true ratio,
    when the ladders' first step sits `level_sds` log-SDs above the baseline's level (its runs below it
    become floors) and B is `true_ratio` times A. Only data sets that used the bound count."""
    rng = np.random.default_rng([seed, n, int(cv * 1000), int(level_sds * 100) + 1000, int(true_ratio * 100)])
    la, lb = simulate(n, sims, true_ratio, False, cv, rng)
    log_floor = level_sds * sd_log(cv)
    bounded = ((la < log_floor).sum(axis=-1) > 0) & ((lb < log_floor).sum(axis=-1) == 0)
    ceiling = np.maximum(la.max(axis=-1), log_floor)
    est, se, df = floor_stats(lb, 0.0)
    low, _ = interval(est - ceiling, se, df, 0.95)
    covered = low <= true_ratio
    return float(np.mean(covered[bounded])) if bounded.any() else 1.0


def sample_sizes(claims: list[Claim]) -> list[int]:
    """Every number of fresh starts per side a runnable claim declares (quick and full)."""
    return sorted({s.repetitions for c in claims if c.runnable for s in (c.quick, c.full)})


@dataclass(frozen=True)
class RowPower:
    claim_id: str
    row: str
    effect: float | None
    design: str
    cv: float
    n: int
    direction: float | None
    """P(the direction holds) at the row's expected effect; for equivalence rows, P(TOST within)."""
    replicated: float | None
    """P(the row is labelled replicated): direction and, where asked, magnitude."""


def row_power(
    comparison: Comparison, n: int, paired: bool, cv: float, rows: int, seed: int, sims: int = 2000
) -> tuple[float | None, float | None]:
    """(direction, replicated) power of one row by simulation at its expected effect, with a Bonferroni
    share ALPHA / rows of the error for each question: a lower bound of what Holm's step-down gives."""
    effect = comparison.effect()
    if effect is None:
        return None, None
    rng = np.random.default_rng([seed, n, int(cv * 1000)])
    la, lb = simulate(n, sims, effect, paired, cv, rng)
    est, se, df = log_ratio_stats(la, lb, paired)
    alpha = ALPHA / max(rows, 1)
    if comparison.relation == "equivalent":
        hit = float(np.mean(tost_p(est, se, df, comparison.band()) < alpha))
        return hit, hit
    right = (est > 0) if comparison.relation == "greater" else (est < 0)
    direction = (two_sided_p(est, se, df) < alpha) & right
    band = comparison.magnitude_band()
    replicated = direction & (tost_p(est, se, df, band) < alpha) if band else direction
    if comparison.magnitude_untested:
        return float(np.mean(direction)), 0.0
    return float(np.mean(direction)), float(np.mean(replicated))


def claim_power(claim: Claim, sims: int = 2000) -> list[RowPower]:
    """Every runnable row's power at the claim's quick and full sizes and at each CV of its design."""
    out: list[RowPower] = []
    if not claim.runnable:
        return out
    paired = claim.design == "side-by-side"
    rows = [c for c in claim.expect if not c.not_testable]
    cvs = (SHARED_DRIFT_CV,) if paired else APART_CVS
    for k, comparison in enumerate(rows):
        family = sum(1 for c in rows if (c.relation == "equivalent") == (comparison.relation == "equivalent"))
        label = f"{comparison.variant}/{comparison.baseline} {comparison.relation}"
        for n in sorted({claim.quick.repetitions, claim.full.repetitions}):
            for cv in cvs:
                seed = zlib.crc32(f"{claim.id}/{k}".encode())
                direction, replicated = row_power(comparison, n, paired, cv, family, seed, sims)
                out.append(
                    RowPower(
                        claim.id,
                        label,
                        comparison.effect(),
                        "side by side" if paired else "apart",
                        cv,
                        n,
                        direction,
                        replicated,
                    )
                )
    return out
