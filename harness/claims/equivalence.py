"""Equivalence ("no measurable difference", "about 1.8x") by TOST on the ratio B/A, and the repetitions it
needs (docs/method.md, "8. Claims").

A difference test that finds nothing shows nothing: with few runs every difference is "not significant".
TOST turns the question round: it rejects "the ratio lies outside [center/(1+m), center*(1+m)]" by two
one-sided Welch t tests on the logs of the per-run values (statsmodels ttost_ind with transform=log, so the
band is a ratio of geometric means and symmetric on the log scale). The band is the claim file's margin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats
from statsmodels.stats.weightstats import ttost_ind

ALPHA = 0.05
POWER = 0.8
MAX_N = 200


@dataclass(frozen=True)
class Tost:
    p_value: float
    ci90: tuple[float, float]
    """The 90 % Welch interval of the ratio of geometric means: TOST at 5 % holds iff it lies in the band."""
    band: tuple[float, float]
    n_needed: int | None
    """Runs per side for power 0.8 at this variance, at an assumed true ratio: the claim's when planning (a
    pilot), the observed one in a verdict (harness/claims/verdict.py); None beyond MAX_N."""

    @property
    def equivalent(self) -> bool:
        return self.p_value < ALPHA

    @property
    def outside(self) -> bool:
        """The whole interval lies outside the band: the difference is larger than the margin."""
        low, high = self.ci90
        return high < self.band[0] or low > self.band[1]


def log_sd(a: list[float], b: list[float]) -> float:
    """The pooled standard deviation of the logs (the relative spread both sides share)."""
    la, lb = np.log(a), np.log(b)
    dof = len(a) + len(b) - 2
    return math.sqrt(
        (float(np.var(la, ddof=1)) * (len(a) - 1) + float(np.var(lb, ddof=1)) * (len(b) - 1)) / dof
    )


def tost(a: list[float], b: list[float], band: tuple[float, float]) -> Tost:
    """TOST of B/A within band; a and b must be positive (costs, rates, memory)."""
    low, high = band
    p_value = float(ttost_ind(b, a, low, high, usevar="unequal", transform=np.log)[0])
    la, lb = np.log(a), np.log(b)
    diff = float(np.mean(lb) - np.mean(la))
    va, vb = float(np.var(la, ddof=1)) / len(a), float(np.var(lb, ddof=1)) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:
        ci = (math.exp(diff), math.exp(diff))
    else:
        dof = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
        t = float(stats.t.ppf(1 - ALPHA, dof))
        ci = (math.exp(diff - t * se), math.exp(diff + t * se))
    return Tost(p_value, ci, band, n_for_power(log_sd(a, b), band))


def tost_power(n: int, sd_log: float, band: tuple[float, float], true_ratio: float = 1.0) -> float:
    """Power of TOST at ALPHA with n runs per side, for a true ratio and a log-scale sd: both one-sided
    tests must reject, P(t_lower > t_c and t_upper < -t_c), by the noncentral t approximation (the two
    statistics share their denominator; the usual approximation treats them as one shifted pair)."""
    if n < 2:
        return 0.0
    if sd_log <= 0:
        return 1.0 if band[0] < true_ratio < band[1] else 0.0
    dof = 2 * n - 2
    se = sd_log * math.sqrt(2.0 / n)
    t_c = float(stats.t.ppf(1 - ALPHA, dof))
    delta = math.log(true_ratio)
    lower, upper = math.log(band[0]), math.log(band[1])
    # P(T_upper < -t_c) - P(T_lower <= t_c), with T = (d - bound)/se and d ~ delta
    power = float(
        stats.nct.cdf(-t_c, dof, (delta - upper) / se) - stats.nct.cdf(t_c, dof, (delta - lower) / se)
    )
    return max(0.0, power)


def n_for_power(sd_log: float, band: tuple[float, float], power: float = POWER) -> int | None:
    """The smallest n per side (at least 3) with TOST power >= `power` if the true ratio is the band's
    centre (its geometric middle); None when even MAX_N runs would not do."""
    centre = math.sqrt(band[0] * band[1])
    for n in range(3, MAX_N + 1):
        if tost_power(n, sd_log, band, centre) >= power:
            return n
    return None
