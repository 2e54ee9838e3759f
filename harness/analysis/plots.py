"""The report's figures (matplotlib, Agg backend), each a PNG embedded as base64, with a plain-language
explanation for learners. A figure without data says which command would produce it."""

from __future__ import annotations

import base64
import io
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402

from harness.analysis.comparison import Comparison  # noqa: E402
from harness.analysis.knee import find_knee  # noqa: E402
from harness.analysis.load import Run  # noqa: E402
from harness.analysis.metrics import share_of_requests_pct  # noqa: E402
from harness.analysis.tables import breakdown_of, reference_set, thesis_runs  # noqa: E402

MAX_SETS = 8
DPI = 100


@dataclass
class Figure:
    id: str
    title: str
    explanation: str
    png: str | None = None  # base64
    missing: str | None = None
    notes: str = ""

    @property
    def data_uri(self) -> str:
        return f"data:image/png;base64,{self.png}" if self.png else ""


def _colors(labels: Sequence[str]) -> dict[str, Any]:
    cmap = plt.get_cmap("tab10")
    return {label: cmap(i % 10) for i, label in enumerate(sorted(labels))}


def _encode(fig: Any) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _finish(fig: Any, ax: Any, figure: Figure, xlabel: str, ylabel: str, **legend: Any) -> None:
    """Labels, legend and grid (minor lines too on a log scale), then the PNG."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(**legend)
    ax.grid(alpha=0.3, which="both" if ax.get_yscale() == "log" else "major")
    figure.png = _encode(fig)


def finish_latency(fig: Any, ax: Any, figure: Figure, xlabel: str, fontsize: int) -> None:
    ax.set_yscale("log")
    _finish(fig, ax, figure, xlabel, "latency (ms, log scale)", fontsize=fontsize, ncol=2)


def knee_notes(knees: Sequence[str]) -> str:
    return ("Knees: " + "; ".join(knees) + ". ") if knees else "No knee: the curves stay straight. "


def _invalid_note(runs: Sequence[Run]) -> str:
    bad = sum(1 for r in runs if not r.is_valid)
    return f"Includes {bad} invalid run(s) (hollow markers)." if bad else ""


def _offered_points(run: Run) -> list[tuple[float, float]]:
    """(offered, served) req/s: a ladder's per step (its run-level figures are its first step's rate and
    its mean throughput, which put dots above the diagonal), any other run's once."""
    steps = ((run.metrics or {}).get("ladder") or {}).get("steps")
    if isinstance(steps, list):
        return [
            (float(s["rate"]), float(s["throughput_rps"]))
            for s in steps
            if isinstance(s, dict) and s.get("rate") is not None and s.get("throughput_rps") is not None
        ]
    offered, served = run.metric("offered_rps"), run.metric("throughput_rps")
    return [(offered, served)] if offered is not None and served is not None else []


def throughput_vs_offered(comparison: Comparison) -> Figure:
    figure = Figure(
        "fig-throughput-offered",
        "Throughput against offered rate",
        "Each dot is one run, or one step of a ladder: how many requests per second the load driver offered (x) "
        "and how many were answered (y). On the dashed diagonal every request was served. Where a line bends away below the "
        "diagonal, the implementation has reached its limit: more offered load no longer means more work done.",
    )
    runs = [r for r in comparison.runs if _offered_points(r)]
    if not runs:
        figure.missing = (
            "no run has offered_rps and throughput_rps (run `./bidbench run --rate ...` at several rates)"
        )
        return figure
    colors = _colors({r.label for r in runs})
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    top = 0.0
    for label in sorted(colors):
        points = [(x, y, r) for r in runs if r.label == label for x, y in _offered_points(r)]
        xs = [x for x, _, _ in points]
        ys = [y for _, y, _ in points]
        top = max(top, *xs, *ys)
        ax.scatter(
            xs,
            ys,
            s=18,
            alpha=0.6,
            edgecolors=[colors[label]] * len(points),
            facecolors=[colors[label] if r.is_valid else "none" for _, _, r in points],
        )
        by_x: dict[float, list[float]] = defaultdict(list)
        for x, y in zip(xs, ys, strict=True):
            by_x[round(x, 6)].append(y)
        line_x = sorted(by_x)
        ax.plot(line_x, [float(np.mean(by_x[x])) for x in line_x], "-", color=colors[label], label=label)
    ax.plot([0, top], [0, top], "--", color="grey", linewidth=1, label="all served")
    _finish(fig, ax, figure, "offered rate (req/s)", "throughput (successful req/s)")
    figure.notes = _invalid_note(runs)
    return figure


def latency_vs_throughput(comparison: Comparison) -> Figure:
    figure = Figure(
        "fig-latency-throughput",
        "Latency percentiles against throughput, with the knee",
        "Each line follows one implementation as the offered rate grows (median over repetitions at each rate). "
        "Solid: p99, the time 99 % of requests beat; dashed: p50, the typical request. Latency stays flat while "
        "the server has spare capacity, then climbs steeply as requests start to queue. The star marks the knee: "
        "the last comfortable operating point (thesis fig 7.4's 'critical point'). The y axis is logarithmic.",
    )
    from harness.analysis.ladder_report import ladder_latency_figure  # it builds on this module's figures

    if ladder_latency_figure(comparison, figure) is not None:
        return figure
    runs = [r for r in comparison.runs if r.regime == "fixed-rate"]
    runs = [
        r
        for r in runs
        if r.metric("throughput_rps") is not None and r.metric("latency_ms", "p99") is not None
    ]
    if not runs:
        figure.missing = "no ladder or fixed-rate runs (run `./bidbench ladder`, or `./bidbench run` at several --rate values)"
        return figure
    colors = _colors({r.label for r in runs})
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    knees = []
    for label in sorted(colors):
        mine = [r for r in runs if r.label == label]
        by_point = [[r for r in mine if r.point == point] for point in dict.fromkeys(r.point for r in mine)]
        points = sorted(
            by_point, key=lambda rs: float(np.median([r.metric("throughput_rps") or 0 for r in rs]))
        )
        xs = [float(np.median([r.metric("throughput_rps") or 0 for r in rs])) for rs in points]
        p99 = [float(np.median([r.metric("latency_ms", "p99") or 0 for r in rs])) for rs in points]
        p50 = [float(np.median([r.metric("latency_ms", "p50") or 0 for r in rs])) for rs in points]
        knees += latency_lines(ax, colors[label], xs, p99, p50, f"{label} p99", label, ".0f", " req/s")
    finish_latency(fig, ax, figure, "throughput (req/s)", 8)
    figure.notes = knee_notes(knees) + _invalid_note(runs)
    return figure


def latency_lines(
    ax: Any,
    color: Any,
    xs: Sequence[float],
    p99: Sequence[float],
    p50: Sequence[float],
    p99_label: str,
    label: str,
    x_format: str,
    knee_unit: str,
) -> list[str]:
    """One group's p99 (solid) and p50 (dashed) against throughput, its knee starred; the knee in words."""
    ax.plot(xs, p99, "o-", color=color, label=p99_label, markersize=4)
    ax.plot(xs, p50, "s--", color=color, label=f"{label} p50", markersize=3, alpha=0.7)
    knee = find_knee(xs, p99)
    if knee is None:
        return []
    ax.plot([knee.x], [knee.y], "*", color=color, markersize=16, markeredgecolor="black")
    x = format(knee.x, x_format)
    ax.annotate(
        f"knee {x}{knee_unit}",
        (knee.x, knee.y),
        textcoords="offset points",
        xytext=(-10, 12),
        fontsize=8,
        color=color,
    )
    return [f"{label}: about {x} req/s (p99 {knee.y:.1f} ms)"]


def _bars(comparison: Comparison, metric: str, figure: Figure, ylabel: str) -> Figure:
    priority = {"capacity": 0, "fixed-rate": 1}
    sets = [s for s in comparison.sets if s.result(metric) is not None]
    sets.sort(key=lambda s: (priority.get(s.regime, 3), comparison.sets.index(s)))
    if not sets:
        figure.missing = f"no runs have {metric}"
        return figure
    shown = sets[:MAX_SETS]
    labels = sorted({lb for s in shown for lb in s.labels})
    colors = _colors(labels)
    width = 0.8 / len(labels)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(shown) + 3), 4.5))
    for i, label in enumerate(labels):
        means, lows, highs, xs = [], [], [], []
        for j, cset in enumerate(shown):
            result = cset.result(metric)
            summary = result.summary(label) if result else None
            if summary is None:
                continue
            xs.append(j + (i - (len(labels) - 1) / 2) * width)
            means.append(summary.mean)
            ci = summary.mean_ci
            lows.append(summary.mean - ci.low if ci else 0.0)
            highs.append(ci.high - summary.mean if ci else 0.0)
        ax.bar(
            xs,
            means,
            width=width * 0.95,
            color=colors[label],
            label=label,
            yerr=[lows, highs],
            capsize=4,
            error_kw={"elinewidth": 1.2},
        )
    ax.set_xticks(
        range(len(shown)),
        [s.title for s in shown],
        rotation=20 if len(shown) > 3 else 0,
        ha="right" if len(shown) > 3 else "center",
    )
    ax.set_ylabel(ylabel)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(alpha=0.3, axis="y")
    figure.png = _encode(fig)
    if len(sets) > MAX_SETS:
        figure.notes = f"The first {MAX_SETS} of {len(sets)} comparison sets are shown; the tables have all."
    return figure


def normalized_throughput(comparison: Comparison) -> Figure:
    figure = Figure(
        "fig-normalized",
        "Normalized throughput per implementation",
        "Throughput divided by CPU %: how many requests per second one per cent of a CPU buys (thesis Table 7.2). "
        "Higher means more work from the same processor. Bars are means over repetitions; whiskers are "
        f"{comparison.confidence:.0%} confidence intervals. When whiskers of two bars overlap a lot, the difference may be noise: the verdict "
        "table says which differences are significant.",
    )
    return _bars(comparison, "normalized_throughput", figure, "req/s per CPU %")


def memory_per_instance(comparison: Comparison) -> Figure:
    figure = Figure(
        "fig-memory",
        "Memory per instance",
        "Steady-state memory of one instance (PSS: shared pages are split between the processes sharing them). "
        "Lower is leaner; a JVM reserves heap up front, a Node.js or PHP-FPM process starts small. Whiskers: "
        f"{comparison.confidence:.0%} confidence intervals.",
    )
    return _bars(comparison, "memory", figure, "MB per instance")


def _scatter_by_label(
    comparison: Comparison,
    figure: Figure,
    x_of: Callable[[Run], float | None],
    y_of: Callable[[Run], float | None],
    xlabel: str,
    ylabel: str,
) -> Figure:
    runs, source = thesis_runs(comparison.runs)
    runs = [r for r in runs if x_of(r) is not None and y_of(r) is not None]
    if not runs:
        figure.missing = "no runs with the needed metrics"
        return figure
    colors = _colors({r.label for r in runs})
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for label in sorted(colors):
        mine = [r for r in runs if r.label == label]
        ax.scatter(
            [x_of(r) for r in mine],
            [y_of(r) for r in mine],
            s=22,
            label=label,
            edgecolors=[colors[label]] * len(mine),
            facecolors=[colors[label] if r.is_valid else "none" for r in mine],
        )
        for n in sorted({r.instances for r in mine if r.instances}):
            members = [r for r in mine if r.instances == n]
            x = float(np.mean([x_of(r) or 0 for r in members]))
            y = float(np.mean([y_of(r) or 0 for r in members]))
            ax.annotate(
                f"{n}", (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7, color=colors[label]
            )
    _finish(fig, ax, figure, xlabel, ylabel)
    figure.notes = f"From {source}; small numbers are instance counts. " + _invalid_note(runs)
    return figure


def _capacity_else_throughput(run: Run) -> float | None:
    capacity = run.metric("capacity_rps")
    return capacity if capacity is not None else run.metric("throughput_rps")


def throughput_vs_cpu(comparison: Comparison) -> Figure:
    figure = Figure(
        "fig-throughput-cpu",
        "Throughput in relation to CPU (thesis figure 7.3)",
        "Each dot is a run: the CPU it used (x, 100 % = one core) and the requests per second it served (y). A "
        "steeper cloud means more work per unit of CPU. Adding instances moves the dots up and to the right.",
    )
    return _scatter_by_label(
        comparison,
        figure,
        lambda r: r.metric("cpu_pct_total"),
        _capacity_else_throughput,
        "CPU % (all instances)",
        "throughput (req/s)",
    )


def memory_vs_cpu(comparison: Comparison) -> Figure:
    figure = Figure(
        "fig-memory-cpu",
        "Memory in relation to CPU (thesis figure 7.5)",
        "Memory per instance (y) against the CPU the run used (x). Flat lines mean memory does not grow with "
        "load; a high line means each instance costs more memory, whatever it does.",
    )
    return _scatter_by_label(
        comparison,
        figure,
        lambda r: r.metric("cpu_pct_total"),
        lambda r: r.metric("memory_per_instance_mb"),
        "CPU % (all instances)",
        "memory per instance (MB)",
    )


def breakdown(comparison: Comparison) -> Figure:
    figure = Figure(
        "fig-breakdown",
        "Where the time goes: database, application, outside",
        "Each bar is the mean time of one request type, split using the Server-Timing header every app sends: "
        "db is time inside database calls, app is the rest of the handler (JSON, validation, business logic), "
        "outside is what the client measured beyond the handler (network, HTTP server, queueing). This is the "
        "STEP framework's per-layer breakdown (Tables 1 and 3). A ladder counts only its steps that met the SLO.",
    )
    ref = reference_set(comparison)
    if ref is None:
        figure.missing = "no run has per-type Server-Timing figures (metrics.json per_type.server_timing_ms)"
        return figure
    rows = [
        (f"{label}: {name}", slices.db, slices.app_only, slices.outside or 0.0)
        for label in sorted(ref.labels)
        for name, slices in breakdown_of(ref.runs_of(label)).items()
    ]
    fig, ax = plt.subplots(figsize=(8.0, max(3.0, 0.32 * len(rows) + 1)))
    y = np.arange(len(rows))
    left = np.zeros(len(rows))
    for index, (part, color) in enumerate((("db", "#4c72b0"), ("app", "#dd8452"), ("outside", "#a5a5a5"))):
        widths = np.asarray([r[index + 1] for r in rows])
        ax.barh(y, widths, left=left, color=color, label=part)
        left += widths
    ax.set_yticks(y, [r[0] for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("mean time per request (ms)")
    ax.legend()
    ax.grid(alpha=0.3, axis="x")
    figure.png = _encode(fig)
    figure.notes = f"From {ref.title}."
    return figure


def _mean_error_pct(runs: list[Run], key: str) -> float:
    """The mean over runs of a stored error count (sys_errors, app_errors) as a % of the run's requests."""
    share = share_of_requests_pct(key)
    return float(np.mean([share(r) or 0.0 for r in runs]))


def users(comparison: Comparison) -> Figure:
    figure = Figure(
        "fig-users",
        "Throughput and errors as users pile up",
        "The closed model: N virtual users each send a request, wait for the answer, and send the next. Left: "
        "throughput grows with users until the server saturates (RUBiS figure 1). Right: system errors "
        "(5xx, timeouts) per cent of requests; application exceptions (4xx) should stay flat (STEP Table 6).",
    )
    runs = [r for r in comparison.runs if r.regime == "users" and r.users is not None]
    if not runs:
        figure.missing = "no runs of the users regime (run `./bidbench users`)"
        return figure
    colors = _colors({r.label for r in runs})
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for label in sorted(colors):
        mine = [r for r in runs if r.label == label]
        xs = sorted({int(r.users or 0) for r in mine})
        by_users = {u: [r for r in mine if int(r.users or 0) == u] for u in xs}
        thr = [float(np.mean([r.metric("throughput_rps") or 0 for r in by_users[u]])) for u in xs]
        sys_err = [_mean_error_pct(by_users[u], "sys_errors") for u in xs]
        app_err = [_mean_error_pct(by_users[u], "app_errors") for u in xs]
        left.plot(xs, thr, "o-", color=colors[label], label=label)
        right.plot(xs, sys_err, "o-", color=colors[label], label=f"{label} system errors")
        right.plot(xs, app_err, "x--", color=colors[label], alpha=0.6, label=f"{label} app exceptions")
    for ax, ylabel in ((left, "throughput (req/s)"), (right, "% of requests")):
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.set_xlabel("users")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    figure.png = _encode(fig)
    return figure


FIGURES: tuple[Callable[[Comparison], Figure], ...] = (
    throughput_vs_offered,
    latency_vs_throughput,
    normalized_throughput,
    throughput_vs_cpu,
    memory_per_instance,
    memory_vs_cpu,
    users,
    breakdown,
)


def all_figures(comparison: Comparison) -> dict[str, Figure]:
    return {figure.id: figure for figure in (make(comparison) for make in FIGURES)}
