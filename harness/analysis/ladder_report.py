"""The report's ladder pages (issue #28): the first screen, the latency-against-throughput curves with their
knees, the per-step table and the noise floor beside the apps.

Every figure comes from the ladders' metrics.json: the per-ladder yields the runner stored (CPU cost,
capacity, memory) and the per-step records. A step's value over several ladders is their median, so
one odd ladder does not move a curve.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.analysis import format as fmt
from harness.analysis.comparison import Comparison, ComparisonSet
from harness.analysis.host_factor import shared_factor_r
from harness.analysis.load import Run, as_float, get_path
from harness.analysis.metrics import ALL_METRICS, LADDER_REGIMES
from harness.analysis.plots import Figure, _colors, _encode, finish_latency, knee_notes, latency_lines, plt
from harness.analysis.tables import Table
from harness.model.ladder_math import THROTTLED_SHARE, at_quota
from harness.model.stats import MetricResult

FLOOR_FACTOR = 2.0
"""A step is "floor-limited" when its p99 is within this factor of the noise floor's p99 at that rate."""
FLOOR_REACH = 1.05
"""The floor's p99 is read between its steps' rates, and no further than this factor past its last one."""
DEFAULT_SLO_P99_MS = 50.0
FIRST_SCREEN_METRICS = ("cpu_us_per_request", "capacity", "memory")


def steps_of(run: Run) -> list[Mapping[str, Any]]:
    ladder = (run.metrics or {}).get("ladder") or {}
    return [
        s for s in ladder.get("steps") or [] if isinstance(s, Mapping) and as_float(s.get("rate")) is not None
    ]


def throttled_share(step: Mapping[str, Any]) -> float | None:
    """The step's largest throttled share over its instances (older records have only the list)."""
    share = as_float(step.get("throttled_share"))
    if share is not None:
        return share
    shares = [
        as_float(t.get("throttled_share")) for t in step.get("throttling") or [] if isinstance(t, Mapping)
    ]
    return max((s for s in shares if s is not None), default=None)


def slo_p99_ms(runs: Sequence[Run]) -> float:
    for run in runs:
        for value in (as_float(get_path(run.manifest, "slo", "p99_ms")), run.metric("ladder", "stop_p99_ms")):
            if value is not None:
                return value
    return DEFAULT_SLO_P99_MS


def _median(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return float(np.median(known)) if known else None


@dataclass(frozen=True)
class Floor:
    """The floor's p99 per step rate (median over its ladders), read at any rate within its reach."""

    rates: tuple[float, ...]
    p99_ms: tuple[float, ...]
    runs: tuple[str, ...]

    def p99_at(self, rate: float) -> float | None:
        if not self.rates or rate > self.rates[-1] * FLOOR_REACH:
            return None
        # Below its first step the floor is flat (the driver and the responder are idle), so the first
        # step's p99 stands for it; between steps, linear in the rate.
        return float(np.interp(rate, self.rates, self.p99_ms))


def floor_of(floors: Sequence[Run]) -> Floor | None:
    by_rate: dict[float, list[float | None]] = defaultdict(list)
    for run in floors:
        for step in steps_of(run):
            if step.get("kept_up") is False:
                continue  # the responder (or the driver) fell behind: not a floor
            by_rate[float(step["rate"])].append(as_float(step.get("p99_ms")))
    points = [(r, _median(v)) for r, v in sorted(by_rate.items())]
    points = [(r, p) for r, p in points if p is not None]
    if not points:
        return None
    return Floor(
        tuple(r for r, _ in points), tuple(float(p) for _, p in points), tuple(r.run_id for r in floors)
    )


@dataclass
class StepSummary:
    """One step rate of one group, the median over its ladders."""

    label: str
    rate: float
    ladders: int
    throughput_rps: float | None
    p50_ms: float | None
    p99_ms: float | None
    cpu_pct: float | None
    db_cpu_pct: float | None
    throttled_share: float | None
    slo_met: int
    floor_p99_ms: float | None
    slo_p99_ms: float
    points: list[tuple[float, float, float]] = field(default_factory=list)
    """Every ladder's (throughput, p50, p99) at this rate, for the faint dots."""

    @property
    def throttled(self) -> bool:
        return at_quota(self.throttled_share) and self.p99_ms is not None and self.p99_ms > self.slo_p99_ms

    @property
    def floor_limited(self) -> bool:
        return (
            self.floor_p99_ms is not None
            and self.p99_ms is not None
            and self.p99_ms <= FLOOR_FACTOR * self.floor_p99_ms
        )

    @property
    def labels(self) -> list[str]:
        return [
            name for name, on in (("throttled", self.throttled), ("floor-limited", self.floor_limited)) if on
        ]


def ladder_groups(comparison: Comparison) -> dict[str, list[Run]]:
    """The ladder runs by group label; the instance count joins the label when ladders have several."""
    runs = [r for r in comparison.runs if r.regime in LADDER_REGIMES and steps_of(r)]
    points = {r.point for r in runs}
    groups: dict[str, list[Run]] = defaultdict(list)
    for run in sorted(runs, key=lambda r: (r.label, r.point_value or 0)):
        label = run.label + (f" @ {run.point}" if len(points) > 1 else "")
        groups[label].append(run)
    return dict(groups)


def step_summaries(runs: Sequence[Run], label: str, floor: Floor | None) -> list[StepSummary]:
    slo = slo_p99_ms(runs)
    by_rate: dict[float, list[Mapping[str, Any]]] = defaultdict(list)
    for run in runs:
        for step in steps_of(run):
            by_rate[float(step["rate"])].append(step)
    out = []
    for rate, steps in sorted(by_rate.items()):
        points = [
            (float(s["throughput_rps"]), as_float(s.get("p50_ms")) or math.nan, float(s["p99_ms"]))
            for s in steps
            if as_float(s.get("throughput_rps")) is not None and as_float(s.get("p99_ms")) is not None
        ]
        out.append(
            StepSummary(
                label=label,
                rate=rate,
                ladders=len(steps),
                throughput_rps=_median([as_float(s.get("throughput_rps")) for s in steps]),
                p50_ms=_median([as_float(s.get("p50_ms")) for s in steps]),
                p99_ms=_median([as_float(s.get("p99_ms")) for s in steps]),
                cpu_pct=_median([as_float(s.get("instance_cpu_pct")) for s in steps]),
                db_cpu_pct=_median([as_float(s.get("db_cpu_pct")) for s in steps]),
                throttled_share=_median([throttled_share(s) for s in steps]),
                slo_met=sum(1 for s in steps if s.get("slo_met")),
                floor_p99_ms=floor.p99_at(rate) if floor else None,
                slo_p99_ms=slo,
                points=points,
            )
        )
    return out


def step_table(comparison: Comparison) -> Table:
    floor = floor_of(comparison.floors)
    columns = [
        "app",
        "step rate (req/s)",
        "ladders",
        "completed req/s",
        "p50 (ms)",
        "p99 (ms)",
        "floor p99 (ms)",
        "CPU %",
        "PostgreSQL CPU %",
        "throttled share",
        "SLO met",
        "label",
    ]
    rows: list[list[str]] = []
    for label, runs in ladder_groups(comparison).items():
        for s in step_summaries(runs, label, floor):
            rows.append(
                [
                    label,
                    fmt.num(s.rate),
                    str(s.ladders),
                    fmt.num(s.throughput_rps),
                    fmt.num(s.p50_ms),
                    fmt.num(s.p99_ms),
                    fmt.num(s.floor_p99_ms),
                    fmt.num(s.cpu_pct),
                    fmt.num(s.db_cpu_pct),
                    "-" if s.throttled_share is None else f"{s.throttled_share * 100:.0f} %",
                    f"{s.slo_met} of {s.ladders}",
                    ", ".join(s.labels),
                ]
            )
    notes = []
    if floor is None:
        notes.append(
            "No noise floor among these runs: run `./bidbench ladder --floor` to measure the driver against a "
            "static responder at the same rates."
        )
    else:
        notes.append(
            f"Floor: the load driver against nginx returning a fixed document, {len(floor.runs)} ladder(s) "
            f"({', '.join(floor.runs)}); its p99 is read at each app's rates between its steps' rates "
            f"({floor.rates[0]:,.0f}-{floor.rates[-1]:,.0f} req/s)."
        )
    return Table(
        "ladder-steps",
        "Ladder steps: the median over ladders at each step rate",
        columns,
        rows,
        "CPU % is the instances' CPU in the step (100 % = one core); the throttled share is the largest share "
        "of CFS periods an instance spent throttled. 'throttled': the step broke the SLO (p99 over it) while "
        f"more than {THROTTLED_SHARE:.0%} of its periods were throttled, so the CPU quota, not the app's work, is "
        f"the first suspect. 'floor-limited': its p99 is within {FLOOR_FACTOR:g}x the noise floor's, so the "
        "driver and the machine, not the app, set it.",
        "docs/method.md, the ladder",
        notes=notes,
        empty="no ladder runs (run `./bidbench ladder`)",
    )


def ladder_latency_figure(comparison: Comparison, figure: Figure) -> Figure | None:
    """Thesis figure 7.4 from ladders: every ladder's steps faint, the median per step rate as lines,
    the SLO bound, each app's knee and the noise floor. None when there are no ladder runs."""
    groups = ladder_groups(comparison)
    if not groups:
        return None
    floor = floor_of(comparison.floors)
    colors = _colors(list(groups))
    slo = slo_p99_ms([r for runs in groups.values() for r in runs])
    fig, ax = plt.subplots(figsize=(8, 4.8))
    knees = []
    for label, runs in groups.items():
        color = colors[label]
        steps = [s for s in step_summaries(runs, label, floor) if s.throughput_rps and s.p99_ms]
        dots = [p for s in steps for p in s.points]
        if dots:
            ax.scatter(
                [d[0] for d in dots], [d[2] for d in dots], s=10, color=color, alpha=0.25, linewidths=0
            )
            ax.scatter([d[0] for d in dots], [d[1] for d in dots], s=6, color=color, alpha=0.15, linewidths=0)
        xs = [float(s.throughput_rps or 0) for s in steps]
        p99 = [float(s.p99_ms or 0) for s in steps]
        p50 = [float(s.p50_ms) if s.p50_ms else math.nan for s in steps]
        knees += latency_lines(ax, color, xs, p99, p50, f"{label} p99 (n={len(runs)})", label, ",.0f", "")
    ax.axhline(slo, color="firebrick", linestyle=":", linewidth=1.2, label=f"SLO p99 {slo:g} ms")
    if floor is not None:
        ax.plot(floor.rates, floor.p99_ms, "x:", color="grey", label="noise floor p99 (static nginx)")
    finish_latency(fig, ax, figure, "completed throughput in the step (req/s)", 7)
    figure.explanation = (
        "Each faint dot is one step of one ladder: the throughput it completed (x) and its p99 (large dots) or "
        "p50 (small dots). The lines join the median over ladders at each step rate: solid p99, dashed p50. "
        "Latency stays flat while the app has spare capacity and climbs once requests queue; the star marks the "
        "knee (thesis fig 7.4's critical point). The red dotted line is the SLO's p99 bound; the grey crosses are "
        "the noise floor, the driver against a static responder, below which no app can go on this machine. "
        "Past saturation a step completes fewer requests than offered, so the curve may bend back left."
    )
    figure.notes = knee_notes(knees)
    if floor is None:
        figure.notes += "No noise floor measured (./bidbench ladder --floor)."
    return figure


@dataclass
class FirstScreen:
    title: str
    sentences: list[str]
    table: Table
    figure: Figure


def first_set(comparison: Comparison) -> ComparisonSet | None:
    """The ladder comparison the first screen shows: one instance per app if there is one, else the
    smallest point."""
    sets = [s for s in comparison.sets if s.regime in LADDER_REGIMES]
    if not sets:
        return None
    return min(sets, key=lambda s: s.point_value if s.point_value is not None else 0)


def _omnibus_p(result: MetricResult | None) -> tuple[str, float | None]:
    if result is None:
        return "no test", None
    if result.omnibus is not None:
        return result.omnibus.test, result.omnibus.p_value
    tested = [p for p in result.pairs if p.p_value is not None]
    if len(tested) == 1:
        return tested[0].test, tested[0].p_value
    return "no test (n < 3)", None


def _differs(result: MetricResult | None, a: str, b: str) -> bool | None:
    if result is None:
        return None
    pair = result.pair(a, b) or result.pair(b, a)
    if pair is None or pair.test == "none":
        return None
    return pair.significant


def _answer(
    cset: ComparisonSet, key: str, question: str, verb: str, unit: str, higher: bool, digits: int = 0
) -> str:
    result = cset.result(key)
    means = [(s.label, s.mean) for s in (result.summaries if result else [])]
    ranked = sorted(means, key=lambda m: -m[1] if higher else m[1])
    bounds = cset.bounds.get(key, {})
    if not ranked and not bounds:
        return f"{question} No ladder has this figure."
    best_mean = ranked[0][1] if ranked else None
    # A bound above the best figure still wins (its true value is higher yet); one below cannot be ranked.
    leaders = [lb for lb, b in bounds.items() if higher and (best_mean is None or b.value > best_mean)]
    parts: list[str] = []
    for label in sorted(leaders, key=lambda lb: -bounds[lb].value):
        bound = bounds[label]
        parts.append(
            f"{label}, at least {bound.value:,.0f} {unit}: no step failed in {bound.bounded} of "
            f"{bound.runs} ladders, so it is a lower bound, not tested (give it higher rates)"
        )
    for position, (label, value) in enumerate(ranked):
        if position == 0 and not leaders:
            parts.append(f"{label}, {verb} {value:,.{digits}f} {unit}")
            continue
        differs = _differs(result, ranked[0][0], label) if position else None
        judged = {
            True: "significantly different",
            False: "not significantly different",
            None: "not tested: fewer than 3 ladders" if position else "the best bracketed figure",
        }[differs]
        parts.append(f"{label} {value:,.{digits}f} ({judged})")
    for label, bound in bounds.items():
        if label not in leaders:
            parts.append(
                f"{label} at least {bound.value:,.0f} (a lower bound in {bound.bounded} of {bound.runs} "
                "ladders: not ranked, not tested)"
            )
    test, p = _omnibus_p(result)
    tail = f" ({test} {fmt.p_value(p)})." if p is not None else "."
    return f"{question} {'; '.join(parts)}{tail}"


def first_screen(comparison: Comparison) -> FirstScreen | None:
    cset = first_set(comparison)
    if cset is None:
        return None
    labels = cset.labels
    excluded = [e for e in comparison.runset.excluded if e.regime == cset.regime and e.point == cset.point]
    found = {lb: len(cset.runs_of(lb)) + sum(1 for e in excluded if e.label == lb) for lb in labels}
    valid = {lb: sum(1 for r in cset.runs_of(lb) if r.is_valid) for lb in labels}
    metric_keys = [k for k in FIRST_SCREEN_METRICS if cset.result(k) is not None or k in cset.bounds]
    columns = ["app", "valid ladders", *(ALL_METRICS[k].heading() for k in metric_keys)]
    rows = [
        [label, f"{valid[label]} of {found[label]}", *(_cell(cset, key, label) for key in metric_keys)]
        for label in labels
    ]
    test_row = ["test", ""]
    for key in metric_keys:
        name, p = _omnibus_p(cset.result(key))
        text = f"{name} {fmt.p_value(p)}" if p is not None else name
        left_out = cset.bounds.get(key, {})
        if left_out:
            text += f"; {', '.join(left_out)} left out (a lower bound)"
        test_row.append(text)
    rows.append(test_row)
    table = Table(
        "first-screen",
        f"The apps at a glance ({cset.title})",
        columns,
        rows,
        "Each cell: the mean over valid ladders (fresh starts) with its 95 % confidence interval, the "
        "coefficient of variation (CV) and the compact letters (apps sharing a letter do not differ "
        "significantly). A capacity is a figure only when a failing step bracketed it in every ladder; "
        "otherwise the app shows '>= X' and is left out of the test.",
        "docs/method.md, the ladder",
    )
    sentences = [
        _answer(
            cset, "cpu_us_per_request", "Most work per CPU:", "costing", "CPU µs per request", higher=False
        ),
        _answer(cset, "capacity", "Most load under the SLO:", "holding", "req/s", higher=True),
        _answer(cset, "memory", "Least memory:", "at", "MB per instance", higher=False, digits=1),
        _sureness(comparison, cset, valid, found),
    ]
    figure = _first_screen_figure(cset, metric_keys)
    return FirstScreen(cset.title, sentences, table, figure)


def _cell(cset: ComparisonSet, key: str, label: str) -> str:
    bound = cset.bounds.get(key, {}).get(label)
    if bound is not None:
        return bound.text()
    result = cset.result(key)
    summary = result.summary(label) if result else None
    if summary is None:
        return "-"
    digits = 1 if abs(summary.mean) < 100 else 0
    text = f"{summary.mean:,.{digits}f}"
    if summary.mean_ci is not None:
        text += f" [{summary.mean_ci.low:,.{digits}f}, {summary.mean_ci.high:,.{digits}f}]"
    if summary.cv_pct is not None:
        text += f", CV {summary.cv_pct:.1f} %"
    letters = result.omnibus.letters.get(label) if result and result.omnibus else None
    if letters:
        text += f" ({letters})"
    return text + (f" n={summary.n}" if summary.mean_ci is None else "")


def _sureness(
    comparison: Comparison, cset: ComparisonSet, valid: Mapping[str, int], found: Mapping[str, int]
) -> str:
    counts = ", ".join(f"{lb} {valid[lb]} of {found[lb]}" for lb in cset.labels)
    result = cset.result("cpu_us_per_request")
    summaries = result.summaries if result is not None else []
    cvs = [f"{s.label} {s.cv_pct:.1f} %" for s in summaries if s.cv_pct is not None]
    text = f"How sure: valid ladders {counts}"
    if cvs:
        text += f"; the CPU cost varies between fresh starts by CV {', '.join(cvs)}"
    host = {lb: shared_factor_r([steps_of(r) for r in cset.runs_of(lb) if r.is_valid]) for lb in cset.labels}
    known = [f"{lb} {r:.2f}" for lb, r in host.items() if r is not None]
    if known:
        text += (
            f"; it followed the load driver's CPU per request in the same steps by r {', '.join(known)} "
            "(near 1: the shared host, not the app, moved it)"
        )
    small = [lb for lb in cset.labels if valid[lb] < 3]
    if small:
        text += f"; fewer than 3 valid ladders for {', '.join(small)}: no interval and no test there"
    floor = floor_of(comparison.floors)
    if floor is not None:
        text += f"; the noise floor's p99 is {min(floor.p99_ms):.1f}-{max(floor.p99_ms):.1f} ms"
    return text + "."


def _first_screen_figure(cset: ComparisonSet, metric_keys: Sequence[str]) -> Figure:
    figure = Figure(
        "fig-first-screen",
        "CPU cost, capacity and memory per app",
        "Bars are means over fresh-start ladders with their 95 % confidence intervals; dots are the single "
        "ladders. Lower is better for CPU cost and memory, higher for capacity. A hatched bar with an arrow is a "
        "lower bound: no step of those ladders failed, so the capacity is at least that high.",
    )
    if not metric_keys:
        figure.missing = "no ladder has a CPU cost, a capacity or a memory figure"
        return figure
    colors = _colors(cset.labels)
    fig, axes = plt.subplots(1, len(metric_keys), figsize=(3.6 * len(metric_keys), 3.6), squeeze=False)
    for ax, key in zip(axes[0], metric_keys, strict=True):
        metric = ALL_METRICS[key]
        result = cset.result(key)
        bounds = cset.bounds.get(key, {})
        tops = [b.value for b in bounds.values()]
        tops += [
            max(s.maximum, s.mean_ci.high if s.mean_ci else 0.0) for s in (result.summaries if result else [])
        ]
        if tops:
            ax.set_ylim(0, max(tops) * 1.3)  # room for the bounds' arrows and labels
        for i, label in enumerate(cset.labels):
            color = colors[label]
            if label in bounds:
                value = bounds[label].value
                ax.bar(i, value, color="white", edgecolor=color, hatch="//")
                ax.annotate("", (i, value * 1.1), (i, value), arrowprops={"arrowstyle": "->", "color": color})
                ax.text(i, value * 1.12, f">= {value:,.0f}", ha="center", fontsize=8)
                continue
            summary = result.summary(label) if result else None
            if summary is None:
                continue
            ci = summary.mean_ci
            err = None if ci is None else [[summary.mean - ci.low], [ci.high - summary.mean]]
            ax.bar(i, summary.mean, color=color, alpha=0.75, yerr=err, capsize=4)
            ax.scatter([i] * summary.n, summary.values, color="black", s=8, zorder=3)
        ax.set_xticks(range(len(cset.labels)))
        ax.set_xticklabels(cset.labels, rotation=20, fontsize=8)
        name, p = _omnibus_p(result)
        ax.set_title(
            f"{metric.title}\n{name} {fmt.p_value(p)}" if p is not None else metric.title, fontsize=9
        )
        ax.set_ylabel(metric.unit)
        ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    figure.png = _encode(fig)
    return figure
