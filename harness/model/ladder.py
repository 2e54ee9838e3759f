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
    inside the quota again: with 5 s, in 9 of 9 java A/A ladders the first of the cost passes cost more per request
    than both later ones (234-344 µs against 209-261), and a tenth ladder stalled in it
    (docs/method.md §2, "Settling inside the quota")."""
    prewarm_max_s: float = 60.0
    """The pre-warm ends sooner once CPU settles (and a JVM's JIT is idle): node and php took 12-16 s, a
    fresh JVM at 0.5 CPU about 45 s (harness/engine/prewarm.py)."""
    prewarm_unlimited: bool = True
    """The pre-warm runs without the CPU quota (harness/engine/session.py RunPlan.prewarm_unlimited): inside
    0.5 CPU a fresh JVM's JIT compiler shares the quota with the requests, and 3 of 5 demo JVMs were still
    compiling when their 35 s pre-warm ended."""
    cfs_period_us: int | None = None
    """The quota's CFS period; None: the default (harness/engine/resources.py CFS_PERIOD_US)."""
    idle_intercept: bool = True
    """The cost fits go through the idle CPU read after the pre-warm (RunPlan.idle_intercept): with a fitted
    intercept java's A/A costs varied 9.0 % between fresh starts, through the idle CPU 4.6 % (docs/method.md §6)."""
    cost_passes: int = 3
    """How often a ladder's lowest steps run in all, the extra passes before the whole ladder, for the cost's
    fit (docs/method.md §6): in one fresh start, three passes of java's lower steps gave costs 15 % apart, and
    the fit over all three varied 3.3 % between fresh starts where one pass varied 14.9 %. 1: the ladder alone."""
    low: float = 0.25
    """The first step, as a share of the calibration's first failing rate."""
    middle: float | None = 0.5
    """Where the steps turn fine, as a share of the calibration's first failing rate: below it the steps only
    feed the cost's fit, from it up they bracket the capacity, 1.12 apart with the default 16 steps. On one
    grid 1.35 apart (8 steps from 0.25 to 2), java's capacity hung on whether the step at its quota held:
    5 of 10 A/A ladders held 2,777 req/s (capacities 2,784-2,892), 5 failed there (2,085-2,486), CV 14.0 %.
    None: one geometric grid from `low` to `high`, whose lower half the cost passes repeat (the claims' pinned
    shape with 2 overloaded steps to stop, and rates the user gives)."""
    steps_below_middle: int = 3
    stop_after: int = 3
    """Consecutive overloaded steps that end a ladder. One pause of a few hundred ms fails the two 2 s steps it
    straddles, and on the fine grid two steps span only x1.26: 2 of 10 java A/A ladders ended there, at 844
    and 1,354 req/s against 2,281-2,900 for the other 8 (Jetty expiring idle connections, which the driver
    now closes first; docs/method.md §6). Three span x1.41, as two did on one grid 1.35 apart."""
    high: float = 2.0
    """The last step, as a share of the calibration's first failing rate. Well past it: a calibration's
    short steps, right after the pre-warm, break early (java broke at 942 req/s in its calibration, and
    none of its ladders up to 1,417 req/s failed), and a ladder stops three steps after its break anyway."""
    calibration_start_per_cpu: float = 800.0
    """The calibration's first rate per CPU of the instances. Every app here carries 1,000 req/s or more per
    CPU on the browse mix (php at 0.5 CPU broke at 1,012-1,519 req/s in its calibrations), so the steps
    below 800 only cost time: from 400 per CPU, the demo's calibrations ran 7-8 steps, from 800 they run 5-6.
    A first step that already fails still sizes the ladder (`first_failing_rate`): from a quarter of it."""
    calibration_factor: float = 1.5
    calibration_steps: int = 12
    calibration_step_s: float = 2.0
    calibration_warmup_s: float | None = None
    """None: the ladders' warm-up. A calibration only needs where the load breaks, steps after its warm-up."""

    @property
    def calibration_warmup(self) -> float:
        return self.warmup_s if self.calibration_warmup_s is None else self.calibration_warmup_s
