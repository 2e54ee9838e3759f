"""A/A (issue #28): the same app against itself, two interleaved groups of fresh-start ladders (A, B, A, B,
...) at the same rates, then the verdict table for every ladder metric. Nothing differs between the groups
but chance, so a "differs" is a false positive: the standing check that the statistics do not invent
differences. With K metrics tested at alpha each, about 1 - (1 - alpha)^K of A/A runs show at least one
by chance alone (K = 6, alpha = 0.05: 26 %); the Holm-adjusted p says whether one survives the family.
A metric computed from another one is shown and not tested: it would count one finding twice.
This runs the ladders; harness/analysis/aa.py is their verdict table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from harness.engine.session import RunOutcome, RunPlan
from harness.model.ladder import LadderSettings
from harness.regimes import ladder

REGIME = "ladder-aa"
GROUPS = ("A", "B")


@dataclass(frozen=True)
class AaPlan:
    impl: str
    base: RunPlan
    repetitions: int
    settings: LadderSettings
    rates: tuple[float, ...] = ()
    """The ladder's rates; empty: one calibration ladder sizes them, and both groups reuse them."""


def run_aa(
    plan: AaPlan,
    on_outcome: Callable[[str, int, RunOutcome], None] = lambda *_: None,
) -> tuple[tuple[float, ...], dict[str, list[RunOutcome]]]:
    """Calibrate once (unless rates are given), then A, B, A, B, ... fresh starts at the same rates."""
    base = replace(plan.base, impl=plan.impl)
    rates = plan.rates
    if not rates:
        failing, outcome = ladder.calibrate(base, plan.settings, 1)
        on_outcome("calibration", -1, outcome)
        rates = ladder.ladder_rates(failing, plan.settings)
    outcomes: dict[str, list[RunOutcome]] = {g: [] for g in GROUPS}
    for repetition in range(plan.repetitions):
        for group in GROUPS:
            run_plan = replace(
                ladder.ladder_plan(base, plan.impl, 1, repetition, rates, plan.settings),
                regime=REGIME,
                variant=group,
                group="",
            )
            outcome = ladder.run_one(run_plan, prewarm_rate=ladder.prewarm_rate_for(rates, plan.settings))
            outcomes[group].append(outcome)
            on_outcome(group, repetition, outcome)
    return rates, outcomes
