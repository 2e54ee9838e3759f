"""The metrics a comparison covers: where each comes from in metrics.json, its unit and which way is better.

Every number is read from metrics.json (results/README.md): the runner digests each run to one number per
metric, and the analysis never recomputes a run's figures from anything else.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.analysis.load import Run


@dataclass(frozen=True)
class Metric:
    key: str
    title: str
    unit: str
    higher_is_better: bool | None  # None: neither direction is "better" (CPU %: leaner or busier?)
    source: str  # where in metrics.json: the dotted path the value is read from, unless `extract` says
    explanation: str
    applies: str = "all"
    """Which comparison sets the metric belongs to by default: "all", "ladder" (figures only a ladder
    yields) or "whole-run" (figures over one steady window; over a ladder they mix every step's load)."""
    lower_bound: Callable[[Run], float | None] | None = None
    """A run's value when it is only a lower bound ("at least X"). A group holding any such run is never
    averaged: it is reported as ">= X" and left out of the tests (docs/method.md, "7. Reading ladders")."""
    extract: Callable[[Run], float | None] | None = None  # a value computed from more than one field

    def value(self, run: Run) -> float | None:
        return self.extract(run) if self.extract is not None else run.metric(*self.source.split("."))

    def bound(self, run: Run) -> float | None:
        return self.lower_bound(run) if self.lower_bound is not None else None

    def applies_to(self, regime: str) -> bool:
        return self.applies == "all" or (regime in LADDER_REGIMES) == (self.applies == "ladder")

    def heading(self) -> str:
        return f"{self.title} ({self.unit})" if self.unit else self.title


LADDER_REGIMES = ("ladder",)
"""Regimes whose runs are whole ladders compared with each other (calibrations and the noise floor are not)."""


def _utilized_pct(run: Run) -> float | None:
    share = run.metric("utilized_cpu")
    return None if share is None else share * 100.0


def share_of_requests_pct(key: str) -> Callable[[Run], float | None]:
    """A count the run stores (sys_errors, app_errors) as a % of its requests; None without requests."""

    def read(run: Run) -> float | None:
        requests, count = run.metric("requests"), run.metric(key)
        if requests is None or count is None or requests <= 0:
            return None
        return count / requests * 100.0

    return read


METRICS: dict[str, Metric] = {
    m.key: m
    for m in (
        Metric(
            "throughput",
            "throughput",
            "req/s",
            True,
            "throughput_rps",
            "successful requests per second over the measurement window",
            applies="whole-run",
        ),
        Metric(
            "capacity",
            "capacity",
            "req/s",
            True,
            "capacity_rps",  # a ladder's only when bracketed by a passing and a failing step, else null
            "the highest arrival rate that met the SLO: a capacity search's result, or a ladder's passing "
            "step interpolated towards the failing step right above it. A ladder in which no step failed "
            "gives only a lower bound (capacity_at_least_rps): its group is shown as '>= X' and left out "
            "of the tests",
            lower_bound=lambda r: r.metric("capacity_at_least_rps"),
        ),
        Metric(
            "cpu_us_per_request",
            "CPU µs per request",
            "µs",
            False,
            "cpu_us_per_request",
            "the slope of the instances' CPU time on completed requests over a ladder's steps below "
            "saturation (least squares through the idle CPU read with no load; older ladders and the claims "
            "fit the intercept): the work one request costs",
            applies="ladder",
        ),
        Metric(
            "db_us_per_request",
            "PostgreSQL µs per request",
            "µs",
            False,
            "db_us_per_request",
            "the same slope for PostgreSQL's CPU: what each app's requests cost the database",
            applies="ladder",
        ),
        Metric(
            "saturation_rps",
            "saturation throughput",
            "req/s",
            True,
            "saturation_rps",
            "the highest completed rate of any ladder step (the plateau, SLO or not)",
            applies="ladder",
        ),
        Metric(
            "normalized_throughput",
            "normalized throughput",
            "req/s per CPU %",
            True,
            "normalized_throughput",
            "work per unit of CPU (thesis Table 7.2). For ladders it is derived from the CPU cost per "
            "request: 10,000 / CPU µs per request (1 % of a core for a second is 10,000 µs), so it is not "
            "an independent finding; elsewhere throughput / CPU % at one operating point",
        ),
        Metric(
            "p50",
            "latency p50",
            "ms",
            False,
            "latency_ms.p50",
            "the median response time as the load driver saw it, from each request's intended send",
            applies="whole-run",
        ),
        Metric(
            "p99",
            "latency p99",
            "ms",
            False,
            "latency_ms.p99",
            "the response time 99 % of requests beat",
            applies="whole-run",
        ),
        Metric(
            "cpu",
            "CPU",
            "%",
            None,
            "cpu_pct_total",
            "CPU time of all instances / wall time x 100 (100 % = one core busy)",
            applies="whole-run",
        ),
        Metric(
            "memory",
            "memory per instance",
            "MB",
            False,
            "memory_per_instance_mb",
            "steady-state PSS (RSS where PSS is unavailable), mean over instances",
        ),
        Metric(
            "rps_per_mb",
            "throughput density",
            "req/s per MB",
            True,
            "rps_per_mb",
            "a ladder's capacity (its saturation throughput when no step failed) per MB of memory per "
            "instance: the Quarkus/Spring comparison's throughput density",
            applies="ladder",
        ),
    )
}

# Not in the verdict table by default, but used by the source tables and available with --metric.
EXTRA_METRICS: dict[str, Metric] = {
    m.key: m
    for m in (
        Metric(
            "utilized_cpu",
            "utilized CPU",
            "%",
            None,
            "utilized_cpu",
            "CPU % / (instances x CPU limit x 100) (thesis Table 7.1)",
            extract=_utilized_pct,
        ),
        Metric(
            "p90", "latency p90", "ms", False, "latency_ms.p90", "the response time 90 % of requests beat"
        ),
        Metric("mean_latency", "latency mean", "ms", False, "latency_ms.mean", "the mean response time"),
        Metric(
            "app_errors",
            "application exceptions",
            "%",
            False,
            "app_errors / requests",
            "the contract's 4xx answers (including expected 409s) per request",
            extract=share_of_requests_pct("app_errors"),
        ),
        Metric(
            "sys_errors",
            "system errors",
            "%",
            False,
            "sys_errors / requests",
            "5xx, timeouts and connection errors per request",
            extract=share_of_requests_pct("sys_errors"),
        ),
        Metric(
            "loadgen_cpu",
            "driver CPU",
            "%",
            None,
            "loadgen_cpu_pct",
            "the load generator's own CPU (validity: it must not be the bottleneck)",
        ),
        Metric("db_cpu", "database CPU", "%", None, "db_cpu_pct", "PostgreSQL's CPU"),
    )
}

ALL_METRICS: dict[str, Metric] = {**METRICS, **EXTRA_METRICS}
DEFAULT_METRICS: tuple[str, ...] = tuple(METRICS)

ALIASES: dict[str, str] = {
    "throughput_rps": "throughput",
    "rps": "throughput",
    "capacity_rps": "capacity",
    "normalized": "normalized_throughput",
    "latency_p50": "p50",
    "latency_p99": "p99",
    "median": "p50",
    "cpu_pct": "cpu",
    "cpu_pct_total": "cpu",
    "memory_per_instance_mb": "memory",
    "mem": "memory",
    "memory_per_instance": "memory",
    "utilized": "utilized_cpu",
    "mean": "mean_latency",
    "cpu_us": "cpu_us_per_request",
    "cost": "cpu_us_per_request",
    "db_us": "db_us_per_request",
    "saturation": "saturation_rps",
    "density": "rps_per_mb",
    "throughput_density": "rps_per_mb",
}


def resolve_metrics(names: Sequence[str] | None) -> list[Metric]:
    """Metric objects for user-given names (comma lists allowed); the default set when names is empty."""
    if not names:
        return [METRICS[k] for k in DEFAULT_METRICS]
    chosen: list[Metric] = []
    for raw in names:
        for name in (part.strip() for part in raw.split(",")):
            if not name:
                continue
            key = ALIASES.get(name.lower(), name.lower())
            if key not in ALL_METRICS:
                raise ValueError(f"unknown metric {name!r}; choose from {', '.join(ALL_METRICS)}")
            if ALL_METRICS[key] not in chosen:
                chosen.append(ALL_METRICS[key])
    return chosen
