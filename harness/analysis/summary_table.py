"""The end-of-run table a user sees after `./bidbench run` (and after each regime point)."""

from __future__ import annotations

import math
from typing import Any

from rich.table import Table

from harness.console import console
from harness.engine.validity import Verdict


def _fmt(value: Any, digits: int = 1, suffix: str = "") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:,.{digits}f}{suffix}"


def print_run(
    run_id: str, status: str, metrics: dict[str, Any] | None, run_verdict: Verdict | None, reason: str
) -> None:
    table = Table(title=f"run {run_id}", show_header=True)
    table.add_column("figure")
    table.add_column("value", justify="right")
    if metrics:
        lat = metrics["latency_ms"]
        rows = [
            ("throughput (ok req/s)", _fmt(metrics["throughput_rps"])),
            (
                "requests: ok / app exc. / sys err.",
                f"{metrics['ok']} / {metrics['app_errors']} / {metrics['sys_errors']}",
            ),
            (
                "latency p50 / p99 / mean",
                f"{_fmt(lat['p50'], 2)} / {_fmt(lat['p99'], 2)} / {_fmt(lat['mean'], 2)} ms",
            ),
            ("instance CPU % (total)", _fmt(metrics["cpu_pct_total"], 1, " %")),
            ("utilized CPU", _fmt((metrics["utilized_cpu"] or math.nan) * 100, 1, " %")),
            ("normalized throughput (req/s per CPU %)", _fmt(metrics["normalized_throughput"], 2)),
            ("memory per instance (steady PSS)", _fmt(metrics["memory_per_instance_mb"], 1, " MiB")),
            (
                "peak RSS (max over instances)",
                # A remote run without a resource source has no instance figures.
                _fmt(max((i["rss_peak_mb"] for i in metrics["instances"]), default=None), 1, " MiB"),
            ),
            ("driver CPU %", _fmt(metrics["loadgen_cpu_pct"], 1, " %")),
            ("PostgreSQL CPU %", _fmt(metrics["db_cpu_pct"], 1, " %")),
        ]
        for name, value in rows:
            table.add_row(name, value)
    if run_verdict:
        table.add_row("valid", "[green]yes[/]" if run_verdict.valid else "[red]NO[/]")
        slo = run_verdict.slo
        table.add_row(
            "SLO (" + slo["definition"] + ")", "[green]met[/]" if slo["met"] else "[yellow]not met[/]"
        )
    table.add_row("status", status if status == "completed" else f"[red]{status}[/]")
    console.print(table)
    if run_verdict and not run_verdict.valid:
        for item in run_verdict.reasons:
            console.print(f"  [red]invalid:[/] {item}")
    if reason:
        console.print(f"  [red]{status}:[/] {reason}")
