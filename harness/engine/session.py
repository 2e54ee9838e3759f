"""One measured run (docs/design.md §4, §5, §7, §9), start to finish: whatever goes wrong (Ctrl-C, a
crashed app, the driver failing, a database that will not start), every process is stopped and the partial
run is stored, marked with its reason.
"""

from __future__ import annotations

import contextlib
import math
import secrets
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import psycopg
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

from harness import paths
from harness.apps import adapter as app_adapter
from harness.apps import driver as app_driver
from harness.apps import knobs as knob_defaults
from harness.apps.base import InstanceSpec
from harness.apps.jvm import jit_compile_seconds, read_heap_after_full_gc
from harness.console import IN_CI, UserError, console
from harness.db import pgstats, ready
from harness.db.cluster import EmbeddedCluster, free_port
from harness.db.target import DatabaseServer, current_server, mask_password
from harness.engine import ladder_digest as ladderdigest
from harness.engine import prewarm as prewarming
from harness.engine.driver import SUMMARY_COUNTS, DriverProcess, LoadSettings, digest_summary
from harness.engine.instances import RunningInstance, start, stop
from harness.engine.placement import Placement, pin_tree, plan_here
from harness.engine.remote import build_sources, remote_sections
from harness.engine.resources import (
    HARNESS_COMPONENT,
    Limits,
    ProcessTreeGroup,
    ThisProcess,
    describe_backend,
    detect_backend,
    new_group,
)
from harness.engine.sampler import Sampler
from harness.engine.sizing import machine_cores, nominal_cores, usable_cores
from harness.engine.validity import RunFigures, Slo, Verdict, verdict
from harness.record.folders import RunFolder, new_run_folder
from harness.record.index_line import IndexLine, append_line
from harness.record.manifest import Manifest, RegimeRef, write_manifest
from harness.record.metrics import Metrics, write_metrics
from harness.record.upgrade import GROUP as LOADGEN_GROUP
from harness.record.upgrade import LOG as LOADGEN_LOG
from harness.record.upgrade import SUMMARY as LOAD_SUMMARY
from harness.record.verdict import write_verdict
from harness.tools import toolchain


@dataclass(frozen=True)
class RunPlan:
    impl: str
    load: LoadSettings = field(default_factory=lambda: LoadSettings(targets=[]))
    instances: int = 1
    cpus: float | None = knob_defaults.DEFAULT_CPU_LIMIT
    knobs: dict[str, str] = field(default_factory=dict)
    variant: str = "default"
    regime: str = "fixed-rate"
    group: str = ""
    point: dict[str, Any] = field(default_factory=dict)
    repetition: int = 0
    scale: int = 1
    seed: int = 42
    slo: Slo = field(default_factory=Slo)
    expect_below_capacity: bool = True
    with_indexes: bool = True
    results_dir: Path | None = None
    jvm: str | None = None
    target_urls: tuple[str, ...] = ()
    """Measure an already running deployment instead of starting instances (docs/design.md §11)."""
    resource_source: str = "none"
    resource_options: dict[str, str] = field(default_factory=dict)
    database_url: str | None = None
    """Where the instances connect instead of the server's working database (e.g. a fault-injection proxy)."""
    prewarm: bool = True
    """Open model, fresh start: ramped load until the instances' CPU settles before the run (harness/engine/prewarm.py)."""
    prewarm_max_s: float = prewarming.MAX_S
    prewarm_unlimited: bool = False
    """Lift the instances' CPU quota during the pre-warm (cgroups only), so a JIT compiles at full speed
    instead of inside the quota; the quota is back before the warm-up and every measured second."""
    cfs_period_us: int | None = None
    """The CFS period of the instances' quota; None: the default (harness/engine/resources.py)."""
    idle_intercept: bool = False
    """A ladder's cost fits go through the idle CPU read after the pre-warm, instead of fitting an intercept."""

    def group_key(self) -> str:
        point = ",".join(f"{k}={v}" for k, v in sorted(self.point.items())) or "-"
        return self.group or f"{self.impl}/{self.variant}/{self.regime}/{point}"


class WindowHooks:
    """Optional callbacks into one measurement window (fault injection, harness/faults/). No-ops here."""

    def started(self, session: Session, measure_start_unix: float) -> None:
        """The driver is running; its measurement window starts at this wall-clock time (time.time())."""

    def tolerated(self, instance: RunningInstance) -> bool:
        """Whether this instance may be dead without failing the window (it was killed on purpose)."""
        return False

    def finished(self) -> None:
        """The window is over (or failed): undo whatever started() set going."""


@dataclass
class RunOutcome:
    folder: RunFolder
    status: str
    metrics: dict[str, Any] | None
    verdict: Verdict | None
    reason: str = ""


def plan_manifest(folder: RunFolder, plan: RunPlan, sections: dict[str, Any], **fields: Any) -> Manifest:
    """A new manifest of the run `plan` describes, whose result folder is `folder`."""
    return Manifest.new(
        folder.run_id,
        plan.impl,
        plan.variant,
        RegimeRef(plan.regime, plan.group_key(), plan.point, plan.repetition),
        load=asdict(plan.load),
        instances=plan.instances,
        cpu_limit_cores=plan.cpus,
        slo=asdict(plan.slo),
        sections=sections,
        **fields,
    )


def _postgres_group(server: DatabaseServer | None) -> ProcessTreeGroup | None:
    """PostgreSQL's processes, sampled as a process tree (its backends are forked by the postmaster)."""
    pid = EmbeddedCluster().server_pid() if server is not None and server.embedded else None
    if pid is None:
        return None
    group = ProcessTreeGroup("postgres", Limits())
    group.adopt(pid)
    return group


def _instance_knobs(plan: RunPlan) -> dict[str, str]:
    values = knob_defaults.default_knobs(plan.impl)
    values.update(app_adapter(plan.impl).knobs_implied_by(plan.knobs))
    values.update(plan.knobs)
    if plan.jvm:
        values["JAVA_HOME"] = plan.jvm
    return values


def _spare_cores(plan: RunPlan) -> float:
    """The cores the instances leave the load driver and PostgreSQL, each (the machine sizing rule)."""
    cores = machine_cores()
    return max(cores - plan.instances * usable_cores(plan.cpus, cores), 0.0)


def check_fits(plan: RunPlan) -> None:
    """Refuse plans that cannot give valid runs on this machine (docs/design.md §6: the scaling sizing rule)."""
    if plan.cpus is None or plan.target_urls:
        return
    cores = machine_cores()
    rest = cores - plan.instances * plan.cpus
    if rest < 0.5:
        raise UserError(
            f"{plan.instances} instance(s) x {plan.cpus:g} CPU leave {rest:g} of this machine's {cores} cores for the load driver "
            "and PostgreSQL; at least 0.5 core must be left or the runs cannot be valid. Lower --instances or --cpus "
            f"(here: instances x cpus <= {cores - 0.5:g})."
        )


class Progressor:
    """The live display: phase, time left, live request rate and instance CPU. Without a terminal (CI, a log
    file) each phase is printed once, when it begins, without live figures: they say nothing yet."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.plain = IN_CI or not console.is_terminal
        self.printed_phase = ""
        self.progress = Progress(
            TextColumn("[bold]{task.fields[label]}"),
            TextColumn("{task.description}"),
            BarColumn(bar_width=24),
            TimeRemainingColumn(),
            TextColumn("{task.fields[live]}"),
            console=console,
            disable=self.plain,
        )
        self.task = self.progress.add_task("starting", total=1.0, label=label, live="")

    def __enter__(self) -> Progressor:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(None, None, None)

    def phase(
        self, text: str, completed: float | None = None, total: float | None = None, live: str = ""
    ) -> None:
        self.progress.update(self.task, description=text, completed=completed, total=total, live=live)
        if self.plain and text != self.printed_phase:
            self.printed_phase = text
            console.print(f"  {self.label} {text}")


class Session:
    """One fresh start of an instance set (docs/design.md §8's unit of repetition), measured in one or more
    windows, each with its own result folder; a fault scenario's window has hooks that inject the fault."""

    def __init__(self, plan: RunPlan, quiet: bool = False, restore_data: bool = True) -> None:
        check_fits(plan)
        self.plan = plan
        self.quiet = quiet
        self.restore_data = restore_data
        """Re-clone the working database at start. Side by side, the first group's start restores it and
        the others must not, or the clone would drop the connections the first group already holds."""
        self.instances: list[RunningInstance] = []
        self.server: DatabaseServer | None = None
        self.backend = "none"
        self.common: dict[str, Any] = {}
        self.windows = 0
        self.resources: dict[str, Any] = {}
        self.placement: Placement | None = None
        self.run_root: Path | None = None
        self.started_ok = False
        self.start_error = ""

    def __enter__(self) -> Session:
        try:
            self._start()
            self.started_ok = True
        except KeyboardInterrupt:
            self.close()
            raise
        except Exception as exc:  # noqa: BLE001 - recorded in the first window's folder
            self.start_error = f"{type(exc).__name__}: {exc}"
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def remote(self) -> bool:
        return bool(self.plan.target_urls)

    def targets(self) -> list[str]:
        return list(self.plan.target_urls) or [i.base_url for i in self.instances]

    def _start_remote(self) -> None:
        toolchain.ensure(["load"])
        plan = self.plan
        self.resources = build_sources(plan.resource_source, list(plan.target_urls), plan.resource_options)
        what = (
            "CPU and memory are UNKNOWN, so nothing is normalized per CPU"
            if plan.resource_source == "none"
            else f"CPU and memory come from {plan.resource_source}"
        )
        note = f"a deployment bidbench did not start: latency, throughput and errors come from the load driver; {what}"
        self.common.update(remote_sections(list(plan.target_urls), plan.resource_source, note))
        self.common["runtimes"] = {"load_driver": f"bidbench-load {toolchain.driver_version()}"}

    def _start(self) -> None:
        plan = self.plan
        if self.remote:
            self._start_remote()
            return
        toolchain.ensure(["db", "load", plan.impl])
        ready.ensure_up()
        self.server = server = current_server()
        info = ready.ensure_template(
            server, plan.scale, plan.seed, plan.with_indexes, restore=self.restore_data
        )
        self.common["data"] = {
            "scale": plan.scale,
            "seed": plan.seed,
            "indexes": plan.with_indexes,
            "checksum": info.get("checksum"),
            "database": mask_password(server.url()),
        }
        driver = app_driver(plan.impl)
        driver.ensure_built()
        self.backend = detect_backend()
        description = describe_backend(self.backend)
        self.common["resource_backend"] = {"name": self.backend, "description": description}
        if self.backend == "none" and not self.quiet:
            console.print(f"[yellow]note:[/] {description}")
        knob_values = _instance_knobs(plan)
        self.placement = plan_here()
        self.common["placement"] = asdict(self.placement)
        postmaster = EmbeddedCluster().server_pid() if server.embedded else None
        if self.placement.system_cpus and postmaster:
            pin_tree(postmaster, self.placement.system_cpus)
        self.run_root = paths.RUNTIME / f"session-{new_session_id()}"
        limits = Limits(cpus=plan.cpus, cpuset=self.placement.system_cpus, cfs_period_us=plan.cfs_period_us)
        for index in range(plan.instances):
            spec = InstanceSpec(
                impl=plan.impl,
                index=index,
                port=free_port(),
                database_url=plan.database_url or server.url(),
                run_dir=self.run_root / f"instance-{index}",
                knobs=knob_values,
            )
            self.instances.append(start(driver, spec, self.backend, limits))
        self.resources = {i.name: i.group for i in self.instances}
        self.common["knobs"] = driver.effective_knobs(self.instances[0].spec)
        self.common["runtimes"] = {**driver.runtime_versions(), **_service_versions(server)}
        self.common["instances_detail"] = [
            {"name": i.name, "url": i.base_url, "startup": i.startup_line(), "group": i.group.describe()}
            for i in self.instances
        ]

    def prewarm(
        self, rate: float, max_s: float = prewarming.MAX_S, unlimited: bool = False
    ) -> prewarming.PrewarmRecord | None:
        """Unmeasured, ramped load until the instances' CPU settles (harness/engine/prewarm.py); the same rule for
        every implementation. With `unlimited`, the instances run it without their CPU quota. What it did
        goes into every later run's manifest."""
        if not self.started_ok or self.remote or not self.instances or rate <= 0:
            return None
        started: list[DriverProcess] = []

        def start_load(start_rate: float, stages: str, seconds: float, scratch: Path) -> DriverProcess:
            load = replace(
                self.plan.load,
                targets=self.targets(),
                rate=start_rate,
                stages=stages,
                model="open",
                warmup_s=0,
                duration_s=seconds,
                steps=(),  # the driver refuses BB_STEPS with BB_STAGES (exit 2)
            )
            driver = DriverProcess(
                load,
                scratch / "summary.json",
                scratch / LOADGEN_LOG,
                ProcessTreeGroup(LOADGEN_GROUP, Limits()),
            )
            driver.start()
            started.append(driver)
            return driver

        limit_pct = 100.0 * self.plan.cpus * len(self.instances) if self.plan.cpus else None
        with (
            tempfile.TemporaryDirectory(prefix="bidbench-prewarm-") as scratch,
            self._quota_lifted(unlimited) as lifted,
        ):
            record = prewarming.prewarm_until_steady(
                start_load,
                self.cpu_seconds,
                rate,
                Path(scratch),
                # Without a quota, CPU flat at a limit cannot be mistaken for a steady state.
                None if lifted else limit_pct,
                max_s,
                compile_seconds=self._jit_compile_seconds
                if app_adapter(self.plan.impl).runs_on_jvm
                else None,
            )
            if record.driver_exit and started:
                raise RuntimeError(f"pre-warm: {started[0].failure(record.driver_exit)}")
        record.limit_lifted = lifted
        record.idle_wait_s = self.wait_idle()
        readers = {"instances": self.cpu_seconds}
        if (postgres := _postgres_group(self.server)) is not None:
            readers["postgres"] = postgres.cpu_seconds
        idle = prewarming.idle_cpu_pcts(readers)
        record.idle_cpu_pct, record.db_idle_cpu_pct = idle["instances"], idle.get("postgres")
        self.common["prewarm"] = record.as_manifest()
        return record

    @contextlib.contextmanager
    def _quota_lifted(self, unlimited: bool) -> Iterator[bool]:
        """Lifts the instances' quota for the block (when asked and the backend can) and always puts it
        back, even when a later group refused or the block failed. Yields whether every group was lifted."""
        try:
            yield unlimited and all([i.group.lift_cpu_limit(True) for i in self.instances])
        finally:
            if unlimited:
                for instance in self.instances:
                    instance.group.lift_cpu_limit(False)

    def _jit_compile_seconds(self) -> float | None:
        readings = [jit_compile_seconds(i.processes[0].pid) for i in self.instances]
        return None if any(r is None for r in readings) else sum(r for r in readings if r is not None)

    def wait_idle(self, max_s: float = prewarming.IDLE_MAX_S) -> float:
        """After an overloaded window the instances still work off its backlog (the driver has gone, the
        requests it queued have not): wait until they are idle, so the next window starts clean. Returns the wait."""
        if not self.started_ok or self.remote or not self.instances:
            return 0.0
        limit_pct = 100.0 * nominal_cores(self.plan.cpus) * len(self.instances)
        return prewarming.wait_until_idle(self.cpu_seconds, limit_pct, max_s)

    def copy_logs(self, folder: RunFolder, group: str = "") -> None:
        """Each instance's logs into the folder; side by side under the `group`'s own subfolder, since two
        groups of one app name their instances alike."""
        for instance in self.instances:
            target = folder.logs / group / instance.name
            target.mkdir(parents=True, exist_ok=True)
            for path in instance.spec.run_dir.rglob("*.log"):
                shutil.copy2(path, target / path.name)

    def cpu_seconds(self) -> float:
        return sum(i.group.cpu_seconds() for i in self.instances)

    def dead(self) -> list[tuple[str, int]]:
        return [d for i in self.instances for d in i.exited()]

    def alive(self) -> bool:
        return self.started_ok and not self.dead()

    def close(self) -> list[int]:
        killed = [pid for instance in self.instances for pid in stop(instance)]
        self.instances = []
        # each window copied the logs into its result folder: what is left are the stopped instances'
        # configuration, sockets and pid files, which would pile up in .bidbench/run with every fresh start
        if self.run_root is not None:
            shutil.rmtree(self.run_root, ignore_errors=True)
        return killed

    def measure(
        self, plan: RunPlan, hooks: WindowHooks | None = None, prewarm_rate: float | None = None
    ) -> RunOutcome:
        """One measurement window (warm-up + measure) with the given load; writes one result folder.
        With `prewarm_rate`, the instances are pre-warmed first (harness/engine/prewarm.py) and the warm-up ramps
        on from that rate; the folder exists from the start, so an interrupted pre-warm is stored too."""
        folder = new_run_folder(plan.impl, plan.regime, plan.results_dir)
        session = {"root": str(self.run_root or ""), "window": self.windows, "fresh_start": self.windows == 0}
        manifest = plan_manifest(folder, plan, {"session": session, **self.common})
        self.windows += 1
        write_manifest(folder, manifest)
        status, reason = "failed", ""
        metrics: dict[str, Any] | None = None
        run_verdict: Verdict | None = None
        try:
            if not self.started_ok:
                raise RuntimeError(self.start_error or "the instances did not start")
            if not self.alive():
                raise RuntimeError(f"an instance had died before this window: {self.dead()}")
            if prewarm_rate:
                record = self.prewarm(prewarm_rate, plan.prewarm_max_s, plan.prewarm_unlimited)
                if record is not None:
                    if plan.load.model == "open":
                        # A pre-warm without the quota may run at more than the instances carry with it.
                        start = min(record.rate, plan.load.rate) if record.limit_lifted else record.rate
                        plan = replace(plan, load=replace(plan.load, warmup_from_rate=start))
                    manifest.sections["prewarm"] = record.as_manifest()
                    manifest.load = asdict(plan.load)
                if not self.alive():
                    raise RuntimeError(f"an instance died during the pre-warm: {self.dead()}")
            metrics, run_verdict = self._window(plan, folder, hooks or WindowHooks())
            status = "completed"
        except KeyboardInterrupt:
            status, reason = "interrupted", "interrupted by the user (Ctrl-C)"
            raise
        except Exception as exc:  # noqa: BLE001 - any failure is stored with its reason, then reported
            status, reason = "failed", f"{type(exc).__name__}: {exc}"
        finally:
            self.copy_logs(folder)
            manifest.finish(status, reason)
            write_manifest(folder, manifest)
            valid = bool(run_verdict and run_verdict.valid)
            slo_met = bool(run_verdict and run_verdict.slo.get("met"))
            append_line(IndexLine.of(folder, manifest, valid, slo_met), plan.results_dir)
        return RunOutcome(folder, status, metrics, run_verdict, reason)

    def _window(self, plan: RunPlan, folder: RunFolder, hooks: WindowHooks) -> tuple[dict[str, Any], Verdict]:
        server = self.server
        load = replace(plan.load, targets=self.targets(), scale=plan.scale, seed=plan.seed)
        driver_cpuset = self.placement.driver_cpus if self.placement is not None else None
        driver_group = new_group(
            detect_backend() if self.remote else self.backend, LOADGEN_GROUP, Limits(cpuset=driver_cpuset)
        )
        driver = DriverProcess(load, folder.path / LOAD_SUMMARY, folder.logs / LOADGEN_LOG, driver_group)
        components: dict[str, Any] = {**self.resources, LOADGEN_GROUP: driver_group}
        if (pg_group := _postgres_group(server)) is not None:
            components["postgres"] = pg_group
        if not self.remote:
            components[HARNESS_COMPONENT] = ThisProcess()
        sampler = Sampler(components, cpuset=driver_cpuset)
        try:
            sampler.start()
            driver.start()
            t_start = driver.wait_until_running() - sampler.t0
            t_measure = t_start + load.warmup_s
            t_end = t_measure + load.duration_s
            if load.steps:
                sampler.sample_at([t_measure + k * load.step_s for k in range(len(load.steps) + 1)])
            hooks.started(self, time.time() + (sampler.t0 + t_measure - time.monotonic()))
            pg_before: list[dict[str, Any]] | None = None
            with Progressor(f"{plan.impl} x{plan.instances}") as progress:
                # No rate before a second poll: the first count spans an unknown time.
                last_count: int | None = None
                last_t = time.monotonic()
                while driver.poll() is None:
                    now = time.monotonic() - sampler.t0
                    if pg_before is None and now >= t_measure and server is not None:
                        pg_before = pgstats.snapshot(server)
                    count = driver.requests_so_far()
                    rate = ""
                    if count is not None:
                        elapsed = time.monotonic() - last_t
                        if last_count is not None and elapsed > 0:
                            rate = f"{(count - last_count) / elapsed:.0f} req/s"
                        last_count, last_t = count, time.monotonic()
                    cpu = sum(filter(None, (sampler.latest_cpu_pct(name) for name in self.resources)))
                    phase = "warm-up" if now < t_measure else "measure"
                    progress.phase(
                        phase,
                        completed=min(now - t_start, t_end - t_start),
                        total=t_end - t_start,
                        live=f"{rate}  CPU {cpu:.0f} %" + _last_step_text(driver.steps),
                    )
                    dead = [d for i in self.instances if not hooks.tolerated(i) for d in i.exited()]
                    if dead:
                        raise RuntimeError(f"an instance process died during the run: {dead}")
                    if now > t_end + 120:
                        raise RuntimeError(
                            "the load driver did not finish within 120 s after the measurement window"
                        )
                    # Wake exactly at the window's start, so the pg_stat_statements snapshot is on time.
                    until_window = t_measure - (time.monotonic() - sampler.t0)
                    time.sleep(min(1.0, until_window) if pg_before is None and until_window > 0 else 1.0)
            pg_after = pgstats.snapshot(server) if server is not None else []
            code = driver.wait(30)
            sampler.stop()
            if code != 0:
                raise RuntimeError(driver.failure(code) + f"; see logs/{LOADGEN_LOG}")
            if not folder.has(LOAD_SUMMARY):
                raise RuntimeError(f"the load driver wrote no summary; see logs/{LOADGEN_LOG}")
            if server is not None:
                folder.write_json("pg_stat_statements.json", pgstats.delta(pg_before or [], pg_after))
            prewarmed = (self.common.get("prewarm") or {}) if plan.idle_intercept else {}
            idle = (prewarmed.get("idle_cpu_pct"), prewarmed.get("db_idle_cpu_pct"))
            figures, run_verdict = digest(plan, folder, sampler, list(self.resources), t_measure, t_end, idle)
            metrics = Metrics.of(figures)
            # Remote first: a run against an outside target (the noise floor's nginx) has no app adapter.
            if plan.load.steps and not self.remote and app_adapter(plan.impl).runs_on_jvm:
                # After the window, so the full GC's CPU is not charged to any step.
                metrics.sections["jvm_heap_after_gc"] = [
                    read_heap_after_full_gc(
                        i.processes[0].pid, java_home=i.spec.knobs.get("JAVA_HOME")
                    ).to_manifest()
                    for i in self.instances
                ]
            write_metrics(folder, metrics)
            write_verdict(folder, run_verdict)
            return metrics.to_json(), run_verdict
        finally:
            hooks.finished()
            driver.kill()
            driver_group.close()
            sampler.stop()
            sampler.write_csv(folder.path / "timeseries.csv")


def _ladder_digest(
    plan: RunPlan,
    summary: dict[str, Any],
    metrics: dict[str, Any],
    sampler: Sampler,
    instance_names: list[str],
    t_measure: float,
    idle_cpu_pct: tuple[float | None, float | None],
) -> tuple[dict[str, Any], Verdict]:
    """A ladder's steps, its yield and its verdict (harness/engine/ladder_digest.py) on top of the whole-run figures."""
    records = ladderdigest.step_records(
        summary, sampler, instance_names, t_measure, plan.slo, _spare_cores(plan)
    )
    outcome = ladderdigest.ladder_yield(records, plan.slo, idle_cpu_pct)
    stopped = str(summary["ladder"].get("stopped"))
    cost, db_cost, cap = outcome["cpu_cost"], outcome["db_cost"], outcome["capacity"]
    memory = metrics["memory_per_instance_mb"]
    best = cap["rps"] if cap else outcome["saturation_rps"]
    ran = [r for r in records if r.get("kept_up")] or records
    end = t_measure + (ran[-1]["index"] + 1) * records[0]["step_s"] if ran else t_measure
    metrics.update(
        # Per process at the last step that kept up: a node cluster's primary and each worker apart.
        memory_by_process={
            name: sampler.window_memory_by_process(name, t_measure, end) for name in instance_names
        },
        ladder={**summary["ladder"], "steps": records, **outcome},
        cpu_us_per_request=cost["us_per_request"] if cost else None,
        db_us_per_request=db_cost["us_per_request"] if db_cost else None,
        capacity_rps=cap["rps"] if cap and cap["bracketed"] else None,
        capacity_at_least_rps=cap["rps"] if cap and not cap["bracketed"] else None,
        saturation_rps=outcome["saturation_rps"],
        # The thesis's normalized throughput (req/s per CPU %), from the cost: 1 % of a CPU for a second
        # is 10,000 us, so it serves 10,000 / cost requests.
        normalized_throughput=1e4 / cost["us_per_request"] if cost and cost["us_per_request"] > 0 else None,
        rps_per_mb=best / memory if best and memory else None,
    )
    return metrics, ladderdigest.ladder_verdict(records, outcome, plan.slo, stopped)


def _last_step_text(steps: list[dict[str, Any]]) -> str:
    """A ladder's newest step verdict, for the progress line."""
    if not steps:
        return ""
    last = steps[-1]
    verdict = "overloaded" if last.get("overloaded") else "ok"
    return f"  step {int(last['step']) + 1}: {float(last['rate']):,.0f} req/s, p99 {last.get('p99_ms')} ms, {verdict}"


def new_session_id() -> str:
    return secrets.token_hex(4)


def execute(plan: RunPlan, quiet: bool = False) -> RunOutcome:
    """A plain run: one fresh start, one measurement window, everything stopped afterwards."""
    with Session(plan, quiet) as session:
        rate = prewarming.prewarm_rate(plan.load.model, plan.load.rate, plan.cpus, plan.instances)
        return session.measure(plan, prewarm_rate=rate if plan.prewarm else None)


def _service_versions(server: DatabaseServer) -> dict[str, str]:
    versions = {"load_driver": f"bidbench-load {toolchain.driver_version()}"}
    try:
        with psycopg.connect(server.url(), connect_timeout=5) as conn:
            row = conn.execute("SHOW server_version").fetchone()
            versions["postgresql"] = str(row[0]) if row else "?"
    except psycopg.Error:
        versions["postgresql"] = "unknown"
    return versions


def digest(
    plan: RunPlan,
    folder: RunFolder,
    sampler: Sampler,
    instance_names: list[str],
    t_measure: float,
    t_end: float,
    idle_cpu_pct: tuple[float | None, float | None] = (None, None),
) -> tuple[dict[str, Any], Verdict]:
    """`idle_cpu_pct`: the instances' and PostgreSQL's CPU with no load, read after the pre-warm (a ladder's
    cost intercepts)."""
    summary = digest_summary(folder.read_json(LOAD_SUMMARY))
    latency = summary["latency_ms"] or {}
    window = plan.load.duration_s
    per_instance = []
    for name in instance_names:
        cpu = sampler.window_cpu_pct(name, t_measure, t_end)
        per_instance.append({"name": name, "cpu_pct": cpu, **sampler.window_memory(name, t_measure, t_end)})
    resources_known = bool(per_instance)
    cpu_total = sum(i["cpu_pct"] for i in per_instance) if resources_known else float("nan")
    throughput = summary["ok"] / window if window else 0.0
    memory = [
        i["pss_steady_mb"] if not math.isnan(i["pss_steady_mb"]) else i["rss_steady_mb"] for i in per_instance
    ]
    spare = _spare_cores(plan)
    loadgen_cpu = sampler.window_cpu_pct(LOADGEN_GROUP, t_measure, t_end)
    db_cpu = sampler.window_cpu_pct("postgres", t_measure, t_end)  # NaN with an external database
    metrics: dict[str, Any] = {
        "window_s": window,
        **{k: summary[k] for k in SUMMARY_COUNTS},
        "throughput_rps": throughput,
        "offered_rps": plan.load.rate if plan.load.model == "open" else None,
        "latency_ms": summary["latency_ms"],
        "latency_sent_ms": summary["latency_sent_ms"],
        "over_1s_pct": 100 * summary["over_1s"] / summary["requests"] if summary["requests"] else None,
        "statuses": summary["statuses"],
        "per_type": summary["per_type"],
        "server_timing_ms": summary.get("server_timing_ms", {}),
        "instances": per_instance,
        "resources_known": resources_known,
        "cpu_pct_total": cpu_total,
        "cpu_limit_cores": plan.cpus,
        "utilized_cpu": cpu_total / (plan.instances * plan.cpus * 100)
        if plan.cpus and resources_known
        else None,
        "normalized_throughput": throughput / cpu_total if resources_known and cpu_total > 0 else None,
        "memory_per_instance_mb": sum(memory) / len(memory) if memory else None,
        "loadgen_cpu_pct": loadgen_cpu,
        "db_cpu_pct": db_cpu,
        "host_busy_pct": sampler.host_busy_pct(t_measure, t_end),
        "unaccounted_pct": sampler.unaccounted_pct(t_measure, t_end)
        if ladderdigest.fully_accounted(sampler, instance_names)
        else math.nan,
        "steal_pct": sampler.host_steal_pct(t_measure, t_end),
    }
    if summary.get("steps") is not None:
        return _ladder_digest(plan, summary, metrics, sampler, instance_names, t_measure, idle_cpu_pct)
    per_second = [
        sum(values)
        for values in zip(
            *(sampler.per_second_cpu(name, t_measure, t_end) for name in instance_names), strict=False
        )
    ]
    figures = RunFigures(
        model=plan.load.model,
        window_s=window,
        **{key: summary[key] for key in ("requests", "ok", "sys_errors", "late_sends")},
        # No completed request means no latency: count it as infinitely slow, never as fast.
        mean_latency_ms=latency.get("mean") if latency.get("mean") is not None else math.inf,
        p99_latency_ms=latency.get("p99") if latency.get("p99") is not None else math.inf,
        offered_rps=(summary.get("offered_rps") or plan.load.rate) if plan.load.model == "open" else None,
        users=plan.load.users if plan.load.model == "closed" else None,
        think_ms=plan.load.think_ms,
        loadgen_cpu_pct=loadgen_cpu,
        loadgen_allotment_cores=max(spare, 0.5),
        db_cpu_pct=db_cpu if not math.isnan(db_cpu) else 0.0,
        db_allotment_cores=max(spare, 0.5),
        host_busy_pct=metrics["host_busy_pct"],
        instance_cpu_per_second=per_second,
        expect_below_capacity=plan.expect_below_capacity,
        unaccounted_pct=metrics["unaccounted_pct"],
        steal_pct=metrics["steal_pct"],
        max_inflight=summary.get("max_inflight"),
        max_conns=summary.get("max_conns"),
        instances_throttled=_throttled(sampler, instance_names, t_measure, t_end),
    )
    return metrics, verdict(figures, plan.slo)


def _throttled(sampler: Sampler, instance_names: list[str], start: float, end: float) -> bool | None:
    """Whether any instance's CPU quota throttled it over [start, end]; None where any cannot tell."""
    readings = [sampler.window_throttling(name, start, end) for name in instance_names]
    if not readings or any(r is None for r in readings):
        return None
    return any(r["throttled_periods"] > 0 for r in readings)
