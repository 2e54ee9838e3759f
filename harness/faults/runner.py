"""One fault scenario run for one implementation: a normal Session (harness/engine/session.py) with one
measurement window, stored like every run (regime `faults`). On top, the result folder gets faults.json
(the scenario, its schedule, the events, the derived figures and the invariants), timeline.csv (per second:
requests per error class, p50/p99/max of the successes), logs/trace.log (logs/toxiproxy.log for slow-db);
the manifest gets a `faults` key with the headline figures, so the analysis need not read the trace.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psutil

from harness import paths
from harness.console import UserError
from harness.db import ready as db_ready
from harness.db.cluster import EmbeddedCluster
from harness.db.target import current_server, external_url
from harness.engine.driver import LoadSettings
from harness.engine.serve import leftovers
from harness.engine.session import RunPlan, Session
from harness.faults import invariants, readyprobe, timeline
from harness.faults.injector import PROXY_NAME, FaultHooks
from harness.faults.scenarios import OVERLOAD_RAMP_S, Scenario
from harness.faults.toxiproxy import Toxiproxy
from harness.record.folders import RunFolder
from harness.record.index_line import read_lines
from harness.record.manifest import read_manifest, write_manifest
from harness.record.metrics import read_metrics
from harness.record.upgrade import trace_log
from harness.record.verdict import read_verdict_json
from harness.tools import toolchain

DEFAULT_RATE = 50.0
DEFAULT_CPUS = 0.25
MIX = "mixed"
# A request that takes longer than the contract's 5 s pool checkout timeout (plus slack) is a hang.
HANG_MS = 6000.0
RSS_BOUND_MB = 1024.0


def fault_cluster() -> EmbeddedCluster:
    """The fault scenarios' own embedded PostgreSQL (its own data directory and port): fault runs stop their
    database and need their bids undisturbed by other runs."""
    return EmbeddedCluster(base_dir=paths.world_reachable_state() / "pg-faults")


@contextmanager
def _database(url: str | None) -> Iterator[None]:
    """Point the run machinery (harness.db.target.current_server) at url for the duration, if given."""
    if url is None:
        yield
        return
    before = os.environ.get("BIDBENCH_DATABASE_URL")
    os.environ["BIDBENCH_DATABASE_URL"] = url
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("BIDBENCH_DATABASE_URL", None)
        else:
            os.environ["BIDBENCH_DATABASE_URL"] = before


@dataclass(frozen=True)
class RateChoice:
    rate: float
    capacity: float
    source: str


def measured_capacity(
    impl: str, cpus: float | None, results_dir: Path | None = None
) -> tuple[float, str] | None:
    """The newest stored capacity above zero at one instance and the same CPU limit: a CRUD ladder's (regime
    `ladder`, "at least" when no step failed), or a capacity search's that an older bidbench stored
    (regime `capacity`)."""
    for line in reversed(read_lines(results_dir)):
        if line.impl != impl or line.regime not in ("ladder", "capacity"):
            continue
        if line.regime == "ladder" and line.variant != "default":  # the runtime floor: no database work
            continue
        folder = RunFolder(Path(line.path))
        try:
            metrics = read_metrics(folder).to_json()
            manifest = read_manifest(folder)
        except (OSError, ValueError):
            continue
        if line.regime == "ladder":
            found = (metrics.get("ladder") or {}).get("capacity") or {}
            capacity = float(found.get("rps") or 0.0)
        else:
            capacity = float(metrics.get("capacity_rps") or 0.0)
        if capacity <= 0 or manifest.instances not in (1, None):
            continue
        if cpus is not None and manifest.cpu_limit_cores != cpus:
            continue
        return capacity, line.run_id
    return None


def fault_rate(
    impl: str, cpus: float | None, share: float, rate: float | None, results_dir: Path | None = None
) -> RateChoice:
    """--rate when given; else `share` of the newest measured capacity; else DEFAULT_RATE (and say so)."""
    found = measured_capacity(impl, cpus, results_dir)
    if rate is not None:
        capacity = found[0] if found else rate / share
        return RateChoice(
            rate, capacity, "--rate" + (f" (capacity {found[0]:g} from {found[1]})" if found else "")
        )
    if found:
        return RateChoice(
            round(share * found[0], 1), found[0], f"{share:.0%} of capacity {found[0]:g} req/s ({found[1]})"
        )
    return RateChoice(
        DEFAULT_RATE,
        DEFAULT_RATE / share,
        f"no stored capacity for {impl} at {cpus} CPU: default {DEFAULT_RATE:g} req/s, capacity assumed "
        f"{DEFAULT_RATE / share:g} (run `./bidbench ladder --impl {impl} --cpus {cpus}` first for a measured one)",
    )


@dataclass
class FaultResult:
    impl: str
    scenario: str
    folder: RunFolder | None
    status: str
    reason: str
    row: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """No crash, no 500, invariants intact, no orphans (what the tests and the exit code check)."""
        row = self.row
        return (
            self.status == "completed"
            and bool(row.get("survived"))
            and row.get("server_5xx", 1) == 0
            and bool(row.get("invariants_ok"))
            and row.get("orphans", 1) == 0
        )


def _replace_port(url: str, port: int) -> str:
    parts = urlsplit(url)
    auth = parts.netloc.rsplit("@", 1)[0] + "@" if "@" in parts.netloc else ""
    return parts._replace(netloc=f"{auth}{parts.hostname or '127.0.0.1'}:{port}").geturl()


def orphans(run_root: Path) -> list[dict[str, Any]]:
    """Processes still carrying the instance marker of this session's run directory."""
    found = []
    for proc in leftovers(run_root):
        with contextlib.suppress(psutil.Error):
            found.append({"pid": proc.pid, "cmdline": proc.cmdline()[:4]})
    return found


def _ready(url: str, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if readyprobe.probe_once(url, timeout_s=2).status == 200:
            return True
        time.sleep(0.3)
    return False


def _survivors(session: Any, hooks: FaultHooks) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for instance in session.instances:
        killed = instance.name in hooks.killed
        dead = instance.exited()
        out[instance.name] = {
            "killed_on_purpose": killed,
            "exited": [{"process": name, "code": code} for name, code in dead],
            "ready_after": False if killed or dead else _ready(instance.base_url, 20),
        }
    return out


def run_scenario(
    impl: str,
    scenario: Scenario,
    rate: RateChoice,
    cpus: float | None = DEFAULT_CPUS,
    cluster: EmbeddedCluster | None = None,
    results_dir: Path | None = None,
) -> FaultResult:
    """Run one scenario; the result folder is written whatever happens, and the faults are always undone.
    The database: `cluster` when given (the caller has pointed BIDBENCH_DATABASE_URL at it); else the
    server BIDBENCH_DATABASE_URL names (not for db-outage: bidbench does not stop servers it does not own);
    else the fault scenarios' own embedded cluster (fault_cluster), started and seeded on first use."""
    toolchain.ensure(["db", "load", impl] + (["faults"] if scenario.name == "slow-db" else []))
    override: str | None = None
    if cluster is None:
        if external_url():
            if scenario.name == "db-outage":
                raise UserError(
                    "db-outage stops and starts PostgreSQL, and BIDBENCH_DATABASE_URL points to a server "
                    "bidbench does not control; unset it to use bidbench's own cluster (slow-db works with either)"
                )
        else:
            cluster = fault_cluster()
            cluster.up()
            override = cluster.url()
    with _database(override):
        db_ready.ensure_up()
        server = current_server()
        proxy: Toxiproxy | None = None
        database_url: str | None = None
        proxy_log = paths.RUNTIME / f"toxiproxy-{time.time_ns()}.log"
        hooks = FaultHooks(scenario, cluster if scenario.name == "db-outage" else None)
        since = 0
        oid: int | None = None
        try:
            if scenario.name == "slow-db":
                proxy = Toxiproxy(proxy_log)
                proxy.start()
                port = proxy.create_proxy(PROXY_NAME, server.host_port)
                database_url = _replace_port(server.url(), port)
                hooks.proxy = proxy
            load = LoadSettings(
                targets=[],
                mix=MIX,
                rate=rate.rate,
                warmup_s=scenario.warmup_s,
                duration_s=scenario.duration_s,
                stages=scenario.stages(rate.rate, rate.capacity),
                trace=True,
            )
            plan = RunPlan(
                impl=impl,
                load=load,
                instances=scenario.instances,
                cpus=cpus,
                regime="faults",
                group=f"{impl}/default/faults/{scenario.name}",
                point={"scenario": scenario.name, "rate": rate.rate},
                expect_below_capacity=False,
                results_dir=results_dir,
                database_url=database_url,
            )
            with Session(plan, quiet=True) as session:
                if session.started_ok:
                    since = invariants.max_bid_id(server.url())
                    oid = invariants.database_oid(server.url())
                outcome = session.measure(plan, hooks)  # type: ignore[arg-type]
                survivors = _survivors(session, hooks)
        finally:
            hooks.restore()
            if proxy is not None:
                proxy.stop()
        if proxy is not None and proxy_log.exists():
            shutil.move(str(proxy_log), outcome.folder.logs / "toxiproxy.log")
        left = orphans(session.run_root) if session.run_root else []
        row, details = analyse(outcome.folder, scenario, hooks, survivors, left, server.url(), since, oid)
        row.update(impl=impl, scenario=scenario.name, rate=rate.rate, status=outcome.status)
        if scenario.overload_factor:
            row["peak_rate"] = round(scenario.overload_factor * rate.capacity)
        faults = {
            "schema": 1,
            "scenario": asdict(scenario),
            "rate": asdict(rate),
            "measure_start_unix": hooks.measure_start_unix,
            "events": [e.to_json() for e in hooks.events],
            "cleanup_errors": hooks.cleanup_errors,
            "instances": survivors,
            "orphans": left,
            "summary": row,
            **details,
        }
        outcome.folder.write_json("faults.json", faults)
        manifest = read_manifest(outcome.folder)
        manifest.sections["faults"] = {"scenario": scenario.name, "rate_source": rate.source, "summary": row}
        write_manifest(outcome.folder, manifest)
        return FaultResult(impl, scenario.name, outcome.folder, outcome.status, outcome.reason, row)


def _window_counts(requests: list[timeline.Request], t0: float, start: float, end: float) -> dict[str, Any]:
    part = timeline.between(requests, t0, start, end)
    ok = [r.duration_ms for r in part if r.klass == "ok"]
    return {
        "from_s": round(start, 3),
        "to_s": round(end, 3),
        "requests": len(part),
        **timeline.class_counts(part),
        "p99_ok_ms": timeline.percentile(ok, 99),
        "max_ms": max((r.duration_ms for r in part), default=None),
        "hangs": sum(1 for r in part if r.duration_ms > HANG_MS),
    }


def _ready_figures(hooks: FaultHooks) -> dict[str, dict[str, Any]]:
    """Per instance URL, readyprobe.outage_figures around the db-stop and db-start events."""
    stop, start = hooks.first("db-stop"), hooks.first("db-start")
    if hooks.ready_probe is None or stop is None or start is None:
        return {}
    return {
        url: readyprobe.outage_figures(
            samples, stop.unix + stop.took_s, start.unix, start.unix + start.took_s
        )
        for url, samples in hooks.ready_probe.samples.items()
    }


def analyse(
    folder: RunFolder,
    scenario: Scenario,
    hooks: FaultHooks,
    survivors: dict[str, dict[str, Any]],
    left: list[dict[str, Any]],
    db_url: str,
    since_bid_id: int,
    database_oid: int | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The headline row (report.py, the analysis) and the details for faults.json."""
    log = trace_log(folder.logs)
    requests = timeline.read_trace(log) if log.exists() else []
    t0 = hooks.measure_start_unix or (requests[0].start_ms / 1000 if requests else 0.0)
    measured = [r for r in requests if r.phase == "m"]
    timeline.write_csv(timeline.per_second(requests, t0), folder.path / "timeline.csv")
    report = invariants.check(db_url, requests, since_bid_id, database_oid)
    folder.write_json("invariants.json", asdict(report))

    metrics = read_metrics(folder).to_json() if folder.has("metrics.json") else {}
    verdict = read_verdict_json(folder)
    instances = metrics.get("instances") or []
    peak_rss = max((i.get("rss_peak_mb") or 0.0 for i in instances), default=None)

    # Recovery is measured from when the fault's last undoing action was done: the database started again,
    # the toxics cleared, the instance killed (each action belongs to one scenario's schedule).
    undoing = {"db-outage": "db-start", "slow-db": "clear", "kill-instance": "kill"}.get(scenario.name)
    undone = [e for e in hooks.events if e.action == undoing]
    recover_from = undone[-1].done_s if undone else scenario.fault_end_s
    stopped = hooks.first("db-stop")
    fault_start = stopped.t_s if stopped else scenario.fault_start_s
    killed_targets = {int(s.params["instance"]) for s in scenario.steps if s.action == "kill"}
    survivors_only = [r for r in measured if r.target not in killed_targets]
    baseline = timeline.baseline_p99(measured, t0, fault_start)
    windows = {
        "before": _window_counts(measured, t0, 0.0, fault_start),
        "fault": _window_counts(measured, t0, fault_start, max(recover_from, fault_start + 1e-3)),
        "after": _window_counts(measured, t0, recover_from, scenario.duration_s + 60),
    }
    if scenario.name == "slow-db":
        latency, latency_end, reset, reset_end = (s.at_s for s in scenario.steps)  # scenarios.slow_db
        windows["latency"] = _window_counts(measured, t0, latency, latency_end)
        windows["reset"] = _window_counts(measured, t0, reset, reset_end)
    killed_conn = sum(
        1 for r in measured if r.target in killed_targets and r.klass in ("connection", "timeout")
    )
    survived = all(
        info["killed_on_purpose"] or (not info["exited"] and info["ready_after"])
        for info in survivors.values()
    ) and bool(survivors)
    recovery_set = survivors_only if killed_targets else measured
    row: dict[str, Any] = {
        "requests": len(measured),
        **timeline.class_counts(measured),
        "fault_503": windows["fault"]["unavailable_503"],
        "fault_5xx": windows["fault"]["server_5xx"],
        "fault_hangs": windows["fault"]["hangs"],
        "fault_p99_ok_ms": windows["fault"]["p99_ok_ms"],
        "connection_to_killed": killed_conn,
        "errors_to_survivors": sum(1 for r in survivors_only if r.klass not in ("ok", "client_4xx"))
        if killed_targets
        else None,
        "baseline_p99_ms": baseline,
        "first_success_s": timeline.first_success_after(recovery_set, t0, recover_from)
        if scenario.name != "overload"
        else None,
        "p99_back_s": timeline.time_to_baseline(recovery_set, t0, recover_from, baseline),
        "peak_rss_mb": peak_rss,
        "rss_bounded": peak_rss is not None and peak_rss < RSS_BOUND_MB,
        "late_sends": metrics.get("late_sends"),
        "survived": survived,
        "orphans": len(left),
        "invariants_ok": report.ok,
        "invariants": report.describe(),
        "fault_window_s": [round(fault_start, 3), round(recover_from, 3)],
        # The run's validity as a measurement is a finding here, never a failure of the scenario: an
        # overload queues requests past the driver's connection cap, and those count as late sends.
        "run_valid": verdict.get("valid"),
        "run_invalid_reasons": verdict.get("reasons") or [],
    }
    if scenario.overload_factor:
        # What the overload offered: the requests due (by their intended send time) at the held peak.
        held_from = scenario.fault_start_s + OVERLOAD_RAMP_S
        span = scenario.fault_end_s - held_from
        due = timeline.between(measured, t0, held_from, scenario.fault_end_s)
        row["fault_due_rps"] = round(len(due) / span, 1) if span > 0 else None
    details: dict[str, Any] = {
        "windows": windows,
        "invariants": asdict(report),
        "p99_bound_ms": timeline.p99_bound(baseline) if baseline else None,
    }
    if scenario.name == "db-outage":
        ready = _ready_figures(hooks)
        details["ready"] = ready
        # The slowest instance stands for the app: a readiness probe waits on each one.
        known = [f for f in ready.values() if f["outage_p50_ms"] is not None]
        row["ready_outage_p50_ms"] = max((f["outage_p50_ms"] for f in known), default=None)
        row["ready_outage_max_ms"] = max((f["outage_max_ms"] for f in known), default=None)
        row["ready_outage_statuses"] = sorted({s for f in ready.values() for s in f["outage_statuses"]})
        recoveries = [f["recovery_s"] for f in ready.values()]
        row["ready_recovery_s"] = None if not recoveries or None in recoveries else max(recoveries)
    return row, details
