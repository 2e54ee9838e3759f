"""Simulated fresh starts through the very functions the verdicts use (harness/claims/verdict.py): the power
per claim in docs/replication/REPORT.md, and how well the statistics behave at the sample sizes the claims
use (tests/claims/test_calibration.py).

The noise model is this machine's, as measured by A/A runs (docs/method.md, "Side by side"): fresh starts
run apart scatter by 10-15 % (CV) around their mean, mostly host drift; side by side, the groups share that
drift (10 %) and keep only their own few per cent, which cancel less well than the drift does.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

import numpy as np

from harness.claims.model import Claim, Comparison, row_impls
from harness.claims.verdict import ALPHA, effect_p, log_ratio_stats, tost_p, two_sided_p

APART_CVS: tuple[float, ...] = (0.10, 0.15)
SHARED_DRIFT_CV = 0.10
OWN_CV_SIDE_BY_SIDE = 0.03
"""Each group's own scatter within a side-by-side fresh start: what the A/A band of [0.97, 1.03] allows."""
OWN_CV_SIDE_BY_SIDE_CAPACITY = 0.10
"""A capacity's own scatter within a side-by-side fresh start: each group's search decides on the p99 of
short rungs, one at a time, so its capacity moves far more than its cost, which every step shares
(docs/lab/2026-11-29-pool-library-side-by-side.md)."""


def own_cv(metric: str) -> float:
    """Each group's own scatter within a side-by-side fresh start, for this claim metric."""
    return OWN_CV_SIDE_BY_SIDE_CAPACITY if metric == "capacity_rps" else OWN_CV_SIDE_BY_SIDE


def sd_log(cv: float) -> float:
    """The SD of the logs of a log-normal quantity with this coefficient of variation."""
    return math.sqrt(math.log1p(cv * cv))


def simulate(
    n: int,
    sims: int,
    true_ratio: float,
    paired: bool,
    cv: float,
    rng: np.random.Generator,
    own_cv: float = OWN_CV_SIDE_BY_SIDE,
) -> tuple[np.ndarray, np.ndarray]:
    """Logs of `sims` data sets of n fresh starts per side (A, then B = A's level x true_ratio).
    Apart: every value draws its own drift at `cv`. Side by side: both groups of a fresh start share a drift
    at `cv` and add their own at `own_cv`."""
    shift = math.log(true_ratio)
    if paired:
        drift = rng.normal(0.0, sd_log(cv), (sims, n))
        own = sd_log(own_cv)
        return drift + rng.normal(0.0, own, (sims, n)), drift + shift + rng.normal(0.0, own, (sims, n))
    s = sd_log(cv)
    return rng.normal(0.0, s, (sims, n)), shift + rng.normal(0.0, s, (sims, n))


@dataclass(frozen=True)
class RowPower:
    claim_id: str
    row: str
    effect: float | None
    design: str
    cv: float
    own_cv: float | None
    """Side by side: each group's own scatter beside the shared drift `cv`; None apart."""
    n: int
    direction: float | None
    """P(the direction holds) at the row's expected effect; for equivalence rows, P(TOST within)."""
    replicated: float | None
    """P(the row is labelled replicated): direction and, where asked, magnitude."""
    null_contradicted: float | None = None
    """For a row that tests its expected effect: P(contradicted) at a true ratio of 1, its power to show
    that no effect the source would notice is there."""


def row_power(
    comparison: Comparison,
    n: int,
    paired: bool,
    cv: float,
    rows: int,
    seed: int,
    sims: int = 2000,
    own: float = OWN_CV_SIDE_BY_SIDE,
) -> tuple[float | None, float | None]:
    """(direction, replicated) power of one row by simulation at its expected effect, with a Bonferroni
    share ALPHA / rows of the error for each question: a lower bound of what Holm's step-down gives."""
    effect = comparison.effect()
    if effect is None:
        return None, None
    rng = np.random.default_rng([seed, n, int(cv * 1000)])
    la, lb = simulate(n, sims, effect, paired, cv, rng, own)
    est, se, df = log_ratio_stats(la, lb, paired)
    alpha = ALPHA / max(rows, 1)
    if comparison.relation == "equivalent":
        hit = float(np.mean(tost_p(est, se, df, comparison.band()) < alpha))
        return hit, hit
    right = (est > 0) if comparison.relation == "greater" else (est < 0)
    direction = (two_sided_p(est, se, df) < alpha) & right
    if comparison.magnitude_untested:
        return float(np.mean(direction)), 0.0
    band = comparison.magnitude_band()
    replicated = direction & (tost_p(est, se, df, band) < alpha) if band else direction
    if comparison.tests_expected_effect:
        replicated = replicated & ~(effect_p(est, se, df, effect) < alpha)
    return float(np.mean(direction)), float(np.mean(replicated))


def null_contradicted(
    comparison: Comparison, n: int, paired: bool, cv: float, rows: int, seed: int, sims: int, own: float
) -> float | None:
    """P(contradicted) of a row that tests its expected effect when there is no effect at all: the
    direction undecided and the expected effect excluded, each at ALPHA / rows."""
    effect = comparison.expected_effect
    if not comparison.tests_expected_effect or effect is None:
        return None
    rng = np.random.default_rng([seed, n, int(cv * 1000), 1])
    est, se, df = log_ratio_stats(*simulate(n, sims, 1.0, paired, cv, rng, own), paired)
    alpha = ALPHA / max(rows, 1)
    return float(np.mean((two_sided_p(est, se, df) >= alpha) & (effect_p(est, se, df, effect) < alpha)))


def claim_power(claim: Claim, sims: int = 2000) -> list[RowPower]:
    """Every runnable row's power at the claim's quick and full sizes and at each CV of its design."""
    out: list[RowPower] = []
    if not claim.runnable:
        return out
    paired = claim.design == "side-by-side"
    design = "side by side" if paired else "apart"
    rows = [c for c in claim.expect if not c.not_testable]
    cvs = (SHARED_DRIFT_CV,) if paired else APART_CVS
    own = own_cv(claim.metric)
    for k, comparison in enumerate(rows):
        label = f"{comparison.variant}/{comparison.baseline} {comparison.relation}"
        asks = comparison.relation == "equivalent"
        # Holm spans every row a size judges: a comparison of unpinned variants makes one per implementation
        points = {
            (
                size.repetitions,
                sum(len(row_impls(claim, size, c)) for c in rows if (c.relation == "equivalent") == asks),
            )
            for size in (claim.quick, claim.full)
        }
        for n, family in sorted(points):
            for cv in cvs:
                seed = zlib.crc32(f"{claim.id}/{k}".encode())
                powers = row_power(comparison, n, paired, cv, family, seed, sims, own)
                null = null_contradicted(comparison, n, paired, cv, family, seed, sims, own)
                out.append(
                    RowPower(
                        claim.id,
                        label,
                        comparison.effect(),
                        design,
                        cv,
                        own if paired else None,
                        n,
                        *powers,
                        null_contradicted=null,
                    )
                )
    return out
