"""The report's resilience section: fault runs (`./bidbench faults`, regime `faults`) found among the
compared result folders, as one table (a row per scenario and implementation) and one timeline figure per
scenario (p99 of the successes and the error share per second, one line per implementation, the fault
window shaded).

Fault runs are usually invalid as measurements (they have errors on purpose), so they are looked up among
the excluded runs too: the section reads each folder's faults.json and timeline.csv, never metrics.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.analysis.comparison import Comparison
from harness.analysis.plots import Figure, _colors, _encode, plt
from harness.analysis.tables import Table
from harness.faults.report import cell
from harness.faults.timeline import read_csv

FAULT_REGIME = "faults"
SCENARIO_ORDER = ("db-outage", "slow-db", "overload", "kill-instance")
COLUMNS = [
    "scenario",
    "impl",
    "req/s",
    "503",
    "500/5xx",
    "conn. errors",
    "timeouts",
    "hangs > 6 s",
    "first success s",
    "p99 back s",
    "peak RSS MiB",
    "survived",
    "invariants",
    "run",
]


@dataclass
class FaultRun:
    run_id: str
    path: Path
    impl: str
    scenario: str
    created: str
    summary: dict[str, Any]
    faults: dict[str, Any] = field(default_factory=dict)

    def timeline(self) -> list[dict[str, float | None]]:
        path = self.path / "timeline.csv"
        return read_csv(path) if path.exists() else []


def _read(path: Path) -> FaultRun | None:
    try:
        faults = json.loads((path / "faults.json").read_text(encoding="utf-8"))
        manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    summary = faults.get("summary") or {}
    return FaultRun(
        run_id=path.name,
        path=path,
        impl=str(manifest.get("impl") or summary.get("impl") or "?"),
        scenario=str(summary.get("scenario") or (faults.get("scenario") or {}).get("name") or "?"),
        created=str(manifest.get("created_utc") or ""),
        summary=summary,
        faults=faults,
    )


def fault_runs(comparison: Comparison) -> list[FaultRun]:
    """Every fault run among the compared folders, used or excluded, oldest first."""
    used = [r.path for r in comparison.runset.runs if r.regime == FAULT_REGIME and r.path is not None]
    excluded = [
        e.path for e in comparison.runset.excluded if e.regime == FAULT_REGIME and e.path not in ("", "-")
    ]
    paths = dict.fromkeys(Path(p) for p in [*used, *excluded])
    found = [r for r in (_read(p) for p in paths if (p / "faults.json").exists()) if r is not None]
    return sorted(found, key=lambda r: (r.created, r.run_id))


def latest(runs: Sequence[FaultRun]) -> list[FaultRun]:
    """The newest run of each (scenario, impl), in scenario order."""
    newest = {(run.scenario, run.impl): run for run in runs}
    rank = {name: i for i, name in enumerate(SCENARIO_ORDER)}
    return sorted(newest.values(), key=lambda r: (rank.get(r.scenario, 99), r.scenario, r.impl))


def resilience_table(runs: Sequence[FaultRun]) -> Table:
    rows, styles = [], []
    for run in latest(runs):
        s = run.summary
        row = [
            run.scenario,
            run.impl,
            cell(s.get("rate"), 0) + (f" -> {s['peak_rate']}" if s.get("peak_rate") else ""),
            cell(s.get("unavailable_503")),
            cell(s.get("server_5xx")),
            cell(s.get("connection")),
            cell(s.get("timeout")),
            cell(s.get("fault_hangs")),
            cell(s.get("first_success_s"), 2),
            cell(s.get("p99_back_s"), 0),
            cell(s.get("peak_rss_mb"), 0),
            cell(s.get("survived")),
            "ok" if s.get("invariants_ok") else str(s.get("invariants") or "NO"),
            run.run_id,
        ]
        bad = {4: bool(s.get("server_5xx")), 11: s.get("survived") is False, 12: not s.get("invariants_ok")}
        styles.append(["worse" if bad.get(i) else "" for i in range(len(row))])
        rows.append(row)
    return Table(
        id="resilience",
        title="Fault scenarios: errors, recovery, survival, invariants",
        columns=COLUMNS,
        rows=rows,
        styles=styles,
        caption=(
            "The newest run of each scenario and implementation. 503 is the contract's 'database unavailable'; "
            "any other 5xx is a bug. Connection errors and timeouts are requests without a response (in "
            "kill-instance, those to the killed instance are expected). First success: from the end of the fault "
            "(database back, toxics removed, instance killed) to the first 2xx. p99 back: from then to the first "
            "error-free 3 s window whose p99 is within 1.5x the pre-fault p99 (+5 ms); '-' means never within "
            "the run. Peak RSS: the largest instance over the whole run. Invariants: no lost or duplicated bids."
        ),
        source="./bidbench faults <scenario>",
        empty="no fault runs: ./bidbench faults all",
    )


def _windows(run: FaultRun) -> list[tuple[float, float, str]]:
    """The shaded spans of a run: each phase of slow-db, else the fault window."""
    scenario = run.faults.get("scenario") or {}
    steps = scenario.get("steps") or []
    if run.scenario == "slow-db":
        spans, opened = [], None
        for step in steps:
            if step["action"] in ("latency", "reset"):
                opened = (float(step["at_s"]), step["action"])
            elif step["action"] == "clear" and opened:
                spans.append((opened[0], float(step["at_s"]), opened[1]))
                opened = None
        return spans
    window = run.summary.get("fault_window_s") or [scenario.get("fault_start_s"), scenario.get("fault_end_s")]
    if window[0] is None:
        return []
    start, end = float(window[0]), float(window[1])
    return [(start, max(end, start + 0.5), run.scenario)]


def timeline_figure(scenario: str, runs: Sequence[FaultRun]) -> Figure:
    fig_id = f"fig-fault-{scenario}"
    title = f"{scenario}: p99 latency and errors per second"
    explanation = (
        "Per second of the measurement (by request start): top, the p99 latency of the successful requests "
        "(log scale); bottom, the share of requests that failed (503, other 5xx, no response). The shaded band "
        "is the fault. A good app answers 503 quickly while the fault lasts and is back to its earlier latency "
        "soon after it ends."
    )
    series = [(run, rows) for run in runs if (rows := run.timeline())]
    if not series:
        return Figure(fig_id, title, explanation, missing="no timeline.csv in these fault runs")
    colors = _colors([run.impl for run, _ in series])
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True, height_ratios=[3, 2])
    for run, rows in series:
        t = [r["t_s"] for r in rows]
        p99 = [r["p99_ms"] if r["p99_ms"] is not None else float("nan") for r in rows]
        failed = [
            sum(r.get(k) or 0.0 for k in ("unavailable_503", "server_5xx", "connection", "timeout"))
            for r in rows
        ]
        share = [100 * f / r["requests"] if r["requests"] else 0.0 for f, r in zip(failed, rows, strict=True)]
        top.plot(t, p99, label=run.impl, color=colors[run.impl], linewidth=1.4)
        bottom.plot(t, share, label=run.impl, color=colors[run.impl], linewidth=1.4)
    shades = {"latency": "#f5c26b", "reset": "#e57373"}
    for start, end, label in _windows(series[0][0]):
        for axis in (top, bottom):
            axis.axvspan(start, end, color=shades.get(label, "#bbbbbb"), alpha=0.3, linewidth=0)
        top.text(start, 1.0, f" {label}", transform=top.get_xaxis_transform(), fontsize=8, va="bottom")
    top.set_yscale("log")
    top.set_ylabel("p99 of successes (ms)")
    bottom.set_ylabel("failed requests (%)")
    bottom.set_ylim(-2, 102)
    bottom.set_xlabel("seconds into the measurement window")
    top.legend(loc="upper right", fontsize=8)
    top.grid(alpha=0.3)
    bottom.grid(alpha=0.3)
    fig.suptitle(title)
    return Figure(fig_id, title, explanation, png=_encode(fig))


def resilience_section(comparison: Comparison) -> dict[str, Any] | None:
    """The table and one figure per scenario, or None when the compared folders hold no fault run."""
    runs = fault_runs(comparison)
    if not runs:
        return None
    chosen = latest(runs)
    scenarios = list(dict.fromkeys(run.scenario for run in chosen))
    return {
        "table": resilience_table(runs),
        "figures": [timeline_figure(name, [r for r in chosen if r.scenario == name]) for name in scenarios],
    }
