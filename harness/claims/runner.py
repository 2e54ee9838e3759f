"""Running a claim's experiment through the campaign machinery, and judging it.

Every cell is (implementation, variant). Repetitions are interleaved A B A B ... so machine drift hits
every cell alike; every run is a fresh start (`Campaign.run_point` without a session, i.e. `execute`).
The campaign name and the group keys depend only on the claim id, the size (not its repetitions) and the
variants, so a rerun, or a rerun with more repetitions, reuses the stored completed runs
(results/index.jsonl) instead of redoing them. Ladder claims: harness/claims/ladders.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.apps import adapter as app_adapter
from harness.claims import ladders, layout
from harness.claims import side_by_side as sbs
from harness.claims.groups import campaign_for, cell_group
from harness.claims.model import Cell, Claim, Size, Variant, cells, match_size, metric_value, row_impls
from harness.claims.verdict import (
    NOT_RUNNABLE,
    NOT_TESTABLE,
    ClaimVerdict,
    Side,
    combine,
    judge_rows,
    measure,
)
from harness.console import console
from harness.engine import prewarm
from harness.engine.driver import LoadSettings
from harness.engine.session import RunPlan
from harness.engine.validity import disturbed_only
from harness.record.folders import RunFolder
from harness.record.manifest import read_manifest
from harness.regimes.campaign import Campaign

# (impl, variant name) -> per-run records: {"valid": bool, "value": float | None}
Observations = dict[tuple[str, str], list[dict[str, Any]]]

UNFAIR: dict[str, tuple[str, str]] = {
    "BIDBENCH_UNFAIR_UNSORTED": (
        "list results are not sorted: it skips the ORDER BY the contract requires",
        "The unsorted variant is unequal work: the conformance suite rejects it "
        "(`./bidbench conformance` with BIDBENCH_UNFAIR_UNSORTED=1 is the negative control); "
        "any speed it shows is bought by skipping the ORDER BY, not by a faster implementation.",
    ),
    "BIDBENCH_UNFAIR_PER_FIELD": (
        "GET /items/{id} reads each field with its own SELECT: it does more database work than the contract "
        "requires",
        "The per-field variant is unequal work: the conformance suite rejects it "
        "(`./bidbench conformance` with BIDBENCH_UNFAIR_PER_FIELD=1 is a negative control); it reproduces "
        "the source's mistake, a SELECT per field, to measure what the contract's one SELECT saves.",
    ),
}
"""The apps' deliberately unequal variants (contract/README.md): what makes each unequal, and its note."""


def size_for(claim: Claim, quick: bool, repetitions: int | None) -> Size:
    size = claim.size(quick)
    return replace(size, repetitions=repetitions) if repetitions else size


def unfair_knobs(variant: Variant) -> list[str]:
    return [knob for knob in UNFAIR if variant.knobs.get(knob) == "1"]


def is_unfair(variant: Variant) -> bool:
    return variant.unfair or bool(unfair_knobs(variant))


def warn_unfair(cells: list[Cell]) -> None:
    for cell in cells:
        if is_unfair(cell.variant):
            what = "; ".join(UNFAIR[k][0] for k in unfair_knobs(cell.variant)) or "the claim marks it unequal"
            console.print(
                f"[bold red]!! UNEQUAL VARIANT {cell.variant.name} on {cell.impl}: {what}. "
                "It fails the conformance suite. Its numbers are NOT a fair comparison.[/]"
            )


def _plan(claim: Claim, size: Size, cell: Cell, group: str, repetition: int) -> Any:
    v = cell.variant
    return RunPlan(
        impl=cell.impl,
        load=LoadSettings(
            targets=[],
            mix=size.mix,
            model="open",
            rate=size.rate,
            duration_s=size.duration_s,
            warmup_s=size.warmup_s,
        ),
        cpus=v.cpus or size.cpus,
        knobs=dict(v.knobs),
        variant=v.name,
        regime=claim.regime,
        group=group,
        point={"rate": size.rate, "claim": claim.id},
        repetition=repetition,
        with_indexes=v.with_indexes,
        jvm=v.jvm,
    )


def run_experiment(claim: Claim, size: Size, results_dir: Path | None = None) -> Observations:
    """Run (or reuse) every repetition of every cell, interleaved. Returns the per-run observations."""
    todo = cells(claim, size)
    warn_unfair(todo)
    if claim.design == "side-by-side":
        console.print(
            f"claim {claim.id}: {len(sbs.lineups(claim, size))} line-up(s) of {len(todo)} cells side by side x "
            f"{size.repetitions} fresh starts (preset {size.preset})"
        )
        return sbs.run(claim, size, results_dir, on_run=lambda line: console.print(f"  {line}"))
    if claim.regime == "ladder":
        console.print(f"claim {claim.id}: {len(todo)} cells x {size.repetitions} ladders")
        return ladders.run(claim, size, todo, results_dir, on_run=lambda line: console.print(f"  {line}"))
    campaign = Campaign(campaign_for(claim, size), results_dir=results_dir, reuse_since=ladders.reuse_since())
    console.print(f"claim {claim.id}: campaign {campaign.name}, {len(todo)} cells x {size.repetitions} runs")
    observations: Observations = {(c.impl, c.variant.name): [] for c in todo}
    campaign.planned_runs = len(todo) * size.repetitions
    for repetition in range(size.repetitions):
        for cell in todo:
            group = cell_group(claim, size, cell)
            plan = replace(_plan(claim, size, cell, group, repetition), results_dir=results_dir)
            label = f"{claim.id} {cell.impl}/{cell.variant.name} rep {repetition + 1}/{size.repetitions}"
            for attempt in range(ladders.DISTURBED_REDOS + 1):
                # A run again must not reuse the disturbed run it replaces, stored under the same key.
                result = campaign.run_point(plan, label, reuse=attempt == 0)
                seen = {
                    "valid": result.status == "completed" and result.valid,
                    "value": metric_value(result.metrics, claim.metric),
                    "run": result.folder.run_id,
                }
                again = (
                    attempt < ladders.DISTURBED_REDOS and not result.reused and disturbed_only(result.verdict)
                )
                observations[(cell.impl, cell.variant.name)].append(
                    {**seen, "run_again": True} if again else seen
                )
                if not again:
                    break
                campaign.planned_runs += 1
                console.print(f"  {label}: another tenant disturbed it, running it again")
    return observations


def side(observations: Observations, impl: str, variant: str) -> Side:
    records = observations.get((impl, variant), [])
    kept = [r for r in records if r["valid"] and r["value"] is not None]
    values = [float(r["value"]) for r in kept]
    bounds = [
        float(r["at_least"])
        for r in records
        if r["valid"] and r["value"] is None and r.get("at_least") is not None
    ]
    below = [float(r["below"]) for r in records if r["value"] is None and r.get("below") is not None]
    blocks = [r["block"] for r in kept if r.get("block") is not None]
    return Side(
        f"{impl}/{variant}",
        values,
        invalid=len(records) - len(values) - len(bounds) - len(below),
        unbracketed=bounds,
        blocks=blocks if len(blocks) == len(values) else [],
        invalid_why=[
            str(r["why"]) for r in records if not r["valid"] and r.get("why") and r.get("below") is None
        ],
        below=below,
    )


def judge_claim(claim: Claim, size: Size, observations: Observations) -> ClaimVerdict:
    """Every comparison of the claim, per implementation when the variants are not impl-pinned; the verdict
    keeps the observations it judged."""
    results = []
    for comparison in claim.expect:
        va, vb = claim.variant(comparison.baseline), claim.variant(comparison.variant)
        for impl_a, impl_b in row_impls(claim, size, comparison):
            a = side(observations, impl_a, va.name)
            b = side(observations, impl_b, vb.name)
            label = impl_a if impl_a == impl_b else f"{impl_a} vs {impl_b}"
            results.append(measure(comparison, label, a, b))
    verdict = combine(claim.id, judge_rows(results))
    verdict.notes.extend(notes_for(claim))
    verdict.observations = observations
    return verdict


def notes_for(claim: Claim) -> list[str]:
    notes = [claim.notes] if claim.notes else []
    if claim.changed_after_data:
        notes.append(f"changed after seeing data: {claim.changed_after_data}")
    # the variants that run: one no row compares (it moved to another claim) adds no note
    used = {knob for cell in cells(claim, claim.full) for knob in unfair_knobs(cell.variant)}
    notes.extend(note for knob, (_, note) in UNFAIR.items() if knob in used)
    return notes


def not_runnable(claim: Claim) -> ClaimVerdict:
    return ClaimVerdict(claim.id, NOT_RUNNABLE if claim.testable else NOT_TESTABLE, reason=claim.why_not())


def replicate(
    claim: Claim,
    quick: bool,
    repetitions: int | None = None,
    runner: Callable[[Claim, Size], Observations] = run_experiment,
) -> ClaimVerdict:
    """Run (or reuse) a claim's experiment and judge it; a needs-variant or not-testable claim is reported,
    never run. The layout and what the variants name are checked first (harness/claims/layout.py)."""
    if not claim.runnable:
        return not_runnable(claim)
    size = size_for(claim, quick, repetitions)
    if runner is run_experiment:
        layout.preflight(claim, size)
    return judge_claim(claim, size, runner(claim, size))


def estimate(
    claim: Claim, size: Size, results_dir: Path | None = None, counted: set[tuple[str, int]] | None = None
) -> tuple[float, int, int]:
    """(seconds, fresh starts to run, fresh starts already stored) before the claim starts, from the ladder
    shape, the side-by-side preset, or (fixed rate) a start, a pre-warm (a JVM's to its cap), the warm-up and the
    window per run."""
    counted = set() if counted is None else counted
    todo = cells(claim, size)
    if claim.design == "side-by-side":
        return sbs.starts_left(claim, size, results_dir, counted)
    if claim.regime == "ladder":
        return ladders.starts_left(size, todo, results_dir, counted)
    starts = [
        (
            cell_group(claim, size, cell),
            ladders.START_OVERHEAD_S
            + prewarm.expected_s(app_adapter(cell.impl).runs_on_jvm)
            + size.warmup_s
            + size.duration_s,
        )
        for cell in todo
    ]
    return ladders.count_starts(starts, size.repetitions, results_dir, counted)


def from_folders(claim: Claim, folders: list[Path]) -> tuple[Size, bool, Observations]:
    """Observations from stored result folders alone: each folder is matched to a cell by the group key in
    its manifest (the quick or the full size, whichever the folders belong to). Calibrations are skipped.
    Raises ValueError naming the folders that belong to no cell of this claim."""
    runs = []
    for path in folders:
        folder = RunFolder(path)
        if not folder.has("manifest.json"):
            raise ValueError(f"{path}: not a result folder (no manifest.json)")
        manifest = read_manifest(folder)
        regime = manifest.regime
        if regime is not None and regime.name.endswith("calibration"):
            continue
        group = (regime.group if regime else None) or ""
        runs.append((folder, manifest, group, (regime.repetition if regime else None) or 0))
    if claim.design == "side-by-side":
        missing = [f.run_id for f, *_ in runs if not f.has(sbs.RECORD)]
        if missing:
            raise ValueError(f"{claim.id} runs side by side; no {sbs.RECORD} in {', '.join(missing)}")
        return sbs.from_records(claim, [(f.run_id, g, r, f.read_json(sbs.RECORD)) for f, _, g, r in runs])
    size, quick, by_group = match_size(
        claim,
        [(f.run_id, g, r) for f, _, g, r in runs],
        lambda size: {cell_group(claim, size, c): c for c in cells(claim, size)},
        "cell",
    )
    observations: Observations = {(c.impl, c.variant.name): [] for c in cells(claim, size)}
    for folder, manifest, group, _ in sorted(runs, key=lambda item: item[3]):
        cell = by_group[group]
        observations[(cell.impl, cell.variant.name)].append(
            ladders.folder_record(claim, size, cell, folder, manifest.status or "")
        )
    return size, quick, observations
