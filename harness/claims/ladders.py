"""Claims on load ladders (docs/method.md, "The ladder"): every repetition of a cell is one ladder, one fresh
start; the claim's metric is read from the ladder's metrics.json (the CPU cost per request, the bracketed
capacity, the memory, ...).

Built from harness/regimes/ladder.py's parts (calibrate, ladder_rates, ladder_plan, run_one) rather than
run_ladders, for two things run_ladders does not do: every cell gets its own group key, so an interrupted
claim resumes from results/index.jsonl like a campaign; and the key depends only on what the ladder runs
(implementation, effective knobs, JVM, CPUs, instances, indexes, mix, ladder shape), never on the claim, so
claims that need the same ladders (java, node and php at their defaults) share them. Calibration once per
cell, ladders interleaved across cells (java, node, php, java, ...), as run_ladders does.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict
from pathlib import Path
from typing import Any

from harness.apps.knobs import default_knobs
from harness.claims.model import Claim, LadderShape, Size, metric_value
from harness.console import UserError, console
from harness.engine.driver import LoadSettings
from harness.engine.session import RunPlan
from harness.engine.validity import disturbed_only
from harness.record.folders import RunFolder, utc_now
from harness.record.index_line import newest_completed
from harness.record.metrics import read_metrics_json
from harness.record.verdict import read_verdict_json
from harness.regimes import ladder

GROUP_PREFIX = "claims-ladder"
START_OVERHEAD_S = 8.0
"""Per fresh start, besides the pre-warm, warm-up and steps: database reset, instance start, stop."""
DISTURBED_REDOS = 2
"""How many more times a claim's fresh start (a ladder, or a fixed-rate run: harness/claims/runner.py) runs
when the host alone made it invalid (another tenant's work in a deciding step or in the run's window): the
same fresh start minutes later is often valid, and a claim short of valid fresh starts has no ratio. The
invalid one is kept in the verdict and marked; bounded, so a host that stays busy still lets the claim end."""

CALIBRATION_STEPS_EXPECTED = 8
"""A calibration stops after two failing steps; on this machine it reached them within 8 steps."""


def ran_again(observations: Mapping[Any, Sequence[Mapping[str, Any]]]) -> int:
    """How many of a verdict's fresh starts the host disturbed, each run again in place (kept, marked
    `run_again`)."""
    return sum(1 for records in observations.values() for r in records if r.get("run_again"))


def settings_for(shape: LadderShape) -> Any:
    return ladder.LadderSettings(
        **{k: v for k, v in asdict(shape).items() if k != "break_rps"},
        # Six steps in a 120-minute budget: one geometric grid, two overloaded steps to stop, one pass, and
        # calibrations from 400 req/s per CPU, since some variants are far slower than the defaults. The
        # pre-warm without the quota, the warm-up, the kernel's CFS period and the idle CPU as the intercept
        # are the ladders': inside the quota no JVM's JIT had settled, and java's first steps failed on its
        # compilations (docs/method.md, "Pre-warm").
        middle=None,
        stop_after=2,
        calibration_start_per_cpu=400.0,
        cost_passes=1,
    )


def cell_cpus(size: Size, cell: Any) -> float:
    return float(cell.variant.cpus or size.cpus)


def cell_instances(size: Size, cell: Any) -> int:
    return int(cell.variant.instances or size.instances)


def fingerprint(size: Size, cell: Any) -> dict[str, Any]:
    """What a ladder of this cell runs; knobs as the instance sees them (defaults filled in), so a variant
    that names a default (LOG_LEVEL=info) shares the default's ladders."""
    v = cell.variant
    return {
        "method": ladder.METHOD_VERSION,
        "impl": cell.impl,
        "knobs": {**default_knobs(cell.impl), **v.knobs},
        "jvm": v.jvm,
        "cpus": cell_cpus(size, cell),
        "instances": cell_instances(size, cell),
        "with_indexes": v.with_indexes,
        "mix": size.mix,
        "ladder": size.ladder.key(),
    }


def group_of(size: Size, cell: Any) -> str:
    digest = hashlib.sha256(json.dumps(fingerprint(size, cell), sort_keys=True).encode()).hexdigest()[:10]
    return f"{GROUP_PREFIX}/{cell.impl}/{digest}"


def calibration_group(size: Size, cell: Any) -> str:
    return ladder.calibration_group(group_of(size, cell))


def base_plan(size: Size, cell: Any, results_dir: Path | None) -> Any:
    v = cell.variant
    return RunPlan(
        impl=cell.impl,
        load=LoadSettings(targets=[], mix=size.mix, duration_s=0.0, warmup_s=size.ladder.warmup_s),
        cpus=cell_cpus(size, cell),
        instances=cell_instances(size, cell),
        knobs=dict(v.knobs),
        variant=v.name,
        group=group_of(size, cell),
        with_indexes=v.with_indexes,
        jvm=v.jvm,
        results_dir=results_dir,
    )


def fresh_start_s(shape: LadderShape, calibration: bool = False) -> float:
    steps_s = (
        CALIBRATION_STEPS_EXPECTED * shape.calibration_step_s if calibration else shape.steps * shape.step_s
    )
    return START_OVERHEAD_S + shape.prewarm_max_s + shape.warmup_s + steps_s


_REUSE_SINCE: ContextVar[str | None] = ContextVar("reuse_since", default=None)
"""Inside `replicate --again`: when that replication began. Fresh starts stored before it belong to an
earlier replication, so they are not reused and the new verdicts rest on runs of their own."""


@contextmanager
def again(since: str | None = None) -> Iterator[str]:
    """A replication on fresh starts of its own: nothing stored before now is reused. Yields its start.
    `since`, the start an interrupted replication printed, resumes it: the fresh starts it stored are reused."""
    since = since or utc_now()
    token = _REUSE_SINCE.set(since)
    try:
        yield since
    finally:
        _REUSE_SINCE.reset(token)


def reuse_since() -> str | None:
    """Inside `again`, when it began: older fresh starts are not reused. None outside it."""
    return _REUSE_SINCE.get()


def stored(group: str, repetition: int, results_dir: Path | None) -> dict[str, Any] | None:
    """The newest completed run of this group and repetition in the results index, if any (inside `again`,
    only one stored since it began)."""
    return newest_completed(group, repetition, results_dir, reuse_since())


def observe(metric: str, metrics: Mapping[str, Any] | None, cpus: float, instances: int) -> dict[str, Any]:
    """The claim's metric from one ladder: {"value": float | None, "at_least": lower bound | None}."""
    m = metrics or {}
    if metric == "capacity_rps":
        value = metric_value(m, "capacity_rps")
        bound = None if value is not None else metric_value(m, "capacity_at_least_rps")
        floor = below_first_step(m) if value is None and bound is None else None
        return {"value": value, "at_least": bound, **({"below": floor} if floor is not None else {})}
    if metric == "utilized_cpu_peak":
        # The thesis's utilized CPU: CPU used over CPU allotted, here at the busiest step of the ladder.
        steps = (m.get("ladder") or {}).get("steps") or []
        pcts = [
            float(s["instance_cpu_pct"]) for s in steps if isinstance(s.get("instance_cpu_pct"), (int, float))
        ]
        value = max(pcts) / (100.0 * cpus * instances) if pcts and cpus else None
        return {"value": value, "at_least": None}
    return {"value": metric_value(m, metric), "at_least": None}


def below_first_step(metrics: Mapping[str, Any]) -> float | None:
    """The first step's rate when a ladder's every step missed the SLO and the first was itself measured
    validly: the capacity lies below it, assuming (as the SLO capacity does) that latency does not fall as
    the load rises. None otherwise."""
    steps = sorted(((metrics.get("ladder") or {}).get("steps") or []), key=lambda s: s.get("rate", 0))
    if not steps or any(s.get("slo_met") for s in steps) or not steps[0].get("valid"):
        return None
    return float(steps[0]["rate"])


def record(
    claim: Claim,
    size: Size,
    cell: Any,
    run_id: str,
    status: str,
    valid: bool,
    metrics: Any,
    reasons: Sequence[str] = (),
) -> dict[str, Any]:
    """What an observation records of one run of a cell: its value of the claim's metric (from a ladder, or
    a fixed-rate run's metrics.json), and why it cannot be used when it cannot."""
    if claim.regime == "ladder":
        seen = observe(claim.metric, metrics, cell_cpus(size, cell), cell_instances(size, cell))
    else:
        seen = {"value": metric_value(metrics, claim.metric), "at_least": None}
    if status != "completed":
        seen.pop("below", None)
    valid = bool(valid and status == "completed")
    if not valid:  # the run's first validity reason, or its status
        seen["why"] = str(reasons[0]) if reasons else ("" if status == "completed" else f"the run {status}")
    return {"valid": valid, "run": run_id, **seen}


def folder_record(claim: Claim, size: Size, cell: Any, folder: RunFolder, status: str) -> dict[str, Any]:
    """`record` of a stored result folder."""
    verdict = read_verdict_json(folder)
    valid = bool(verdict.get("valid"))
    metrics = read_metrics_json(folder)
    return record(claim, size, cell, folder.run_id, status, valid, metrics, verdict.get("reasons") or ())


def _rates_from_calibration(
    metrics: Mapping[str, Any] | None, settings: Any, cores: float
) -> tuple[float, ...] | None:
    """The ladder's rates from a stored calibration; None when it must run again: it found no break, or it
    failed from a first step above the lowest a calibration starts from (stored before calibrations
    started lower after such a failure, harness/regimes/ladder.py `calibrate`), unless it had descended and
    met a latency floor there."""
    seen = dict(metrics or {})
    failing = ladder.first_failing_rate(seen)
    lowest = ladder.calibration_start(settings, cores, settings.calibration_descents)
    descended = failing is not None and failing < round(ladder.calibration_start(settings, cores))
    floor = descended and ladder.latency_floor(seen)
    if not failing or (ladder.calibration_censored(seen) and failing > round(lowest) and not floor):
        return None
    return ladder.ladder_rates(failing, settings)


def run(
    claim: Claim,
    size: Size,
    todo: list[Any],
    results_dir: Path | None = None,
    rates: Mapping[str, tuple[float, ...]] | None = None,
    on_run: Callable[[str], None] = lambda _: None,
) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Calibrate each cell that still has ladders to run (or reuse its stored calibration), then run the
    ladders interleaved, reusing every stored one. `rates` (per impl), or a break the claim declares
    (`LadderShape.break_rps`, one grid for every cell), skips the calibration."""
    settings = settings_for(size.ladder)
    observations: dict[tuple[str, str], list[dict[str, Any]]] = {(c.impl, c.variant.name): [] for c in todo}
    cell_rates: dict[int, tuple[float, ...] | None] = {}
    failures: dict[int, str] = {}
    for k, cell in enumerate(todo):
        if all(stored(group_of(size, cell), r, results_dir) is not None for r in range(size.repetitions)):
            continue
        if rates and cell.impl in rates:
            cell_rates[k] = tuple(rates[cell.impl])
            continue
        if size.ladder.break_rps:
            cell_rates[k] = ladder.ladder_rates(size.ladder.break_rps, settings)
            continue
        base = base_plan(size, cell, results_dir)
        entry = stored(calibration_group(size, cell), 0, results_dir)
        found = None
        if entry is not None:
            folder = RunFolder(Path(entry["path"]))
            cores = cell_cpus(size, cell) * cell_instances(size, cell)
            found = _rates_from_calibration(read_metrics_json(folder), settings, cores)
        if found is None:
            try:
                failing, outcome = ladder.calibrate(base, settings, cell_instances(size, cell), quiet=True)
                on_run(f"{cell.impl}/{cell.variant.name} calibration -> {outcome.folder.path.name}")
                found = ladder.ladder_rates(failing, settings)
            except UserError as exc:
                failures[k] = str(exc)
                console.print(f"[yellow]{claim.id} {cell.impl}/{cell.variant.name}: {exc}[/]")
        cell_rates[k] = found
    for repetition in range(size.repetitions):
        for k, cell in enumerate(todo):
            key = (cell.impl, cell.variant.name)
            entry = stored(group_of(size, cell), repetition, results_dir)
            if entry is not None:
                folder = RunFolder(Path(entry["path"]))
                observations[key].append(folder_record(claim, size, cell, folder, "completed"))
                continue
            steps = cell_rates.get(k)
            if not steps:
                observations[key].append(
                    {"valid": False, "value": None, "at_least": None, "run": None, "why": failures.get(k, "")}
                )
                continue
            base = base_plan(size, cell, results_dir)
            plan = ladder.ladder_plan(
                base, cell.impl, cell_instances(size, cell), repetition, steps, settings
            )
            name = f"{cell.impl}/{cell.variant.name} ladder {repetition + 1}/{size.repetitions}"
            for attempt in range(DISTURBED_REDOS + 1):
                outcome = ladder.run_one(
                    plan, prewarm_rate=ladder.prewarm_rate_for(steps, settings), quiet=True
                )
                valid = bool(outcome.verdict and outcome.verdict.valid)
                reasons = outcome.verdict.reasons if outcome.verdict else (outcome.reason,)
                seen = record(
                    claim, size, cell, outcome.folder.run_id, outcome.status, valid, outcome.metrics, reasons
                )
                again = attempt < DISTURBED_REDOS and disturbed_only(outcome.verdict)
                observations[key].append({**seen, "run_again": True} if again else seen)
                state = "; the host disturbed it, running it again" if again else ""
                on_run(
                    f"{name}: {outcome.status}{'' if valid else ' (invalid)'}{state} -> {outcome.folder.path.name}"
                )
                if not again:
                    break
    return observations


def count_starts(
    starts: Iterable[tuple[str, float]],
    repetitions: int,
    results_dir: Path | None,
    counted: set[tuple[str, int]],
) -> tuple[float, int, int]:
    """(seconds, fresh starts to run, fresh starts stored) of `repetitions` fresh starts of each (group key,
    seconds a fresh start takes); `counted` carries the fresh starts an earlier claim of the same replicate
    already planned, so shared ones are counted once."""
    seconds, to_run, done = 0.0, 0, 0
    for group, each in starts:
        for repetition in range(repetitions):
            if (group, repetition) in counted:
                continue
            counted.add((group, repetition))
            if stored(group, repetition, results_dir) is None:
                seconds += each
                to_run += 1
            else:
                done += 1
    return seconds, to_run, done


def starts_left(
    size: Size, todo: list[Any], results_dir: Path | None, counted: set[tuple[str, int]]
) -> tuple[float, int, int]:
    """`count_starts` of these cells' ladders, and of the calibration of each cell with ladders to run."""
    seconds, to_run, done = 0.0, 0, 0
    for cell in todo:
        starts = [(group_of(size, cell), fresh_start_s(size.ladder))]
        cell_s, cell_run, cell_done = count_starts(starts, size.repetitions, results_dir, counted)
        calibration = (calibration_group(size, cell), 0)
        if (
            cell_run
            and not size.ladder.break_rps
            and calibration not in counted
            and stored(*calibration, results_dir) is None
        ):
            counted.add(calibration)
            cell_s += fresh_start_s(size.ladder, calibration=True)
            cell_run += 1
        seconds, to_run, done = seconds + cell_s, to_run + cell_run, done + cell_done
    return seconds, to_run, done
