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

from harness.console import UserError
from harness.engine import prewarm as prewarming
from harness.engine.driver import LoadSettings
from harness.engine.session import RunOutcome, RunPlan, Session
from harness.model.ladder import LadderSettings
from harness.model.ladder_math import capacity

REGIME = "ladder"
CALIBRATION_REGIME = "ladder-calibration"


METHOD_VERSION = 3
"""Bumped whenever how a ladder is run or judged changes, so stored ladders of an older method are not
reused as if current (claims key their shared ladders on it, harness/claims/ladders.py). 2: a real
pre-warm that waits for a JVM's JIT, and a host-limited failing step gives a lower bound. 3: every app
listens with one accept backlog; the driver closes connections idle for 5 s and sends nothing queued
after a stop; the claims' ladders run with the kernel's CFS period and the idle CPU as the cost's
intercept (docs/replication/REPORT.md was re-run with it)."""


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


def _fresh_start(
    base: RunPlan, settings: LadderSettings, instances: int, load: LoadSettings, **fields: Any
) -> RunPlan:
    """One fresh start's plan, calibration or ladder alike, with what a ladder's settings set on it."""
    return replace(
        base,
        instances=instances,
        point={**base.point, "instances": instances},
        load=load,
        prewarm_max_s=settings.prewarm_max_s,
        prewarm_unlimited=True,  # inside the quota a fresh JVM's JIT shares it with the requests
        idle_intercept=True,  # a fitted intercept trades off against the slope
        **fields,
    )


def run_one(plan: RunPlan, prewarm_rate: float, quiet: bool = False) -> RunOutcome:
    """One fresh start: start the instances, pre-warm them, run the ladder, stop everything."""
    with Session(plan, quiet) as session:
        return session.measure(plan, prewarm_rate=prewarm_rate)


def calibrate(
    base: RunPlan, settings: LadderSettings, instances: int, quiet: bool = False
) -> tuple[float, RunOutcome]:
    """A quick, broad ladder (x1.5 a step) for where the SLO breaks: the first failing rate. A calibration
    whose first step already failed runs again from lower (`LadderSettings.calibration_descents`), unless
    it already descended and met a latency floor there (`latency_floor`)."""
    cores = (base.cpus or 1.0) * instances
    for descent in range(settings.calibration_descents + 1):
        start = calibration_start(settings, cores, descent)
        rates = tuple(
            float(round(start * settings.calibration_factor**k)) for k in range(settings.calibration_steps)
        )
        load = base.load.as_ladder(
            rates,
            settings.calibration_step_s,
            settings.warmup_s,
            base.slo.p99_ms,
            LoadSettings.stop_after,
        )
        plan = _fresh_start(
            base, settings, instances, load, regime=CALIBRATION_REGIME, group=calibration_group(base.group)
        )
        # The pre-warm's least rate per CPU, not the calibration's first step: a JVM pre-warmed lower broke
        # early in its calibration (the lab log (docs/lab/), prewarm settling rule, "The least rate").
        rate = prewarming.MIN_RATE_PER_CPU * cores * UNLIMITED_PREWARM_FACTOR
        outcome = run_one(plan, prewarm_rate=min(rates[-1], rate), quiet=quiet)
        failing = first_failing_rate(outcome.metrics)
        if failing is None:
            raise UserError(
                f"the calibration of {base.impl} x{instances} found no rate that breaks the SLO up to {rates[-1]:g} req/s "
                f"(or no step finished: {outcome.reason or outcome.status}); see {outcome.folder.path}. "
                "Give the ladder's rates with --rates."
            )
        if not calibration_censored(outcome.metrics) or (descent and latency_floor(outcome.metrics)):
            break
    return failing, outcome


def calibration_group(group: str) -> str:
    """Where a ladder group's calibration is stored: the claims look a stored one up there to reuse it."""
    return f"{group}/calibration" if group else ""


def calibration_start(settings: LadderSettings, cores: float, descent: int = 0) -> float:
    """The first rate of a calibration on `cores` CPUs in all, after `descent` runs that failed from theirs."""
    return (
        settings.calibration_start_per_cpu
        * cores
        / settings.calibration_factor ** (CALIBRATION_DESCENT_STEPS * descent)
    )


CALIBRATION_DESCENT_STEPS = 4
"""How many of its steps a calibration that failed from its first step starts lower (x1.5^4, about 5x): its
next run still reaches the old start in its fifth step, so a stall on the first step costs one more run."""


def calibration_censored(metrics: dict[str, Any] | None) -> bool:
    """Whether a calibration failed from its first step on: the capacity lies below everything it tried,
    and a ladder sized from it (a quarter of that step up) may find no passing step either."""
    steps = ((metrics or {}).get("ladder") or {}).get("steps") or []
    return bool(steps) and not any(step.get("slo_met") for step in steps)


def latency_floor(metrics: dict[str, Any] | None) -> bool:
    """Whether a calibration's first step failed on a wait the load does not drive: it kept up, and its p99
    met the SLO's, so its mean alone missed. Overload shows in the tail first; a wait paid by every request
    alike (the unpooled data source opens a connection per request) shows in the mean at any rate, and a
    calibration started lower meets the same wait."""
    ladder = (metrics or {}).get("ladder") or {}
    steps = sorted(ladder.get("steps") or [], key=lambda s: s["rate"])
    if not steps or steps[0].get("slo_met"):
        return False
    p99, limit = steps[0].get("p99_ms"), ladder.get("stop_p99_ms")
    return bool(steps[0].get("kept_up")) and p99 is not None and limit is not None and p99 <= limit


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
) -> dict[tuple[str, int], list[RunOutcome]]:
    """Calibrate each (implementation, instance count) once, then run the ladders interleaved."""
    settings = plan.settings
    rates: dict[tuple[str, int], tuple[float, ...]] = {}
    for instances in plan.instances:
        for impl in plan.impls:
            if impl in plan.rates:
                rates[(impl, instances)] = plan.rates[impl]
                continue
            failing, outcome = calibrate(replace(plan.base, impl=impl), settings, instances)
            on_outcome(impl, instances, -1, outcome)
            rates[(impl, instances)] = ladder_rates(failing, settings)
    outcomes: dict[tuple[str, int], list[RunOutcome]] = {key: [] for key in rates}
    for instances in plan.instances:
        for repetition in range(plan.repetitions):
            for impl in plan.impls:
                key = (impl, instances)
                run_plan = ladder_plan(plan.base, impl, instances, repetition, rates[key], settings)
                outcome = run_one(run_plan, prewarm_rate=prewarm_rate_for(rates[key], settings))
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
    load = base.load.as_ladder(
        steps, settings.step_s, settings.warmup_s, base.slo.p99_ms, settings.stop_after
    )
    return _fresh_start(base, settings, instances, load, impl=impl, regime=REGIME, repetition=repetition)


# Of the calibration's break. Near the break an instance is pinned at its CPU limit, which the pre-warm
# reads as still warming, and every pre-warm ran to its cap (the lab log (docs/lab/), prewarm without quota).
PREWARM_SHARE_OF_BREAK = 0.5
# Without the quota nothing is pinned at a limit, and a JIT compiles a method after a number of calls, so
# the pre-warm runs at twice the rate, and a fresh JVM settles with its JIT idle well before the cap it ran to
# at the lower rate (docs/method.md, "Pre-warm").
UNLIMITED_PREWARM_FACTOR = 2.0


def prewarm_rate_for(rates: tuple[float, ...], settings: LadderSettings) -> float:
    """The highest step at or below the calibration's break (the top step is `high` times the break), as
    the pre-warm runs without the quota: well under what the instances can carry, busy enough to compile."""
    ceiling = rates[-1] * PREWARM_SHARE_OF_BREAK * UNLIMITED_PREWARM_FACTOR / settings.high
    return max((rate for rate in rates if rate <= ceiling), default=rates[0])
