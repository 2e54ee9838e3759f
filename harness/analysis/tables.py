"""Every table of a comparison as a model `Table` (table_model.py), built from runs: cells keep the numbers
they print, records feed the CSV; table_render.py lays them out. The benchstat-like verdict table, the
statistics behind it, the source texts' tables (each cites the table it follows) and the runs used and
excluded. Nothing here invents a number: every cell is computed from metrics.json, the load summary or a fit.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.analysis import format as fmt
from harness.analysis import table_model as cell
from harness.analysis.comparison import Comparison, ComparisonSet
from harness.analysis.load import Run, as_float, get_path
from harness.analysis.metrics import ALL_METRICS
from harness.analysis.table_model import Cell, Table
from harness.model.stats import MetricResult, PairTest, stable_seed, summarize

# The published works the tables follow, named as a reader can find them: authors, title and kind (the
# claims keep their own copies of these sources; a reader has only these names).
STEP_CHAPTER = "Pardal, Pardal and Marques, “Performance Assessment of Web Services in the STEP Framework” (book chapter)"
RUBIS = "Spacco and Pugh, “RUBiS Revisited: Why J2EE Benchmarking is Hard”"
STEP_PAPER = (
    "Pardal, Pardal and Marques, “Improving Web Services performance, one STEP at a time” (conference paper)"
)
ZENG_THESIS = (
    "Zeng, “Performance Comparison between Java and Node.js in terms of Scaling in Cloud” (B.Sc. thesis)"
)
FREIRE = (
    "Freire et al., “Experimental study for evaluating the performance of Java virtual machines in application "
    "integration”"
)


def _label_sort(labels: Sequence[str], baseline: str | None) -> list[str]:
    return sorted(labels, key=lambda lb: (lb != baseline, lb))


def verdict_style(pair: PairTest | None, higher_is_better: bool | None) -> str:
    """better / worse (significant, by the metric's direction), changed (no direction), same (~), or ""."""
    if pair is None or pair.test == "none":
        return ""
    if not pair.significant:
        return "same"
    if higher_is_better is None or pair.delta_pct is None:
        return "changed"
    return "better" if (pair.delta_pct > 0) == higher_is_better else "worse"


def _verdict_cell(pair: PairTest | None) -> str:
    """The delta column's text; its value is the change in per cent, with the ratio's interval as per cent."""
    ci = pair.ratio_ci if pair else None
    return Cell(
        fmt.verdict(pair),
        pair.delta_pct if pair else None,
        (ci.low - 1.0) * 100.0 if ci else None,
        (ci.high - 1.0) * 100.0 if ci else None,
        "%",
    )


def verdict_table(cset: ComparisonSet, comparison: Comparison) -> Table:
    """benchstat-like: one row per metric; a value column per group; a delta column per non-baseline group."""
    baseline = next((r.baseline for r in cset.results if r.baseline), None)
    labels = _label_sort(cset.labels, baseline)
    others = [lb for lb in labels if lb != baseline]
    columns = ["metric", *labels, *[f"{lb} vs {baseline}" for lb in others]]
    rows: list[list[str]] = []
    styles: list[list[str]] = []
    records: list[dict[str, Any]] = []
    notes: list[str] = []
    bounded_only = [k for k in cset.bounds if cset.result(k) is None]
    for result in [*cset.results, *(MetricResult(k, [], [], None, None, []) for k in bounded_only)]:
        metric = ALL_METRICS[result.metric]
        bounds = cset.bounds.get(result.metric, {})
        row: list[str] = [metric.heading()]
        style = [""]
        for label in labels:
            summary = result.summary(label)
            if label in bounds:
                row.append(bounds[label].text())
            else:
                row.append(cell.mean_pm(summary, metric.unit) if summary else "-")
            style.append("flag" if summary and summary.invalid_runs else "")
        for label in others:
            if label in bounds or baseline in bounds:
                row.append("not tested (a lower bound)")
                style.append("")
                continue
            pair = result.vs_baseline(label)
            row.append(_verdict_cell(pair))
            style.append(verdict_style(pair, metric.higher_is_better))
        rows.append(row)
        styles.append(style)
        where = {"regime": cset.regime, "point": cset.point, "metric": result.metric, "unit": metric.unit}
        for label, bound in bounds.items():
            verdict = f"lower bound {bound.text()}: not averaged, not tested"
            records.append({**where, "label": label, "n": bound.runs, "verdict": verdict})
        if bounds:
            notes.append(
                f"{metric.title}: "
                + ", ".join(f"{lb} {b.text()}" for lb, b in bounds.items())
                + ": lower bounds, never averaged; left out of the ANOVA and the pairwise tests"
            )
        if result.omnibus is not None:
            om = result.omnibus
            notes.append(
                f"{metric.title}: {om.test} {fmt.p_value(om.p_value)} (Levene {fmt.p_value(om.levene_p)}), "
                f"then {om.posthoc}; groups sharing a letter do not differ: "
                + ", ".join(f"{lb} {om.letters.get(lb, '')}" for lb in labels if lb in om.letters)
            )
        for summary in result.summaries:
            pair = result.vs_baseline(summary.label)
            records.append(
                {
                    **where,
                    "label": summary.label,
                    "n": summary.n,
                    "mean": summary.mean,
                    "mean_ci_low": summary.mean_ci.low if summary.mean_ci else None,
                    "mean_ci_high": summary.mean_ci.high if summary.mean_ci else None,
                    "median": summary.median,
                    "median_ci_low": summary.median_ci.low if summary.median_ci else None,
                    "median_ci_high": summary.median_ci.high if summary.median_ci else None,
                    "median_ci_method": summary.median_ci.method if summary.median_ci else None,
                    "std": summary.std,
                    "baseline": result.baseline,
                    "ratio_to_baseline": pair.ratio if pair else None,
                    "ratio_ci_low": pair.ratio_ci.low if pair and pair.ratio_ci else None,
                    "ratio_ci_high": pair.ratio_ci.high if pair and pair.ratio_ci else None,
                    "delta_pct": pair.delta_pct if pair else None,
                    "test": pair.test if pair else None,
                    "p_value": pair.p_value if pair else None,
                    "significant": pair.significant if pair else None,
                    "verdict": fmt.verdict(pair) if pair else "baseline",
                    "invalid_runs_included": summary.invalid_runs,
                }
            )
    tests = sorted({p.test for r in cset.results for p in r.pairs if p.test != "none"})
    caption = f"Tests: {', '.join(tests) or 'none (n too small)'}; alpha={comparison.alpha:g}."
    if any(s.invalid_runs for r in cset.results for s in r.summaries):
        caption += " '!' marks values that include invalid runs."
    return Table(
        f"verdict-{cset.slug}",
        cset.title,
        columns,
        rows,
        caption,
        "docs/design.md §8",
        records,
        notes,
        styles=styles,
    )


def verdict_tables(comparison: Comparison) -> list[Table]:
    return [verdict_table(cset, comparison) for cset in comparison.sets]


def details_table(comparison: Comparison) -> Table:
    columns = [
        "set",
        "metric",
        "group",
        "n",
        "mean",
        "mean CI",
        "median",
        "median CI",
        "sd",
        "CV",
        "Q1-Q3",
        "min-max",
        "letters",
    ]
    rows = []
    for cset in comparison.sets:
        for result in cset.results:
            metric = ALL_METRICS[result.metric]
            letters = result.omnibus.letters if result.omnibus else {}
            for s in result.summaries:
                unit = metric.unit
                rows.append(
                    [
                        cset.title,
                        metric.heading(),
                        s.label + ("!" if s.invalid_runs else ""),
                        cell.count(s.n),
                        cell.number(s.mean, unit),
                        cell.interval(s.mean_ci, unit),
                        cell.number(s.median, unit),
                        cell.interval(
                            s.median_ci,
                            unit,
                            " b" if s.median_ci and "bootstrap" in s.median_ci.method else "",
                        ),
                        cell.number(s.std, unit),
                        cell.percent(s.cv_pct),
                        Cell(f"{fmt.num(s.q1)}-{fmt.num(s.q3)}", None, s.q1, s.q3, unit),
                        Cell(f"{fmt.num(s.minimum)}-{fmt.num(s.maximum)}", None, s.minimum, s.maximum, unit),
                        letters.get(s.label, ""),
                    ]
                )
    return Table(
        "details",
        "Per-group statistics",
        columns,
        rows,
        f"Mean with its t-interval; median with its order-statistic interval ('b': a bootstrap interval, n too "
        f"small for order statistics); {comparison.confidence:.0%} confidence. Letters (3+ groups): groups "
        "that share a letter do not differ significantly (as in Freire et al., Tables 5-7).",
        f"{STEP_PAPER}, §3.6; {FREIRE}, Tables 5-7",
    )


def anova_table(comparison: Comparison) -> Table:
    columns = [
        "set",
        "metric",
        "test",
        "df groups",
        "df error",
        "MS groups",
        "MS error",
        "F",
        "p",
        "overall mean",
        "CV",
        "Levene p",
        "post hoc",
    ]
    rows = []
    notes: list[str] = []
    for cset in comparison.sets:
        for key, left_out in cset.bounds.items():
            notes.append(
                f"{cset.title}, {ALL_METRICS[key].title}: "
                + ", ".join(f"{lb} ({b.text()})" for lb, b in left_out.items())
                + " left out of the test: only a lower bound"
            )
        for result in cset.results:
            om = result.omnibus
            if om is None:
                continue
            verdict = "" if om.p_value < comparison.alpha else " ns"
            rows.append(
                [
                    cset.title,
                    ALL_METRICS[result.metric].heading(),
                    om.test,
                    cell.count(om.df_between),
                    cell.count(om.df_within),
                    cell.number(om.ms_between),
                    cell.number(om.ms_within),
                    cell.number(om.statistic),
                    cell.p_value(om.p_value, verdict),
                    cell.number(om.grand_mean, ALL_METRICS[result.metric].unit),
                    cell.percent(om.cv_pct),
                    cell.p_value(om.levene_p),
                    om.posthoc,
                ]
            )
    return Table(
        "anova",
        "Analysis of variance (3 or more groups)",
        columns,
        rows,
        "Like Freire et al., Tables 2-4: degrees of freedom, mean squares, the overall mean and the coefficient of "
        "variation (sqrt(MS error) / mean). 'ns': not significant. Levene's test (median-centred) chooses the "
        "path: equal variances -> ANOVA and Tukey HSD; unequal -> Welch's ANOVA and Games-Howell.",
        f"{FREIRE}, Tables 2-4",
        notes=notes,
        empty="no comparison has three or more groups",
    )


def ratio_table(comparison: Comparison) -> Table:
    columns = ["set", "metric", "comparison", "ratio", "ratio CI", "delta", "test", "p", "verdict"]
    rows = [
        [
            cset.title,
            ALL_METRICS[result.metric].heading(),
            f"{pair.b} / {pair.a}",
            Cell.measured(fmt.num(pair.ratio), pair.ratio, pair.ratio_ci),
            cell.interval(pair.ratio_ci),
            cell.percent(pair.delta_pct, signed=True),
            pair.test,
            cell.p_value(pair.p_value),
            fmt.verdict(pair).split(" (")[0] + (f" ({pair.note})" if pair.note else ""),
        ]
        for cset in comparison.sets
        for result in cset.results
        for pair in result.pairs
    ]
    return Table(
        "ratios",
        "Ratios between implementations",
        columns,
        rows,
        f"Ratio of means with a seeded bootstrap (BCa) {comparison.confidence:.0%} interval. The verdict comes "
        "from the test (Welch / Mann-Whitney for two groups, Tukey HSD or Games-Howell for three or more).",
        "docs/design.md §8",
    )


def _mean_cell(
    comparison: Comparison, members: Sequence[Run], getter: Callable[[Run], float | None], tag: str, unit: str
) -> Cell:
    """The mean with its interval over one group at one point (members share their label and point)."""
    clean = _values(members, getter)
    if not clean:
        return cell.mean_with_ci(None)
    label, point = members[0].label, members[0].point
    seed = stable_seed(comparison.seed, tag, label, point)
    summary = summarize(label, clean, comparison.confidence, seed, n_resamples=comparison.n_resamples)
    return cell.mean_with_ci(summary, unit)


def _values(runs: Sequence[Run], getter: Callable[[Run], float | None]) -> list[float]:
    return [v for v in (getter(r) for r in runs) if v is not None]


def _flag(runs: Sequence[Run]) -> str:
    return "!" if any(not r.is_valid for r in runs) else ""


def thesis_runs(runs: Sequence[Run]) -> tuple[list[Run], str]:
    """The runs the thesis tables describe: capacity, else fixed-rate, else whatever there is."""
    for regime in ("capacity", "fixed-rate"):
        chosen = [r for r in runs if r.regime == regime]
        if chosen:
            return chosen, f"runs of the {regime} regime"
    return list(runs), "all runs (no capacity or fixed-rate runs found)"


def _by_label_point(runs: Sequence[Run]) -> dict[tuple[str, float, str], list[Run]]:
    groups: dict[tuple[str, float, str], list[Run]] = defaultdict(list)
    for run in runs:
        order = run.point_value if run.point_value is not None else float("inf")
        groups[(run.label, order, run.point)].append(run)
    return dict(sorted(groups.items()))


def _point_row(members: Sequence[Run], figures: Sequence[str]) -> list[str]:
    """A thesis table's row for one implementation at one point: who, how many instances, where, each
    figure and how many runs."""
    counts = sorted({r.instances for r in members if r.instances is not None})
    instances = ", ".join(str(c) for c in counts) or "-"
    first = members[0]
    return [first.label + _flag(members), instances, first.point, *figures, cell.count(len(members))]


def _throughput_or_capacity(run: Run) -> float | None:
    capacity = run.metric("capacity_rps")
    if (run.metrics or {}).get("ladder") is not None:
        # A ladder's whole-run throughput mixes every step's load; an unbracketed capacity is a bound.
        return capacity
    return capacity if capacity is not None else run.metric("throughput_rps")


_CPU = ALL_METRICS["cpu"].value


def cpu_utilization_table(comparison: Comparison) -> Table:
    runs, source = thesis_runs(comparison.runs)
    rows = []
    for members in _by_label_point(runs).values():
        maxima = _values(
            members,
            lambda r: (r.instances or 0) * r.cpu_limit * 100.0 if r.cpu_limit and r.instances else None,
        )
        figures = [
            _mean_cell(comparison, members, _CPU, "t71cpu", "%"),
            cell.number(sum(maxima) / len(maxima) if maxima else None, "%"),
            _mean_cell(comparison, members, ALL_METRICS["utilized_cpu"].value, "t71u", "%"),
        ]
        rows.append(_point_row(members, figures))
    return Table(
        "table-7-1",
        "Utilized CPU per instance count (thesis Table 7.1)",
        ["implementation", "instances", "point", "CPU %", "maximum CPU %", "utilized CPU %", "n"],
        rows,
        f"CPU % is the CPU time of every instance's process tree over wall time; the maximum is instances x "
        f"CPU limit x 100; utilized = CPU % / maximum. Mean with {comparison.confidence:.0%} CI, from {source}.",
        f"{ZENG_THESIS}, Table 7.1",
    )


def normalized_table(comparison: Comparison) -> Table:
    runs, source = thesis_runs(comparison.runs)
    uses_capacity = any(r.metric("capacity_rps") is not None for r in runs)
    normalized = ALL_METRICS["normalized_throughput"].value
    rows = [
        _point_row(
            members,
            [
                _mean_cell(comparison, members, _CPU, "t72c", "%"),
                _mean_cell(comparison, members, _throughput_or_capacity, "t72t", "req/s"),
                _mean_cell(comparison, members, normalized, "t72n", "req/s per CPU %"),
            ],
        )
        for members in _by_label_point(runs).values()
    ]
    thr_name = "capacity (req/s)" if uses_capacity else "throughput (req/s)"
    return Table(
        "table-7-2",
        "Throughput per CPU % (thesis Table 7.2)",
        ["implementation", "instances", "point", "CPU %", thr_name, "normalized (req/s per CPU %)", "n"],
        rows,
        f"Normalized throughput = successful requests per second / CPU % (metrics.json normalized_throughput). "
        f"Mean with {comparison.confidence:.0%} CI, from {source}."
        + (
            " For ladders it is derived from the CPU cost per request (10,000 / CPU µs per request), not from "
            "this CPU % and throughput; a ladder's capacity is shown only where a failing step bracketed it."
            if any((r.metrics or {}).get("ladder") is not None for r in runs)
            else ""
        ),
        f"{ZENG_THESIS}, Table 7.2",
    )


def _peak_rss(run: Run) -> float | None:
    listed = (run.metrics or {}).get("instances")
    if not isinstance(listed, list):
        return None
    peaks = (as_float(i.get("rss_peak_mb")) for i in listed if isinstance(i, Mapping))
    return max((p for p in peaks if p is not None), default=None)


def _all_instances_mb(run: Run) -> float | None:
    return (run.metric("memory_per_instance_mb") or 0) * run.instances if run.instances else None


def memory_table(comparison: Comparison) -> Table:
    runs, source = thesis_runs(comparison.runs)
    rows = []
    for members in _by_label_point(runs).values():
        peak = _values(members, _peak_rss)
        figures = [
            _mean_cell(comparison, members, _CPU, "f75c", "%"),
            _mean_cell(comparison, members, ALL_METRICS["memory"].value, "f75m", "MB"),
            _mean_cell(comparison, members, _all_instances_mb, "f75t", "MB"),
            cell.number(max(peak) if peak else None, "MB"),
        ]
        rows.append(_point_row(members, figures))
    return Table(
        "figure-7-5",
        "Memory against CPU (thesis figure 7.5)",
        [
            "implementation",
            "instances",
            "point",
            "CPU %",
            "memory per instance (MB)",
            "memory, all instances (MB)",
            "peak RSS (MB)",
            "n",
        ],
        rows,
        f"Memory per instance is the steady-state PSS (RSS where PSS is unavailable) after warm-up. Mean with "
        f"{comparison.confidence:.0%} CI, from {source}.",
        f"{ZENG_THESIS}, figure 7.5",
    )


def latency_stats(run: Run) -> dict[str, float | None]:
    """max, mean, median in ms from metrics.json's `latency_ms` (the load summary's, copied by the run)."""
    return {
        key: run.metric("latency_ms", own)
        for key, own in (("max", "max"), ("mean", "mean"), ("median", "p50"))
    }


def over_one_second(run: Run) -> tuple[float | None, str]:
    """(% of requests over 1 s or None, how it is known). Exact when recorded; else 0 when max < 1 s; else a
    bound from the percentiles ("< 1 %" when p99 < 1 s)."""
    direct = run.metric("over_1s_pct")
    if direct is None:
        direct = run.metric("latency_ms", "over_1s_pct")
    if direct is not None:
        return direct, "exact"
    lat = latency_stats(run)
    if lat["max"] is not None and lat["max"] < 1000.0:
        return 0.0, "exact"
    for key, share in (("p999", 0.1), ("p99", 1.0), ("p95", 5.0), ("p90", 10.0), ("p50", 50.0)):
        value = run.metric("latency_ms", key)
        if value is not None and value < 1000.0:
            return None, f"< {share:g}%"
    return None, ">= 50%" if lat["median"] is not None else "unknown"


def _users_row(members: Sequence[Run], figures: Sequence[str]) -> list[str]:
    """A users-regime row for one implementation at one user count: who, how many users, each figure and
    how many runs."""
    users = members[0].users
    count = cell.count(users) if users is not None else members[0].point
    return [members[0].label + _flag(members), count, *figures, cell.count(len(members))]


def qos_table(comparison: Comparison) -> Table:
    runs = [r for r in comparison.runs if r.regime == "users"]
    rows = []
    for members in _by_label_point(runs).values():
        stats = [latency_stats(r) for r in members]
        weights = [r.metric("requests") or 1.0 for r in members]
        maxima = [s["max"] for s in stats if s["max"] is not None]
        means = [(s["mean"], w) for s, w in zip(stats, weights, strict=True) if s["mean"] is not None]
        medians = sorted(s["median"] for s in stats if s["median"] is not None)
        over = [(over_one_second(r), w) for r, w in zip(members, weights, strict=True)]
        exact = [(v, w) for (v, how), w in over if v is not None]
        if len(exact) == len(over) and exact:
            over_cell: str = cell.percent(sum(v * w for v, w in exact) / sum(w for _, w in exact))
        else:
            bounds = [how for (v, how), _ in over if v is None]
            over_cell = max(
                bounds, key=lambda b: float("".join(c for c in b if c.isdigit() or c == ".") or 0)
            )
        mean = sum(m * w for m, w in means) / sum(w for _, w in means) if means else None
        figures = [
            _mean_cell(comparison, members, ALL_METRICS["throughput"].value, "qos", "req/s"),
            cell.number(max(maxima) if maxima else None, "ms"),
            cell.number(mean, "ms"),
            cell.number(medians[len(medians) // 2] if medians else None, "ms"),
            over_cell,
        ]
        rows.append(_users_row(members, figures))
    return Table(
        "qos",
        "Quality of service per user count (RUBiS Revisited §7)",
        [
            "implementation",
            "users",
            "throughput (req/s)",
            "max (ms)",
            "mean (ms)",
            "median (ms)",
            "over 1 s",
            "n",
        ],
        rows,
        "From each run's load summary (metrics.json when absent): max over runs, request-weighted mean, median of "
        "the runs' medians. 'over 1 s' is exact when the run recorded it or when no request took 1 s; otherwise "
        "it is a bound read off the percentiles.",
        f"{RUBIS}, §7, figures 2-5",
        empty="no runs of the users regime (run `./bidbench users --users 1,2,4,8`)",
    )


def errors_table(comparison: Comparison) -> Table:
    runs = [r for r in comparison.runs if r.regime == "users"]
    rows = []
    for members in _by_label_point(runs).values():
        requests = sum(r.metric("requests") or 0 for r in members)
        figures = [
            cell.count(requests, f"{requests:,.0f}"),
            _mean_cell(comparison, members, ALL_METRICS["app_errors"].value, "t6a", "%"),
            _mean_cell(comparison, members, ALL_METRICS["sys_errors"].value, "t6s", "%"),
        ]
        rows.append(_users_row(members, figures))
    return Table(
        "errors",
        "Application exceptions vs system errors per user count (STEP Table 6)",
        ["implementation", "users", "requests", "application exceptions %", "system errors %", "n"],
        rows,
        "Application exceptions are the contract's 4xx answers (including expected 409 conflicts); system errors "
        f"are 5xx, timeouts and connection errors (docs/design.md §5). Per cent of requests, mean with "
        f"{comparison.confidence:.0%} CI over runs.",
        f"{STEP_PAPER}, Table 6",
        empty="no runs of the users regime (run `./bidbench users`)",
    )


@dataclass
class Slices:
    requests: float
    latency: float | None
    app: float
    db: float

    @property
    def app_only(self) -> float:
        return max(self.app - self.db, 0.0)

    @property
    def outside(self) -> float | None:
        return None if self.latency is None else max(self.latency - self.app, 0.0)


def _timing(value: Any) -> float | None:
    """A Server-Timing figure: a number (results/README.md) or the driver's {"mean", "p50", "p99"}."""
    return as_float(value.get("mean") if isinstance(value, Mapping) else value)


def _timed_items(metrics: Mapping[str, Any]) -> list[tuple[tuple[str, ...], Mapping[str, Any]]]:
    """What a run's time is split over, each with the rows it counts in. A ladder's per-type figures
    average every step, the overloaded ones too, so a ladder counts its steps within the SLO instead, all
    request types together."""
    steps = get_path(metrics, "ladder", "steps")
    if isinstance(steps, list):
        return [
            (("all",), s) for s in steps if isinstance(s, Mapping) and s.get("slo_met") and s.get("kept_up")
        ]
    per_type = metrics.get("per_type")
    if not isinstance(per_type, Mapping):
        return []
    return [((str(name), "all"), item) for name, item in per_type.items() if isinstance(item, Mapping)]


def breakdown_of(runs: Sequence[Run]) -> dict[str, Slices]:
    """Per request type (and 'all'): request-weighted means of latency and Server-Timing db and app."""
    # per key: requests, latency x requests, requests with a latency, app x requests, db x requests
    acc: dict[str, list[float]] = defaultdict(lambda: [0.0] * 5)
    for run in runs:
        for keys, item in _timed_items(run.metrics or {}):
            requests = as_float(item.get("requests")) or 0.0
            app = _timing(get_path(item, "server_timing_ms", "app"))
            db = _timing(get_path(item, "server_timing_ms", "db"))
            if requests <= 0 or app is None or db is None:
                continue
            latency = as_float(get_path(item, "latency_ms", "mean"))
            for key in keys:
                slot = acc[key]
                slot[0] += requests
                if latency is not None:
                    slot[1] += latency * requests
                    slot[2] += requests
                slot[3] += app * requests
                slot[4] += db * requests
    out = {
        key: Slices(req, lat / lat_req if lat_req else None, app / req, db / req)
        for key, (req, lat, lat_req, app, db) in acc.items()
    }
    return dict(sorted(out.items(), key=lambda kv: (kv[0] == "all", kv[0])))


def reference_set(comparison: Comparison) -> ComparisonSet | None:
    """The comparison set the single-point tables describe: most groups, then most runs, by regime order."""
    candidates = [
        s
        for s in comparison.sets
        if any(isinstance((r.metrics or {}).get("per_type"), Mapping) for r in s.runs)
    ]
    if not candidates:
        return None
    return max(candidates, key=lambda s: (len(s.labels), len(s.runs), -comparison.sets.index(s)))


def _slice_cells(slices: Slices) -> list[str]:
    total = slices.latency if slices.latency else slices.app
    share = (lambda v: cell.percent(v / total * 100.0)) if total else (lambda v: "-")
    outside = slices.outside
    return [
        cell.number(slices.latency, "ms"),
        cell.number(slices.db, "ms"),
        cell.number(slices.app_only, "ms"),
        cell.number(outside, "ms"),
        share(slices.db),
        share(slices.app_only),
        share(outside) if outside is not None else "-",
    ]


SLICE_COLUMNS = ["latency (ms)", "db (ms)", "app w/o db (ms)", "outside (ms)", "db %", "app %", "outside %"]


def breakdown_table(comparison: Comparison) -> Table:
    ref = reference_set(comparison)
    rows = []
    if ref is not None:
        for label in _label_sort(ref.labels, comparison.baseline):
            members = ref.runs_of(label)
            for name, slices in breakdown_of(members).items():
                requests = cell.count(slices.requests, f"{slices.requests:,.0f}")
                rows.append([label + _flag(members), name, requests, *_slice_cells(slices)])
    return Table(
        "table-breakdown",
        "Time per request type: database, application, outside (STEP Tables 1 and 3)",
        ["implementation", "request type", "requests", *SLICE_COLUMNS],
        rows,
        (f"From {ref.title}. " if ref else "")
        + "Server-Timing splits each request: db = time inside database calls, app w/o db = the rest of the "
        "handler, outside = what the load driver saw minus the handler (network, HTTP server, client). Request-weighted means "
        "over runs; shares of the end-to-end mean latency.",
        f"{STEP_CHAPTER}, Tables 1 and 3; {STEP_PAPER}, Tables 1 and 2",
        empty="no run has per-type Server-Timing figures (metrics.json per_type.server_timing_ms)",
    )


def breakdown_by_point_table(comparison: Comparison) -> Table:
    rows = []
    for regime, what in (("users", "users"), ("payload", "payload")):
        runs = [r for r in comparison.runs if r.regime == regime]
        for (label, _, point), members in _by_label_point(runs).items():
            slices = breakdown_of(members).get("all")
            if slices is None:
                continue
            rows.append([label + _flag(members), what, point, *_slice_cells(slices)])
    return Table(
        "breakdown-by-point",
        "Time breakdown per user count and payload size (STEP Tables 6 and 4)",
        ["implementation", "regime", "point", *SLICE_COLUMNS],
        rows,
        "All request types together, per point of the users and payload regimes.",
        f"{STEP_CHAPTER}, Tables 4 and 6",
        empty="no users or payload runs with Server-Timing figures",
    )


def runs_table(comparison: Comparison) -> Table:
    rows = []
    for run in comparison.runs:
        slo = get_path(run.verdict or {}, "slo")
        met = slo.get("met", slo.get("ok", slo.get("passed"))) if isinstance(slo, Mapping) else slo
        slo_text = "met" if met is True else "missed" if met is False else "-"
        rows.append(
            [
                run.run_id,
                run.label,
                run.regime,
                run.point,
                cell.count(run.repetition) if run.repetition is not None else "-",
                "valid" if run.is_valid else "INVALID: " + run.reason_text,
                slo_text,
            ]
        )
    return Table(
        "runs-used",
        "Runs used",
        ["run", "implementation", "regime", "point", "repetition", "validity", "SLO"],
        rows,
        "Every number in this report comes from these result folders.",
        "results/README.md",
    )


def excluded_table(comparison: Comparison) -> Table:
    rows = [[e.run_id, e.label, e.regime, e.point, e.reason] for e in comparison.runset.excluded]
    return Table(
        "runs-excluded",
        "Runs excluded",
        ["run", "implementation", "regime", "point", "reason"],
        rows,
        "Failed or invalid runs (docs/design.md §7) are kept on disk but left out; --include-invalid uses those that have "
        "metrics, marked '!'.",
        "docs/design.md §7",
        empty="none: every run found was used",
    )


def source_tables(comparison: Comparison) -> list[Table]:
    """The source texts' tables, in the order the report shows them."""
    return [
        cpu_utilization_table(comparison),
        normalized_table(comparison),
        memory_table(comparison),
        qos_table(comparison),
        errors_table(comparison),
        breakdown_table(comparison),
        breakdown_by_point_table(comparison),
    ]
