"""The end-of-run table a user sees after `./bidbench run` (and after each regime point)."""

from __future__ import annotations

import math
from typing import Any

from harness.analysis.table_model import Cell, Table
from harness.analysis.table_render import COMMAND_LOOK, rich_table
from harness.console import console
from harness.record.verdict import Verdict


def _fmt(value: Any, digits: int = 1, suffix: str = "") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:,.{digits}f}{suffix}"


def _figure(value: Any, digits: int = 1, unit: str = "") -> Cell:
    return Cell(_fmt(value, digits, f" {unit}" if unit else ""), value, unit=unit)


def run_table(run_id: str, status: str, metrics: dict[str, Any] | None, run_verdict: Verdict | None) -> Table:
    rows: list[list[str]] = []
    styles: list[list[str]] = []
    if metrics:
        lat = metrics["latency_ms"]
        utilized = metrics["utilized_cpu"]
        rows += [
            [
                "throughput (ok req/s)",
                Cell(_fmt(metrics["throughput_rps"]), metrics["throughput_rps"], unit="req/s"),
            ],
            [
                "requests: ok / app exc. / sys err.",
                f"{metrics['ok']} / {metrics['app_errors']} / {metrics['sys_errors']}",
            ],
            [
                "latency p50 / p99 / mean",
                f"{_fmt(lat['p50'], 2)} / {_fmt(lat['p99'], 2)} / {_fmt(lat['mean'], 2)} ms",
            ],
            ["instance CPU % (total)", _figure(metrics["cpu_pct_total"], 1, "%")],
            ["utilized CPU", _figure(utilized * 100 if utilized else None, 1, "%")],
            ["normalized throughput (req/s per CPU %)", _figure(metrics["normalized_throughput"], 2)],
            ["memory per instance (steady PSS)", _figure(metrics["memory_per_instance_mb"], 1, "MiB")],
            [
                "peak RSS (max over instances)",
                # A remote run without a resource source has no instance figures.
                _figure(max((i["rss_peak_mb"] for i in metrics["instances"]), default=None), 1, "MiB"),
            ],
            ["driver CPU %", _figure(metrics["loadgen_cpu_pct"], 1, "%")],
            ["PostgreSQL CPU %", _figure(metrics["db_cpu_pct"], 1, "%")],
        ]
        styles += [["", ""] for _ in rows]
    if run_verdict:
        slo = run_verdict.slo
        rows += [
            ["valid", "yes" if run_verdict.valid else "NO"],
            ["SLO (" + slo["definition"] + ")", "met" if slo["met"] else "not met"],
        ]
        styles += [["", "better" if run_verdict.valid else "worse"], ["", "better" if slo["met"] else "warn"]]
    rows.append(["status", status])
    styles.append(["", "" if status == "completed" else "worse"])
    return Table(
        f"run-{run_id}", f"run {run_id}", ["figure", "value"], rows, styles=styles, align=["left", "right"]
    )


def print_run(
    run_id: str, status: str, metrics: dict[str, Any] | None, run_verdict: Verdict | None, reason: str
) -> None:
    console.print(rich_table(run_table(run_id, status, metrics, run_verdict), look=COMMAND_LOOK))
    if run_verdict and not run_verdict.valid:
        for item in run_verdict.reasons:
            console.print(f"  [red]invalid:[/] {item}")
    if reason:
        console.print(f"  [red]{status}:[/] {reason}")
