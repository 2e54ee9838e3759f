"""Statistics on data with known truth: A/A, a planted difference, Tukey vs statsmodels, Welch's ANOVA and
Games-Howell vs reference figures, CI coverage, the small-n rules and the compact letter display."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from statsmodels.stats.multicomp import pairwise_tukeyhsd
from synthetic import fixed_rate_groups

from harness.analysis.comparison import compare
from harness.model.stats import (
    analyse,
    compact_letters,
    mean_ci,
    median_ci,
    min_n_for_median_ci,
    ratio_ci,
    summarize,
)


def test_aa_comparison_is_not_significant(tmp_path):
    """An app against itself (two variants with the same truth) must come out `~` (docs/design.md §8)."""
    fixed_rate_groups(tmp_path / "r", {"java": 1000.0, "java/again": 1000.0}, n=5, cv=0.03, seed=11)
    comparison = compare([tmp_path / "r"], metrics=["throughput"], n_resamples=999)
    (cset,) = comparison.sets
    pair = cset.result("throughput").vs_baseline("java/again")
    assert pair.test == "Welch t"
    assert not pair.significant and pair.p_value > 0.05
    assert pair.ratio_ci.contains(1.0)
    from harness.analysis.format import verdict

    assert verdict(pair).startswith("~ (p=")


def test_aa_false_positive_rate_is_about_alpha():
    """Over 400 simulated A/A comparisons (n=5 each) Welch's test fires about 5 % of the time."""
    rng = np.random.default_rng(2024)
    hits = 0
    for _ in range(400):
        a, b = rng.normal(100, 5, 5), rng.normal(100, 5, 5)
        result = analyse("throughput", {"a": a, "b": b}, n_resamples=99)
        hits += result.pairs[0].significant
    assert 0.015 <= hits / 400 <= 0.09


def test_planted_20_percent_difference_is_found(tmp_path):
    fixed_rate_groups(tmp_path / "r", {"java": 1000.0, "node": 1200.0}, n=5, cv=0.04, seed=3)
    comparison = compare([tmp_path / "r"], metrics=["throughput"], n_resamples=1999)
    pair = comparison.sets[0].result("throughput").vs_baseline("node")
    assert pair.significant and pair.p_value < 0.01
    assert 15.0 < pair.delta_pct < 25.0
    assert pair.ratio_ci.contains(1.2) and not pair.ratio_ci.contains(1.0)


def test_planted_20_percent_difference_power():
    """With n=5 and 4 % noise a 20 % difference is found in nearly every simulated experiment."""
    rng = np.random.default_rng(7)
    found = sum(
        analyse("t", {"a": rng.normal(100, 4, 5), "b": rng.normal(120, 4.8, 5)}, n_resamples=99)
        .pairs[0]
        .significant
        for _ in range(100)
    )
    assert found >= 97


def test_tukey_groups_match_a_direct_statsmodels_call():
    rng = np.random.default_rng(5)
    samples = {"java": rng.normal(100, 5, 8), "node": rng.normal(101, 5, 8), "php": rng.normal(112, 5, 8)}
    result = analyse("throughput", samples, n_resamples=499)
    assert result.omnibus is not None
    assert result.omnibus.posthoc == "Tukey HSD"  # Levene found the variances equal
    assert result.omnibus.p_value < 0.05
    endog = np.concatenate(list(samples.values()))
    groups = np.repeat(list(samples), 8)
    direct = pairwise_tukeyhsd(endog, groups, alpha=0.05)
    names = list(direct.groupsunique)
    pairs = [(names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names))]
    for (a, b), p, reject in zip(pairs, direct.pvalues, direct.reject, strict=True):
        mine = result.pair(a, b) or result.pair(b, a)
        assert mine.p_value == pytest.approx(float(p), rel=1e-6, abs=1e-9)
        assert mine.significant == bool(reject)
    # the letters say the same: php differs from both, java and node do not differ
    letters = result.omnibus.letters
    assert letters["java"] == letters["node"] and set(letters["php"]).isdisjoint(letters["java"])


def test_groups_without_spread_differ_exactly_where_their_means_do_without_a_warning():
    """A metric with no spread inside any group (a count that every fresh start repeats) once made scipy's
    Tukey divide by zero, print a RuntimeWarning and give NaN p-values while the ANOVA said the groups differ."""
    samples = {"java": [3.0] * 5, "node": [3.0] * 5, "php": [2.0] * 5}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = analyse("valid runs", samples, n_resamples=99)
    assert result.omnibus is not None and result.omnibus.posthoc == "exact (no spread within any group)"
    assert result.pair("java", "node").p_value == 1.0 and not result.pair("java", "node").significant
    assert result.pair("java", "php").p_value == 0.0 and result.pair("java", "php").significant
    letters = result.omnibus.letters
    assert letters["java"] == letters["node"] and set(letters["php"]).isdisjoint(letters["java"])


# Welch's ANOVA and Games-Howell as version 0.5.5 of the GPL-3.0 library the harness used before statsmodels
# (issue #43; its welch_anova and pairwise_gameshowell) computed them on the samples below. They are kept as
# numbers because that library is no longer installed, and is not named so that the licence audit's
# `git grep` of its name stays empty.
REFERENCE_WELCH_F = 6.4777460465916565
REFERENCE_WELCH_P = 0.012305440068816917
REFERENCE_GAMES_HOWELL_P = {
    ("java", "node"): 0.24220057121594574,
    ("java", "php"): 0.02394202288641256,
    ("node", "php"): 0.15270475489860091,
}


def test_welch_anova_and_games_howell_match_the_reference_figures():
    rng = np.random.default_rng(9)
    samples = {
        "java": rng.normal(100, 1, 10),
        "node": rng.normal(103, 12, 10),
        "php": rng.normal(130, 25, 10),
    }
    result = analyse("p99", samples, n_resamples=499)
    # Levene found the variances unequal: Welch's ANOVA, then Games-Howell
    assert result.omnibus.posthoc == "Games-Howell" and result.omnibus.test == "Welch ANOVA"
    assert result.omnibus.statistic == pytest.approx(REFERENCE_WELCH_F, rel=1e-6)
    assert result.omnibus.p_value == pytest.approx(REFERENCE_WELCH_P, rel=1e-6, abs=1e-9)
    for (a, b), expected in REFERENCE_GAMES_HOWELL_P.items():
        assert result.pair(a, b).p_value == pytest.approx(expected, rel=1e-6, abs=1e-9)


@pytest.mark.timeout(120)
def test_confidence_interval_coverage_is_about_95_percent():
    """1000 simulated samples each: the mean's t-interval covers the true mean 93-97 % of the time; the
    median's order-statistic interval is conservative (at least 95 % by construction, so 93-99.5 %)."""
    rng = np.random.default_rng(42)
    covered_mean = covered_median = 0
    for _ in range(1000):
        x = rng.normal(50.0, 3.0, 5)
        covered_mean += mean_ci(x, 0.95).contains(50.0)
        y = rng.normal(50.0, 3.0, 12)
        covered_median += median_ci(y, 0.95).contains(50.0)
    assert 0.93 <= covered_mean / 1000 <= 0.97
    assert 0.93 <= covered_median / 1000 <= 0.995


@pytest.mark.timeout(180)
def test_bootstrap_ratio_interval_coverage():
    """The seeded BCa interval of a ratio of means covers the true ratio in most of 300 experiments (n=10).
    Bootstrap intervals run a little narrow at small n, so the band is wider than for the t-interval."""
    rng = np.random.default_rng(8)
    covered = 0
    for i in range(300):
        a, b = rng.normal(100, 8, 10), rng.normal(120, 9.6, 10)
        covered += ratio_ci(a, b, 0.95, seed=i, n_resamples=999).contains(1.2)
    assert 0.88 <= covered / 300 <= 0.99


def test_bootstrap_is_reproducible():
    a, b = [10.0, 11.0, 10.5, 9.8, 10.2], [12.0, 12.5, 11.8, 12.2, 12.9]
    assert ratio_ci(a, b, seed=3) == ratio_ci(a, b, seed=3)


def test_small_samples_get_no_inference_or_a_warning():
    tiny = analyse("throughput", {"a": [1.0, 2.0], "b": [3.0, 4.0]})
    assert tiny.pairs[0].test == "none" and not tiny.pairs[0].significant
    assert tiny.summaries[0].mean_ci is None
    assert any("n=2 < 3" in w for w in tiny.warnings)
    small = analyse("throughput", {"a": [1.0, 2.0, 1.5, 1.7], "b": [3.0, 4.0, 3.5, 3.2]}, n_resamples=199)
    assert small.pairs[0].test == "Welch t"
    assert any("n=4 < 5" in w for w in small.warnings)


def test_median_interval_needs_enough_runs_for_the_confidence():
    assert min_n_for_median_ci(0.95) == 6 and min_n_for_median_ci(0.99) == 8
    summary = summarize("x", [1.0, 2.0, 3.0, 4.0, 5.0])
    assert summary.median_ci.method.startswith("bootstrap")
    assert any("too small for a distribution-free" in w for w in summary.warnings)
    assert summarize("x", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).median_ci.method == "order statistics"


def test_mann_whitney_option_and_its_floor():
    result = analyse("t", {"a": [1.0, 2.0, 3.0], "b": [7.0, 8.0, 9.0]}, test="mannwhitney", n_resamples=199)
    pair = result.pairs[0]
    assert pair.test == "Mann-Whitney U" and pair.p_value == pytest.approx(0.1)
    assert not pair.significant and "cannot reach" in pair.note


def test_identical_values_are_not_a_difference():
    result = analyse("t", {"a": [5.0] * 5, "b": [5.0] * 5}, n_resamples=199)
    assert result.pairs[0].p_value == 1.0 and not result.pairs[0].significant


def test_compact_letters():
    order = ["a1", "a2", "a3", "a4"]
    letters = compact_letters(
        order, {frozenset(("a1", "a3")), frozenset(("a1", "a4")), frozenset(("a2", "a4"))}
    )
    share = lambda x, y: bool(set(letters[x]) & set(letters[y]))  # noqa: E731
    assert not share("a1", "a3") and not share("a1", "a4") and not share("a2", "a4")
    assert share("a1", "a2") and share("a2", "a3") and share("a3", "a4")
    assert compact_letters(order, set()) == {k: "a" for k in order}


def test_no_interval_of_a_positive_quantity_reaches_zero_or_a_share_past_100() -> None:
    """The demo's own case: a capacity spread 40x across three fresh starts once printed [-346, 2,493]."""
    wild = mean_ci([40.0, 1650.0, 1058.0])
    assert wild is not None and wild.low > 0 and wild.method == "t on logs"
    share = mean_ci([52.0, 99.0, 79.0], upper=100.0)
    assert share is not None and 0 < share.low and share.high <= 100.0
    with_zero = mean_ci([0.0, 0.2, 0.0, 0.1])
    assert with_zero is not None and with_zero.low >= 0.0 and with_zero.method == "t"
