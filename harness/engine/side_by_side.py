"""One side-by-side fresh start (docs/method.md, "Side by side"): every group of a comparison started,
pre-warmed and measured together, in the same seconds of the host, into one result folder. A group that
cannot start, or dies, fails the fresh start for every group and is named.
"""

from __future__ import annotations

import contextlib
import json
import math
import random
import signal
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import psutil

from harness.console import UserError
from harness.db import ready
from harness.db.target import current_server
from harness.engine import prewarm as prewarming
from harness.engine.driver import DriverProcess, LoadSettings, digest_summary
from harness.engine.keep_awake import COMPONENT as KEEP_AWAKE
from harness.engine.keep_awake import KeepAwake
from harness.engine.ladder_digest import step_judgement
from harness.engine.pg_backends import BackendLedger, BackendShare, server_processes
from harness.engine.resources import HARNESS_COMPONENT, Limits, ResourceGroup, ThisProcess, new_group
from harness.engine.sampler import Sampler
from harness.engine.session import RunPlan, Session, _postgres_group, plan_manifest
from harness.engine.sizing import machine_cores, usable_cores
from harness.engine.validity import UNACCOUNTED_MAX_PCT, Slo
from harness.model import ladder_math as yields
from harness.model import side_by_side as spec_model
from harness.model.side_by_side import (
    REGIME,
    THROTTLED_MAX_SHARE,
    SideBySideSpec,
    arrival_phases,
    rate_scales,
    start_order,
)
from harness.record.folders import RunFolder, finite, new_run_folder
from harness.record.index_line import IndexLine, append_line
from harness.record.manifest import write_manifest

DRIVER_NAME = "bidbench-load"
RECORD_VERSION = 2
"""2: a cost step in which a group's quota throttled it is left out for every group, and the groups'
drivers share one clock with their requests interleaved evenly. Part of the claims' line-up keys, so a
claim never pairs fresh starts measured or judged by different rules."""
LOG_TAIL_LINES = 15
IDLE_WAIT_S = 120.0
"""How long a group may take to work off a capacity rung's backlog before the next rung: generous,
because a busy host slows that down and nothing is gained by cutting it short."""


@dataclass(frozen=True)
class Group:
    """One group of a comparison: a label ("java", "node#2") and the plan its instances start with."""

    label: str
    plan: RunPlan


class GroupFailed(RuntimeError):
    """A group could not start, or died: the whole fresh start is invalid."""

    def __init__(self, label: str, message: str) -> None:
        super().__init__(f"{label}: {message}")
        self.label = label


@dataclass
class FreshStart:
    folder: RunFolder
    status: str
    record: dict[str, Any]
    reason: str = ""
    failed_group: str | None = None


@dataclass
class _Member:
    group: Group
    session: Session
    idle_pct: float | None = None
    prewarm: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.group.label

    @property
    def components(self) -> dict[str, ResourceGroup]:
        """The sampler's name and the resource group of each of the group's instances."""
        return {f"{self.label}/{i.name}": i.group for i in self.session.instances}

    def limit_cores(self) -> float:
        return usable_cores(self.group.plan.cpus) * self.group.plan.instances


def check_fits(groups: list[Group]) -> None:
    """Refuse, before anything starts, groups whose limits and the drivers' reserve exceed the machine."""
    cpus = usable_cores(groups[0].plan.cpus)
    problem = spec_model.fits([g.plan.instances for g in groups], cpus, machine_cores())
    if problem:
        raise UserError(problem)


def _log_tail(session: Session) -> str:
    lines: list[str] = []
    if session.run_root is not None and session.run_root.exists():
        for path in sorted(session.run_root.rglob("*.log")):
            text = path.read_text(errors="replace").strip().splitlines()
            lines += [f"{path.name}: {line}" for line in text[-LOG_TAIL_LINES:]]
    return "\n".join(lines[-LOG_TAIL_LINES:]) or "(no log)"


def _start_all(groups: list[Group], order: list[int]) -> list[_Member]:
    """Start every group, fresh, in `order`; the first restores the database, the rest join it."""
    members: dict[int, _Member] = {}
    try:
        for position, index in enumerate(order):
            group = groups[index]
            session = Session(group.plan, quiet=True, restore_data=position == 0)
            members[index] = _Member(group, session)
            session.__enter__()
            if not session.started_ok:
                raise GroupFailed(
                    group.label, f"could not start: {session.start_error}\nlog tail:\n{_log_tail(session)}"
                )
    except BaseException:
        for member in members.values():
            member.session.close()
        raise
    return [members[k] for k in range(len(groups))]


def _check_alive(members: list[_Member], phase: str) -> None:
    for member in members:
        if not member.session.alive():
            raise GroupFailed(
                member.label,
                f"died during {phase}: {member.session.dead()}\nlog tail:\n{_log_tail(member.session)}",
            )


def _prewarm_together(members: list[_Member], spec: SideBySideSpec) -> None:
    """Every group's pre-warm at once, each ending by its own rule (a JVM's when its JIT is idle)."""
    errors: dict[str, BaseException] = {}

    def warm(member: _Member) -> None:
        rate = spec.prewarm_rate_per_cpu * member.limit_cores()
        try:
            record = member.session.prewarm(rate, spec.prewarm_max_s, unlimited=True)
            member.prewarm = record.as_manifest() if record is not None else {}
        except BaseException as exc:  # noqa: BLE001 - re-raised below, named by group
            errors[member.label] = exc

    threads = [
        threading.Thread(target=warm, args=(m,), name=f"prewarm-{m.label}", daemon=True) for m in members
    ]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    except KeyboardInterrupt:
        # The pre-warms' load drivers belong to their threads; stop them here, or they would outlive Ctrl-C.
        _stop_own_drivers()
        raise
    for label, exc in errors.items():
        raise GroupFailed(label, f"pre-warm failed: {type(exc).__name__}: {exc}")


def _stop_own_drivers() -> None:
    """SIGINT to every load driver this process started and that still runs (and SIGKILL after 5 s)."""
    drivers = []
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess):
            if child.name() == DRIVER_NAME:
                child.send_signal(signal.SIGINT)
                drivers.append(child)
    _, alive = psutil.wait_procs(drivers, timeout=5)
    for child in alive:
        child.kill()


IDLE_READS = 3


def _read_idle(members: list[_Member]) -> dict[str, list[float | None]]:
    """Each group's idle CPU over the same seconds, once all are idle: the cost fits' intercepts. The
    least of IDLE_READS readings: idle CPU is a floor that only transient work (a GC on going idle) lifts."""
    for member in members:
        member.session.wait_idle(IDLE_WAIT_S)
    readers = {m.label: m.session.cpu_seconds for m in members}
    readings: dict[str, list[float | None]] = {m.label: [] for m in members}
    for _ in range(IDLE_READS):
        for label, pct in prewarming.idle_cpu_pcts(readers, seconds=1.0).items():
            readings[label].append(pct)
    for member in members:
        member.idle_pct = min((v for v in readings[member.label] if v is not None), default=None)
    return readings


@dataclass
class _Drive:
    member: _Member
    driver: DriverProcess
    t_measure: float = math.nan


DRIVER_SETUP_S = 2.0
"""The drivers of one drive start their schedules this long after the harness starts them, all at once:
time for each to set up (its first request, the open items it bids on). One that is not ready by then
fails the fresh start (exit 5)."""


def _drive_together(
    members: list[_Member],
    load: LoadSettings,
    sampler: Sampler,
    folder: RunFolder,
    name: str,
    phases: dict[str, float] | None = None,
) -> list[_Drive]:
    """One load driver per group, each in its own resource group, with the same settings and seed: the
    same request sequence to every group, in the same seconds. With `phases`, the drivers share one clock
    and the groups' streams interleave as the phases say (harness/model/side_by_side.py `arrival_phases`)."""
    drives = []
    start_at = time.time() + DRIVER_SETUP_S if phases else None
    scales = rate_scales({m.label: m.group.plan.instances for m in members})
    for member in members:
        group = sampler.components[f"{member.label}/loadgen"]
        summary = folder.path / "load" / f"{name}-{member.label}.json"
        summary.parent.mkdir(parents=True, exist_ok=True)
        clock = {"start_at_unix": start_at, "phase": phases[member.label]} if phases else {}
        settings = replace(
            load, targets=member.session.targets(), **clock, **_scaled_rates(load, scales[member.label])
        )
        log = folder.logs / f"loadgen-{name}-{member.label}.log"
        drives.append(_Drive(member, DriverProcess(settings, summary, log, group)))
    for drive in drives:
        drive.driver.start()
    try:
        edges: list[float] = []
        for drive in drives:
            drive.t_measure = drive.driver.wait_until_running() - sampler.t0 + load.warmup_s
            edges += [drive.t_measure + k * load.step_s for k in range(len(load.steps) + 1)]
        sampler.sample_at(sorted(edges))
        deadline = time.monotonic() + load.warmup_s + len(load.steps) * load.step_s + 120
        while any(d.driver.poll() is None for d in drives):
            _check_alive(members, name)
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name}: the load drivers did not finish within 120 s of their schedule")
            time.sleep(0.25)
        for drive in drives:
            code = drive.driver.wait(30)
            if code != 0:
                raise GroupFailed(drive.member.label, f"{name}: {drive.driver.failure(code)}")
        # Every edge needs a reading after it before the steps are digested; on a busy host the edge
        # thread's own reading can come late, so take one now that the last edge has passed.
        time.sleep(max(0.0, sampler.t0 + max(edges) + 0.05 - time.monotonic()))
        sampler.sample_now()
    finally:
        for drive in drives:
            drive.driver.kill()
    return drives


def _scaled_rates(load: LoadSettings, scale: float) -> dict[str, Any]:
    if scale == 1:
        return {}
    return {
        "rate": load.rate * scale,
        "steps": tuple(rate * scale for rate in load.steps),
        "warmup_from_rate": None if load.warmup_from_rate is None else load.warmup_from_rate * scale,
    }


def _steps(drive: _Drive, sampler: Sampler, slo: Slo) -> list[dict[str, Any]]:
    """One record per finished step of one group's driver, with that group's CPU in exactly its seconds."""
    summary = digest_summary(json.loads(drive.driver.summary_path.read_text()))
    label = drive.member.label
    step_s = float(summary["ladder"]["step_s"])
    records = []
    for step in summary.get("steps") or []:
        start = drive.t_measure + (float(step["start_unix"]) - float(summary["measure_start_unix"]))
        end = start + step_s
        latency = step.get("latency_ms") or {}
        kept_up, slo_met = step_judgement(step, step_s, slo)
        memory = [sampler.window_memory(c, start, end) for c in drive.member.components]
        throttling = [sampler.window_throttling(c, start, end) for c in drive.member.components]
        records.append(
            {
                "index": int(step["index"]),
                "rate": float(step["rate"]),
                "step_s": step_s,
                "start_s": start,
                "requests": int(step["requests"]),
                "completed": int(step.get("finished_in_window", step["requests"])),
                "ok": int(step["ok"]),
                "sys_errors": int(step["sys_errors"]),
                "late_sends": int(step["late_sends"]),
                "p99_ms": latency.get("p99"),
                "mean_ms": latency.get("mean"),
                "kept_up": kept_up,
                "slo_met": slo_met,
                "instance_cpu_s": finite(
                    sum(sampler.cpu_seconds_between(c, start, end) for c in drive.member.components)
                ),
                "db_cpu_s": finite(sampler.cpu_seconds_between(f"postgres/{label}", start, end)),
                "loadgen_cpu_s": finite(sampler.cpu_seconds_between(f"{label}/loadgen", start, end)),
                "host_busy_pct": _host_busy(sampler, start, end),
                "keep_awake_pct": _component_pct(sampler, KEEP_AWAKE, start, end),
                "steal_pct": _share(sampler.host_steal_pct(start, end)),
                "unaccounted_pct": _share(sampler.unaccounted_pct(start, end)),
                "pss_mb": finite(sum(m["pss_steady_mb"] for m in memory)) if memory else None,
                "throttled_share": max((t["throttled_share"] for t in throttling if t), default=None),
            }
        )
    return records


def _component_pct(sampler: Sampler, name: str, start: float, end: float) -> float | None:
    """A component's CPU as a share of the whole machine; None when it is not measured."""
    if name not in sampler.components or end <= start:
        return None
    return _share(100 * sampler.cpu_seconds_between(name, start, end) / ((end - start) * machine_cores()))


def _host_busy(sampler: Sampler, start: float, end: float) -> float | None:
    """The machine's busy share, steal included, without the keep-awake spinners: they take only time
    nobody else wants, so the groups can still have it."""
    return _share(
        sampler.host_busy_pct(start, end) - (_component_pct(sampler, KEEP_AWAKE, start, end) or 0.0)
    )


def sizing_shares(sizing_steps: dict[str, list[dict[str, Any]]]) -> tuple[float, float]:
    """Of one sizing step (each group's record of it): the share of the machine, in %, busy with work that is
    not this comparison's, and this comparison's own share, as a fraction of the machine."""
    steps = [records[0] for records in sizing_steps.values()]
    others = max((step["unaccounted_pct"] or 0.0) for step in steps)
    own = max(((step["host_busy_pct"] or 0.0) - (step["unaccounted_pct"] or 0.0)) / 100 for step in steps)
    return others, max(0.0, own)


def sizing_disturbed_text(number: int, sizing_steps: dict[str, list[dict[str, Any]]]) -> str:
    """Why a sizing step runs again: the share of the machine busy with others' work, and how much of that
    was the hypervisor's steal, another tenant's too and the one the guest can name."""
    others, _ = sizing_shares(sizing_steps)
    steal = min(
        others, max((records[0].get("steal_pct") or 0.0 for records in sizing_steps.values()), default=0.0)
    )
    stolen = f" ({steal:.0f} % of the machine the hypervisor's steal)" if round(steal) >= 1 else ""
    return (
        f"sizing step {number}: {others:.0f} % of the machine was busy with work that is not this "
        f"comparison's{stolen}; running it again"
    )


SIZING_REDOS = 2
"""Sizing steps run again at most this often per fresh start when another tenant disturbed them."""


def _share(pct: float) -> float | None:
    """A share of the machine, in [0, 100]: the counters' rounding must not print an impossible figure."""
    value = finite(pct)
    return None if value is None else min(100.0, max(0.0, value))


def _cost_load(base: LoadSettings, rates: tuple[float, ...], step_s: float, warmup_s: float) -> LoadSettings:
    """Steps that never stop early (a cost step must run whatever its p99), ramping up from half the first."""
    return replace(base.as_ladder(rates, step_s, warmup_s), warmup_from_rate=rates[0] / 2)


def paired_steps(per_group: dict[str, list[dict[str, Any]]], host_max_pct: float) -> list[int]:
    """The indices of the cost steps every group kept up with, unthrottled, on a machine no busier than
    `host_max_pct`: only those are compared, so every group's figure comes from the same seconds."""
    kept_up = [
        {r["index"] for r in records if r["kept_up"] and r["instance_cpu_s"] is not None}
        for records in per_group.values()
    ]
    left_out = {*busy_steps(per_group, host_max_pct), *throttled_steps(per_group)}
    return sorted(set.intersection(*kept_up) - left_out) if kept_up else []


def busy_steps(per_group: dict[str, list[dict[str, Any]]], host_max_pct: float) -> list[int]:
    """The indices of the cost steps that found the machine busier than `host_max_pct` (left out for every
    group)."""
    return _indices_above(per_group, "host_busy_pct", host_max_pct)


def throttled_steps(per_group: dict[str, list[dict[str, Any]]]) -> list[int]:
    """The indices of the cost steps in which some group's quota throttled it (left out for every group)."""
    return _indices_above(per_group, "throttled_share", THROTTLED_MAX_SHARE)


def _indices_above(per_group: dict[str, list[dict[str, Any]]], key: str, bound: float) -> list[int]:
    """The indices of the steps in which some group's `key` is above `bound`; None is never above it."""
    return sorted({r["index"] for records in per_group.values() for r in records if (r[key] or 0.0) > bound})


def group_costs(records: list[dict[str, Any]], idle_pct: float | None, use: list[int]) -> dict[str, Any]:
    """One group's cost per request over the paired steps: the app's (through its idle CPU), its share
    of PostgreSQL's, and their sum, the whole stack's."""
    rows = [r for r in records if r["index"] in use]
    fit = (
        yields.cost_fit([{**r, "kept_up": True} for r in rows], "instance_cpu_s", idle_pct) if rows else None
    )
    completed = sum(r["completed"] for r in rows)
    db = [r["db_cpu_s"] for r in rows if r["db_cpu_s"] is not None]
    db_us = 1e6 * sum(db) / completed if rows and completed and len(db) == len(rows) else None
    app_us = fit.us_per_request if fit else None
    return {
        "steps_used": len(rows),
        "app_us": app_us if app_us and app_us > 0 else None,
        "app_fit": fit.to_json() if fit else None,
        "db_us": db_us if db_us and db_us > 0 else None,
        "stack_us": (app_us + db_us) if app_us and db_us and app_us > 0 else None,
        "pss_mb": statistics.median(pss) if (pss := [r["pss_mb"] for r in rows if r["pss_mb"]]) else None,
    }


def _capacity(
    rounds_asked: int, search_round: Callable[[int], dict[str, dict[str, Any]]], say: Callable[[str], None]
) -> dict[str, dict[str, Any]]:
    """`rounds_asked` searches per group (`search_round(k)` runs round k for every group), one round after
    another, each group's capacity their mean (harness/model/ladder_math.py `mean_capacity`); every
    round's rungs stay in the record."""
    if rounds_asked == 1:
        return search_round(0)
    rounds = []
    for round_no in range(rounds_asked):
        say(f" capacity round {round_no + 1} of {rounds_asked}")
        rounds.append(search_round(round_no))
    out: dict[str, dict[str, Any]] = {}
    for label in rounds[0]:
        found = [yields.Capacity(**r[label]["capacity"]) if r[label]["capacity"] else None for r in rounds]
        combined = yields.mean_capacity(found)
        out[label] = {
            "capacity": combined.to_json() if combined else None,
            "rounds": [r[label] for r in rounds],
        }
    return out


def _capacity_round(
    members: list[_Member],
    costs: dict[str, dict[str, Any]],
    base: LoadSettings,
    spec: SideBySideSpec,
    sampler: Sampler,
    folder: RunFolder,
    slo: Slo,
    rng: random.Random,
    say: Callable[[str], None],
    round_no: int,
) -> dict[str, dict[str, Any]]:
    """Each group alone, one rung of its own search at a time (harness/model/side_by_side.py
    BracketSearch), the groups taking turns in an order that turns from round to round, so every bracket
    is measured within seconds of the others'."""
    searches = {
        m.label: spec_model.capacity_search(m.limit_cores() * 1e6 / costs[m.label]["app_us"], spec)
        for m in members
        if costs[m.label]["app_us"]
    }
    records: dict[str, list[dict[str, Any]]] = {label: [] for label in searches}
    order = [m for m in members if m.label in searches]
    rng.shuffle(order)
    while any(not searches[m.label].done for m in order):
        for member in order:
            search = searches[member.label]
            rate = search.next_rate()
            if rate is None:
                continue
            load = _cost_load(base, (rate,), spec.capacity_step_s, spec.capacity_warmup_s)
            run = search.runs
            name = f"capacity-{run}" if round_no == 0 else f"capacity-round{round_no + 1}-{run}"
            (drive,) = _drive_together([member], load, sampler, folder, name)
            (step,) = _steps(drive, sampler, slo) or [None]
            outcome = search.record(rate, bool(step and step["slo_met"]))
            if step is not None:
                records[member.label].append({**step, "index": run, "outcome": outcome})
            say(
                f"  capacity: {member.label} at {rate:,.0f} req/s, p99 "
                f"{step['p99_ms'] if step and step['p99_ms'] is not None else '-'} ms: {outcome}"
            )
            member.session.wait_idle(IDLE_WAIT_S)
            _check_alive(members, "the capacity search")
        order = order[1:] + order[:1]  # the next turn starts one group later
    out: dict[str, dict[str, Any]] = {}
    for label, steps in records.items():
        # A failing rung whose retry passed was a stall: the bracket is made of the believed rungs.
        believed = [s for s in steps if s["outcome"] != "retry"]
        search = searches[label]
        found = yields.capacity(believed, slo.p99_ms, host_bounds=False)
        out[label] = {
            "start": search.start,
            "steps": steps,
            "stalls": search.stalls,
            "capacity": found.to_json() if found else None,
            "below_rate": search.failed if search.passed is None else None,
        }
    return out


def run_fresh_start(
    groups: list[Group],
    spec: SideBySideSpec,
    *,
    repetition: int = 0,
    results_dir: Path | None = None,
    seed: int | None = None,
    comparison: str = "",
    say: Callable[[str], None] = lambda _: None,
    top_rate: float | None = None,
) -> FreshStart:
    """Start, pre-warm and measure every group together; store one result folder whatever happens.
    `top_rate`: the cost steps' top rate, as an earlier fresh start of the comparison sized it; the
    sizing steps are then skipped. The groups start in the comparison's turn for this `repetition`."""
    check_fits(groups)
    labels = [g.label for g in groups]
    if len(set(labels)) != len(labels):
        raise UserError(f"group labels must differ: {labels}")
    rng = random.Random(seed)
    joined = "+".join(labels)
    order = start_order(len(groups), repetition, comparison or joined)
    started = [labels[k] for k in order]
    phases = arrival_phases(started)
    plan0 = groups[0].plan
    folder = new_run_folder(joined, REGIME, results_dir)
    # The manifest describes the fresh start as one run of the regime, with the first group's load.
    as_run = replace(plan0, impl=joined, variant="default", regime=REGIME, group=comparison or joined)
    manifest = plan_manifest(
        folder,
        replace(as_run, point={"groups": labels}, repetition=repetition),
        {
            "side_by_side": {
                "spec": asdict(spec),
                "groups": [
                    {
                        "label": g.label,
                        "impl": g.plan.impl,
                        "variant": g.plan.variant,
                        "knobs": g.plan.knobs,
                        "instances": g.plan.instances,
                    }
                    for g in groups
                ],
                "start_order": started,
                "arrival_phases": phases,
                "seed": seed,
            }
        },
    )
    write_manifest(folder, manifest)
    record: dict[str, Any] = {
        "version": RECORD_VERSION,
        "groups": labels,
        "start_order": started,
        "arrival_phases": phases,
        "rate_scales": rate_scales({g.label: g.plan.instances for g in groups}),
    }
    status, reason, failed = "failed", "", None
    members: list[_Member] = []
    sampler: Sampler | None = None
    ledger: BackendLedger | None = None
    keep_awake: KeepAwake | None = None
    driver_groups = []
    try:
        ready.ensure_up()
        say(f"starting {', '.join(started)} ...")
        members = _start_all(groups, order)
        record["session_roots"] = {m.label: str(m.session.run_root) for m in members}
        record["urls"] = {m.label: m.session.targets() for m in members}
        say("pre-warming together ...")
        _prewarm_together(members, spec)
        _check_alive(members, "the pre-warm")
        if spec.keep_cores_awake:
            # Before the idle read: each fit's intercept is read in the same conditions as its steps.
            keep_awake = KeepAwake.in_new_group(members[0].session.backend, folder.logs / "keep-awake.log")
            if keep_awake is not None:
                keep_awake.start()
            else:
                say(
                    "keep-awake: no resource groups here to give the spinners the lowest priority; measuring without"
                )
        record["keep_cores_awake"] = keep_awake is not None
        record["idle_readings_pct"] = _read_idle(members)
        record["idle_cpu_pct"] = {m.label: m.idle_pct for m in members}
        record["prewarm"] = {m.label: m.prewarm for m in members}
        server = current_server()
        postgres = _postgres_group(server)
        ledger = BackendLedger(
            server.host_port[1],
            lambda: {m.label: {p for i in m.session.instances for p in i.group.pids()} for m in members},
            server_processes,
        )
        ledger.start()
        components: dict[str, Any] = {}
        for member in members:
            components.update(member.components)
            driver_group = new_group(member.session.backend, f"loadgen-{member.label}", Limits())
            driver_groups.append(driver_group)
            components[f"{member.label}/loadgen"] = driver_group
            components[f"postgres/{member.label}"] = BackendShare(member.label, ledger)
        if postgres is not None:
            components["postgres"] = postgres
        if keep_awake is not None:
            components[KEEP_AWAKE] = keep_awake.group
        components[HARNESS_COMPONENT] = ThisProcess()
        sampler = Sampler(components)
        sampler.start()
        base = replace(plan0.load, scale=plan0.scale, seed=plan0.seed)
        host_max_pct = 100 * spec.host_max_share

        scaled = {label: k for label, k in record["rate_scales"].items() if k != 1}
        times = (
            f" ({', '.join(f'{label} x{k:g}' for label, k in scaled.items())}, by instances)"
            if scaled
            else ""
        )
        # Map the backends the pre-warm opened now, not up to a mapping interval into the first step.
        ledger.refresh()
        record["sizing"] = []
        top = spec.sizing_rate_per_cpu * min(m.limit_cores() for m in members)
        attempt, redone = 0, 0
        while not top_rate and attempt < spec.sizing_steps:
            say(
                f"sizing step {attempt + 1} of {spec.sizing_steps}: every group at {top:,.0f} req/s{times} ..."
            )
            sizing = _drive_together(
                members,
                _cost_load(base, (top,), spec.step_s, spec.sizing_warmup_s),
                sampler,
                folder,
                f"sizing-{len(record['sizing']) + 1}",
                phases,
            )
            sizing_steps = {d.member.label: _steps(d, sampler, plan0.slo) for d in sizing}
            record["sizing"].append(sizing_steps)
            shares = []
            for member in members:
                (step,) = sizing_steps[member.label] or [None]
                if step is None or not step["instance_cpu_s"]:
                    raise GroupFailed(member.label, "the sizing step finished no step")
                shares.append(step["instance_cpu_s"] / step["step_s"] / member.limit_cores())
            # The rates are fixed for the whole comparison: a step another tenant disturbed (its work slows
            # the groups and fills the machine) would shrink them for every fresh start, so it runs again.
            others, own_share = sizing_shares(sizing_steps)
            if others > UNACCOUNTED_MAX_PCT and redone < SIZING_REDOS:
                redone += 1
                say(sizing_disturbed_text(attempt + 1, sizing_steps))
                continue
            top = spec_model.top_cost_rate(top, shares, own_share, spec)
            attempt += 1
        if top_rate:
            top = top_rate
            say(f"cost steps at the rates of the comparison's first fresh start (top {top:,.0f} req/s)")
        record["top_rate_given"] = bool(top_rate)
        rates = spec_model.cost_step_rates(top, spec)
        say(
            f"cost steps: {len(rates)} steps of {spec.step_s:g} s at {', '.join(f'{r:,.0f}' for r in rates)} "
            f"req/s{times}, every group at once ..."
        )
        ledger.refresh()
        cost = _drive_together(
            members, _cost_load(base, rates, spec.step_s, spec.warmup_s), sampler, folder, "cost", phases
        )
        per_group = {d.member.label: _steps(d, sampler, plan0.slo) for d in cost}
        use = paired_steps(per_group, host_max_pct)
        flagged = busy_steps(per_group, host_max_pct)
        costs = {m.label: group_costs(per_group[m.label], m.idle_pct, use) for m in members}
        first = per_group[labels[0]]
        record["cost"] = {
            "rates": list(rates),
            "steps": per_group,
            "paired_steps": use,
            "flagged_host_busy": flagged,
            "flagged_throttled": throttled_steps(per_group),
            "host_max_pct": host_max_pct,
            **{key: [r[key] for r in first] for key in ("host_busy_pct", "steal_pct", "unaccounted_pct")},
            "groups": costs,
            "backends": ledger.backends(),
        }
        record["cost"]["busiest_step_pct"] = max(
            (v for v in record["cost"]["host_busy_pct"] if v is not None), default=None
        )
        if spec.capacity:
            say("capacity rungs: each group alone, turns rotating ...")
            record["capacity"] = _capacity(
                spec.capacity_rounds,
                lambda k: _capacity_round(
                    members, costs, base, spec, sampler, folder, plan0.slo, rng, say, k
                ),
                say,
            )
        status = "completed"
        if missing := [label for label in labels if costs[label]["app_us"] is None]:
            causes = []
            if flagged:
                causes.append(
                    f"{len(flagged)} of {len(rates)} cost steps found the machine busier than {host_max_pct:.0f} % "
                    "(work that is not this comparison's, or too many groups for it)"
                )
            if throttled := record["cost"]["flagged_throttled"]:
                causes.append(
                    f"in {len(throttled)} of {len(rates)} cost steps a group's CPU quota throttled it (a burst "
                    "of its own work, or rates too near its quota)"
                )
            why = "; ".join(causes) or "a group did not keep up with the cost steps"
            reason = f"no cost for {', '.join(missing)}: {len(use)} of {len(rates)} steps paired; {why}"
    except GroupFailed as exc:
        status, reason, failed = "failed", str(exc), exc.label
    except KeyboardInterrupt:
        status, reason = "interrupted", "interrupted by the user (Ctrl-C)"
        raise
    except Exception as exc:  # noqa: BLE001 - stored with its reason, then reported
        status, reason = "failed", f"{type(exc).__name__}: {exc}"
    finally:
        if keep_awake is not None:
            keep_awake.stop()
        if ledger is not None:
            ledger.stop()
        if sampler is not None:
            sampler.stop()
            sampler.write_csv(folder.path / "timeseries.csv")
        for member in members:
            member.session.copy_logs(folder, member.label)
            member.session.close()
        for group in driver_groups:
            group.close()
        if keep_awake is not None:
            keep_awake.group.close()
        record["status"], record["reason"], record["failed_group"] = status, reason, failed
        record["valid"] = status == "completed" and not reason
        folder.write_json(spec_model.RECORD, record)
        manifest.finish(status, reason)
        write_manifest(folder, manifest)
        append_line(IndexLine.of(folder, manifest, record["valid"], False), results_dir)
    return FreshStart(folder, status, record, reason, failed)
