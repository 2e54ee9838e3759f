"""The metrics a comparison covers: where each comes from in metrics.json, its unit and which way is better.

Every number is read from metrics.json (results/README.md): the runner digests each run to one number per
metric, and the analysis never recomputes a run's figures from anything else.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.analysis.load import Run, as_float


@dataclass(frozen=True)
class Metric:
    key: str
    title: str
    unit: str
    higher_is_better: bool | None  # None: neither direction is "better" (CPU %: leaner or busier?)
    source: str  # where in metrics.json, for the report's method notes
    extract: Callable[[Run], float | None]
    explanation: str

    def value(self, run: Run) -> float | None:
        return self.extract(run)

    def heading(self) -> str:
        return f"{self.title} ({self.unit})" if self.unit else self.title


def _capacity(run: Run) -> float | None:
    return run.metric("capacity_rps")


def _utilized_pct(run: Run) -> float | None:
    share = run.metric("utilized_cpu")
    return None if share is None else share * 100.0


def _sys_error_pct(run: Run) -> float | None:
    requests = run.metric("requests")
    errors = run.metric("sys_errors")
    if requests is None or errors is None or requests <= 0:
        return None
    return errors / requests * 100.0


def _app_error_pct(run: Run) -> float | None:
    requests = run.metric("requests")
    errors = run.metric("app_errors")
    if requests is None or errors is None or requests <= 0:
        return None
    return errors / requests * 100.0


METRICS: dict[str, Metric] = {
    m.key: m
    for m in (
        Metric(
            "throughput",
            "throughput",
            "req/s",
            True,
            "throughput_rps",
            lambda r: r.metric("throughput_rps"),
            "successful requests per second over the measurement window",
        ),
        Metric(
            "capacity",
            "capacity",
            "req/s",
            True,
            "capacity_rps",
            _capacity,
            "the highest arrival rate that met the SLO (capacity regime)",
        ),
        Metric(
            "normalized_throughput",
            "normalized throughput",
            "req/s per CPU %",
            True,
            "normalized_throughput",
            lambda r: r.metric("normalized_throughput"),
            "throughput divided by CPU % (thesis Table 7.2): work per unit of CPU",
        ),
        Metric(
            "p50",
            "latency p50",
            "ms",
            False,
            "latency_ms.p50",
            lambda r: r.metric("latency_ms", "p50"),
            "the median response time as the load driver saw it, from each request's intended send",
        ),
        Metric(
            "p99",
            "latency p99",
            "ms",
            False,
            "latency_ms.p99",
            lambda r: r.metric("latency_ms", "p99"),
            "the response time 99 % of requests beat",
        ),
        Metric(
            "cpu",
            "CPU",
            "%",
            None,
            "cpu_pct_total",
            lambda r: r.metric("cpu_pct_total"),
            "CPU time of all instances / wall time x 100 (100 % = one core busy)",
        ),
        Metric(
            "memory",
            "memory per instance",
            "MB",
            False,
            "memory_per_instance_mb",
            lambda r: r.metric("memory_per_instance_mb"),
            "steady-state PSS (RSS where PSS is unavailable), mean over instances",
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
            _utilized_pct,
            "CPU % / (instances x CPU limit x 100) (thesis Table 7.1)",
        ),
        Metric(
            "p90",
            "latency p90",
            "ms",
            False,
            "latency_ms.p90",
            lambda r: r.metric("latency_ms", "p90"),
            "the response time 90 % of requests beat",
        ),
        Metric(
            "mean_latency",
            "latency mean",
            "ms",
            False,
            "latency_ms.mean",
            lambda r: r.metric("latency_ms", "mean"),
            "the mean response time",
        ),
        Metric(
            "app_errors",
            "application exceptions",
            "%",
            False,
            "app_errors / requests",
            _app_error_pct,
            "the contract's 4xx answers (including expected 409s) per request",
        ),
        Metric(
            "sys_errors",
            "system errors",
            "%",
            False,
            "sys_errors / requests",
            _sys_error_pct,
            "5xx, timeouts and connection errors per request",
        ),
        Metric(
            "loadgen_cpu",
            "driver CPU",
            "%",
            None,
            "loadgen_cpu_pct",
            lambda r: r.metric("loadgen_cpu_pct"),
            "the load generator's own CPU (validity: it must not be the bottleneck)",
        ),
        Metric(
            "db_cpu",
            "database CPU",
            "%",
            None,
            "db_cpu_pct",
            lambda r: r.metric("db_cpu_pct"),
            "PostgreSQL's CPU",
        ),
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
                known = ", ".join(list(ALL_METRICS))
                raise ValueError(f"unknown metric {name!r}; choose from {known}")
            if ALL_METRICS[key] not in chosen:
                chosen.append(ALL_METRICS[key])
    return chosen


def value_of(metric: Metric, run: Run) -> float | None:
    return as_float(metric.value(run))
