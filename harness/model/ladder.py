"""The load ladder's settings (docs/method.md, "The ladder"): the one place their defaults are defined.
`./bidbench ladder` and `./bidbench aa --apart` offer them as options; the claims pin their own shape."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LadderSettings:
    steps: int = 16
    """In all: `steps_below_middle` coarse steps for the cost's fit, the rest from the middle to the top."""
    step_s: float = 2.0
    warmup_s: float = 12.0
    """At the first step's rate, with the quota back after the pre-warm. A fresh JVM needs longer than 5 s to settle
    inside the quota again: with 5 s the first cost pass cost more per request than the later ones
    (docs/method.md, "Warm-up after the pre-warm"; the lab log (docs/lab/), settling inside quota)."""
    prewarm_max_s: float = 60.0
    """The pre-warm ends sooner once CPU settles (and a JVM's JIT is idle): node and php settle far sooner than
    a fresh JVM (harness/engine/prewarm.py; the lab log (docs/lab/), prewarm without quota)."""
    prewarm_unlimited: bool = True
    """The pre-warm runs without the CPU quota (harness/engine/session.py RunPlan.prewarm_unlimited): inside
    0.5 CPU a fresh JVM's JIT compiler shares the quota with the requests, and JVMs were still compiling when
    their pre-warm ended (docs/method.md, "Pre-warm")."""
    cfs_period_us: int | None = None
    """The quota's CFS period; None: the default (harness/engine/resources.py CFS_PERIOD_US)."""
    idle_intercept: bool = True
    """The cost fits go through the idle CPU read after the pre-warm (RunPlan.idle_intercept): a fitted
    intercept trades off against the slope and spreads the cost more (docs/method.md, "The intercept is the idle
    CPU")."""
    cost_passes: int = 3
    """How often a ladder's lowest steps run in all, the extra passes before the whole ladder, for the cost's
    fit: one pass's cost is noise in time, which the fit over all passes averages out (docs/method.md, "Cost
    passes"). 1: the ladder alone."""
    low: float = 0.25
    """The first step, as a share of the calibration's first failing rate."""
    middle: float | None = 0.5
    """Where the steps turn fine, as a share of the calibration's first failing rate: below it the steps only
    feed the cost's fit, from it up they bracket the capacity, 1.12 apart with the default 16 steps. On one
    coarser grid java's capacity hung on whether the step at its quota held (docs/method.md, "The grid and the
    stop rule").
    None: one geometric grid from `low` to `high`, whose lower half the cost passes repeat (the claims' pinned
    shape with 2 overloaded steps to stop, and rates the user gives)."""
    steps_below_middle: int = 3
    stop_after: int = 3
    """Consecutive overloaded steps that end a ladder. One pause fails the two short steps it straddles, and
    on the fine grid two steps span only x1.26, so a pause ended ladders far below their capacity; three span
    x1.41, as two did on the coarser grid (docs/method.md, "The grid and the stop rule")."""
    high: float = 2.0
    """The last step, as a share of the calibration's first failing rate. Well past it: a calibration's
    short steps, right after the pre-warm, break early, and a ladder stops three steps after its break anyway
    (the lab log (docs/lab/), demo shape and calibration, "The calibration's top")."""
    calibration_start_per_cpu: float = 800.0
    """The calibration's first rate per CPU of the instances. Every app here carries more than this per CPU
    on the browse mix, so lower steps only cost time (the lab log (docs/lab/), demo shape and calibration,
    "The calibration's start").
    A first step that already fails starts the calibration again from lower (`calibration_descents`)."""
    calibration_factor: float = 1.5
    calibration_steps: int = 12
    calibration_descents: int = 2
    """How often a calibration whose first step already failed runs again, each time from about a fifth of
    its last start (harness/regimes/ladder.py `calibrate`): a variant far slower than the start (a pool-less
    JDBC driver, say) would otherwise be sized from a quarter of a rate it never carried, and its ladders
    would fail from their first step too. After the last, the first failing step still sizes the ladder."""
    calibration_step_s: float = 2.0
    calibration_warmup_s: float | None = None
    """None: the ladders' warm-up. A calibration only needs where the load breaks, steps after its warm-up."""

    @property
    def calibration_warmup(self) -> float:
        return self.warmup_s if self.calibration_warmup_s is None else self.calibration_warmup_s
