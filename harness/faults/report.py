"""The terminal table of a fault scenario: one row per implementation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.table import Table

from harness.console import console


def cell(value: Any, digits: int = 0) -> str:
    """A table cell: - for unknown, yes/NO for flags, floats rounded."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


COLUMNS: tuple[tuple[str, str, int], ...] = (
    # (header, row key, digits)
    ("req/s", "rate", 0),
    ("requests", "requests", 0),
    ("503", "unavailable_503", 0),
    ("500/5xx", "server_5xx", 0),
    ("conn. err", "connection", 0),
    ("timeouts", "timeout", 0),
    ("hangs >6 s", "fault_hangs", 0),
    ("p99 before ms", "baseline_p99_ms", 1),
    ("p99 in fault ms", "fault_p99_ok_ms", 1),
    ("1st success s", "first_success_s", 2),
    ("p99 back s", "p99_back_s", 0),
    ("peak RSS MiB", "peak_rss_mb", 0),
    ("late", "late_sends", 0),
    ("survived", "survived", 0),
    ("orphans", "orphans", 0),
    ("invariants", "invariants_ok", 0),
)


def print_table(scenario: str, description: str, rows: Sequence[dict[str, Any]]) -> None:
    """One column per implementation, one line per figure (fits a terminal whatever the figure count)."""
    table = Table(title=f"{scenario}: {description}", title_justify="left")
    table.add_column("figure")
    for row in rows:
        table.add_column(str(row.get("impl", "?")), justify="right")
    columns = list(COLUMNS)
    if scenario == "overload":
        columns.insert(1, ("overload req/s", "peak_rate", 0))
        columns.insert(2, ("due at peak req/s", "fault_due_rps", 0))
    if scenario == "kill-instance":
        columns.append(("errors to survivor", "errors_to_survivors", 0))
    for header, key, digits in columns:
        cells = []
        for row in rows:
            value = row.get(key)
            text = cell(value, digits)
            bad = (key == "server_5xx" and value) or (key in ("survived", "invariants_ok") and value is False)
            bad = bad or (key == "orphans" and value)
            cells.append(f"[red]{text}[/]" if bad else text)
        table.add_row(header, *cells)
    console.print(table)
    console.print(
        "503 = the contract's database unavailable; 500/5xx = bugs; conn. err = no response (refused, reset; "
        "to the killed instance in kill-instance); hangs = responses slower than 6 s; 1st success = from the "
        "fault's end (database back, toxics removed, instance killed) to the first 2xx; p99 back = from then to "
        "the first error-free 3 s window whose p99 is within 1.5x the pre-fault p99 (+5 ms); peak RSS over the "
        "whole run, largest instance."
    )
    for row in rows:
        if row.get("run_valid") is False:
            # A finding, not a failure: under overload the driver's connection cap makes late sends.
            console.print(
                f"{row.get('impl')}: not a valid measurement run (expected under a fault): "
                + "; ".join(row.get("run_invalid_reasons") or [])
            )
        if row.get("status") != "completed" or not row.get("invariants_ok"):
            console.print(
                f"[red]{row.get('impl')}: status {row.get('status')}; invariants: {row.get('invariants')}[/]"
            )
