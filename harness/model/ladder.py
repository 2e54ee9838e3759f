"""The load ladder's settings (docs/method.md, "The ladder"): the one place their defaults are defined.
`./bidbench ladder` offers them as options; the claims pin their own shape."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LadderSettings:
    steps: int = 16
    """In all: `steps_below_middle` coarse steps for the cost's fit, the rest from the middle to the top."""
    step_s: float = 2.0
    warmup_s: float = 12.0
    """At the first step's rate, quota back after the pre-warm: a fresh JVM needs longer than 5 s to settle
    inside it (docs/method.md, "Warm-up after the pre-warm")."""
    prewarm_max_s: float = 60.0
    """The pre-warm ends sooner once CPU settles and a JVM's JIT is idle (harness/engine/prewarm.py)."""
    cost_passes: int = 3
    """How often a ladder's lowest steps run in all, the extra passes first, so the cost's fit averages one
    pass's noise out (docs/method.md, "Cost passes"). 1: the ladder alone."""
    low: float = 0.25
    """The first step, as a share of the calibration's first failing rate."""
    middle: float | None = 0.5
    """Where the steps turn fine (share of the calibration's first failing rate): below, they only feed the
    cost's fit; above, they bracket the capacity (docs/method.md, "The grid and the stop rule").
    None: one geometric grid from `low` to `high`, whose lower half the cost passes repeat."""
    steps_below_middle: int = 3
    stop_after: int = 3
    """Consecutive overloaded steps that end a ladder: one pause fails the two short steps it straddles
    (docs/method.md, "The grid and the stop rule")."""
    high: float = 2.0
    """The last step, as a share of the calibration's first failing rate: well past it, as a calibration
    right after the pre-warm breaks early (docs/lab/, "The calibration's top")."""
    calibration_start_per_cpu: float = 800.0
    """The calibration's first rate per CPU: every app carries more on the browse mix (docs/lab/, "The
    calibration's start"). A first step that already fails starts it again from lower."""
    calibration_factor: float = 1.5
    calibration_steps: int = 12
    calibration_descents: int = 2
    """How often a calibration whose first step failed runs again, each from about a fifth of its last
    start (harness/regimes/ladder.py `calibrate`): a far slower variant is not sized from a rate it never
    carried."""
    calibration_step_s: float = 2.0
