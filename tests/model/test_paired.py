"""The paired log-ratio statistics (harness/model/paired.py), and a simulation that proves their
calibration at the sample sizes the side-by-side comparisons use."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.model.paired import cv_pct, log_interval, paired_ratio, unpaired_ratio


def test_log_interval_of_a_known_sample() -> None:
    # logs of 100, 110, 121 are equally spaced by ln 1.1: mean ln 110, sd ln 1.1, t(0.975, 2) = 4.3027.
    interval = log_interval([100.0, 110.0, 121.0])
    half = 4.302652729911275 * math.log(1.1) / math.sqrt(3)
    assert interval.centre == pytest.approx(110.0)
    assert interval.low == pytest.approx(110.0 * math.exp(-half))
    assert interval.high == pytest.approx(110.0 * math.exp(half))
    assert interval.cv_pct == pytest.approx(100 * np.std([100, 110, 121], ddof=1) / np.mean([100, 110, 121]))


def test_a_very_spread_positive_sample_never_gets_a_bound_at_or_below_zero() -> None:
    interval = log_interval([40.0, 3000.0, 510.0])
    assert interval.low is not None and interval.low > 0
    assert interval.high is not None and interval.high > interval.centre > interval.low


def test_one_value_has_no_interval_and_no_cv() -> None:
    interval = log_interval([250.0])
    assert interval.centre == pytest.approx(250.0)
    assert (interval.low, interval.high, interval.cv_pct) == (None, None, None)
    assert interval.half_width_pct is None


@pytest.mark.parametrize("bad", [0.0, -3.0, math.nan, math.inf])
def test_a_value_that_is_not_positive_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="positive"):
        log_interval([100.0, bad])


def test_pairing_cancels_what_moves_both_groups() -> None:
    host = [1.0, 1.15, 0.9, 1.1, 0.95]  # the host's drift between fresh starts, shared by both groups
    java = [200 * h for h in host]
    node = [300 * h for h in host]
    paired = paired_ratio(node, java)
    assert paired.centre == pytest.approx(1.5)
    assert paired.cv_pct == pytest.approx(0.0, abs=1e-9)
    apart = unpaired_ratio(node, java)
    assert apart.centre == pytest.approx(1.5)
    assert apart.cv_pct is not None and apart.cv_pct > 5


def test_groups_without_spread_keep_the_confidence_asked_for() -> None:
    apart = unpaired_ratio([300.0, 300.0, 300.0], [200.0, 200.0], confidence=0.9)
    assert (apart.centre, apart.low, apart.high) == pytest.approx((1.5, 1.5, 1.5))
    assert apart.confidence == 0.9


def test_paired_values_must_come_in_pairs() -> None:
    with pytest.raises(ValueError, match="equal counts"):
        paired_ratio([1.0, 2.0], [1.0])


def test_cv_pct() -> None:
    assert cv_pct([1.0]) is None
    assert cv_pct([2.0, 2.0]) == 0.0


SIMULATIONS = 4000


def _simulate(
    n: int, host_cv: float, own_cv: float, true_ratio: float, rng: np.random.Generator
) -> np.ndarray:
    """Fresh starts of two groups measured side by side: a shared host factor and each group's own noise,
    both log-normal. Returns, per simulated comparison, (low, high) of the paired 95 % interval."""
    host = rng.lognormal(0.0, host_cv, size=(SIMULATIONS, n))
    a = 200 * host * rng.lognormal(0.0, own_cv, size=(SIMULATIONS, n))
    b = 200 * true_ratio * host * rng.lognormal(0.0, own_cv, size=(SIMULATIONS, n))
    out = np.empty((SIMULATIONS, 2))
    for k in range(SIMULATIONS):
        interval = paired_ratio(b[k], a[k])
        out[k] = (interval.low, interval.high)
    return out


# The sample sizes the side-by-side presets and the demo use, and the spreads seen on this kind of host:
# the host's drift between fresh starts (5-15 %) and what is each group's own (a few %).
@pytest.mark.parametrize("n", [3, 5, 10])
@pytest.mark.parametrize(("host_cv", "own_cv"), [(0.10, 0.03), (0.15, 0.05)])
def test_identical_groups_are_called_different_at_most_5_percent_of_the_time(
    n: int, host_cv: float, own_cv: float
) -> None:
    rng = np.random.default_rng(20261127 + n)
    intervals = _simulate(n, host_cv, own_cv, 1.0, rng)
    false_positive = np.mean((intervals[:, 0] > 1) | (intervals[:, 1] < 1))
    # 4,000 simulations: the binomial standard error at 5 % is 0.34 %, so 5 % + 3 standard errors.
    assert false_positive <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / SIMULATIONS)
    assert 1 - false_positive >= 0.93


@pytest.mark.parametrize("n", [3, 5])
def test_a_true_difference_is_covered_and_found(n: int) -> None:
    rng = np.random.default_rng(7 + n)
    intervals = _simulate(n, 0.12, 0.03, 1.5, rng)
    covered = np.mean((intervals[:, 0] <= 1.5) & (intervals[:, 1] >= 1.5))
    found = np.mean(intervals[:, 0] > 1)
    assert covered >= 0.93
    # A 50 % difference with 3 % own noise is found every time, whatever the host's drift.
    assert found >= 0.99
