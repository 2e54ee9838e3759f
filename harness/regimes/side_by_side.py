"""The side-by-side regime (docs/method.md, "Side by side"): fresh starts of every group of a comparison,
one after another, each measuring all groups together (harness/engine/side_by_side.py). The CLI's
`side-by-side`, A/A side by side and the demo run it."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Collection
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.console import UserError
from harness.engine.session import RunPlan
from harness.engine.side_by_side import Group, check_fits, run_fresh_start
from harness.model.side_by_side import SideBySideSpec


def groups_for(impls: list[str], aa: bool, base: RunPlan) -> list[Group]:
    """The apps given, the first the baseline; with `aa`, two groups of the one app given."""
    if aa:
        if len(impls) != 1:
            raise UserError(f"--aa compares one app against itself: give one --impl, not {','.join(impls)}")
        return [Group(f"{impls[0]}-{side}", replace(base, impl=impls[0])) for side in ("a", "b")]
    if len(impls) < 2:
        raise UserError(
            "a side-by-side comparison needs at least two apps (or --aa for one app against itself)"
        )
    return [Group(impl, replace(base, impl=impl)) for impl in impls]


def run(
    groups: list[Group],
    spec: SideBySideSpec,
    repetitions: int,
    *,
    name: str,
    results_dir: Path | None = None,
    say: Callable[[str], None] = lambda _: None,
    rule: Callable[[str], None] = lambda _: None,
    comparison: str | None = None,
    only: Collection[int] | None = None,
) -> list[dict[str, Any]]:
    """`repetitions` fresh starts; each stored whatever happens. A group that cannot start in the first
    fresh start will not start in the next: the comparison stops there, naming it, and stores nothing as
    a comparison. A claim gives its own `comparison` key and runs `only` the repetitions it has not
    stored yet (harness/claims/side_by_side.py), so an interrupted claim resumes instead of starting over."""
    check_fits(groups)
    comparison = (
        comparison
        or f"{'+'.join(g.label for g in groups)}/{name}/{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"
    )
    records = []
    # A request costs less the busier its core is kept (fewer wake-ups), so every fresh start of one
    # comparison runs the cost steps at the rates its first sized: the figures then compare across them.
    top_rate: float | None = None
    for repetition in range(repetitions):
        if only is not None and repetition not in only:
            continue
        rule(f"fresh start {repetition + 1} of {repetitions}")
        outcome = run_fresh_start(
            groups,
            spec,
            repetition=repetition,
            results_dir=results_dir,
            seed=secrets.randbits(32),
            comparison=comparison,
            say=say,
            top_rate=top_rate,
        )
        rates = (outcome.record.get("cost") or {}).get("rates")
        if top_rate is None and rates and outcome.record.get("valid"):
            top_rate = max(rates)
        state = "valid" if outcome.record.get("valid") else f"not valid ({outcome.status}): {outcome.reason}"
        say(f"fresh start {repetition + 1}: {state}; stored in {outcome.folder.path}")
        if repetition == 0 and outcome.failed_group and "could not start" in outcome.reason:
            raise UserError(f"stopped: {outcome.reason}")
        records.append(dict(outcome.record, folder=str(outcome.folder.path)))
    return records
