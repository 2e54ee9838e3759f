"""Number formatting shared by every output, so the terminal, CSV, Markdown and HTML agree."""

from __future__ import annotations

import math

from harness.model.stats import Interval, PairTest, Summary

TILDE = "~"


def num(value: float | None) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    magnitude = abs(value)
    if magnitude >= 10000:
        return f"{value:,.0f}"
    if magnitude >= 100:
        return f"{value:.1f}"
    if magnitude >= 1:
        return f"{value:.2f}"
    return "0" if magnitude < 1e-9 else f"{value:#.3g}"


def interval(iv: Interval | None) -> str:
    return "-" if iv is None else f"[{num(iv.low)}, {num(iv.high)}]"


def p_value(p: float | None) -> str:
    if p is None or not math.isfinite(p):
        return "p=-"
    return "p<0.001" if p < 0.001 else f"p={p:.3f}"


def pct(value: float | None, signed: bool = False) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    digits = 1 if abs(value) < 10 else 0
    return f"{value:+.{digits}f}%" if signed else f"{value:.{digits}f}%"


def mean_pm(summary: Summary) -> str:
    """benchstat style: mean ± half the CI as a share of the mean."""
    flag = "!" if summary.invalid_runs else ""
    half = summary.ci_halfwidth_pct
    spread = f" ±{pct(half)}" if half is not None else ""
    return f"{num(summary.mean)}{spread} (n={summary.n}){flag}"


def mean_with_ci(summary: Summary | None) -> str:
    if summary is None:
        return "-"
    flag = "!" if summary.invalid_runs else ""
    if summary.mean_ci is None:
        return f"{num(summary.mean)}{flag}"
    return f"{num(summary.mean)} {interval(summary.mean_ci)}{flag}"


def verdict(pair: PairTest | None) -> str:
    """benchstat's delta column: the change where significant, `~` where not, always with p and n."""
    if pair is None:
        return ""
    if pair.test == "none":
        return f"? (n too small, {pair.n_text})"
    if pair.significant:
        return f"{pct(pair.delta_pct, signed=True)} ({p_value(pair.p_value)} {pair.n_text})"
    return f"{TILDE} ({p_value(pair.p_value)} {pair.n_text})"


def sentence(
    pair: PairTest, metric_title: str, higher_is_better: bool | None, confidence: float = 0.95
) -> str:
    """The plain-language verdict for learners."""
    ratio = "-" if pair.ratio_ci is None else f"{num(pair.ratio_ci.low)}-{num(pair.ratio_ci.high)}"
    if pair.test == "none":
        return f"{pair.b} vs {pair.a}: too few runs to say anything about {metric_title}."
    if not pair.significant:
        return (
            f"{pair.b} vs {pair.a}: no significant difference in {metric_title} "
            f"({pair.test}, {p_value(pair.p_value)}, {pair.n_text}; ratio {confidence:.0%} CI {ratio})."
        )
    direction = "higher" if (pair.delta_pct or 0) > 0 else "lower"
    better = (direction == "higher") == higher_is_better
    judged = "" if higher_is_better is None else " (better)" if better else " (worse)"
    return (
        f"{pair.b} has {abs(pair.delta_pct or 0):.1f} % {direction} {metric_title} than {pair.a}{judged}: "
        f"ratio {num(pair.ratio)} with {confidence:.0%} CI {ratio} ({pair.test}, {p_value(pair.p_value)}, "
        f"{pair.n_text})."
    )
