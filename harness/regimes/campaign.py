"""A campaign: a named set of measured runs that can be interrupted and resumed.

Every run of a campaign has a group key (campaign, regime, implementation, point) and a repetition
number. Before running a point, the campaign looks in results/index.jsonl for a completed run with the
same key and repetition and reuses it, so a resumed campaign never redoes finished runs. Progress is
printed per run with an estimate of the time left.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.console import console
from harness.engine.session import RunPlan, execute
from harness.record.folders import RunFolder
from harness.record.index_line import newest_completed
from harness.record.metrics import read_metrics_json
from harness.record.verdict import read_verdict_json


@dataclass
class PointResult:
    folder: RunFolder
    status: str
    metrics: dict[str, Any] | None
    verdict: dict[str, Any] | None
    reused: bool = False

    @property
    def valid(self) -> bool:
        return bool(self.verdict and self.verdict.get("valid"))


def campaign_name(regime: str, settings: dict[str, Any]) -> str:
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:8]
    return f"{regime}-{digest}"


@dataclass
class Campaign:
    name: str
    results_dir: Path | None = None
    planned_runs: int = 0
    done_runs: int = 0
    run_seconds: list[float] = field(default_factory=list)
    """Durations of the runs measured (each a fresh start), not of those reused."""
    reuse_since: str | None = None
    """Reuse only runs stored at or after this UTC time (a replication on fresh starts of its own)."""

    def key(self, *parts: Any) -> str:
        return "/".join([self.name, *(str(p) for p in parts)])

    def completed(self, group: str, repetition: int) -> dict[str, Any] | None:
        return newest_completed(group, repetition, self.results_dir, self.reuse_since)

    def eta(self) -> str:
        """The time left: each planned run at the mean duration of the runs measured so far; until one has
        been timed, the estimate is not known."""
        remaining = max(self.planned_runs - self.done_runs, 0)
        if remaining and not self.run_seconds:
            return "being estimated"
        whole = int(remaining * statistics.fmean(self.run_seconds) if remaining else 0.0)
        return f"~{whole // 60}m{whole % 60:02d}s"

    def run_point(self, plan: RunPlan, label: str, reuse: bool = True) -> PointResult:
        """One run of the campaign, a fresh start; a completed run stored under its group key and
        repetition is reused instead, unless `reuse` is off."""
        group = plan.group_key()
        stored = self.completed(group, plan.repetition) if reuse else None
        if stored is not None:
            folder = RunFolder(Path(stored["path"]))
            result = PointResult(
                folder,
                "completed",
                read_metrics_json(folder),
                (read_verdict_json(folder) or None),
                reused=True,
            )
        else:
            began = time.monotonic()
            outcome = execute(replace(plan, results_dir=self.results_dir), quiet=True)
            self.run_seconds.append(time.monotonic() - began)
            result = PointResult(
                outcome.folder,
                outcome.status,
                outcome.metrics,
                outcome.verdict.to_json() if outcome.verdict else None,
            )
        self.done_runs += 1
        self.planned_runs = max(self.planned_runs, self.done_runs)
        console.print(
            f"[{self.done_runs}/{self.planned_runs}] {label}: {describe(result)}   (time left {self.eta()})"
        )
        return result


def describe(result: PointResult) -> str:
    prefix = "reused " if result.reused else ""
    if result.status != "completed" or result.metrics is None:
        manifest = result.folder.read_json("manifest.json") if result.folder.has("manifest.json") else {}
        return f"{prefix}[red]{result.status}[/] {manifest.get('failure_reason') or ''}"
    m = result.metrics
    lat = m["latency_ms"]
    checks = (result.verdict or {}).get("checks", {})
    failed = (
        {name for name, check in checks.items() if not check.get("ok")} if result.verdict else {"run-failed"}
    )
    verdict = "valid" if result.valid else "[red]invalid[/] (" + ", ".join(sorted(failed)) + ")"
    slo_met = result.verdict and result.verdict.get("slo", {}).get("met")
    slo = "[green]SLO met[/]" if slo_met else "[yellow]SLO not met[/]"
    return (
        f"{prefix}{m['throughput_rps']:.0f} ok/s, mean {lat['mean']:.1f} ms, p99 {lat['p99']:.1f} ms, "
        f"CPU {m['cpu_pct_total']:.0f} %, sys err {m['sys_errors']}, {verdict}, {slo}"
    )
