"""Synthetic result folders with known truth, written exactly in the results/README.md format.

`write_run` writes one folder (manifest.json, metrics.json, verdict.json, timeseries.csv, load-summary.json,
pg_stat_statements.json, logs/) and appends its line to index.jsonl. The scenario builders draw each run's
numbers from a stated truth with a seeded generator, so tests know what the analysis should find.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

REQUEST_TYPES = {  # share of the mixed mix, and the db / app-only milliseconds of the handler
    "list_categories": (0.10, 0.20, 0.15),
    "list_items": (0.35, 0.80, 0.40),
    "get_item": (0.30, 0.60, 0.30),
    "list_bids": (0.10, 0.50, 0.20),
    "place_bid": (0.10, 1.40, 0.50),
    "create_item": (0.05, 1.10, 0.45),
}
BASE_TIME = datetime(2026, 11, 21, 12, 0, 0, tzinfo=UTC)


@dataclass(frozen=True)
class ImplTruth:
    lam: float  # capacity of one instance (req/s)
    sigma: float
    kappa: float
    normalized: float  # req/s per CPU %
    memory_mb: float
    p50_ms: float  # at low load
    app_factor: float = 1.0  # scales the handler's app-only time
    cv: float = 0.03  # run-to-run coefficient of variation

    def capacity(self, instances: float) -> float:
        n = float(instances)
        return self.lam * n / (1.0 + self.sigma * (n - 1.0) + self.kappa * n * (n - 1.0))


TRUTH: dict[str, ImplTruth] = {
    "java": ImplTruth(
        lam=1200.0, sigma=0.06, kappa=0.02, normalized=13.0, memory_mb=190.0, p50_ms=1.6, app_factor=1.0
    ),
    "node": ImplTruth(
        lam=1000.0, sigma=0.02, kappa=0.004, normalized=11.0, memory_mb=62.0, p50_ms=1.9, app_factor=1.3
    ),
    "php": ImplTruth(
        lam=700.0, sigma=0.01, kappa=0.001, normalized=8.0, memory_mb=38.0, p50_ms=2.4, app_factor=1.8
    ),
}


@dataclass
class Writer:
    """Writes folders under `root` with deterministic names, times and ids."""

    root: Path
    seed: int = 0
    count: int = 0
    paths: list[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.rng = np.random.default_rng(self.seed)

    def write_run(
        self,
        *,
        impl: str,
        regime: str,
        point: Any,
        repetition: int,
        metrics: Mapping[str, Any],
        variant: str = "default",
        status: str = "completed",
        valid: bool = True,
        reasons: Sequence[str] = (),
        slo_met: bool = True,
        instances: int = 1,
        cpu_limit: float = 1.0,
        users: int | None = None,
        write_metrics: bool = True,
        failure: str | None = None,
        flat: bool = False,
        absolute_index_path: bool = False,
    ) -> Path:
        """One result folder. `point` is the runner's dict ({"rate": 300.0}); `flat=True` writes the older
        flat manifest (top-level regime, point, repetition) to keep that reading path covered."""
        created = BASE_TIME + timedelta(minutes=self.count)
        self.count += 1
        short = f"{self.rng.integers(0, 16**6):06x}"
        name = f"{created.strftime('%Y%m%dT%H%M%SZ')}-{impl}-{regime}-{short}"
        folder = self.root / name
        (folder / "logs").mkdir(parents=True)
        point_key = (
            ",".join(f"{k}={v}" for k, v in sorted(point.items())) if isinstance(point, dict) else str(point)
        )
        group = f"{impl}/{variant}/{regime}/{point_key or '-'}"
        load = {
            "model": "closed" if users else "open",
            "mix": "mixed",
            "rate": None if users else metrics.get("offered_rps"),
            "users": users,
            "think_ms": 0 if users else None,
            "duration_s": 20,
            "warmup_s": 10,
        }
        manifest: dict[str, Any] = {
            "schema": 1,
            "bidbench_version": "0.1.0",
            "git": {"commit": "0123abcd" * 5, "dirty": False},
            "created_utc": created.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "host": {
                "hostname": "synthetic",
                "cpu_model": "Synthetic CPU @ 2.5GHz",
                "cores": 2,
                "memory_bytes": 8 * 1024**3,
                "kernel": "6.1.0-synthetic",
            },
            "run_id": name,
            "status": status,
            "impl": impl,
            "variant": variant,
            "regime": {"name": regime, "group": group, "point": point, "repetition": repetition},
            "load": load,
            "instances": instances,
            "cpu_limit_cores": cpu_limit,
            "slo": {"p99_ms": 50.0, "mean_ms": 8.0, "max_sys_error_share": 0.001},
            "data": {
                "scale": 1,
                "seed": 42,
                "checksum": "c0ffee",
                "database": "postgresql://bidbench:***@127.0.0.1/x",
            },
            "resource_backend": {"name": "cgroup2", "description": "cgroup v2: exact accounting"},
            "knobs": {
                "DB_POOL_SIZE": "10",
                "LOG_LEVEL": "info",
                "SERVER_TIMING": "1",
                **({"JAVA_THREADS": "32"} if impl == "java" else {}),
                **({"NODE_WORKERS": "0"} if impl == "node" else {}),
                **({"PHP_FPM_CHILDREN": "10"} if impl == "php" else {}),
                "PGPASSWORD": "s3cret",
            },
            "runtimes": {
                "java": "17.0.9",
                "node": "20.10.0",
                "php": "8.2.12",
                "postgresql": "15.5",
                "load_driver": "bidbench-load 0.1.0",
            },
            "failure_reason": failure,
            "finished_utc": (created + timedelta(seconds=40)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        }
        if flat:
            manifest.update(regime=regime, point=point, repetition=repetition)
        (folder / "manifest.json").write_text(json.dumps(manifest, indent=2))
        if write_metrics:
            (folder / "metrics.json").write_text(json.dumps(metrics, indent=2))
            (folder / "load-summary.json").write_text(json.dumps(load_summary(metrics, load), indent=2))
            (folder / "timeseries.csv").write_text(timeseries(metrics, instances))
            (folder / "pg_stat_statements.json").write_text(json.dumps(pg_statements(metrics), indent=2))
        if status == "completed":
            checks = {
                "loadgen_cpu": {
                    "ok": not any("load generator" in r for r in reasons),
                    "value": metrics.get("loadgen_cpu_pct", 20.0),
                    "threshold": 80.0,
                    "detail": "the load driver's CPU against its allotment",
                },
                "late_sends": {
                    "ok": not any("late" in r for r in reasons),
                    "value": metrics.get("late_sends", 0),
                    "threshold": 0,
                    "detail": "requests the load driver sent late",
                },
            }
            lat = metrics.get("latency_ms", {})
            verdict = {
                "valid": valid,
                "reasons": list(reasons),
                "checks": checks,
                "slo": {
                    "definition": "p99 <= 50 ms, mean <= 8 ms, system errors < 0.1%",
                    "met": slo_met and valid,
                    "p99_ms": lat.get("p99"),
                    "mean_ms": lat.get("mean"),
                },
            }
            (folder / "verdict.json").write_text(json.dumps(verdict, indent=2))
        (folder / "logs" / "instance-0.log").write_text("started\n")
        entry = {
            "run_id": name,
            "path": str(folder) if absolute_index_path else name,
            "created_utc": manifest["created_utc"],
            "impl": impl,
            "variant": variant,
            "regime": regime,
            "group": group,
            "point": point,
            "repetition": repetition,
            "status": status,
            "valid": bool(valid and status == "completed"),
            "slo_met": bool(slo_met and valid),
        }
        with (self.root / "index.jsonl").open("a") as index:
            index.write(json.dumps(entry, sort_keys=True) + "\n")
        self.paths.append(folder)
        return folder


def latency_block(p50: float, spread: float = 3.0) -> dict[str, float]:
    return {
        "mean": p50 * 1.2,
        "p50": p50,
        "p90": p50 * spread * 0.6,
        "p95": p50 * spread * 0.8,
        "p99": p50 * spread * 1.4,
        "p999": p50 * spread * 2.5,
        "max": p50 * spread * 5.0,
    }


def make_metrics(
    *,
    throughput: float,
    offered: float,
    cpu_pct_total: float,
    memory_mb: float,
    p50_ms: float,
    instances: int = 1,
    cpu_limit: float = 1.0,
    app_factor: float = 1.0,
    app_errors_pct: float = 1.0,
    sys_errors_pct: float = 0.0,
    window_s: float = 20.0,
    capacity_rps: float | None = None,
    latency: Mapping[str, float] | None = None,
    timing_as_numbers: bool = False,
) -> dict[str, Any]:
    """A metrics.json in the README's schema, with internally consistent derived fields."""
    requests = int(round(throughput * window_s / (1 - app_errors_pct / 100 - sys_errors_pct / 100)))
    app_errors = int(round(requests * app_errors_pct / 100))
    sys_errors = int(round(requests * sys_errors_pct / 100))
    lat = dict(latency) if latency else latency_block(p50_ms)
    per_type = {}
    for name, (share, db, app_only) in REQUEST_TYPES.items():
        handler = db + app_only * app_factor
        count = int(round(requests * share))
        mean = handler + lat["mean"] * 0.3
        timing: dict[str, Any] = {"db": db, "app": handler}
        if not timing_as_numbers:  # the driver's {mean, p50, p99}, as metrics.json carries them today
            timing = {
                "samples": count,
                "db": {"mean": db, "p50": db * 0.9, "p99": db * 3},
                "app": {"mean": handler, "p50": handler * 0.9, "p99": handler * 3},
            }
        per_type[name] = {
            "requests": count,
            "ok": int(round((requests - app_errors - sys_errors) * share)),
            "app_errors": int(round(app_errors * share)),
            "sys_errors": int(round(sys_errors * share)),
            "latency_ms": {**{k: v * mean / lat["mean"] for k, v in lat.items()}, "mean": mean},
            "server_timing_ms": timing,
        }
    per_instance_cpu = cpu_pct_total / instances
    metrics: dict[str, Any] = {
        "schema": 1,
        "window_s": window_s,
        "requests": requests,
        "ok": requests - app_errors - sys_errors,
        "app_errors": app_errors,
        "sys_errors": sys_errors,
        "throughput_rps": throughput,
        "offered_rps": offered if offered else None,
        "late_sends": 0,
        "latency_ms": lat,
        "per_type": per_type,
        "instances": [
            {
                "name": f"instance-{i}",
                "cpu_pct": per_instance_cpu,
                "rss_peak_mb": memory_mb * 1.15,
                "rss_steady_mb": memory_mb * 1.05,
                "pss_steady_mb": memory_mb,
            }
            for i in range(instances)
        ],
        "cpu_pct_total": cpu_pct_total,
        "cpu_limit_cores": cpu_limit,
        "utilized_cpu": cpu_pct_total / (instances * cpu_limit * 100.0),
        "normalized_throughput": throughput / cpu_pct_total,
        "memory_per_instance_mb": memory_mb,
        "loadgen_cpu_pct": 20.0,
        "db_cpu_pct": 15.0,
    }
    if capacity_rps is not None:
        metrics["capacity_rps"] = capacity_rps
    return metrics


def load_summary(metrics: Mapping[str, Any], load: Mapping[str, Any]) -> dict[str, Any]:
    """The summary the load driver (loadgen/) writes, for the measurement window."""
    return {
        "schema": 2,
        "driver": "bidbench-load",
        "driver_version": "0.1.0",
        "settings": dict(load),
        "window_s": metrics["window_s"],
        "requests": metrics["requests"],
        "ok": metrics["ok"],
        "app_errors": metrics["app_errors"],
        "sys_errors": metrics["sys_errors"],
        "throughput": {
            "ok_rps": metrics["throughput_rps"],
            "all_rps": metrics["requests"] / metrics["window_s"],
        },
        "offered_rps": metrics["offered_rps"],
        "late_sends": metrics["late_sends"],
        "latency_ms": metrics["latency_ms"],
        "per_type": metrics["per_type"],
    }


def timeseries(metrics: Mapping[str, Any], instances: int) -> str:
    lines = ["t_s,component,cpu_pct,rss_mb,pss_mb"]
    for t in range(int(metrics["window_s"])):
        for inst in metrics["instances"][:instances]:
            lines.append(
                f"{t},{inst['name']},{inst['cpu_pct']:.2f},{inst['rss_steady_mb']:.1f},{inst['pss_steady_mb']:.1f}"
            )
        lines.append(f"{t},loadgen,{metrics['loadgen_cpu_pct']:.2f},80.0,78.0")
        lines.append(f"{t},postgres,{metrics['db_cpu_pct']:.2f},120.0,60.0")
    return "\n".join(lines) + "\n"


def _mean(value: Any) -> float:
    return float(value["mean"] if isinstance(value, dict) else value)


def pg_statements(metrics: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "query": f"-- {name}",
            "calls": item["requests"],
            "rows": item["requests"] * 10,
            "total_exec_time_ms": item["requests"] * _mean(item["server_timing_ms"]["db"]),
        }
        for name, item in metrics["per_type"].items()
    ]


def noisy(rng: np.random.Generator, mean: float, cv: float) -> float:
    return float(mean * (1.0 + rng.normal(0.0, cv)))


# ---- scenarios ----------------------------------------------------------------------------------------


def fixed_rate_groups(
    root: Path,
    throughput_means: Mapping[str, float],
    *,
    n: int = 5,
    cv: float = 0.03,
    seed: int = 0,
    rate: float = 300.0,
    variants: Mapping[str, str] | None = None,
    writer: Writer | None = None,
) -> Writer:
    """Fixed-rate runs at one point; throughput ~ N(mean, cv*mean) per label; other metrics per TRUTH."""
    writer = writer or Writer(root, seed)
    rng = np.random.default_rng(seed + 1)
    for rep in range(n):
        for label, mean in throughput_means.items():
            impl = label.split("/")[0]
            variant = (variants or {}).get(label, label.split("/")[1] if "/" in label else "default")
            truth = TRUTH.get(impl, TRUTH["java"])
            throughput = noisy(rng, mean, cv)
            cpu = noisy(rng, throughput / truth.normalized, cv)
            metrics = make_metrics(
                throughput=throughput,
                offered=rate,
                cpu_pct_total=cpu,
                memory_mb=noisy(rng, truth.memory_mb, cv),
                p50_ms=noisy(rng, truth.p50_ms, cv),
                app_factor=truth.app_factor,
            )
            writer.write_run(
                impl=impl,
                variant=variant,
                regime="fixed-rate",
                point={"rate": float(rate)},
                repetition=rep,
                metrics=metrics,
            )
    return writer


@dataclass
class Study:
    root: Path
    writer: Writer
    truth: dict[str, ImplTruth]
    invalid_runs: int
    failed_runs: int


def full_study(
    root: Path,
    *,
    seed: int = 7,
    reps: int = 5,
    impls: Sequence[str] = ("java", "node", "php"),
    rates: Sequence[int] = (100, 300, 500, 700, 900, 1000, 1050),
    user_counts: Sequence[int] = (1, 2, 4, 8, 16),
    sizes: Sequence[int] = (1024, 16384, 65536),
) -> Study:
    """Every regime for every impl, plus two invalid runs and one failed run (for the report and its tests)."""
    writer = Writer(root, seed)
    rng = np.random.default_rng(seed + 100)
    truth = {impl: TRUTH[impl] for impl in impls}
    for rep in range(reps):
        for impl in impls:  # interleaved, as the runner does: A B C A B C
            t = truth[impl]
            # capacity at one instance: the SLO-bounded highest rate, measured at that rate
            cap = noisy(rng, t.lam * 0.8, t.cv)
            cpu = noisy(rng, cap / t.normalized, t.cv)
            writer.write_run(
                impl=impl,
                regime="capacity",
                point={},
                repetition=rep,
                metrics=make_metrics(
                    throughput=cap,
                    offered=cap,
                    cpu_pct_total=cpu,
                    capacity_rps=cap,
                    memory_mb=noisy(rng, t.memory_mb, t.cv),
                    p50_ms=noisy(rng, t.p50_ms * 2, t.cv),
                    app_factor=t.app_factor,
                ),
            )
            # fixed-rate sweep: latency flat, then climbing towards capacity (the knee)
            for rate in rates:
                capacity = t.lam
                served = min(rate, capacity * 0.98)
                utilisation = min(served / capacity, 0.97)
                p50 = noisy(rng, t.p50_ms / (1.0 - utilisation) ** 1.5 * 0.3 + t.p50_ms, t.cv)
                over = rate > capacity * 0.9
                writer.write_run(
                    impl=impl,
                    regime="fixed-rate",
                    point={"rate": float(rate)},
                    repetition=rep,
                    slo_met=not over,
                    metrics=make_metrics(
                        throughput=noisy(rng, served, t.cv / 3),
                        offered=float(rate),
                        cpu_pct_total=noisy(rng, served / t.normalized, t.cv),
                        memory_mb=noisy(rng, t.memory_mb, t.cv),
                        p50_ms=p50,
                        app_factor=t.app_factor,
                    ),
                )
            # users: closed model; system errors grow with users (STEP Table 6)
            for users in user_counts:
                thr = noisy(rng, min(users * 180.0, t.lam * 0.95), t.cv)
                p50 = noisy(rng, t.p50_ms * (1 + users / 4), t.cv)
                lat = latency_block(p50, spread=3.0 if users < 16 else 120.0)
                writer.write_run(
                    impl=impl,
                    regime="users",
                    point={"users": users},
                    repetition=rep,
                    users=users,
                    metrics=make_metrics(
                        throughput=thr,
                        offered=0.0,
                        cpu_pct_total=noisy(rng, thr / t.normalized, t.cv),
                        memory_mb=noisy(rng, t.memory_mb, t.cv),
                        p50_ms=p50,
                        latency=lat,
                        app_errors_pct=noisy(rng, 11.0, 0.02),
                        sys_errors_pct=max(0.0, noisy(rng, math.log2(users) * 0.5, 0.1)),
                        app_factor=t.app_factor,
                    ),
                )
            # payload: growing bodies; app time grows with size
            for size in sizes:
                factor = t.app_factor * (1 + size / 32768)
                writer.write_run(
                    impl=impl,
                    regime="payload",
                    point={"bytes": size},
                    repetition=rep,
                    metrics=make_metrics(
                        throughput=noisy(rng, 200.0, t.cv),
                        offered=200.0,
                        cpu_pct_total=noisy(rng, 200.0 / t.normalized * factor, t.cv),
                        memory_mb=noisy(rng, t.memory_mb, t.cv),
                        p50_ms=noisy(rng, t.p50_ms * factor, t.cv),
                        app_factor=factor,
                    ),
                )
    # two invalid runs and a failed one, to be excluded (and reported)
    t = truth[impls[0]]
    bad = make_metrics(throughput=50.0, offered=300.0, cpu_pct_total=10.0, memory_mb=t.memory_mb, p50_ms=90.0)
    writer.write_run(
        impl=impls[0],
        regime="capacity",
        point={},
        repetition=reps,
        metrics={**bad, "capacity_rps": 50.0},
        valid=False,
        reasons=["the load driver sent 1200 requests late", "load generator CPU 93% > 80%"],
    )
    writer.write_run(
        impl=impls[-1],
        regime="capacity",
        point={},
        repetition=reps,
        metrics={**bad, "capacity_rps": 60.0},
        valid=False,
        reasons=["the load driver sent 40 requests late"],
    )
    writer.write_run(
        impl=impls[-1],
        regime="fixed-rate",
        point={"rate": 300.0},
        repetition=reps,
        metrics=bad,
        status="failed",
        write_metrics=False,
        failure="node exited with status 137 during warm-up",
    )
    return Study(root, writer, truth, invalid_runs=2, failed_runs=1)


# ---- ladders (issue #28) -----------------------------------------------------------------------------


@dataclass(frozen=True)
class LadderTruth:
    """One app's ladder: CPU cost per request, idle CPU, where its p99 crosses the SLO, its memory."""

    cost_us: float
    idle_pct: float
    break_rate: float  # p99 climbs past the SLO just above this rate
    saturation_rps: float  # completed throughput cannot exceed it
    memory_mb: float
    db_cost_us: float = 150.0
    p99_low_ms: float = 4.0
    cv: float = 0.02


LADDER_TRUTH: dict[str, LadderTruth] = {
    "java": LadderTruth(
        cost_us=120.0, idle_pct=4.0, break_rate=1500.0, saturation_rps=1800.0, memory_mb=190.0
    ),
    "node": LadderTruth(
        cost_us=170.0, idle_pct=1.0, break_rate=1000.0, saturation_rps=1200.0, memory_mb=70.0
    ),
    "php": LadderTruth(cost_us=500.0, idle_pct=0.5, break_rate=700.0, saturation_rps=800.0, memory_mb=38.0),
}
LADDER_RATES = (300.0, 450.0, 650.0, 900.0, 1250.0, 1750.0, 2400.0)


def ladder_steps(
    truth: LadderTruth,
    rates: Sequence[float],
    rng: np.random.Generator,
    *,
    step_s: float = 2.0,
    throttled_above: float | None = None,
    p99_scale: float = 1.0,
    slo_p99_ms: float = 50.0,
    host: float = 1.0,
) -> list[dict[str, Any]]:
    """Step records in metrics.json's form. CPU seconds = idle + cost x completed, with noise; the p99
    is flat below break_rate and climbs tenfold per step above it; steps above `throttled_above` spend
    60 % of their CFS periods throttled. `host` multiplies the app's and the driver's CPU alike (a slower host)."""
    steps = []
    for index, rate in enumerate(rates):
        served = min(rate, truth.saturation_rps)
        completed = int(round(served * step_s))
        over = rate > truth.break_rate
        p99 = truth.p99_low_ms * p99_scale * (1.0 + rng.normal(0.0, truth.cv))
        if over:
            p99 = slo_p99_ms * 3.0 * (rate / truth.break_rate) ** 2
        cpu_s = truth.idle_pct / 100 * step_s + truth.cost_us * 1e-6 * completed
        jitter = rng.normal(0.0, truth.cv / 4)
        cpu_s *= (1.0 + jitter) * host
        # PostgreSQL's CPU is never exact either: a noiseless one fits the same cost in every ladder up to
        # the last bit, and a test on such groups is scipy's "nearly identical" precision-loss case. The
        # app's draw is reused, so the generator's sequence (and every other synthetic figure) is unchanged.
        db_s = (0.02 * step_s + truth.db_cost_us * 1e-6 * completed) * (1.0 + jitter / 2)
        share = 0.6 if throttled_above is not None and rate > throttled_above else 0.01
        kept_up = served >= 0.95 * rate
        steps.append(
            {
                "index": index,
                "rate": float(rate),
                "step_s": step_s,
                "requests": int(round(rate * step_s)),
                "completed": completed,
                "ok": completed,
                "app_errors": 0,
                "sys_errors": 0,
                "late_sends": 0,
                "throughput_rps": completed / step_s,
                "finished_in_window": completed,
                "p50_ms": p99 / 4,
                "p99_ms": p99,
                "mean_ms": p99 / 3,
                "latency_ms": latency_block(p99 / 4 / 3.0 / 1.4 * 4, 3.0),
                "instance_cpu_s": cpu_s,
                "instance_cpu_pct": cpu_s / step_s * 100,
                "db_cpu_s": db_s,
                "db_cpu_pct": db_s / step_s * 100,
                "loadgen_cpu_pct": 10.0 * host,
                "host_busy_pct": 50.0,
                "pss_mb": truth.memory_mb,
                "rss_mb": truth.memory_mb * 1.1,
                "kept_up": kept_up,
                "slo_met": kept_up and p99 <= slo_p99_ms,
                "valid": True,
                "problems": [],
                "throttling": [
                    {
                        "periods": int(step_s * 100),
                        "throttled_periods": int(step_s * 100 * share),
                        "throttled_share": share,
                        "throttled_s": share * step_s * 0.05,
                        "span_s": step_s,
                    }
                ],
                "throttled_share": share,
            }
        )
    return steps


def ladder_metrics(
    steps: Sequence[Mapping[str, Any]], memory_mb: float, slo_p99_ms: float = 50.0
) -> dict[str, Any]:
    """A ladder's metrics.json: whole-run fields plus the yield, computed as the runner computes it."""
    from harness.model import ladder_math as yields

    cost = yields.cost_fit(steps, "instance_cpu_s")
    db_cost = yields.cost_fit(steps, "db_cpu_s")
    cap = yields.capacity(steps, slo_p99_ms)
    saturation = yields.saturation(steps)
    window = sum(float(s["step_s"]) for s in steps)
    ok = sum(int(s["ok"]) for s in steps)
    cpu = sum(float(s["instance_cpu_s"]) for s in steps) / window * 100
    metrics = make_metrics(
        throughput=ok / window,
        offered=float(steps[0]["rate"]),
        cpu_pct_total=cpu,
        memory_mb=memory_mb,
        p50_ms=2.0,
        app_errors_pct=0.0,
        window_s=window,
    )
    best = cap.rps if cap else saturation
    metrics.update(
        ladder={
            "rates": [s["rate"] for s in steps],
            "step_s": steps[0]["step_s"],
            "completed_steps": len(steps),
            "stopped": "all steps done",
            "stop_p99_ms": slo_p99_ms,
            "stop_after": 2,
            "steps": list(steps),
            "cpu_cost": cost.to_json() if cost else None,
            "db_cost": db_cost.to_json() if db_cost else None,
            "capacity": cap.to_json() if cap else None,
            "saturation_rps": saturation,
        },
        cpu_us_per_request=cost.us_per_request if cost else None,
        db_us_per_request=db_cost.us_per_request if db_cost else None,
        capacity_rps=cap.rps if cap and cap.bracketed else None,
        capacity_at_least_rps=cap.rps if cap and not cap.bracketed else None,
        saturation_rps=saturation,
        normalized_throughput=1e4 / cost.us_per_request if cost and cost.us_per_request > 0 else None,
        rps_per_mb=best / memory_mb if best else None,
    )
    return metrics


def write_ladders(
    writer: Writer,
    impls: Sequence[str] = ("java", "node", "php"),
    *,
    reps: int = 5,
    seed: int = 11,
    rates: Mapping[str, Sequence[float]] | None = None,
    regime: str = "ladder",
    variants: Sequence[str] = ("crud",),
    unbracketed: Mapping[str, int] | None = None,
    throttled_above: Mapping[str, float] | None = None,
    invalid: Mapping[str, int] | None = None,
    host_cv: float = 0.0,
) -> list[Path]:
    """Interleaved ladders (impl by impl, variant by variant, per repetition). `unbracketed[impl]` ladders
    of that impl stop below its break rate, so no step fails and the capacity is only a lower bound;
    `invalid[impl]` of its ladders are marked invalid; with `host_cv` each ladder's host is that much
    slower or faster for the app and the driver alike."""
    rng = np.random.default_rng(seed)
    written = []
    for rep in range(reps):
        for impl in impls:
            for variant in variants:
                truth = LADDER_TRUTH[impl]
                steps_rates = tuple((rates or {}).get(impl, LADDER_RATES))
                if rep < (unbracketed or {}).get(impl, 0):
                    steps_rates = tuple(r for r in steps_rates if r <= truth.break_rate)
                host = 1.0 + rng.normal(0.0, host_cv) if host_cv else 1.0
                steps = ladder_steps(
                    truth, steps_rates, rng, throttled_above=(throttled_above or {}).get(impl), host=host
                )
                memory = noisy(rng, truth.memory_mb, truth.cv)
                bad = rep < (invalid or {}).get(impl, 0)
                written.append(
                    writer.write_run(
                        impl=impl,
                        variant=variant,
                        regime=regime,
                        point={"instances": 1},
                        repetition=rep,
                        metrics=ladder_metrics(steps, memory),
                        valid=not bad,
                        reasons=["step 2 (650 req/s): the host was 97 % busy"] if bad else (),
                    )
                )
    return written


def write_floor(writer: Writer, rates: Sequence[float] = LADDER_RATES, p99_ms: float = 1.5) -> Path:
    """A noise-floor ladder: the driver against a static responder, no CPU measured (no cost fit)."""
    steps = []
    for index, rate in enumerate(rates):
        completed = int(rate * 2)
        steps.append(
            {
                "index": index,
                "rate": float(rate),
                "step_s": 2.0,
                "requests": completed,
                "completed": completed,
                "ok": completed,
                "app_errors": 0,
                "sys_errors": 0,
                "late_sends": 0,
                "throughput_rps": float(rate),
                "p50_ms": p99_ms / 10,
                "p99_ms": p99_ms,
                "mean_ms": p99_ms / 5,
                "kept_up": True,
                "slo_met": True,
                "valid": True,
                "problems": [],
                "throttling": [],
                "throttled_share": None,
            }
        )
    metrics = make_metrics(
        throughput=float(rates[0]), offered=float(rates[0]), cpu_pct_total=1.0, memory_mb=1.0, p50_ms=0.1
    )
    metrics.update(
        ladder={"rates": list(rates), "step_s": 2.0, "steps": steps, "cpu_cost": None, "capacity": None},
        cpu_us_per_request=None,
        capacity_rps=None,
        capacity_at_least_rps=float(rates[-1]),
    )
    folder = writer.write_run(
        impl="nginx",
        variant="static",
        regime="ladder-floor",
        point={"instances": 1},
        repetition=0,
        metrics=metrics,
        valid=False,
        reasons=["fewer than two steps below saturation: no cost per request"],
    )
    verdict_path = folder / "verdict.json"
    verdict = json.loads(verdict_path.read_text())
    verdict["checks"] = {"cost_fit": {"ok": False, "value": None, "threshold": 2, "detail": "no cost"}}
    verdict_path.write_text(json.dumps(verdict, indent=2))
    return folder
