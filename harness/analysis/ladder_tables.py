"""What a terminal shows of load ladders (docs/method.md, "The ladder"): one line per finished ladder, then the
table per app, each figure over fresh starts with its interval and CV. What one ladder yields is
harness/model/ladder_math.py."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from harness.analysis.host_factor import postgres_adjusted, shared_factor_r
from harness.analysis.table_model import Table
from harness.analysis.table_render import COMMAND_LOOK, rich_table
from harness.console import console
from harness.model.ladder_math import THROTTLED_SHARE, _finite
from harness.model.stats import mean_ci
from harness.record.folders import RunFolder
from harness.record.verdict import Verdict


@dataclass(frozen=True)
class Spread:
    """A figure over fresh starts: mean with its 95 % t-interval and the coefficient of variation."""

    n: int
    mean: float | None
    low: float | None
    high: float | None
    cv_pct: float | None

    def text(self, digits: int = 0) -> str:
        if self.mean is None:
            return "-"
        if self.low is None or self.high is None:
            return f"{self.mean:,.{digits}f} (n={self.n})"
        cv = f", CV {self.cv_pct:.1f} %" if self.cv_pct is not None else ""
        return f"{self.mean:,.{digits}f} [{self.low:,.{digits}f}, {self.high:,.{digits}f}]{cv}"


def spread(values: Sequence[float | None]) -> Spread:
    clean = [float(v) for v in values if _finite(v)]
    if not clean:
        return Spread(0, None, None, None, None)
    mean = sum(clean) / len(clean)
    interval = mean_ci(clean)
    cv = None
    if len(clean) >= 2 and mean:
        sd = math.sqrt(sum((v - mean) ** 2 for v in clean) / (len(clean) - 1))
        cv = sd / abs(mean) * 100
    return Spread(
        len(clean), mean, interval.low if interval else None, interval.high if interval else None, cv
    )


@dataclass(frozen=True)
class LadderRow:
    """One implementation's ladders, summarized: what the demo's and `./bidbench ladder`'s tables show."""

    label: str
    ladders: int
    valid: int
    cost_us: Spread
    cost_adjusted_us: Spread
    """The cost with the host's share of its spread taken out (host_factor.postgres_adjusted): how steady the app
    itself was. Shown, not compared: its level is the raw cost's."""
    db_cost_us: Spread
    host_r: float | None
    """How closely the app's CPU per request followed the load driver's, step by step (host_factor.py)."""
    capacity_text: str
    saturation: Spread
    memory_mb: Spread
    rps_per_mb: Spread


def ladder_row(label: str, metrics: Sequence[Mapping[str, Any] | None], valid: Sequence[bool]) -> LadderRow:
    """Valid ladders only. A capacity is averaged only when every ladder bracketed it; otherwise the row
    says "at least" the smallest lower bound, never a mean of bounds."""
    kept = [m for m, ok in zip(metrics, valid, strict=True) if m is not None and ok]
    ladders = [m["ladder"]["steps"] for m in kept if (m.get("ladder") or {}).get("steps")]
    bracketed = [m.get("capacity_rps") for m in kept]
    bounds = [m.get("capacity_at_least_rps") for m in kept if m.get("capacity_at_least_rps") is not None]
    costs = [m.get("cpu_us_per_request") for m in kept]
    db_costs = [m.get("db_us_per_request") for m in kept]
    if bounds:
        text = f">= {min(bounds):,.0f} ({len(bounds)} of {len(kept)} ladders never failed)"
    else:
        text = spread(bracketed).text()
    return LadderRow(
        label=label,
        ladders=len(metrics),
        valid=len(kept),
        cost_us=spread(costs),
        cost_adjusted_us=spread(postgres_adjusted(costs, db_costs)),
        db_cost_us=spread(db_costs),
        host_r=shared_factor_r(ladders),
        capacity_text=text,
        saturation=spread([m.get("saturation_rps") for m in kept]),
        memory_mb=spread([m.get("memory_per_instance_mb") for m in kept]),
        rps_per_mb=spread([m.get("rps_per_mb") for m in kept]),
    )


class LadderOutcome(Protocol):
    """What the printers read of a run's outcome (harness.engine.session.RunOutcome has it)."""

    @property
    def folder(self) -> RunFolder: ...
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
    cap = ladder.get("capacity") or {}
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
    rows: list[list[str]] = []
    for label, runs in outcomes.items():
        row = ladder_row(
            label, [run.metrics for run in runs], [bool(run.verdict and run.verdict.valid) for run in runs]
        )
        rows.append(
            [
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
            ]
        )
    columns = ["app", "ladders valid", "CPU µs/request", "host-adjusted", "host r", "PostgreSQL µs/request"]
    columns += ["SLO capacity req/s", "saturation req/s", "memory MiB", "req/s per MiB"]
    title += ": mean [95 % CI], CV over fresh starts"
    console.print(
        rich_table(Table("ladders", title, columns, rows, align=["left"] + ["right"] * 9), COMMAND_LOOK)
    )
    console.print(
        "CPU µs/request is the slope of the instances' CPU time above their idle CPU on completed requests "
        "below saturation; Zeng's normalized throughput (req/s per CPU %, B.Sc. thesis Table 7.2) is 10,000 / it. "
        "Host-adjusted: each ladder's "
        "cost times its group's median PostgreSQL cost per request over its own (the same statements in every "
        "ladder), so its CV is the app's own spread; not compared. Host r: how closely the cost's spread "
        "followed the load driver's CPU per request in the same steps; near 1, the shared host, not the app, "
        "moved it (docs/method.md, 'The host factor')."
    )
