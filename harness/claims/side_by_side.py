"""Claims whose variants run side by side (`design: side-by-side`; docs/method.md, "Side by side").

A claim's variants become the groups of one side-by-side fresh start (harness/regimes/side_by_side.py):
started together, pre-warmed together, measured in the same seconds of the host. Each fresh start is a
block: every row's ratio is paired by it (harness/claims/verdict.py pairs values that carry the same
`block`), so the host's drift, which moves every group alike, cancels in the ratio instead of widening it.

Which cells share a fresh start (a "line-up"): when every variant names its app (java against node), all
of them; when none does (log levels, JVM builds, pools), the variants of one app, one line-up per app.
Rows only ever compare cells of one line-up, so every row is paired.

The line-up's key depends only on what its groups run and on the side-by-side settings, never on the
claim, so claims that need the same groups (java and node at their defaults) share their fresh starts,
as ladder claims share their ladders; an interrupted claim resumes from results/index.jsonl.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from harness.apps import adapter as app_adapter
from harness.claims import ladders
from harness.claims.model import Claim, Size, cells, match_size
from harness.engine import prewarm
from harness.engine.side_by_side import RECORD_VERSION, Group
from harness.model.side_by_side import RECORD, UNKEYED_AT, fits, preset, typical_rungs
from harness.model.side_by_side_math import figures
from harness.record.folders import RunFolder
from harness.regimes import side_by_side as regime

GROUP_PREFIX = "claims-side-by-side"

METRIC_FIGURES: dict[str, str] = {
    "cpu_us_per_request": "app_us",
    "db_us_per_request": "db_us",
    "memory_per_instance_mb": "pss_mb",
    "capacity_rps": "capacity_rps",
    "latency_ms.mean": "mean_ms",
}
"""The claim metrics a side-by-side fresh start measures, and its figure that is each (harness/model/
side_by_side_math.py `figures`): the app's CPU per request through its idle CPU, its share of PostgreSQL's,
its memory, its capacity, and its mean latency over the cost steps, every group at the same rate in the same
seconds, below saturation. A saturation throughput, a utilization or a tail latency has no side-by-side
figure: the groups share the host, and only quantities read below saturation stay each group's own.
claims/claim.schema.json refuses any other metric with this design (tests/claims/test_claims_side_by_side.py
keeps the two lists equal)."""

START_S = 8.0
"""Per group and fresh start, besides the pre-warm and the steps: its start, the database reset, its stop."""
RUNG_START_S = 1.5
"""Per capacity rung, besides its warm-up and step: the load driver's start and the backlog's wait."""


@dataclass(frozen=True)
class Lineup:
    """The cells that run together in every fresh start of a side-by-side claim."""

    impl: str
    """The one app of a per-app line-up; "" when the variants name their apps."""
    cells: tuple[Any, ...]

    @property
    def labels(self) -> list[str]:
        return [cell.variant.name for cell in self.cells]


def lineups(claim: Claim, size: Size) -> list[Lineup]:
    todo = cells(claim, size)
    if all(v.impl is not None for v in claim.variants):
        return [Lineup("", tuple(todo))]
    return [
        Lineup(impl, tuple(c for c in todo if c.impl == impl)) for impl in dict.fromkeys(c.impl for c in todo)
    ]


def fit_problems(claim: Claim, size: Size, which: str, cores: int) -> list[str]:
    """Every line-up's groups and the drivers' reserve must fit this machine (the engine's own rule)."""
    problems = []
    for lineup in lineups(claim, size):
        problem = fits(
            [ladders.cell_instances(size, cell) for cell in lineup.cells],
            ladders.cell_cpus(size, lineup.cells[0]),
            cores,
        )
        if problem:
            problems.append(
                f"experiment/{which}/cpus: {claim.id} runs {', '.join(lineup.labels)} side by side"
                f"{f' ({lineup.impl})' if lineup.impl else ''}: {problem} Scale it down and say how in "
                "scaled_down, or run it apart"
            )
    return problems


def fingerprint(size: Size, lineup: Lineup, record_version: int = RECORD_VERSION) -> dict[str, Any]:
    """What a fresh start of this line-up runs: each group as a ladder of it would (the ladder's own
    shape and method aside), the side-by-side settings, and the record version (how the engine measures
    and judges its steps)."""
    groups = []
    for cell in lineup.cells:
        found = ladders.fingerprint(size, cell)
        for key in ("method", "ladder"):
            found.pop(key)
        groups.append({"label": cell.variant.name, **found})
    spec = {k: v for k, v in asdict(preset(size.preset)).items() if k not in UNKEYED_AT or UNKEYED_AT[k] != v}
    return {"record": record_version, "groups": groups, "spec": spec}


def key_of(size: Size, lineup: Lineup, record_version: int = RECORD_VERSION) -> str:
    found = fingerprint(size, lineup, record_version)
    digest = hashlib.sha256(json.dumps(found, sort_keys=True).encode()).hexdigest()[:10]
    impls = "+".join(dict.fromkeys(c.impl for c in lineup.cells))
    return f"{GROUP_PREFIX}/{impls}/{digest}"


def lineup_of(claim: Claim, size: Size, cell: Any) -> Lineup:
    for lineup in lineups(claim, size):
        if any(c.impl == cell.impl and c.variant.name == cell.variant.name for c in lineup.cells):
            return lineup
    raise KeyError(f"{cell.impl}/{cell.variant.name}")


def groups_of(size: Size, lineup: Lineup, results_dir: Path | None) -> list[Any]:
    key = key_of(size, lineup)
    return [
        Group(cell.variant.name, replace(ladders.base_plan(size, cell, results_dir), group=key))
        for cell in lineup.cells
    ]


def observe(
    claim: Claim, size: Size, lineup: Lineup, run_id: str, record: Mapping[str, Any]
) -> dict[tuple[str, str], dict[str, Any]]:
    """Each cell's value of the claim's metric from one side-by-side record, keyed by the fresh start
    (`block`), the pairing key of the verdict. A fresh start that is not valid gives no value for any
    group: its figures are not from steps every group shared."""
    found = figures(dict(record))
    valid = bool(record.get("valid"))
    key = METRIC_FIGURES[claim.metric]
    capacity = record.get("capacity") or {}
    out = {}
    for cell in lineup.cells:
        label = cell.variant.name
        value = (found.get(label) or {}).get(key)
        if value is not None and claim.metric == "memory_per_instance_mb":
            value = value / ladders.cell_instances(size, cell)
        bound = None
        if claim.metric == "capacity_rps" and value is None:
            reached = ((capacity.get(label) or {}).get("capacity")) or {}
            bound = reached.get("rps") if reached and not reached.get("bracketed") else None
        out[(cell.impl, label)] = {
            "valid": valid and (value is not None or bound is not None),
            "value": value if valid else None,
            "at_least": bound if valid else None,
            "run": run_id,
            "block": run_id,
        }
    return out


def run(
    claim: Claim,
    size: Size,
    results_dir: Path | None = None,
    on_run: Callable[[str], None] = lambda _: None,
) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Every repetition of every line-up, interleaved (java's fresh start, node's, php's, java's, ...),
    reusing every stored one."""
    spec = preset(size.preset)
    observations: dict[tuple[str, str], list[dict[str, Any]]] = {
        (c.impl, c.variant.name): [] for lineup in lineups(claim, size) for c in lineup.cells
    }
    for repetition in range(size.repetitions):
        for lineup in lineups(claim, size):
            key = key_of(size, lineup)
            entry = ladders.stored(key, repetition, results_dir)
            if entry is None:
                (record,) = regime.run(
                    groups_of(size, lineup, results_dir),
                    spec,
                    size.repetitions,
                    name=claim.id,
                    results_dir=results_dir,
                    comparison=key,
                    only={repetition},
                    say=on_run,
                )
                folder = RunFolder(Path(record["folder"]))
                state = "valid" if record.get("valid") else f"not valid: {record.get('reason')}"
                on_run(
                    f"{'+'.join(lineup.labels)} fresh start {repetition + 1}/{size.repetitions}: {state} "
                    f"-> {folder.path.name}"
                )
            else:
                folder = RunFolder(Path(entry["path"]))
                record = folder.read_json(RECORD)
            for cell_key, seen in observe(claim, size, lineup, folder.run_id, record).items():
                observations[cell_key].append(seen)
    return observations


def fresh_start_s(size: Size, lineup: Lineup) -> float:
    """One fresh start of the line-up at this size's preset: each sizing step, each capacity search as long
    as a typical one (harness/model/side_by_side.py `typical_rungs`), and the pre-warm at its cap when a JVM
    is among the groups (its JIT compiler stays busy that long), else a block past its shortest."""
    spec = preset(size.preset)
    groups = len(lineup.cells)
    jvm = any(app_adapter(cell.impl).runs_on_jvm for cell in lineup.cells)
    prewarm_s = prewarm.expected_s(jvm, spec.prewarm_max_s)
    seconds = (
        START_S * groups
        + prewarm_s
        + 3.0  # the idle CPU, read three times for a second
        + spec.sizing_steps * (spec.sizing_warmup_s + spec.step_s)
        + spec.warmup_s
        + spec.cost_step_count * spec.step_s
    )
    if spec.capacity:
        rung_s = RUNG_START_S + spec.capacity_warmup_s + spec.capacity_step_s
        seconds += spec.capacity_rounds * groups * typical_rungs(spec) * rung_s
    return seconds


def starts_left(
    claim: Claim, size: Size, results_dir: Path | None, counted: set[tuple[str, int]]
) -> tuple[float, int, int]:
    """(seconds, fresh starts to run, fresh starts stored) of the claim's line-ups (`ladders.count_starts`)."""
    starts = [(key_of(size, lineup), fresh_start_s(size, lineup)) for lineup in lineups(claim, size)]
    return ladders.count_starts(starts, size.repetitions, results_dir, counted)


def from_records(
    claim: Claim, runs: list[tuple[str, str, int, Mapping[str, Any]]]
) -> tuple[Size, bool, dict[tuple[str, str], list[dict[str, Any]]]]:
    """Observations from stored side-by-side records alone: (run id, comparison key, repetition, record)
    each, matched to a line-up of the quick or the full size by its key at the records' own version (the
    key they were stored under). Raises ValueError naming the records that belong to no line-up of this
    claim, or when the records were measured under different versions: those are never paired."""
    versions = sorted({int(record.get("version", 1)) for *_, record in runs})
    if len(versions) > 1:
        raise ValueError(
            f"{claim.id}: these side-by-side records were measured under record versions "
            f"{', '.join(map(str, versions))}; a verdict pairs fresh starts of one version only"
        )
    version = versions[0] if versions else RECORD_VERSION
    size, quick, by_key = match_size(
        claim,
        [(run_id, key, rep) for run_id, key, rep, _ in runs],
        lambda size: {key_of(size, lineup, version): lineup for lineup in lineups(claim, size)},
        "side-by-side line-up",
    )
    observations: dict[tuple[str, str], list[dict[str, Any]]] = {
        (c.impl, c.variant.name): [] for lineup in by_key.values() for c in lineup.cells
    }
    for run_id, key, _, record in sorted(runs, key=lambda item: item[2]):
        for cell_key, seen in observe(claim, size, by_key[key], run_id, record).items():
            observations[cell_key].append(seen)
    return size, quick, observations
