"""Statistics per metric and group (docs/design.md §8). Library tests only, nothing hand-rolled:

- mean with a t-interval (scipy.stats.t.interval)
- median with a distribution-free order-statistic interval (scipy.stats.quantile_test), or a seeded
  bootstrap percentile interval when n is too small for the order statistics to reach the confidence
- 2 groups: Welch's t-test (scipy.stats.ttest_ind, equal_var=False) or Mann-Whitney U
- 3 or more: Levene (median-centred) decides; equal variances -> one-way ANOVA (scipy.stats.f_oneway) then
  Tukey HSD (scipy.stats.tukey_hsd; equal to statsmodels pairwise_tukeyhsd); unequal -> Welch's ANOVA
  (statsmodels anova_oneway) then Games-Howell (statsmodels pairwise_tukeyhsd with unequal variances).
  A pair is called significant only when the omnibus test is too ("ANOVA, then Tukey").
- ratios between groups: the ratio of means with a seeded BCa bootstrap interval (scipy.stats.bootstrap)

n < 3: no interval and no test, only the numbers. n < 5: a warning (low power, wide intervals).
"""

from __future__ import annotations

import math
import warnings
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import combinations

import numpy as np
from scipy import stats as sps

MIN_N_INFERENCE = 3
MIN_N_COMFORT = 5
DEFAULT_RESAMPLES = 9999


def stable_seed(*parts: object) -> int:
    """A seed that depends only on its parts, so every bootstrap is reproducible in any order of work."""
    return zlib.crc32("|".join(str(p) for p in parts).encode())


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    method: str

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high


@dataclass
class Summary:
    """Descriptive statistics of one group for one metric (the STEP paper, §3.6: mean, sd, quartiles, margin)."""

    label: str
    values: tuple[float, ...]
    mean: float
    median: float
    std: float | None
    q1: float
    q3: float
    minimum: float
    maximum: float
    mean_ci: Interval | None
    median_ci: Interval | None
    warnings: list[str] = field(default_factory=list)
    invalid_runs: int = 0

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def cv_pct(self) -> float | None:
        if self.std is None or self.mean == 0:
            return None
        return self.std / abs(self.mean) * 100.0

    @property
    def ci_halfwidth_pct(self) -> float | None:
        """benchstat's "± x%": half the mean's CI width relative to the mean."""
        if self.mean_ci is None or self.mean == 0:
            return None
        return (self.mean_ci.high - self.mean_ci.low) / 2.0 / abs(self.mean) * 100.0


def mean_ci(values: Sequence[float], confidence: float = 0.95, upper: float | None = None) -> Interval | None:
    """The t-interval of the mean. Values that are all positive (costs, capacities, memory, densities)
    get it on the log scale, where their spread is multiplicative, so the lower bound can never reach zero
    or below; `upper` caps a share (a utilization or an error rate cannot pass 100 %)."""
    x = np.asarray(values, dtype=float)
    if x.size < 2:
        return None
    mean = float(x.mean())
    on_logs = bool(np.all(x > 0))
    y = np.log(x) if on_logs else x
    method = "t on logs" if on_logs else "t"
    sem = float(sps.sem(y))
    if sem == 0.0:
        return Interval(mean, mean, method)
    low, high = sps.t.interval(confidence, x.size - 1, loc=y.mean(), scale=sem)
    if on_logs:
        low, high = math.exp(low), math.exp(high)
    elif np.all(x >= 0):
        low = max(float(low), 0.0)
    if upper is not None:
        high = min(float(high), upper)
    return Interval(float(low), float(high), method)


def min_n_for_median_ci(confidence: float) -> int:
    """Smallest n whose widest order-statistic interval (min, max) covers the median with `confidence`."""
    n = 1
    while 1.0 - 2.0 * 0.5**n < confidence:
        n += 1
    return n


def bootstrap_ci(
    samples: Sequence[np.ndarray],
    statistic: object,
    confidence: float,
    seed: int,
    n_resamples: int = DEFAULT_RESAMPLES,
    method: str = "BCa",
) -> Interval | None:
    """scipy.stats.bootstrap with a seeded generator; BCa first, percentile when BCa degenerates."""
    for how in dict.fromkeys([method, "percentile"]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                result = sps.bootstrap(
                    tuple(samples),
                    statistic,  # type: ignore[arg-type]
                    vectorized=True,
                    paired=False,
                    confidence_level=confidence,
                    n_resamples=n_resamples,
                    method=how,
                    rng=np.random.default_rng(seed),
                )
            except (ValueError, FloatingPointError, ZeroDivisionError):
                continue
        low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
        if math.isfinite(low) and math.isfinite(high):
            return Interval(low, high, f"bootstrap {how}")
    return None


def median_ci(
    values: Sequence[float], confidence: float = 0.95, seed: int = 0, n_resamples: int = DEFAULT_RESAMPLES
) -> Interval | None:
    x = np.asarray(values, dtype=float)
    if x.size < MIN_N_INFERENCE:
        return None
    if np.all(x == x[0]):
        return Interval(float(x[0]), float(x[0]), "order statistics")
    if x.size >= min_n_for_median_ci(confidence):
        ci = sps.quantile_test(x, p=0.5).confidence_interval(confidence)
        if math.isfinite(ci.low) and math.isfinite(ci.high):
            return Interval(float(ci.low), float(ci.high), "order statistics")
    return bootstrap_ci([x], np.median, confidence, seed, n_resamples, method="percentile")


def summarize(
    label: str,
    values: Sequence[float],
    confidence: float = 0.95,
    seed: int = 0,
    invalid_runs: int = 0,
    n_resamples: int = DEFAULT_RESAMPLES,
    upper: float | None = None,
) -> Summary:
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        raise ValueError(f"no values for {label}")
    notes: list[str] = []
    if x.size < MIN_N_INFERENCE:
        notes.append(f"{label}: n={x.size} < {MIN_N_INFERENCE}, no confidence interval and no test")
    elif x.size < MIN_N_COMFORT:
        notes.append(f"{label}: n={x.size} < {MIN_N_COMFORT}, low power; intervals are wide")
    needed = min_n_for_median_ci(confidence)
    if MIN_N_INFERENCE <= x.size < needed:
        notes.append(
            f"{label}: n={x.size} is too small for a distribution-free {confidence:.0%} median interval "
            f"(needs n >= {needed}); a bootstrap interval is shown instead"
        )
    q1, med, q3 = (float(v) for v in np.percentile(x, [25, 50, 75]))
    return Summary(
        label=label,
        values=tuple(float(v) for v in x),
        mean=float(x.mean()),
        median=med,
        std=float(x.std(ddof=1)) if x.size > 1 else None,
        q1=q1,
        q3=q3,
        minimum=float(x.min()),
        maximum=float(x.max()),
        mean_ci=mean_ci(x, confidence, upper) if x.size >= MIN_N_INFERENCE else None,
        median_ci=median_ci(x, confidence, seed, n_resamples),
        warnings=notes,
        invalid_runs=invalid_runs,
    )


@dataclass
class PairTest:
    """Group b compared with group a (a is the baseline or comes first)."""

    a: str
    b: str
    n_a: int
    n_b: int
    mean_a: float
    mean_b: float
    test: str
    p_value: float | None
    significant: bool
    ratio: float | None
    ratio_ci: Interval | None
    note: str | None = None

    @property
    def delta_pct(self) -> float | None:
        return None if self.ratio is None else (self.ratio - 1.0) * 100.0

    @property
    def n_text(self) -> str:
        return f"n={self.n_a}+{self.n_b}"


@dataclass
class Omnibus:
    """The 3+-group test (Freire et al., Tables 2-4: GL = df, QM = mean square, overall mean, CV)."""

    test: str
    statistic: float
    p_value: float
    df_between: int
    df_within: int
    ms_between: float
    ms_within: float
    grand_mean: float
    cv_pct: float | None
    levene_p: float | None
    posthoc: str
    letters: dict[str, str]


@dataclass
class MetricResult:
    metric: str
    summaries: list[Summary]
    pairs: list[PairTest]
    omnibus: Omnibus | None
    baseline: str | None
    warnings: list[str]

    def summary(self, label: str) -> Summary | None:
        return next((s for s in self.summaries if s.label == label), None)

    def pair(self, a: str, b: str) -> PairTest | None:
        return next((pair for pair in self.pairs if (pair.a, pair.b) == (a, b)), None)

    def vs_baseline(self, label: str) -> PairTest | None:
        if self.baseline is None or label == self.baseline:
            return None
        return self.pair(self.baseline, label)


def _ratio_of_means(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(b, axis=axis) / np.mean(a, axis=axis)


def ratio_ci(
    a: Sequence[float],
    b: Sequence[float],
    confidence: float = 0.95,
    seed: int = 0,
    n_resamples: int = DEFAULT_RESAMPLES,
) -> Interval | None:
    """Bootstrap interval of mean(b) / mean(a) (independent samples, seeded, BCa)."""
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if xa.size < MIN_N_INFERENCE or xb.size < MIN_N_INFERENCE or xa.mean() == 0:
        return None
    if np.all(xa == xa[0]) and np.all(xb == xb[0]):
        r = float(xb[0] / xa[0])
        return Interval(r, r, "exact (no variance)")
    return bootstrap_ci([xa, xb], _ratio_of_means, confidence, seed, n_resamples)


def two_sample_test(
    a: Sequence[float], b: Sequence[float], test: str = "welch"
) -> tuple[str, float | None, str | None]:
    """(test name, p, note). Welch's t by default; Mann-Whitney U on request."""
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    constant_a, constant_b = bool(np.all(xa == xa[0])), bool(np.all(xb == xb[0]))
    if test in ("mannwhitney", "mann-whitney", "mwu", "u"):
        if constant_a and constant_b and xa[0] == xb[0]:
            return "Mann-Whitney U", 1.0, "identical values"
        result = sps.mannwhitneyu(xa, xb, alternative="two-sided")
        return "Mann-Whitney U", float(result.pvalue), None
    if constant_a and constant_b:
        if xa[0] == xb[0]:
            return "Welch t", 1.0, "identical values"
        return "Welch t", None, "no variance in either group: no test possible"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = sps.ttest_ind(xb, xa, equal_var=False)
    p = float(result.pvalue)
    return "Welch t", (p if math.isfinite(p) else None), None


def mann_whitney_floor(n_a: int, n_b: int) -> float:
    """The smallest two-sided p an exact Mann-Whitney U test can give for these sizes."""
    return min(1.0, 2.0 / math.comb(n_a + n_b, n_a))


def compact_letters(order: Sequence[str], differs: set[frozenset[str]]) -> dict[str, str]:
    """Compact letter display (Freire et al., Tables 5-7): groups sharing a letter do not differ significantly.
    Insert-and-absorb: one letter for all; split every letter holding a significantly different pair; drop
    letters contained in others; name letters in the order of `order` (by mean)."""
    sets: list[set[str]] = [set(order)]
    for pair in differs:
        x, y = tuple(pair)
        split = [s for s in sets if x in s and y in s]
        sets = [s for s in sets if s not in split] + [part for s in split for part in (s - {x}, s - {y})]
        sets = [s for s in sets if s]
        unique: list[set[str]] = []
        for s in sorted(sets, key=len, reverse=True):
            if not any(s <= u for u in unique):
                unique.append(s)
        sets = unique
    rank = {label: i for i, label in enumerate(order)}
    sets.sort(key=lambda s: min(rank[m] for m in s))
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    letters = {label: "" for label in order}
    for i, s in enumerate(sets):
        for member in s:
            letters[member] += alphabet[i % len(alphabet)]
    return letters


def _anova_parts(groups: Sequence[np.ndarray]) -> tuple[int, int, float, float, float]:
    allv = np.concatenate(groups)
    grand = float(allv.mean())
    ss_between = float(sum(g.size * (g.mean() - grand) ** 2 for g in groups))
    ss_within = float(sum(((g - g.mean()) ** 2).sum() for g in groups))
    df_b, df_w = len(groups) - 1, allv.size - len(groups)
    return df_b, df_w, ss_between / df_b, (ss_within / df_w if df_w > 0 else float("nan")), grand


def _posthoc(
    labels: Sequence[str], data: Mapping[str, np.ndarray], equal_var: bool, alpha: float
) -> tuple[str, dict[frozenset[str], tuple[float, bool]]]:
    out: dict[frozenset[str], tuple[float, bool]] = {}
    if all(float(np.ptp(data[label])) == 0.0 for label in labels):
        # No spread inside any group makes every studentized range infinite or 0/0 (scipy warns and gives NaN);
        # the pairs then differ exactly where their means do, as the omnibus fallback in omnibus_test says.
        for a, b in combinations(labels, 2):
            p = 1.0 if float(data[a].mean()) == float(data[b].mean()) else 0.0
            out[frozenset((a, b))] = (p, p < alpha)
        return "exact (no spread within any group)", out
    if equal_var:
        # scipy's Tukey-Kramer gives the same p-values as statsmodels' pairwise_tukeyhsd (a test checks it)
        # without computing the critical q by numerical inversion, which is slow.
        res = sps.tukey_hsd(*[data[label] for label in labels])
        for i, j in combinations(range(len(labels)), 2):
            p = float(res.pvalue[i, j])
            out[frozenset((labels[i], labels[j]))] = (p, p < alpha)
        return "Tukey HSD", out
    from statsmodels.stats.multicomp import pairwise_tukeyhsd  # a second to import; only 3+ groups need it

    endog = np.concatenate([data[label] for label in labels])
    groups = np.concatenate([[label] * data[label].size for label in labels])
    # With unequal variances statsmodels' Tukey HSD is Games-Howell: Welch's df and standard error per pair.
    table = pairwise_tukeyhsd(endog, groups, use_var="unequal")
    # Its p-values follow the upper triangle of its sorted group names.
    names = [str(name) for name in table.groupsunique]
    for (i, j), p_value in zip(combinations(range(len(names)), 2), table.pvalues, strict=True):
        p = float(p_value)
        out[frozenset((names[i], names[j]))] = (p, p < alpha)
    return "Games-Howell", out


def omnibus_test(
    labels: Sequence[str], data: Mapping[str, np.ndarray], alpha: float
) -> tuple[Omnibus, dict[frozenset[str], tuple[float, bool]]]:
    groups = [data[label] for label in labels]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        anova = sps.f_oneway(*groups)
        levene = sps.levene(*groups, center="median")
    levene_p = float(levene.pvalue) if math.isfinite(levene.pvalue) else None
    equal_var = levene_p is None or levene_p >= alpha
    df_b, df_w, ms_b, ms_w, grand = _anova_parts(groups)
    anova_f = float(anova.statistic) if math.isfinite(anova.statistic) else float("nan")
    anova_p = float(anova.pvalue) if math.isfinite(anova.pvalue) else (1.0 if ms_b == 0 else 0.0)
    test, statistic, p = "one-way ANOVA", anova_f, anova_p
    if not equal_var:
        from statsmodels.stats.oneway import anova_oneway  # as above: only unequal variances need it

        welch = anova_oneway(groups, use_var="unequal", welch_correction=True)
        test, statistic, p = "Welch ANOVA", float(welch.statistic), float(welch.pvalue)
    posthoc_name, posthoc = _posthoc(labels, data, equal_var, alpha)
    significant_omnibus = p < alpha
    differs = {pair for pair, (_, rej) in posthoc.items() if rej and significant_omnibus}
    order = sorted(labels, key=lambda lb: -float(data[lb].mean()))
    cv = math.sqrt(ms_w) / abs(grand) * 100.0 if grand and math.isfinite(ms_w) else None
    result = Omnibus(
        test=test,
        statistic=statistic,
        p_value=p,
        df_between=df_b,
        df_within=df_w,
        ms_between=ms_b,
        ms_within=ms_w,
        grand_mean=grand,
        cv_pct=cv,
        levene_p=levene_p,
        posthoc=posthoc_name,
        letters=compact_letters(order, differs),
    )
    return result, posthoc


def analyse(
    metric: str,
    samples: Mapping[str, Sequence[float]],
    *,
    alpha: float = 0.05,
    confidence: float = 0.95,
    test: str = "welch",
    baseline: str | None = None,
    seed: int = 0,
    n_resamples: int = DEFAULT_RESAMPLES,
    context: str = "",
    invalid_counts: Mapping[str, int] | None = None,
    upper: float | None = None,
) -> MetricResult:
    """All statistics of one metric across the groups of one comparison (same regime and point)."""
    labels = [label for label in samples if len(samples[label]) > 0]
    if baseline in labels:
        labels.remove(baseline)  # type: ignore[arg-type]
        labels.insert(0, baseline)  # type: ignore[arg-type]
    else:
        baseline = labels[0] if labels else None
    data = {label: np.asarray(samples[label], dtype=float) for label in labels}
    summaries = [
        summarize(
            label,
            data[label],
            confidence,
            stable_seed(seed, context, metric, label, "median"),
            (invalid_counts or {}).get(label, 0),
            n_resamples,
            upper,
        )
        for label in labels
    ]
    notes = [w for s in summaries for w in s.warnings]
    testable = [label for label in labels if data[label].size >= MIN_N_INFERENCE]
    pairs: list[PairTest] = []
    omnibus: Omnibus | None = None
    posthoc: dict[frozenset[str], tuple[float, bool]] = {}
    if len(testable) >= 3:
        omnibus, posthoc = omnibus_test(testable, data, alpha)
    for a, b in combinations(labels, 2):
        xa, xb = data[a], data[b]
        ratio = float(xb.mean() / xa.mean()) if xa.mean() != 0 else None
        pair = partial(PairTest, a, b, xa.size, xb.size, float(xa.mean()), float(xb.mean()))
        if a not in testable or b not in testable:
            pairs.append(pair("none", None, False, ratio, None, note=f"n < {MIN_N_INFERENCE}: no test"))
            continue
        rci = ratio_ci(xa, xb, confidence, stable_seed(seed, context, metric, a, b, "ratio"), n_resamples)
        if omnibus is not None:
            p, rej = posthoc[frozenset((a, b))]
            significant = rej and omnibus.p_value < alpha
            note = None if omnibus.p_value < alpha or not rej else f"{omnibus.test} not significant"
            pairs.append(pair(omnibus.posthoc, p, significant, ratio, rci, note=note))
        else:
            name, p, note = two_sample_test(xa, xb, test)
            if name.startswith("Mann") and mann_whitney_floor(xa.size, xb.size) >= alpha:
                note = f"Mann-Whitney cannot reach p < {alpha:g} with n={xa.size}+{xb.size}"
                notes.append(f"{a} vs {b}: {note}")
            pairs.append(pair(name, p, p is not None and p < alpha, ratio, rci, note=note))
    if len(testable) < 2 and len(labels) >= 2:
        notes.append(f"{metric}: fewer than two groups with n >= {MIN_N_INFERENCE}; no test")
    return MetricResult(metric, summaries, pairs, omnibus, baseline, notes)
