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
from harness.engine import prewarm
from harness.engine.driver import LoadSettings
from harness.engine.session import RunPlan, Session, execute
from harness.record.folders import RunFolder, newest_completed
from harness.record.metrics import read_metrics_json
from harness.record.verdict import read_verdict_json

SESSION_REWARM_S = 4.0  # half of it ramps from the previous probe's rate (the driver's BB_WARMUP_FROM)
# Before a search's first probe, every instance gets the same unmeasured warm-up at a gentle rate, so a
# JIT runtime under a small CPU limit is not judged while it is still compiling (the thesis warmed up too).
# The pre-warm runs at half the rate (at least 800 req/s per CPU: harness/engine/prewarm.py); the first window's warm-up then lasts at least this long at the rate
# itself. A JVM at 0.5 CPU needs about 10 s at the doubled rate before its CPU settles, and with a short
# warm-up java's first probe failed at a rate the same instance held later; node and php settle within a
# few seconds, and the rule is the same for all.
# the lab log (docs/lab/), capacity search, "A search's first warm-up".
FRESH_WARMUP_S = 15.0


def session_window_load(
    load: LoadSettings, fresh: bool, last_rate: float | None, rewarm_s: float = SESSION_REWARM_S
) -> LoadSettings:
    """A window's warm-up within a session: a fresh start's first window (after its pre-warm) warms up at
    least FRESH_WARMUP_S at its rate; later windows on warm instances ramp from the previous rate and
    settle, within `rewarm_s` (a search's probes: SESSION_REWARM_S)."""
    if fresh:
        return replace(load, warmup_s=max(load.warmup_s, FRESH_WARMUP_S))
    if last_rate is None:
        return load
    return replace(load, warmup_s=min(load.warmup_s, rewarm_s), warmup_from_rate=min(last_rate, load.rate))


class LazySession:
    """A Session started on first use (so a resumed campaign starts nothing for reused runs), and started
    afresh if an instance died."""

    def __init__(self, plan: RunPlan) -> None:
        self.plan = plan
        self.session: Session | None = None

    def get(self) -> Session:
        """The live session (its first window pre-warms it: Session.measure's prewarm_rate)."""
        if self.session is None or not self.session.alive():
            self.close()
            self.session = Session(self.plan, quiet=True).__enter__()
        return self.session

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None

    def __enter__(self) -> LazySession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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

    @property
    def slo_met(self) -> bool:
        return bool(self.verdict and self.verdict.get("slo", {}).get("met"))

    def failure_kinds(self) -> set[str]:
        """Names of the failed validity checks."""
        if not self.verdict:
            return {"run-failed"}
        return {name for name, check in self.verdict.get("checks", {}).items() if not check.get("ok")}


def campaign_name(regime: str, settings: dict[str, Any]) -> str:
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:8]
    return f"{regime}-{digest}"


@dataclass
class Campaign:
    name: str
    results_dir: Path | None = None
    planned_runs: int = 0
    done_runs: int = 0
    planned_starts: int = 0
    """Runs planned that start their instances: a search's session (its first window also pre-warms them,
    which cost a JVM 74 s in a demo here, against 7 s for a later window), or a fresh-start run."""
    done_starts: int = 0
    started: float = field(default_factory=time.monotonic)
    run_seconds: list[float] = field(default_factory=list)
    """Durations of runs that started their instances (a fresh start, or a session's first window)."""
    window_seconds: list[float] = field(default_factory=list)
    """Durations of later windows of a session, on instances already running."""

    def key(self, *parts: Any) -> str:
        return "/".join([self.name, *(str(p) for p in parts)])

    def completed(self, group: str, repetition: int) -> dict[str, Any] | None:
        return newest_completed(group, repetition, self.results_dir)

    def eta(self) -> str:
        """The time left: each planned run that starts its instances at the mean duration of such a run, and
        each other planned run at the mean duration of a window on running instances. Until one of each
        kind still to come has been timed, the estimate is not known."""
        remaining = max(self.planned_runs - self.done_runs, 0)
        starts_left = min(max(self.planned_starts - self.done_starts, 0), remaining)
        windows_left = remaining - starts_left
        if (starts_left and not self.run_seconds) or (windows_left and not self.window_seconds):
            return "being estimated"
        seconds = starts_left * _mean(self.run_seconds) + windows_left * _mean(self.window_seconds)
        return "~" + format_duration(seconds)

    def run_point(
        self,
        plan: RunPlan,
        label: str,
        session: LazySession | None = None,
        rewarm_s: float = SESSION_REWARM_S,
    ) -> PointResult:
        group = plan.group_key()
        stored = self.completed(group, plan.repetition)
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
            plan = replace(plan, results_dir=self.results_dir)
            fresh = True
            if session is None:
                outcome = execute(plan, quiet=True)
            else:
                live = session.get()
                fresh = live.windows == 0
                plan = replace(plan, load=session_window_load(plan.load, fresh, live.last_rate, rewarm_s))
                rate = prewarm.prewarm_rate(plan.load.model, plan.load.rate, plan.cpus, plan.instances)
                outcome = live.measure(plan, prewarm_rate=rate if fresh else None)
                if not (outcome.verdict and outcome.verdict.slo.get("met")):
                    live.wait_idle()
            took = time.monotonic() - began
            if fresh:
                self.run_seconds.append(took)
                self.done_starts += 1
            else:
                self.window_seconds.append(took)
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


def _mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else 0.0


def format_duration(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60}m{whole % 60:02d}s"


def describe(result: PointResult) -> str:
    prefix = "reused " if result.reused else ""
    if result.status != "completed" or result.metrics is None:
        reason = ""
        if result.folder.has("manifest.json"):
            reason = result.folder.read_json("manifest.json").get("failure_reason") or ""
        return f"{prefix}[red]{result.status}[/] {reason}"
    m = result.metrics
    lat = m["latency_ms"]
    verdict = (
        "valid" if result.valid else "[red]invalid[/] (" + ", ".join(sorted(result.failure_kinds())) + ")"
    )
    slo = "[green]SLO met[/]" if result.slo_met else "[yellow]SLO not met[/]"
    return (
        f"{prefix}{m['throughput_rps']:.0f} ok/s, mean {lat['mean']:.1f} ms, p99 {lat['p99']:.1f} ms, "
        f"CPU {m['cpu_pct_total']:.0f} %, sys err {m['sys_errors']}, {verdict}, {slo}"
    )
