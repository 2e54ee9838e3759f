"""The regime commands' own tables (docs/design.md §6): capacity per implementation, its fixed-rate check,
and the users regime's QoS rows. Means carry the one t-interval of harness/model/stats.py."""

from __future__ import annotations

import statistics
from typing import Any

from harness.analysis.table_model import Cell, Table
from harness.analysis.table_render import COMMAND_LOOK, rich_table
from harness.console import console
from harness.model.stats import mean_ci


def mean_ci_text(values: list[float], digits: int = 0, unit: str = "") -> Cell:
    """The mean with its 95 % t-interval as "mean [low, high]"; "mean (n=1)" for one value; "-" for none."""
    clean = [v for v in values if v is not None]
    if not clean:
        return Cell("-")
    mean = statistics.fmean(clean)
    interval = mean_ci(clean)
    if interval is None:
        return Cell(f"{mean:,.{digits}f} (n=1)", mean, unit=unit)
    text = f"{mean:,.{digits}f} [{interval.low:,.{digits}f}, {interval.high:,.{digits}f}]"
    return Cell.measured(text, mean, interval, unit)


def users_cells(metrics: list[dict[str, Any]], valid: int) -> list[str]:
    """One user count's row of the `users` table, after the report's QoS table (harness/analysis/tables.py):
    the maximum is the largest of the runs, not a mean with a t-interval (over 3 heavy-tailed maxima that
    interval went below 0 ms), and the share over 1 s is of all the runs' requests."""
    requests = [float(m.get("requests") or 0) for m in metrics]
    over = [float(m.get("over_1s_pct") or 0.0) for m in metrics]
    total = sum(requests)
    over_pct = (
        sum(o * r for o, r in zip(over, requests, strict=True)) / total if total else statistics.fmean(over)
    )
    return [
        mean_ci_text([m["throughput_rps"] for m in metrics]),
        f"{max(m['latency_ms']['max'] for m in metrics):,.1f}",
        mean_ci_text([m["latency_ms"]["mean"] for m in metrics], 2),
        mean_ci_text([m["latency_ms"]["p50"] for m in metrics], 2),
        f"{over_pct:.2f}",
        str(sum(m["app_errors"] for m in metrics)),
        str(sum(m["sys_errors"] for m in metrics)),
        f"{valid}/{len(metrics)}",
    ]


def print_capacity_table(title: str, records: dict[str, list[dict[str, Any]]]) -> None:
    console.print(rich_table(capacity_table(title, records), look=COMMAND_LOOK))
    console.print("values are means with 95 % confidence intervals over independent searches (fresh starts)")


def capacity_table(title: str, records: dict[str, list[dict[str, Any]]]) -> Table:
    """One row per implementation: its searches' capacity, CPU, work per CPU and memory, with what was left out."""
    columns = [
        "impl",
        "capacity req/s",
        "CPU % at capacity",
        "req/s per CPU %",
        "memory/instance MiB",
        "n",
        "note",
    ]
    table = Table(
        "capacity",
        title,
        columns,
        [],
        align=["left" if column in ("impl", "note") else "right" for column in columns],
    )
    for impl, rows in records.items():
        # As in the report (and where the check starts): a search that found no rate within the SLO has no
        # capacity to average; averaged as 0 it gave php 787 [-958, 2,531] req/s from 1010, 0 and 1350.
        capacities = [r["capacity_rps"] for r in rows if r["capacity_rps"]]
        cpu = [
            r["metrics"].get("cpu_pct_total") for r in rows if r["metrics"].get("cpu_pct_total") is not None
        ]
        norm = [
            r["metrics"].get("normalized_throughput")
            for r in rows
            if r["metrics"].get("normalized_throughput")
        ]
        mem = [
            r["metrics"].get("memory_per_instance_mb")
            for r in rows
            if r["metrics"].get("memory_per_instance_mb")
        ]
        notes = []
        if any(r["bound_by_measurement"] for r in rows):
            notes.append("lower bound: load generator/host limit")
        if len(capacities) < len(rows):
            notes.append(
                f"{len(rows) - len(capacities)} of {len(rows)} found no rate within the SLO (left out)"
            )
        cut_short = sum(1 for r in rows if r["metrics"].get("capacity_budget_spent"))
        if cut_short:
            notes.append(f"cut short: {cut_short} of {len(rows)} (probe budget)")
        note = "; ".join(notes)
        table.rows.append(
            [
                impl,
                mean_ci_text(capacities, unit="req/s"),
                mean_ci_text(cpu, 1, "%"),
                mean_ci_text(norm, 2, "req/s per CPU %"),
                mean_ci_text(mem, 1, "MiB"),
                Cell(str(len(capacities)), len(capacities)),
                note,
            ]
        )
    return table


def print_confirmation_table(confirmations: dict[str, Any], settings: Any) -> None:
    """The fixed-rate check of each capacity: does it hold in a fresh run, and does 1.2x of it break the SLO?"""
    console.print(rich_table(confirmation_table(confirmations, settings), look=COMMAND_LOOK))
    for impl, c in confirmations.items():
        # The table's verdict column is cut short in a narrow terminal; this line is whole.
        word = "[green]consistent[/]" if c.consistent else "[yellow]not confirmed[/]"
        console.print(f"{impl}: {word}: {c.summary()}")
    console.print(
        "✓ = valid and within the SLO; every run is stored (regime capacity-confirm). The confirmed figure is the "
        "capacity a fixed-rate run reproduces: `./bidbench run --rate <it> --cpus <limit>` should meet the SLO."
    )


def confirmation_table(confirmations: dict[str, Any], settings: Any) -> Table:
    starts = (
        f"windows continuing each implementation's last search, each warmed up {settings.warmup_s:g} s at its rate"
        if getattr(settings, "after_search", False)
        else f"a fresh start each, {settings.warmup_s:g} s warm-up"
    )
    columns = [
        "impl",
        "searches' mean",
        "confirmed req/s",
        "mean / p99 ms",
        "CPU %",
        "1.2x",
        "runs",
        "verdict",
    ]
    styles: list[list[str]] = []  # the verdict: green where consistent, yellow otherwise
    table = Table(
        "capacity-confirmation",
        f"capacity checked with fixed-rate runs ({starts}; {settings.duration_s:g} s windows)",
        columns,
        [],
        styles=styles,
        align=["left" if column in ("impl", "verdict", "runs") else "right" for column in columns],
    )
    for impl, c in confirmations.items():
        m = c.capacity_metrics
        lat = m.get("latency_ms") or {}
        latency = f"{lat['mean']:.1f} / {lat['p99']:.1f}" if lat else "-"
        cpu = (
            Cell(f"{m['cpu_pct_total']:.1f}", m["cpu_pct_total"], unit="%")
            if m.get("cpu_pct_total") is not None
            else "-"
        )
        above = (
            "-"
            if c.above_rate is None
            else f"{c.above_rate:g}: "
            + ("breaks SLO" if c.above_broke else "meets SLO" if c.above_broke is False else "unknown")
        )
        runs = ", ".join(f"{r['rate']:g}{'✓' if r['ok'] else '✗'}" for r in c.runs) or "-"
        table.rows.append(
            [
                impl,
                Cell(f"{c.start:,.0f}", c.start, unit="req/s") if c.start else "-",
                Cell(f"{c.capacity:g}", c.capacity, unit="req/s") if c.capacity else "-",
                latency,
                cpu,
                above,
                runs,
                "consistent" if c.consistent else c.summary(),
            ]
        )
        styles.append([""] * (len(columns) - 1) + ["better" if c.consistent else "warn"])
    return table
