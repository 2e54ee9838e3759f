"""#45: the claims' statistics are calibrated at the sample sizes the claims use, and each row's label follows
from its two questions (direction and magnitude), on synthetic numbers only."""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

import numpy as np
import pytest
from scipy import stats

from harness.claims import runner
from harness.claims.calibration import (
    APART_CVS,
    OWN_CV_SIDE_BY_SIDE,
    OWN_CV_SIDE_BY_SIDE_CAPACITY,
    claim_power,
    row_power,
    sd_log,
    simulate,
)
from harness.claims.ladders import DISTURBED_REDOS
from harness.claims.model import Claim, Comparison, find, load_all
from harness.claims.verdict import (
    ALPHA,
    CONTRADICTED,
    DIRECTION_ONLY,
    INCONCLUSIVE,
    NOT_TESTABLE,
    REPLICATED,
    Side,
    effect_p,
    floor_stats,
    holm,
    interval,
    judge,
    judge_rows,
    log_ratio_stats,
    measure,
    tost_p,
    two_sided_p,
)
from harness.model.paired import paired_ratio, unpaired_ratio
from harness.model.stats import MIN_N_INFERENCE

# --- the simulation: synthetic fresh starts through the verdicts' own functions ------------------------

SIMULATIONS = 4000


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


def calibrate(
    n: int, paired: bool, cv: float, own: float = OWN_CV_SIDE_BY_SIDE, sims: int = SIMULATIONS, seed: int = 45
) -> Calibration:
    rng = np.random.default_rng([seed, n, int(paired), int(cv * 1000), int(own * 1000)])
    la, lb = simulate(n, sims, 1.0, paired, cv, rng, own)
    false_positive = float(np.mean(two_sided_p(*log_ratio_stats(la, lb, paired)) < ALPHA))
    true = 1.25
    la, lb = simulate(n, sims, true, paired, cv, rng, own)
    low, high = interval(*log_ratio_stats(la, lb, paired), 0.95)
    coverage = float(np.mean((low <= true) & (true <= high)))
    band = (1 / 1.1, 1.1)
    la, lb = simulate(n, sims, band[1], paired, cv, rng, own)
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


SIZES = sorted({3, *sample_sizes(load_all())})
# (side by side, drift CV, each group's own CV side by side): costs and capacities side by side, and apart.
NOISE = [
    (True, 0.10, OWN_CV_SIDE_BY_SIDE),
    (True, 0.10, OWN_CV_SIDE_BY_SIDE_CAPACITY),
    (False, 0.10, OWN_CV_SIDE_BY_SIDE),
    (False, 0.15, OWN_CV_SIDE_BY_SIDE),
]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(("paired", "cv", "own"), NOISE)
def test_identical_groups_rarely_differ_and_intervals_cover(
    n: int, paired: bool, cv: float, own: float
) -> None:
    """False positives at most 5 % (plus three simulation errors) and coverage at least 93 %, for every
    number of fresh starts a claim declares, side by side and apart."""
    c = calibrate(n, paired, cv, own)
    assert c.false_positive <= 0.05 + 3 * c.error, c
    assert c.coverage >= 0.93, c
    assert c.tost_false_positive <= 0.05 + 3 * c.error, c


def family_false_positive(
    rows: int,
    n: int,
    paired: bool,
    cv: float,
    own: float = OWN_CV_SIDE_BY_SIDE,
    holm_corrected: bool = True,
    sims: int = 2000,
    seed: int = 45,
) -> float:
    """Identical groups in one claim of `rows` rows that share the baseline's fresh starts (as a claim's
    rows do): the share of data sets in which any row declares a direction, through the verdicts' own
    `holm` per data set (or, for contrast, each row at ALPHA alone). Side by side every group of a fresh
    start shares its drift; apart every value draws its own."""
    rng = np.random.default_rng([seed, rows, n, int(paired), int(cv * 1000), int(own * 1000)])
    if paired:
        drift = rng.normal(0.0, sd_log(cv), (sims, n))
        groups = [drift + rng.normal(0.0, sd_log(own), (sims, n)) for _ in range(rows + 1)]
    else:
        groups = [rng.normal(0.0, sd_log(cv), (sims, n)) for _ in range(rows + 1)]
    baseline, variants = groups[0], groups[1:]
    p = np.stack([two_sided_p(*log_ratio_stats(baseline, v, paired)) for v in variants], axis=1)
    if not holm_corrected:
        return float(np.mean(p.min(axis=1) < ALPHA))
    # Holm's first step decides whether any row declares: the least p-value against ALPHA / rows (the
    # verdicts' `holm` is held to that below; it is too slow to call on every data set).
    return float(np.mean(p.min(axis=1) < ALPHA / rows))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(("paired", "cv", "own"), NOISE)
@pytest.mark.parametrize("rows", [2, 3])
def test_holm_keeps_a_claims_family_wise_false_positives_at_five_per_cent(
    rows: int, n: int, paired: bool, cv: float, own: float
) -> None:
    """Across a claim's rows, which share the baseline's runs, identical groups make any row declare a
    direction at most 5 % of the time (plus three simulation errors), at every size the claims declare."""
    assert family_false_positive(rows, n, paired, cv, own) <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 2000)


@pytest.mark.parametrize("rows", [2, 3])
def test_the_verdicts_holm_declares_a_row_exactly_when_the_least_p_is_under_alpha_over_rows(
    rows: int,
) -> None:
    """What the family-wise simulation above counts is what the verdicts' `holm` decides, on p-values drawn
    around the threshold."""
    rng = np.random.default_rng([45, rows])
    for p in rng.uniform(0.0, 3 * ALPHA / rows, (20, rows)):
        assert (min(holm(p.tolist())) < ALPHA) == (p.min() < ALPHA / rows), p


def test_without_holm_the_same_family_declares_too_often() -> None:
    """The simulation above can fail: three rows each tested at 5 % alone declare far more often."""
    assert family_false_positive(3, 5, False, 0.10, holm_corrected=False) > 0.08


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("cv", APART_CVS)
@pytest.mark.parametrize("floor_sds", [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0])
def test_a_floor_never_lifts_the_false_positives_of_identical_capacities(
    n: int, cv: float, floor_sds: float
) -> None:
    """Identical groups whose ladders start near their capacity: the runs below the first step are floors,
    and the whole procedure (floors, mixes left unjudged, Welch) still declares a direction at most 5 %
    (plus three simulation errors) of the time, wherever the first step lies."""
    false_positive, _ = floor_false_positive(n, cv, floor_sds)
    assert false_positive <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 4000)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("level_sds", [-1.0, 0.0, 1.0, 3.0])
def test_a_floors_bound_covers_the_true_ratio(n: int, level_sds: float) -> None:
    """The bound "B/A > x" lies at or below the true ratio in at least 95 % of the data sets that used it,
    whether the baseline sits at its first step or well below it."""
    assert floor_coverage(n, 0.15, 2.0, level_sds) >= 0.95


def test_the_floor_is_used_where_capacities_sit_at_the_first_step() -> None:
    """The simulation above is not empty: at n=3 a first step near the groups' level bounds many data sets."""
    _, used = floor_false_positive(3, 0.15, 0.0)
    assert used > 0.1


# --- a ladder the host alone disturbed runs again (harness/claims/ladders.py, DISTURBED_REDOS) ---------


# Fresh starts per side of the claims whose ladders run apart: the ones whose disturbed ladders run again.
APART_LADDER_SIZES = sample_sizes(
    [c for c in load_all() if c.regime == "ladder" and c.design != "side-by-side"]
)


@dataclass(frozen=True)
class Rerun:
    """The rule's effect on one simulated claim row: fresh starts run apart, each slot run up to
    DISTURBED_REDOS more times while the host disturbs it, and only valid values judged."""

    declared: float
    """The share of data sets whose 95 % interval of B/A excludes 1 (a false positive at a true ratio of 1)."""
    covered: float
    """The share of judged data sets whose 95 % interval contains the true ratio."""
    judged: float
    """The share of data sets with at least MIN_N_INFERENCE valid fresh starts on each side."""
    shift: float
    """The mean of the log ratio minus the true log ratio, over every data set (both sides' valid values)."""
    valid: float
    """The mean share of a side's slots that end with a valid value."""


def disturbed_attempts(z: np.ndarray, p: float, correlated: bool, rng: np.random.Generator) -> np.ndarray:
    """Which attempts the host disturbs, each with probability p: at random, or (`correlated`, the worst case)
    exactly the attempts that would read highest, as if the busy host that trips the check also raised the
    cost it measures."""
    if correlated:
        return z > stats.norm.ppf(1 - p)
    return rng.random(z.shape) < p


def rerun_rule(
    n: int,
    cv: float,
    p_a: float,
    p_b: float,
    correlated: bool,
    true_ratio: float,
    redos: int = DISTURBED_REDOS,
    sims: int = SIMULATIONS,
    seed: int = 45,
) -> Rerun:
    """Identical noise on both sides (every attempt draws its own drift at `cv`), B = A x `true_ratio`. Each of
    the n slots keeps its first attempt the host left alone, as `ladders.run` does after at most `redos` more
    attempts; a slot disturbed every time stays invalid. Data sets are judged through the verdicts' own
    Welch on the logs, grouped by how many valid values each side kept."""
    rng = np.random.default_rng(
        [
            seed,
            n,
            int(cv * 1000),
            int(p_a * 100),
            int(p_b * 100),
            int(correlated),
            int(true_ratio * 100),
            redos,
        ]
    )
    kept = []
    for p, shift in ((p_a, 0.0), (p_b, math.log(true_ratio))):
        z = rng.normal(0.0, 1.0, (sims, n, redos + 1))
        clean = ~disturbed_attempts(z, p, correlated, rng)
        first = np.take_along_axis(z, clean.argmax(axis=-1)[..., None], axis=-1)[..., 0]
        kept.append((shift + sd_log(cv) * first, clean.any(axis=-1)))
    (la, va), (lb, vb) = kept
    na, nb = va.sum(axis=-1), vb.sum(axis=-1)
    declared = np.zeros(sims, dtype=bool)
    covered = np.zeros(sims, dtype=bool)
    judged = (na >= MIN_N_INFERENCE) & (nb >= MIN_N_INFERENCE)
    for i, j in {(int(x), int(y)) for x, y in zip(na[judged], nb[judged], strict=True)}:
        rows = judged & (na == i) & (nb == j)
        est, se, df = log_ratio_stats(
            la[rows][va[rows]].reshape(-1, i), lb[rows][vb[rows]].reshape(-1, j), False
        )
        low, high = interval(est, se, df, 0.95)
        declared[rows] = two_sided_p(est, se, df) < ALPHA
        covered[rows] = (low <= true_ratio) & (true_ratio <= high)
    mean_a = (la * va).sum(axis=-1) / np.maximum(na, 1)
    mean_b = (lb * vb).sum(axis=-1) / np.maximum(nb, 1)
    both = (na > 0) & (nb > 0)
    return Rerun(
        float(np.mean(declared)),
        float(np.mean(covered[judged])),
        float(np.mean(judged)),
        float(np.mean((mean_b - mean_a)[both])) - math.log(true_ratio),
        float(np.mean(na + nb)) / (2 * n),
    )


# How often a busy host disturbs an apart ladder: about a third of them in the contiguous quick run on a busy
# host (docs/lab/2026-11-30-contiguous-quick-again.md), a tenth on a quiet one.
BUSY, QUIET = 0.35, 0.10


@pytest.mark.parametrize("n", APART_LADDER_SIZES)
@pytest.mark.parametrize("cv", APART_CVS)
@pytest.mark.parametrize(
    ("p_a", "p_b", "correlated"), [(BUSY, BUSY, False), (QUIET, BUSY, False), (BUSY, BUSY, True)]
)
def test_running_disturbed_ladders_again_keeps_false_positives_and_coverage(
    n: int, cv: float, p_a: float, p_b: float, correlated: bool
) -> None:
    """Whether the host disturbs a ladder at random, more often on one side, or (on both sides alike) exactly
    the ladders that would read high, keeping each slot's first valid ladder leaves false positives at most
    5 % (plus three simulation errors) and the 95 % interval's coverage at 93 % or more."""
    null = rerun_rule(n, cv, p_a, p_b, correlated, 1.0)
    effect = rerun_rule(n, cv, p_a, p_b, correlated, 1.25)
    assert null.declared <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / SIMULATIONS), null
    assert effect.covered >= 0.93, effect
    # a slot stays invalid only when every attempt is disturbed; a side is judged with MIN_N_INFERENCE valid
    sides = [stats.binom.sf(MIN_N_INFERENCE - 1, n, 1 - p ** (DISTURBED_REDOS + 1)) for p in (p_a, p_b)]
    expected = float(np.prod(sides))
    assert abs(null.judged - expected) <= 4 * math.sqrt(expected * (1 - expected) / SIMULATIONS) + 0.002, null


def truncation_shift(p: float) -> float:
    """The mean of a standard normal draw kept only when it lies below its (1 - p) quantile: how far a side's
    kept values sit below its level, in log-SDs, when the host disturbs exactly its highest p of attempts."""
    q = stats.norm.ppf(1 - p)
    return float(-stats.norm.pdf(q) / stats.norm.cdf(q))


@pytest.mark.parametrize("n", APART_LADDER_SIZES)
def test_when_the_host_disturbs_one_sides_high_readings_more_the_bias_is_the_truncation_and_no_more(
    n: int,
) -> None:
    """The worst case the rule cannot cancel: the host disturbs exactly the highest readings, and one side's
    ladders more often (a third against a tenth). Its kept values sit lower, so B/A shifts by the difference of
    two truncated-normal means. Running the ladder again adds nothing to that shift: keeping only the first
    attempt (dropping the disturbed, as validity must) shifts the ratio just as far; the redos only restore
    the number of values. The report's 'n invalid' shows when a claim met such a host."""
    cv = 0.10
    expected = sd_log(cv) * (truncation_shift(BUSY) - truncation_shift(QUIET))
    with_redos = rerun_rule(n, cv, QUIET, BUSY, True, 1.0)
    without = rerun_rule(n, cv, QUIET, BUSY, True, 1.0, redos=0)
    error = 4 * sd_log(cv) * math.sqrt(2 / (n * SIMULATIONS)) + 0.002
    assert abs(with_redos.shift - expected) <= error, (with_redos, expected)
    assert abs(without.shift - expected) <= error, (without, expected)
    # at large n nearly every data set is judged either way: the redos show in the values each side keeps
    assert with_redos.valid > without.valid, (with_redos, without)
    assert with_redos.judged >= without.judged, (with_redos, without)


# --- one side below its first step (a floor) ---------------------------------------------------------

HIKARI = [1989.5, 1993.2, 1695.8]


def _floored(
    baseline_below: list[float], variant: list[float], relation: str = "greater", **kw: object
) -> object:
    return judge(
        Comparison("driver", "hikari", relation, **kw),  # type: ignore[arg-type]
        "java",
        Side("java/driver", [], below=baseline_below),
        Side("java/hikari", variant),
    )


def test_a_baseline_below_its_first_step_bounds_the_ratio_from_below() -> None:
    r = _floored([2.0, 2.0, 2.0], HIKARI)
    assert r.outcome == REPLICATED and r.direction == "above 1" and r.ratio is None and r.ratio_ci is None
    assert r.bound is not None and r.bound[0] == ">" and 300 < r.bound[1] < min(HIKARI) / 2.0
    assert (
        "all 3 ladders missed" in r.reason and "exceeded 2 req/s" in r.reason and "one-sample p=" in r.reason
    )


def test_a_variant_below_its_first_step_is_the_opposite_direction() -> None:
    r = judge(
        Comparison("hikari", "driver", "greater"),
        "java",
        Side("java/hikari", HIKARI),
        Side("java/driver", [], below=[2.0, 2.0, 2.0]),
    )
    assert r.outcome == CONTRADICTED and r.direction == "below 1"
    assert r.bound is not None and r.bound[0] == "<" and r.bound[1] < 2.0 / 1000


def test_a_floor_the_other_side_does_not_clear_is_inconclusive() -> None:
    r = _floored([1000.0, 1000.0, 1000.0], [900.0, 1300.0, 1100.0])
    assert r.outcome == INCONCLUSIVE and "does not clear 1" in r.reason


def test_a_bound_decides_no_magnitude_within_a_band() -> None:
    """A published 1.3 within 20 %: a bound above 300 excludes it; a bound cannot put it within."""
    r = _floored([2.0] * 3, HIKARI, published_ratio=1.3, tolerance=0.2)
    assert r.outcome == DIRECTION_ONLY and r.magnitude == "excluded"
    near = _floored([1000.0] * 3, [1300.0, 1310.0, 1290.0], published_ratio=1.3, tolerance=0.2)
    assert near.magnitude == "undecided" and near.outcome == DIRECTION_ONLY


def test_a_side_mixing_capacities_and_floors_is_bounded_by_its_largest() -> None:
    """The unpooled driver's first run: two ladders missed from their first step (50 req/s), one passed at
    53.5 req/s, so none of its capacities exceeded 53.5."""
    r = judge(
        Comparison("driver", "hikari", "greater"),
        "java",
        Side("java/driver", [53.5], below=[50.0, 50.0]),
        Side("java/hikari", [3007.2, 2002.8, 3031.9]),
    )
    assert r.outcome == REPLICATED and r.floor == 53.5 and r.bound is not None and r.bound[1] > 1
    assert "2 of 3 ladders missed" in r.reason and "at most 53.5 req/s" in r.reason


@pytest.mark.parametrize(
    ("a", "b", "words"),
    [
        (Side("a", [], below=[2.0] * 3), Side("b", [], below=[5.0] * 3), "no capacity to compare"),
        (Side("a", [], below=[2.0] * 2), Side("b", HIKARI), "fewer than 3 runs per side"),
    ],
)
def test_floors_that_cannot_bound_a_ratio_are_inconclusive(a: Side, b: Side, words: str) -> None:
    r = judge(Comparison("a", "b", "greater"), "java", a, b)
    assert r.outcome == INCONCLUSIVE and words in r.reason and r.bound is None


def test_the_sizes_in_use_are_the_claims_own() -> None:
    assert {3, 4, 5, 8, 12} <= set(SIZES)


def test_the_verdict_intervals_are_those_of_paired_py() -> None:
    rng = np.random.default_rng(1)
    a = list(np.exp(rng.normal(5, 0.1, 5)))
    b = list(np.exp(rng.normal(5.2, 0.1, 5)))
    apart = measure(Comparison("a", "b", "greater"), "x", Side("a", a), Side("b", b))
    expected = unpaired_ratio(b, a)
    assert apart.ratio_ci is not None and not apart.paired
    assert apart.ratio_ci.low == pytest.approx(expected.low) and apart.ratio_ci.high == pytest.approx(
        expected.high
    )
    blocks = list(range(5))
    together = measure(
        Comparison("a", "b", "greater"), "x", Side("a", a, blocks=blocks), Side("b", b, blocks=blocks)
    )
    expected = paired_ratio(b, a)
    assert together.paired and together.ratio_ci is not None
    assert together.ratio_ci.low == pytest.approx(expected.low)
    # the p-value decides exactly when the interval excludes 1
    assert ((together.p_value or 1.0) < 0.05) == (together.ratio_ci.low > 1 or together.ratio_ci.high < 1)


def test_holm() -> None:
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.2]) == [0.2]


# --- the two questions ----------------------------------------------------------------------------------

A = [100.0, 101.0, 99.0, 100.5, 99.5]


def _row(b: list[float], **kw: object) -> object:
    relation = str(kw.pop("relation", "greater"))
    return judge(Comparison("a", "b", relation, **kw), "java", Side("a", A), Side("b", b))  # type: ignore[arg-type]


def test_direction_and_magnitude_both_hold_is_replicated() -> None:
    r = _row([124.0, 125.0, 123.5, 124.5, 125.5], published_ratio=1.243, tolerance=0.2)
    assert r.outcome == REPLICATED and r.direction == "above 1" and r.magnitude == "within"


def test_a_magnitude_the_interval_excludes_is_direction_only() -> None:
    """Pereira row 1 as the issue found it: 1.385 against a published 3.45."""
    r = _row([138.0, 139.0, 137.5, 138.5, 139.5], published_ratio=3.45, tolerance=0.25)
    assert r.outcome == DIRECTION_ONLY and r.magnitude == "excluded" and "excluded" in r.reason


def test_a_magnitude_declared_untested_is_direction_only_and_says_why() -> None:
    r = _row(
        [138.0, 139.0, 137.5, 138.5, 139.5], published_ratio=3.45, magnitude_untested="another construct"
    )
    assert r.outcome == DIRECTION_ONLY and "another construct" in r.reason


def test_a_qualitative_row_is_replicated_on_its_direction() -> None:
    r = _row([110.0, 111.0, 109.0, 110.5, 109.5], expected_effect=1.1)
    assert r.outcome == REPLICATED and r.magnitude == "no figure"


def test_the_opposite_direction_is_contradicted() -> None:
    assert _row([80.0, 81.0, 79.0, 80.5, 79.5]).outcome == CONTRADICTED


def test_an_undecided_direction_is_inconclusive_with_the_runs_it_needs() -> None:
    r = _row([96.0, 112.0, 104.0, 99.0, 109.0])
    assert r.outcome == INCONCLUSIVE and r.direction == "straddles 1"
    assert r.n_needed is not None and r.n_needed > 5 and f"{r.n_needed} fresh starts per side" in r.reason


def test_an_undecided_row_leaning_the_other_way_says_more_runs_would_not_replicate_it() -> None:
    r = _row([104.0, 88.0, 96.0, 101.0, 91.0])
    assert r.outcome == INCONCLUSIVE and r.direction == "straddles 1" and r.ratio is not None and r.ratio < 1
    assert r.n_needed is not None and r.n_needed > 5
    assert "on the other side of 1 from the expected one" in r.reason
    assert (
        f"{r.n_needed} fresh starts per side would give power 0.8 to show that opposite direction" in r.reason
    )
    assert "no number of them the expected one" in r.reason


def test_holm_across_a_claims_rows_can_withhold_a_marginal_direction() -> None:
    marginal = [103.0, 100.5, 104.5, 101.0, 102.5]  # alone: p about 0.028
    alone = _row(marginal)
    assert alone.outcome == REPLICATED and alone.p_value is not None and 0.025 < alone.p_value < 0.05
    rows = [
        measure(Comparison("a", "b", "greater"), "java", Side("a", A), Side("b", marginal)),
        measure(
            Comparison("a", "b", "greater"),
            "node",
            Side("a", A),
            Side("b", [100.5, 99.0, 101.0, 100.0, 99.5]),
        ),
    ]
    first, _ = judge_rows(rows)
    assert first.rows_in_family == 2 and first.p_holm == pytest.approx(2 * alone.p_value)
    assert first.outcome == INCONCLUSIVE and first.direction == "above 1"
    assert "not after Holm over 2 rows" in first.reason


# --- a qualitative row that also asks whether the data exclude its expected effect ----------------------

NULL = [100.2, 100.8, 99.4, 100.3, 99.8]  # B/A about 1.001, tightly: a 10 % effect is excluded


def test_an_excluded_expected_effect_with_the_direction_undecided_is_contradicted() -> None:
    r = _row(NULL, expected_effect=1.1, tests_expected_effect=True)
    assert r.outcome == CONTRADICTED and r.direction == "straddles 1" and r.effect_test is not None
    assert r.effect_test.bound < 1.1 and r.effect_p_holm is not None and r.effect_p_holm < ALPHA
    assert "the expected effect 1.1 is excluded: the one-sided 95 % upper bound of B/A is" in r.reason


def test_without_the_declaration_the_same_data_stay_inconclusive() -> None:
    r = _row(NULL, expected_effect=1.1)
    assert r.outcome == INCONCLUSIVE and r.effect_test is None and "expected effect" not in r.reason


def test_a_direction_that_holds_below_its_expected_effect_is_direction_only() -> None:
    r = _row([102.0, 103.0, 101.0, 102.5, 101.5], expected_effect=1.1, tests_expected_effect=True)
    assert r.outcome == DIRECTION_ONLY and r.direction == "above 1" and "1.1 is excluded" in r.reason


def test_an_expected_effect_the_data_allow_changes_nothing() -> None:
    replicated = _row([110.0, 111.0, 109.0, 110.5, 109.5], expected_effect=1.1, tests_expected_effect=True)
    assert replicated.outcome == REPLICATED and "1.1 is not excluded" in replicated.reason
    undecided = _row([96.0, 112.0, 104.0, 99.0, 109.0], expected_effect=1.1, tests_expected_effect=True)
    assert undecided.outcome == INCONCLUSIVE and "1.1 is not excluded" in undecided.reason


def test_a_less_row_excludes_its_effect_from_above() -> None:
    r = _row(NULL, relation="less", expected_effect=0.95, tests_expected_effect=True)
    assert r.outcome == CONTRADICTED and r.effect_test is not None and r.effect_test.bound > 0.95
    assert "one-sided 95 % lower bound" in r.reason


def test_holm_spans_the_rows_that_ask_whether_their_effect_is_excluded() -> None:
    comparison = Comparison("a", "b", "less", expected_effect=0.95, tests_expected_effect=True)
    rows = judge_rows([measure(comparison, impl, Side("a", A), Side("b", NULL)) for impl in ("php", "java")])
    alone = _row(NULL, relation="less", expected_effect=0.95, tests_expected_effect=True)
    assert alone.effect_test is not None
    for row in rows:
        assert row.effect_p_holm == pytest.approx(2 * alone.effect_test.p_value)
        assert f"Holm p={row.effect_p_holm:.3g} over 2 rows" in row.reason


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(("paired", "cv", "own"), NOISE)
@pytest.mark.parametrize("effect", [0.95, 1.05])
def test_a_true_effect_at_the_expected_one_is_rarely_called_excluded(
    effect: float, n: int, paired: bool, cv: float, own: float
) -> None:
    """The worst case of the question: the true ratio is the expected effect itself. The share of data sets
    the verdicts' `effect_p` declares it excluded stays at most 5 % (plus three simulation errors)."""
    rng = np.random.default_rng([46, n, int(paired), int(cv * 1000), int(own * 1000), int(effect * 100)])
    la, lb = simulate(n, SIMULATIONS, effect, paired, cv, rng, own)
    excluded = float(np.mean(effect_p(*log_ratio_stats(la, lb, paired), effect) < ALPHA))
    assert excluded <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / SIMULATIONS), excluded


def test_a_row_declared_not_testable_is_never_judged() -> None:
    r = _row([110.0] * 5, not_testable="a figure's x-axis")
    assert r.outcome == NOT_TESTABLE and r.reason == "a figure's x-axis"


def test_side_by_side_observations_are_paired_by_fresh_start() -> None:
    """A shared drift that moves both variants together cancels when paired: Welch could not see 3 %."""
    drift = [1.0, 1.25, 0.85, 1.1, 0.95]
    obs = {
        ("java", "java"): [
            {"valid": True, "value": 100 * d, "run": f"r{k}", "block": k} for k, d in enumerate(drift)
        ],
        ("node", "node"): [
            {"valid": True, "value": 103 * d * (1 + 0.002 * (-1) ** k), "run": f"r{k}", "block": k}
            for k, d in enumerate(drift)
        ],
    }
    claim = find("thesis-table-7.2")
    verdict = runner.judge_claim(claim, claim.quick, obs)
    [row] = verdict.results
    assert row.paired and row.direction == "above 1"
    for records in obs.values():
        for r in records:
            r.pop("block")
    [apart] = runner.judge_claim(claim, claim.quick, obs).results
    assert not apart.paired and apart.direction == "straddles 1"


def test_a_not_testable_claim_is_reported_and_never_run() -> None:
    def never(*_: object) -> runner.Observations:
        raise AssertionError("a not-testable claim must never run")

    verdict = runner.replicate(find("thesis-table-7.1"), quick=True, runner=never)
    assert verdict.outcome == NOT_TESTABLE and "not testable here" in verdict.reason


def test_power_per_claim_is_computed_for_every_runnable_row() -> None:
    for claim in load_all():
        powers = claim_power(claim, sims=400)
        if not claim.runnable:
            assert powers == []
            continue
        rows = [c for c in claim.expect if not c.not_testable]
        assert powers and {p.row for p in powers} == {f"{c.variant}/{c.baseline} {c.relation}" for c in rows}
        for p in powers:
            assert p.effect is not None, (claim.id, p.row)
            assert p.direction is not None and 0.0 <= p.direction <= 1.0
    # a large expected effect is found almost surely; a 5 % one at n=5 rarely
    memory = claim_power(find("thesis-fig-7.5"), sims=400)
    assert min(p.direction or 0 for p in memory) > 0.9
    pool = [p for p in claim_power(find("thesis-fig-6.2-pool-size"), sims=400) if p.cv == 0.15]
    assert max(p.direction or 0 for p in pool) < 0.5
    assert math.isfinite(sum(p.direction or 0 for p in memory))


def test_the_power_holms_over_every_row_a_size_judges_one_per_implementation() -> None:
    """rubis-3-unsorted's one comparison makes a row per app: one at its quick size (php), three at its full
    size, and the power shares 5 % among those three, as the verdict's Holm does."""
    claim = find("rubis-3-unsorted")
    [comparison] = claim.expect
    seed = zlib.crc32(f"{claim.id}/0".encode())
    by_n = {p.n: p for p in claim_power(claim, sims=400)}
    assert (by_n[5].direction, by_n[5].replicated) == row_power(comparison, 5, True, 0.10, 3, seed, 400)
    assert (by_n[3].direction, by_n[3].replicated) == row_power(comparison, 3, True, 0.10, 1, seed, 400)


def test_only_a_row_that_tests_its_expected_effect_has_a_power_to_contradict_at_no_effect() -> None:
    for claim in load_all():
        for p in claim_power(claim, sims=200):
            asks = any(c.tests_expected_effect for c in claim.expect)
            assert (p.null_contradicted is not None) == asks, (claim.id, p.row)
    # at these sizes and this noise, neither certain nor impossible
    nulls = {p.n: p.null_contradicted or 0.0 for p in claim_power(find("rubis-3-unsorted"), sims=2000)}
    assert 0.0 < nulls[3] < 1.0 and 0.0 < nulls[5] < 1.0
