"""What a terminal shows of load ladders: one line per finished ladder, then the table per app (mean [95 % CI])."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from rich.table import Table

from harness.analysis.ladder import ladder_row
from harness.console import console
from harness.model.ladder_math import THROTTLED_SHARE
from harness.record.verdict import Verdict


class _Folder(Protocol):
    @property
    def path(self) -> Path: ...


class LadderOutcome(Protocol):
    """What the printers read of a run's outcome (harness.engine.session.RunOutcome has it)."""

    @property
    def folder(self) -> _Folder: ...
    @property
    def status(self) -> str: ...
    @property
    def metrics(self) -> dict[str, Any] | None: ...
    @property
    def verdict(self) -> Verdict | None: ...
    @property
    def reason(self) -> str: ...


def print_ladder_outcome(impl: str, instances: int, repetition: int, outcome: LadderOutcome) -> None:
    """One line as a ladder finishes: its status, steps, CPU cost and capacity; repetition -1 is the calibration."""
    what = "calibration" if repetition < 0 else f"ladder {repetition + 1}"
    metrics = outcome.metrics or {}
    ladder = metrics.get("ladder") or {}
    cost = metrics.get("cpu_us_per_request")
    cap = (ladder.get("capacity") or {}) if ladder else {}
    parts = [f"{impl} x{instances} {what}: {outcome.status}"]
    if outcome.verdict is not None and not outcome.verdict.valid:
        parts.append("INVALID (" + "; ".join(outcome.verdict.reasons) + ")")
    if ladder:
        parts.append(f"{ladder.get('completed_steps')} steps ({ladder.get('stopped')})")
    if cost is not None:
        parts.append(f"{cost:,.0f} µs/request")
    if cap:
        parts.append(("capacity " if cap.get("bracketed") else "capacity >= ") + f"{cap['rps']:,.0f} req/s")
    parts += ladder_anomalies(ladder)
    if outcome.reason:
        parts.append(outcome.reason)
    console.print("  " + ", ".join(parts) + f"  -> {outcome.folder.path.name}")


def ladder_anomalies(ladder: dict[str, Any]) -> list[str]:
    """What a reader of one ladder's line should not miss although the ladder is valid: steps below the
    capacity that failed the SLO (stalls), and an app at its quota where it broke (the quota, not the
    app's work, is the first suspect there)."""
    cap = ladder.get("capacity") or {}
    out = []
    how = str(cap.get("how") or "")
    if "failed too" in how:
        out.append(
            how.rsplit("; ", 1)[-1].replace("lower step(s) failed too", "lower step(s) failed the SLO")
        )
    above = cap.get("above")
    breaking = [s for s in ladder.get("steps") or [] if above is not None and s.get("rate") == above]
    share = breaking[0].get("throttled_share") if breaking else None
    if share is not None and share > THROTTLED_SHARE:
        out.append(f"at its CPU quota where it broke ({share:.0%} of periods throttled)")
    return out


def print_ladder_table(title: str, outcomes: Mapping[str, Sequence[LadderOutcome]]) -> None:
    """One row per app (label), over its ladders: validity, CPU and PostgreSQL cost, capacity, memory."""
    table = Table(title=title + ": mean [95 % CI], CV over fresh starts")
    for column in (
        "app",
        "ladders valid",
        "CPU µs/request",
        "host-adjusted",
        "host r",
        "PostgreSQL µs/request",
        "SLO capacity req/s",
        "saturation req/s",
        "memory MiB",
        "req/s per MiB",
    ):
        table.add_column(column, justify="left" if column == "app" else "right")
    for label, runs in outcomes.items():
        row = ladder_row(
            label,
            [run.metrics for run in runs],
            [bool(run.verdict and run.verdict.valid) for run in runs],
        )
        table.add_row(
            label,
            f"{row.valid}/{row.ladders}",
            row.cost_us.text(),
            row.cost_adjusted_us.text(),
            "-" if row.host_r is None else f"{row.host_r:.2f}",
            row.db_cost_us.text(),
            row.capacity_text,
            row.saturation.text(),
            row.memory_mb.text(1),
            row.rps_per_mb.text(1),
        )
    console.print(table)
    console.print(
        "CPU µs/request is the slope of the instances' CPU time above their idle CPU on completed requests "
        "below saturation; Zeng's normalized throughput (req/s per CPU %, B.Sc. thesis Table 7.2) is 10,000 / it. "
        "Host-adjusted: each ladder's "
        "cost times its group's median PostgreSQL cost per request over its own (the same statements in every "
        "ladder), so its CV is the app's own spread; not compared. Host r: how closely the cost's spread "
        "followed the load driver's CPU per request in the same steps; near 1, the shared host, not the app, "
        "moved it (docs/method.md, 'The host factor')."
    )
