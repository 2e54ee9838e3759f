"""The ladder regime (docs/method.md, "The ladder"): each fresh start of an instance set runs K fixed-rate
steps of equal length in one driver session, spaced geometrically from well below to past saturation.
One ladder is one repetition. A short calibration ladder sizes an implementation's ladders; later
ladders reuse its rates. Implementations are interleaved (java, node, php, java, ...).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from harness.analysis.ladder import capacity
from harness.console import UserError
from harness.engine import prewarm as prewarming
from harness.engine.driver import LoadSettings
from harness.engine.session import RunOutcome, RunPlan, Session

REGIME = "ladder"
CALIBRATION_REGIME = "ladder-calibration"


METHOD_VERSION = 3
"""Bumped whenever how a ladder is run or judged changes, so stored ladders of an older method are not
reused as if current (claims key their shared ladders on it, harness/claims/ladders.py). 2: a real
pre-warm that waits for a JVM's JIT, and a host-limited failing step gives a lower bound. 3: every app
listens with one accept backlog; the driver closes connections idle for 5 s and sends nothing queued
after a stop; the claims' ladders run with the kernel's CFS period and the idle CPU as the cost's
intercept (docs/replication/REPORT.md was re-run with it on 2026-11-26)."""


@dataclass(frozen=True)
class LadderSettings:
    steps: int = 16
    """In all: `steps_below_middle` coarse steps for the cost's fit, the rest from the middle to the top."""
    step_s: float = 4.0
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


@dataclass(frozen=True)
class LadderPlan:
    impls: list[str]
    base: RunPlan
    repetitions: int
    instances: tuple[int, ...] = (1,)
    settings: LadderSettings = field(default_factory=LadderSettings)
    rates: dict[str, tuple[float, ...]] = field(default_factory=dict)
    """Rates given by the user per implementation (no calibration for those)."""


def geometric(low: float, high: float, count: int) -> tuple[float, ...]:
    """`count` rates from low to high with a constant ratio, rounded to whole requests per second."""
    if count < 2 or low <= 0 or high <= low:
        raise UserError(
            f"a ladder needs at least 2 steps from a rate above 0 up: got {count} from {low:g} to {high:g}"
        )
    ratio = (high / low) ** (1 / (count - 1))
    return tuple(float(round(low * ratio**k)) for k in range(count))


def with_cost_passes(rates: tuple[float, ...], passes: int, below: int | None = None) -> tuple[float, ...]:
    """The steps a ladder runs: its `below` lowest steps (default: its lower half) `passes - 1`
    times, then the whole ladder. Those stay well under the break (at most 0.4 x the calibration's break),
    so the extra steps add points to the cost's fit, not to the capacity's bracket. Passes up to 0.62 x the
    break were tried: a node calibration that broke late put that at its capacity, and the pass stalled."""
    if passes < 1:
        raise UserError(f"a ladder needs at least 1 pass; got {passes}")
    count = (len(rates) - 1) // 2 if below is None else below
    return rates[:count] * (passes - 1) + rates


def _load(
    base: LoadSettings,
    rates: tuple[float, ...],
    step_s: float,
    warmup_s: float,
    p99: float,
    stop_after: int = LoadSettings.stop_after,
) -> LoadSettings:
    return replace(
        base,
        model="open",
        rate=rates[0],
        steps=rates,
        step_s=step_s,
        duration_s=len(rates) * step_s,
        warmup_s=warmup_s,
        stop_p99_ms=p99,
        stop_after=stop_after,
    )


def _instance_settings(base: RunPlan, settings: LadderSettings) -> dict[str, Any]:
    """What a ladder's settings set on every fresh start's plan, calibration or ladder alike."""
    return {
        "prewarm_max_s": settings.prewarm_max_s,
        "prewarm_unlimited": settings.prewarm_unlimited,
        "cfs_period_us": settings.cfs_period_us or base.cfs_period_us,
        "idle_intercept": settings.idle_intercept,
    }


def run_one(plan: RunPlan, prewarm_rate: float, quiet: bool = False) -> RunOutcome:
    """One fresh start: start the instances, pre-warm them, run the ladder, stop everything."""
    with Session(plan, quiet) as session:
        return session.measure(plan, prewarm_rate=prewarm_rate)


def calibrate(
    base: RunPlan, settings: LadderSettings, instances: int, quiet: bool = False
) -> tuple[float, RunOutcome]:
    """A quick, broad ladder (x1.5 a step) for where the SLO breaks: the first failing rate."""
    cpus = (base.cpus or 1.0) * instances
    start = settings.calibration_start_per_cpu * cpus
    rates = tuple(
        float(round(start * settings.calibration_factor**k)) for k in range(settings.calibration_steps)
    )
    plan = replace(
        base,
        regime=CALIBRATION_REGIME,
        group=f"{base.group}/calibration" if base.group else "",
        instances=instances,
        point={**base.point, "instances": instances},
        load=_load(
            base.load, rates, settings.calibration_step_s, settings.calibration_warmup, base.slo.p99_ms
        ),
        expect_below_capacity=False,
        **_instance_settings(base, settings),
    )
    # The pre-warm's least rate per CPU, not the calibration's first step: a JVM pre-warmed at 200 req/s
    # broke at 1,012 req/s in its calibration, and none of its ladders broke up to 2,024.
    rate = prewarming.MIN_RATE_PER_CPU * cpus * prewarm_factor(settings)
    outcome = run_one(plan, prewarm_rate=min(rates[-1], rate), quiet=quiet)
    failing = first_failing_rate(outcome.metrics)
    if failing is None:
        raise UserError(
            f"the calibration of {base.impl} x{instances} found no rate that breaks the SLO up to {rates[-1]:g} req/s "
            f"(or no step finished: {outcome.reason or outcome.status}); see {outcome.folder.path}. "
            "Give the ladder's rates with --rates."
        )
    return failing, outcome


def first_failing_rate(metrics: dict[str, Any] | None) -> float | None:
    """Where the calibration broke the SLO for good: the failing step that brackets its capacity (a lone
    failing step with passing steps above it was a stall, not the load). None when no step failed; the
    first step when none passed."""
    steps = sorted(((metrics or {}).get("ladder") or {}).get("steps") or [], key=lambda s: s["rate"])
    if not steps:
        return None
    # The threshold only places the capacity inside its bracket; the bracket's edges do not depend on it.
    # Whatever broke it, the host or the app: the ladder's rates only need to reach past it.
    bracket = capacity(steps, slo_p99_ms=math.inf, host_bounds=False)
    if bracket is None:
        return float(steps[0]["rate"])
    return bracket.above


def ladder_rates(failing: float, settings: LadderSettings) -> tuple[float, ...]:
    """From `low` to `high` times the calibration's break: coarse below the middle, fine from it up, where
    the capacity is bracketed; a ladder stops `stop_after` steps past its break, so the fine steps above those
    are not run."""
    low, high = settings.low * failing, settings.high * failing
    if settings.middle is None:
        return geometric(low, high, settings.steps)
    below = settings.steps_below_middle
    if settings.steps < below + 2:
        raise UserError(
            f"a ladder needs at least {below + 2} steps ({below} below its middle); got {settings.steps}"
        )
    middle = settings.middle * failing
    return geometric(low, middle, below + 1)[:-1] + geometric(middle, high, settings.steps - below)


def run_ladders(
    plan: LadderPlan,
    on_outcome: Callable[[str, int, int, RunOutcome], None] = lambda *_: None,
    quiet: bool = False,
) -> dict[tuple[str, int], list[RunOutcome]]:
    """Calibrate each (implementation, instance count) once, then run the ladders interleaved."""
    settings = plan.settings
    rates: dict[tuple[str, int], tuple[float, ...]] = {}
    for instances in plan.instances:
        for impl in plan.impls:
            base = replace(plan.base, impl=impl)
            if impl in plan.rates:
                rates[(impl, instances)] = plan.rates[impl]
                continue
            failing, outcome = calibrate(base, settings, instances, quiet)
            on_outcome(impl, instances, -1, outcome)
            rates[(impl, instances)] = ladder_rates(failing, settings)
    outcomes: dict[tuple[str, int], list[RunOutcome]] = {key: [] for key in rates}
    for instances in plan.instances:
        for repetition in range(plan.repetitions):
            for impl in plan.impls:
                key = (impl, instances)
                run_plan = ladder_plan(plan.base, impl, instances, repetition, rates[key], settings)
                outcome = run_one(run_plan, prewarm_rate=prewarm_rate_for(rates[key], settings), quiet=quiet)
                outcomes[key].append(outcome)
                on_outcome(impl, instances, repetition, outcome)
    return outcomes


def ladder_plan(
    base: RunPlan,
    impl: str,
    instances: int,
    repetition: int,
    rates: Iterable[float],
    settings: LadderSettings,
) -> RunPlan:
    below = settings.steps_below_middle if settings.middle is not None else None
    steps = with_cost_passes(tuple(rates), settings.cost_passes, below)
    return replace(
        base,
        impl=impl,
        regime=REGIME,
        instances=instances,
        point={**base.point, "instances": instances},
        repetition=repetition,
        load=_load(
            base.load, steps, settings.step_s, settings.warmup_s, base.slo.p99_ms, settings.stop_after
        ),
        expect_below_capacity=False,
        **_instance_settings(base, settings),
    )


# Of the calibration's break. Near the break an instance is pinned at its CPU limit, which the pre-warm
# reads as still warming: with ladders up to 2x the break, the middle step was node's 2,944 and php's
# 1,308 req/s, at their capacity, and every pre-warm ran to its cap.
PREWARM_SHARE_OF_BREAK = 0.5
# Without the quota nothing is pinned at a limit, and a JIT compiles a method after a number of calls, so
# the pre-warm runs at twice the rate. A fresh JVM at 0.5 CPU pre-warmed at 688 req/s ran to its 35 s cap
# in 5 of 5 demo starts, its CPU still falling; at 1,246 req/s it settled with its JIT idle in 23-24 s.
UNLIMITED_PREWARM_FACTOR = 2.0


def prewarm_factor(settings: LadderSettings) -> float:
    return UNLIMITED_PREWARM_FACTOR if settings.prewarm_unlimited else 1.0


def prewarm_rate_for(rates: tuple[float, ...], settings: LadderSettings) -> float:
    """The highest step at or below half the calibration's break (the top step is `high` times the
    break), or at the break when the pre-warm runs without the quota: well under what the instances
    can carry, busy enough to compile."""
    ceiling = rates[-1] * PREWARM_SHARE_OF_BREAK * prewarm_factor(settings) / settings.high
    return max((rate for rate in rates if rate <= ceiling), default=rates[0])
