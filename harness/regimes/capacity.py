"""Capacity under an SLO (docs/design.md §6, thesis 7.2) and scaling over instances (thesis 7.3, Tables 7.1/7.2).

Capacity is the highest arrival rate whose run is valid and meets the SLO. The search doubles until
the SLO breaks, bisects the bracket, then re-tries the capacity edge and keeps the majority verdict (an
edge that loses it becomes the failing rate, and the bisection goes on below it), and re-probes the failing edge once (a rate that failed while a runtime was still warming may hold later). Implementations are interleaved fairly (A B C A B C), so slow drift of a noisy machine hits
all of them alike. Each search is one repetition; a search's result is stored as its own folder
(regime `capacity`) holding the probe it stands on, plus `capacity_rps` and the probe history.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Generator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.engine.session import RunPlan
from harness.record.folders import RunFolder, new_run_folder
from harness.record.index_line import IndexLine, append_line, read_lines
from harness.record.manifest import COMPLETED, Manifest, RegimeRef, read_manifest, write_manifest
from harness.record.metrics import Metrics, read_metrics, write_metrics
from harness.record.verdict import Verdict, write_verdict
from harness.regimes.campaign import Campaign, LazySession, PointResult

NO_CAPACITY = "no rate met the SLO"
"""The verdict of a search that found no capacity (it has no run to stand on)."""

# A probe that fails only because the load generator or host ran out of CPU says nothing about the app.
MEASUREMENT_LIMITS = {"loadgen_cpu", "database_host"}


@dataclass(frozen=True)
class SearchSettings:
    start_rate: float = 100.0
    min_rate: float = 10.0
    max_rate: float = 20_000.0
    tolerance: float = 0.10
    boundary_trials: int = 3
    granularity: float = 10.0
    growth: float = 2.0
    """The expanding factor of a search with no hint (doubling). A smaller factor overshoots the edge less:
    a probe at twice an app's capacity leaves a backlog that the next probes can still feel."""
    hint_growth: float = 1.15
    start_below_hint: bool = True
    """A search with a hint probes one hint_growth step below it first: its session's first window comes
    right after a fresh start, and at the hint itself (a rate the previous search held twice) that window
    often failed while the same rate held later in the same session; an overloaded window also slows the
    next ones (the lab log (docs/lab/), capacity search, "Start one step below a hint")."""
    recheck_failing_edge: bool = True
    """Re-probe the failing edge late, after the edge trials; if it holds, bisect up to the next rate that
    failed above it (re-checked in its turn) or, if none did, search on upward. Each rate at most once."""
    min_window_requests: int = 1000
    """A probe's window lasts at least this many requests: p99 over 300 requests is the 3rd-worst request,
    so at low rates one pause decides it. Equal sample counts give every implementation an equally precise p99."""
    max_probes: int | None = None
    """A search with no hint stops after this many probes (None: when it converges). Near the edge a noisy
    machine makes a search walk (up to 20 probes here), so a time-boxed run needs a bound."""
    max_hinted_probes: int | None = None
    """The same bound for a search that starts from an earlier search's answer, whose edge is near."""
    floor_probes: int = 3
    """Probes a search may take past its budget while none of its rates has held: a budget is for refining
    an edge, and a search with nothing held has no answer yet: one overloaded early in its budget would
    answer 0 (the lab log (docs/lab/), capacity search, "A floor of probes")."""

    def budget(self, hint: float | None) -> int | None:
        return self.max_hinted_probes if hint else self.max_probes

    def window_s(self, rate: float, duration_s: float) -> float:
        return window_for(rate, duration_s, self.min_window_requests)


@dataclass
class SearchState:
    probes: list[dict[str, Any]] = field(default_factory=list)
    capacity: float | None = None
    bound_by_measurement: bool = False
    budget_spent: bool = False
    """The search ran out of probes before it converged: its capacity is the highest rate held so far."""
    best: PointResult | None = None
    """The last passing probe at the capacity: the run the capacity's figures (CPU, memory, latency) come from."""


PROBES_PER_SEARCH_GUESS = 10  # before any search has ended; a demo here averaged 8-10


def window_for(rate: float, duration_s: float, min_requests: int) -> float:
    """The measurement window: duration_s, stretched (to whole seconds) to hold min_requests at this rate."""
    if min_requests <= 0 or rate <= 0:
        return duration_s
    return max(duration_s, float(math.ceil(min_requests / rate)))


def round_rate(rate: float, granularity: float) -> float:
    return max(granularity, round(rate / granularity) * granularity)


def search(
    settings: SearchSettings, state: SearchState, hint: float | None = None
) -> Generator[float, PointResult, None]:
    """Yields rates to probe; receives each probe's result. Leaves the answer in `state`. A search whose
    probe budget runs out answers with the highest rate a majority of its probes held, below every rate
    that failed more often than it held; while no rate has held, it goes on for `floor_probes` more."""
    results: dict[float, list[bool]] = {}
    passing: dict[float, PointResult] = {}
    budget = settings.budget(hint)
    steps = _search(settings, state, hint, results, passing)
    try:
        rate = next(steps)
        while (
            budget is None
            or len(state.probes) < budget
            or (not _held_below_failures(results) and len(state.probes) < budget + settings.floor_probes)
        ):
            rate = steps.send((yield rate))
    except StopIteration:
        return
    steps.close()
    held = _held_below_failures(results)
    state.budget_spent = True
    state.capacity = max(held, default=0.0)
    state.best = passing.get(state.capacity)


def _search(
    settings: SearchSettings,
    state: SearchState,
    hint: float | None,
    results: dict[float, list[bool]],
    passing: dict[float, PointResult],
) -> Generator[float, PointResult, None]:
    def passed(result: PointResult) -> bool:
        return result.status == "completed" and result.valid and result.slo_met

    good: float | None = None
    bad: float | None = None
    if hint and settings.start_below_hint:
        rate = round_rate(hint / settings.hint_growth, settings.granularity)
    else:
        rate = round_rate(hint or settings.start_rate, settings.granularity)
    # With a hint from an earlier search the boundary is near: step in small factors instead of `growth`.
    growth = settings.hint_growth if hint else settings.growth

    def record(rate_: float, result: PointResult) -> bool:
        ok = passed(result)
        results.setdefault(rate_, []).append(ok)
        state.probes.append(
            {
                "rate": rate_,
                "ok": ok,
                "run_id": result.folder.run_id,
                "failed_checks": sorted(result.failure_kinds()),
            }
        )
        if ok:
            passing[rate_] = result
        if (
            not ok
            and result.failure_kinds() & MEASUREMENT_LIMITS
            and not result.failure_kinds() - MEASUREMENT_LIMITS
        ):
            state.bound_by_measurement = True
        return ok

    recheck_failing_edge = settings.recheck_failing_edge
    rechecked: set[float] = set()
    while True:
        # Expand: double up (or halve down) until the SLO boundary is bracketed.
        while good is None or bad is None:
            ok = record(rate, (yield rate))
            if ok:
                good = rate
                if bad is not None or rate * growth > settings.max_rate or state.bound_by_measurement:
                    break
                rate = round_rate(rate * growth, settings.granularity)
            else:
                bad = rate
                if good is not None:
                    break
                # Nothing has held yet. After a hint has failed twice it was a poor guess (two instances on
                # a machine too small to carry twice one instance's load), so the search steps down in
                # `growth`, not in the hint's small steps: from twice one instance's capacity, five steps of
                # 1.15 here all failed before one held. One failure is often noise: the hint's step first.
                step = growth if len(results) < 2 else settings.growth
                if rate / step < settings.min_rate:
                    break
                rate = round_rate(rate / step, settings.granularity)
        if good is None:
            state.capacity = 0.0
            return
        if bad is None:
            state.capacity, state.best = good, passing.get(good)
            return
        while True:
            # Bisect the bracket.
            while bad / good > 1 + settings.tolerance:
                mid = round_rate((good + bad) / 2, settings.granularity)
                if mid in (good, bad):
                    break
                if record(mid, (yield mid)):
                    good = mid
                else:
                    bad = mid
            # More trials at the capacity edge: the majority over `boundary_trials` decides whether it holds.
            while len(results[good]) < settings.boundary_trials and _undecided(
                results[good], settings.boundary_trials
            ):
                record(good, (yield good))
            if _majority(results[good]):
                break
            # The edge passed by luck: it is the new failing rate, and the bracket below it is bisected on
            # (falling back to the last doubling step would throw away half the range).
            bad = good
            lower = [r for r, oks in results.items() if r < bad and _majority(oks)]
            if not lower:
                break
            good = max(lower)
        if not _majority(results[good]):
            # Nothing below the lost edge has been probed (a search that started there): step down from it.
            good, rate = None, round_rate(bad / growth, settings.granularity)
            if rate >= bad or rate < settings.min_rate:
                state.capacity = 0.0
                return
            continue
        # The failing edge once more, late in the session: a probe that failed early may have met a runtime
        # still compiling (a JVM under a CPU limit warms for minutes) or a backlog. If it holds now, the
        # search goes on above it.
        if (
            recheck_failing_edge
            and bad not in rechecked
            and _majority(results[good])
            and not state.bound_by_measurement
        ):
            rechecked.add(bad)
            if record(bad, (yield bad)):
                # The early failure is taken for stale: the rate's history restarts from this pass.
                results[bad] = [True]
                # A rate that failed above the held one bounds the search: it is bisected on, not jumped
                # past (jumping past it overloaded every probe after, each leaving a backlog for the
                # next). That rate is re-checked in its turn, since it may be as stale (a cold JVM's
                # failure would bound a warm one); each rate at most once.
                # the lab log (docs/lab/), capacity search, "Re-checking the failing edge".
                good = bad
                failed_above = [r for r, oks in results.items() if r > good and not _majority(oks)]
                bad = min(failed_above, default=None)
                if bad is None:
                    # The next failure will be a fresh one.
                    recheck_failing_edge = False
                    # Nothing failed above. Without a hint this may be a runtime that has finished warming,
                    # so the capacity can lie far above: grow as at the start. A search that started from
                    # an earlier search's answer is near the boundary already; there a held re-check is
                    # most likely noise at the edge, so it steps in hint_growth.
                    growth = settings.hint_growth if hint else settings.growth
                    rate = round_rate(good * growth, settings.granularity)
                continue
        break
    state.capacity = good
    state.best = passing.get(good)


def _held_below_failures(results: dict[float, list[bool]]) -> list[float]:
    """The rates a search cut short can answer with: below every rate that failed more often than it held;
    those held by a majority, or failing any, those held as often as they failed (the search ran out while
    re-trying its edge)."""
    bound = min(
        (rate for rate, oks in results.items() if oks.count(False) > oks.count(True)), default=math.inf
    )
    below = {rate: oks for rate, oks in results.items() if rate < bound}
    return [rate for rate, oks in below.items() if _majority(oks)] or [
        rate for rate, oks in below.items() if oks.count(True) >= oks.count(False)
    ]


def _undecided(oks: list[bool], trials: int) -> bool:
    need = trials // 2 + 1
    return oks.count(True) < need and oks.count(False) < need


def _majority(oks: list[bool]) -> bool:
    return oks.count(True) > oks.count(False)


@dataclass(frozen=True)
class CapacityPlan:
    impls: list[str]
    base: RunPlan
    repetitions: int
    settings: SearchSettings
    regime: str = "capacity"
    point: dict[str, Any] = field(default_factory=dict)


AfterSearches = Callable[[str, LazySession, list[dict[str, Any]]], None]


def run_capacity(
    campaign: Campaign,
    plan: CapacityPlan,
    hints: dict[str, float] | None = None,
    after_searches: AfterSearches | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """R searches per implementation, interleaved A B C A B C. Returns the capacity records per impl.

    `hints` are where the first search of an implementation starts (e.g. a capacity already measured for
    a neighbouring point); later searches start from the mean of the answers found so far (a search that
    found no rate leaves the start as it was). `after_searches(impl,
    session, records)` runs when an implementation's last search has ended, in that search's session
    (the demo's fixed-rate check)."""
    records: dict[str, list[dict[str, Any]]] = {impl: [] for impl in plan.impls}
    start: dict[str, float | None] = {impl: (hints or {}).get(impl) for impl in plan.impls}
    found: dict[str, list[float]] = {impl: [] for impl in plan.impls}
    searches = len(plan.impls) * plan.repetitions
    stage_base = campaign.planned_runs
    probes_per_search: list[int] = []
    campaign.planned_runs += searches * min(
        PROBES_PER_SEARCH_GUESS, plan.settings.max_probes or PROBES_PER_SEARCH_GUESS
    )
    campaign.planned_starts += searches
    for repetition in range(plan.repetitions):
        for impl in plan.impls:
            state = SearchState()
            generator = search(plan.settings, state, start[impl])
            session_plan = replace(plan.base, impl=impl)
            with LazySession(session_plan) as session:
                probe = 0
                try:
                    rate = next(generator)
                    while True:
                        probe += 1
                        probe_plan = rate_plan(
                            plan.base,
                            impl,
                            rate,
                            plan.settings.window_s(rate, plan.base.load.duration_s),
                            regime=f"{plan.regime}-probe",
                            group=campaign.key(
                                plan.regime,
                                impl,
                                point_text(plan.point),
                                f"rep{repetition}",
                                f"probe{probe}",
                                f"rate={rate:g}",
                            ),
                            point={**plan.point, "rate": rate},
                            repetition=repetition,
                            expect_below_capacity=False,
                        )
                        label = f"{impl} {point_text(plan.point)} search {repetition + 1}/{plan.repetitions} probe {rate:g} req/s"
                        rate = generator.send(campaign.run_point(probe_plan, label, session))
                except StopIteration:
                    pass
                if state.capacity:
                    found[impl].append(state.capacity)
                    # The mean of the answers so far, not the last one: one search thrown low by an
                    # overloaded window (node: 1850, then 710) would otherwise pull every later one down.
                    start[impl] = statistics.fmean(found[impl])
                records[impl].append(_store_capacity(campaign, plan, impl, repetition, state))
                probes_per_search.append(len(state.probes))
                campaign.planned_runs = stage_base + expected_probes(probes_per_search, searches)
                if after_searches is not None and repetition == plan.repetitions - 1:
                    done_before = campaign.done_runs
                    after_searches(impl, session, records[impl])
                    stage_base += campaign.done_runs - done_before
                    campaign.planned_runs = stage_base + expected_probes(probes_per_search, searches)
    return records


def expected_probes(probes_per_search: list[int], searches: int) -> int:
    """Probes of a capacity stage for the time-left estimate: those done, plus the mean so far for each
    search still to come (a first search, with no hint, takes the most: 13-17 in a demo here)."""
    done = sum(probes_per_search)
    mean = statistics.fmean(probes_per_search) if probes_per_search else PROBES_PER_SEARCH_GUESS
    return done + round(mean * (searches - len(probes_per_search)))


def rate_plan(
    base: RunPlan, impl: str, rate: float, duration_s: float, warmup_s: float | None = None, **changes: Any
) -> RunPlan:
    """`base` for one implementation at a fixed open-model rate, with a window of `duration_s` (and a warm-up
    of `warmup_s`, when given)."""
    load = replace(base.load, rate=rate, model="open", duration_s=duration_s)
    if warmup_s is not None:
        load = replace(load, warmup_s=warmup_s)
    return replace(base, impl=impl, load=load, **changes)


def point_text(point: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(point.items())) or "default"


def _store_capacity(
    campaign: Campaign, plan: CapacityPlan, impl: str, repetition: int, state: SearchState
) -> dict[str, Any]:
    """A capacity result is stored as its own folder: the probe it stands on, plus the search history."""
    group = campaign.key(plan.regime, impl, point_text(plan.point))
    stored = campaign.completed(group, repetition)
    if stored is not None:  # resumed campaign: this search was already summarized
        done = RunFolder(Path(stored["path"]))
        metrics = read_metrics(done).to_json()
        return {
            "impl": impl,
            "repetition": repetition,
            "capacity_rps": metrics.get("capacity_rps"),
            "run_id": done.run_id,
            "metrics": metrics,
            "bound_by_measurement": metrics.get("capacity_bound_by_measurement", False),
        }
    folder = new_run_folder(impl, plan.regime, campaign.results_dir)
    best = state.best
    record = Metrics.of(best.metrics or {}) if best and state.capacity else Metrics(window=None)
    record.sections.update(
        capacity_rps=state.capacity or 0.0,
        capacity_bound_by_measurement=state.bound_by_measurement,
        capacity_budget_spent=state.budget_spent,
    )
    metrics = record.to_json()
    verdict = (
        Verdict.from_json(best.verdict or {})
        if best and state.capacity
        else Verdict(valid=False, reasons=[NO_CAPACITY])
    )
    if state.bound_by_measurement:
        verdict.notes.append(
            "the search stopped because the load generator or host ran out of CPU: the capacity is a lower bound"
        )
    if state.budget_spent:
        verdict.notes.append(
            f"the search used its {len(state.probes)} probes before it converged: the capacity is the highest "
            "rate its probes held"
        )
    source = read_manifest(best.folder) if best else None
    manifest = Manifest.new(
        folder.run_id,
        impl,
        plan.base.variant,
        RegimeRef(plan.regime, group, plan.point, repetition),
        status="completed",
        load=source.load if source else None,
        instances=source.instances if source else None,
        cpu_limit_cores=source.cpu_limit_cores if source else None,
        slo=source.slo if source else None,
        sections={
            **{
                k: source.sections[k]
                for k in ("knobs", "runtimes", "data", "resource_backend")
                if source and k in source.sections
            },
            "capacity_probe_run": best.folder.run_id if best else None,
            "probes": state.probes,
            "search": vars(plan.settings),
        },
    )
    write_manifest(folder, manifest)
    write_metrics(folder, record)
    write_verdict(folder, verdict)
    append_line(IndexLine.of(folder, manifest, verdict.valid, bool(state.capacity)), campaign.results_dir)
    return {
        "impl": impl,
        "repetition": repetition,
        "capacity_rps": state.capacity,
        "run_id": folder.run_id,
        "metrics": metrics,
        "bound_by_measurement": state.bound_by_measurement,
    }


def refile_capacity(
    campaign: Campaign, plan: CapacityPlan, impl: str, repetition: int, record: dict[str, Any]
) -> dict[str, Any]:
    """The same search filed under another regime point (e.g. scaling at 1 instance, when the capacity
    comparison already searched one instance with the same CPU limit): a new folder whose metrics, verdict
    and probe history are the stored search's, naming it in `refiled_from`. Nothing is measured again."""
    group = campaign.key(plan.regime, impl, point_text(plan.point))
    stored = campaign.completed(group, repetition)
    if stored is not None:
        done = RunFolder(Path(stored["path"]))
        return {**record, "run_id": done.run_id, "metrics": read_metrics(done).to_json()}
    source = RunFolder(
        Path(next(line.path for line in read_lines(campaign.results_dir) if line.run_id == record["run_id"]))
    )
    folder = new_run_folder(impl, plan.regime, campaign.results_dir)
    manifest = read_manifest(source)
    manifest.run_id = folder.run_id
    manifest.impl, manifest.variant, manifest.status = impl, plan.base.variant, COMPLETED
    manifest.regime = RegimeRef(plan.regime, group, plan.point, repetition)
    manifest.sections["refiled_from"] = record["run_id"]
    write_manifest(folder, manifest)
    folder.write_json("metrics.json", source.read_json("metrics.json"))
    verdict = source.read_json("verdict.json")
    folder.write_json("verdict.json", verdict)
    append_line(
        IndexLine.of(folder, manifest, bool(verdict.get("valid")), bool(record.get("capacity_rps"))),
        campaign.results_dir,
    )
    return {**record, "run_id": folder.run_id}
