"""What a side-by-side fresh start runs (docs/method.md, "Side by side"): the one place its settings and
their named presets are defined. The engine (harness/engine/side_by_side.py) runs it; the CLI offers
the presets."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

REGIME = "side-by-side"
RECORD = "side-by-side.json"
"""The record of one side-by-side fresh start, in its result folder."""

THROTTLED_MAX_SHARE = 0.0
"""A cost step in which any group was throttled in more than this share of its CFS periods is left out for
every group: below the quotas a throttled period is a transient burst (JIT, major GC) in one group's step,
and dropping the step for all keeps the comparison paired (docs/method.md, "Side by side")."""


@dataclass(frozen=True)
class SideBySideSpec:
    cost_rates: int = 4
    """Distinct rates of the cost steps, every group at the same rate in the same seconds."""
    cost_passes: int = 6
    """How often the cost rates run, low to high each time: the longer the steps run in all, the less one
    background burst more or fewer moves a fresh start's cost (docs/lab/, side-by-side steps)."""
    step_s: float = 4.0
    warmup_s: float = 12.0
    """Ramping to the first cost rate, quotas back: a JVM pre-warmed without its quota needs about this long
    inside it to settle (docs/method.md, "Warm-up after the pre-warm")."""
    sizing_warmup_s: float = 3.0
    """The sizing step only needs a first reading of each group's CPU, not a settled one."""
    sizing_rate_per_cpu: float = 300.0
    """The first sizing step's rate per CPU of one group: low enough for every app, high enough to read."""
    sizing_steps: int = 2
    """Each sizing step runs at the top rate the one before foresaw: a request costs more at low rates, so
    one step from low foresees too busy a machine and the cost steps would run where the ratio is noisiest."""
    sizing_max_growth: float = 3.0
    """A sizing step foresees at most this many times its own rate (the next step checks a far reading)."""
    quota_share: float = 0.6
    """The top cost step keeps the costliest group at this share of its CPU limit: below saturation."""
    host_max_share: float = 0.8
    """A cost step with the machine busier than this share of its cores (steal included) is left out."""
    low_share: float = 0.5
    """The lowest cost rate as a share of the top one: the ratio is noisiest at the lowest rates."""
    keep_cores_awake: bool = False
    """One SCHED_IDLE spinner per core while measuring (harness/engine/keep_awake.py): an idle VM core halts,
    and a wake-up's cost then depends on the rest of the host."""
    capacity: bool = True
    capacity_start: float = 1.0
    """A group's first capacity rung, as a share of the rate at which its cost-step cost would fill its
    quota; the capacity lies above it (a request costs less near saturation)."""
    capacity_coarse: float = 1.35
    """The climb's factor until a rung fails; then the bracket is halved (geometrically)."""
    capacity_precision: float = 1.08
    """The search ends when the failing rung is within this factor of the passing one."""
    capacity_max_runs: int = 10
    capacity_step_s: float = 4.0
    """A rung's p99 is judged over this long: in a short step one stall near capacity decides the rung."""
    capacity_warmup_s: float = 2.0
    capacity_rounds: int = 2
    """Each group's capacity is searched this many times, the rounds one after another, and the rounds'
    capacities averaged (geometric mean): one 4 s rung can fail on a burst or pass on a lull, so a single
    search reads a JVM's capacity far less steadily than its cost (docs/method.md, "Side by side")."""
    prewarm_max_s: float = 60.0
    prewarm_rate_per_cpu: float = 800.0
    """The pre-warm runs without the quota, busy enough for a JIT to compile what the steps will run."""

    @property
    def cost_step_count(self) -> int:
        return self.cost_rates * self.cost_passes


PRESETS: dict[str, SideBySideSpec] = {
    "standard": SideBySideSpec(),
    # Three fresh starts in about eight minutes.
    "demo": SideBySideSpec(
        cost_rates=3,
        cost_passes=2,
        step_s=3.0,
        # Shorter than a JVM's settling inside its quota: the demo's minutes go to three fresh starts.
        warmup_s=4.0,
        sizing_warmup_s=1.5,
        capacity_precision=1.16,
        capacity_max_runs=4,
        capacity_step_s=1.5,
        capacity_warmup_s=1.0,
        capacity_rounds=1,
        # Three groups pre-warming at once share two cores: a JVM's JIT goes idle later.
        prewarm_max_s=45.0,
    ),
    # The claims' preset: part of each stored fresh start's key, so it stays as the evidence ran it.
    "cost-only": SideBySideSpec(
        capacity=False, cost_passes=3, warmup_s=6.0, capacity_step_s=2.0, capacity_rounds=1
    ),
    # The capacity claims' preset: their cost steps only foresee where each group's search starts.
    "capacity": SideBySideSpec(cost_passes=2),
    "quick": SideBySideSpec(
        cost_rates=2,
        cost_passes=1,
        step_s=2.0,
        warmup_s=2.0,
        capacity_max_runs=3,
        capacity_step_s=1.5,
        capacity_warmup_s=1.0,
        capacity_rounds=1,
        prewarm_max_s=10.0,
    ),
}


UNKEYED_AT: dict[str, object] = {"capacity_rounds": 1}
"""Settings added after fresh starts were stored, each with the value that runs as before: a stored fresh
start's key leaves a setting out at that value, so the fresh starts stored before it keep their keys."""


def preset(name: str) -> SideBySideSpec:
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; choose one of: {', '.join(PRESETS)}") from None


def start_order(groups: int, repetition: int, comparison: str) -> list[int]:
    """The start order of this fresh start: the groups in turn from an offset the comparison's key fixes, so
    each starts first equally often (the first can read cheaper, docs/lab/) and a resumed claim keeps it."""
    offset = int(hashlib.sha256(comparison.encode()).hexdigest(), 16) % groups
    first = (offset + repetition) % groups
    return [(first + k) % groups for k in range(groups)]


def arrival_phases(started: list[str]) -> dict[str, float]:
    """Each group's arrival phase, k/n of an interval by its place in the start order: the streams
    interleave evenly and each group takes each place in turn (a trailing stream reads cheaper, docs/lab/)."""
    return {label: k / len(started) for k, label in enumerate(started)}


def rate_scales(instances: dict[str, int]) -> dict[str, float]:
    """Each group's rate multiplier: its instance count over the smallest group's, so every instance runs
    at the same rate (a request costs less the busier its instance, docs/method.md "9. Side by side")."""
    fewest = min(instances.values())
    return {label: n / fewest for label, n in instances.items()}


def cost_step_rates(top: float, spec: SideBySideSpec) -> tuple[float, ...]:
    """The cost steps' rates: `cost_rates` geometric rates from low_share x top to top, each pass low to high."""
    if spec.cost_rates < 1 or top <= 0:
        raise ValueError(f"cost steps need at least one rate above 0; got {spec.cost_rates} up to {top:g}")
    if spec.cost_rates == 1:
        rates = (float(round(top)),)
    else:
        ratio = (1 / spec.low_share) ** (1 / (spec.cost_rates - 1))
        low = top * spec.low_share
        rates = tuple(float(round(low * ratio**k)) for k in range(spec.cost_rates))
    return rates * spec.cost_passes


@dataclass
class BracketSearch:
    """One group's capacity search: climb by `coarse` from `start` until a rung fails, then halve the
    bracket geometrically to within `precision`. A failing rung runs once more before it is believed (a
    lone stall fails a short step; a passing retry records it). Below a first failing rung it steps down
    `downs` times before it gives up."""

    start: float
    coarse: float
    precision: float
    max_runs: int
    downs: int = 2
    passed: float | None = None
    failed: float | None = None
    runs: int = 0
    retry: float | None = None
    stalls: list[float] = field(default_factory=list)

    def next_rate(self) -> float | None:
        if self.runs >= self.max_runs:
            return None
        if self.retry is not None:
            return self.retry
        if self.failed is None:
            return self.start if self.passed is None else float(round(self.passed * self.coarse))
        if self.passed is None:
            return float(round(self.failed / self.coarse)) if self.downs > 0 else None
        if self.failed / self.passed <= self.precision:
            return None
        middle = float(round(math.sqrt(self.passed * self.failed)))
        return middle if self.passed < middle < self.failed else None

    def record(self, rate: float, met_slo: bool) -> str:
        """The rung: "pass", "fail" (confirmed), "retry" (a first failure, run again) or "stall" (a retry
        that passed). A rung counts against `max_runs` once, when it is believed."""
        if met_slo or self.retry == rate:
            self.runs += 1
        if met_slo:
            outcome = "stall" if self.retry == rate else "pass"
            if outcome == "stall":
                self.stalls.append(rate)
            self.retry = None
            self.passed = max(self.passed or 0.0, rate)
            if self.failed is not None and self.failed <= rate:
                self.failed = None
            return outcome
        if self.retry != rate:
            self.retry = rate
            return "retry"
        self.retry = None
        if self.passed is None and self.failed is not None:
            self.downs -= 1  # a step down failed too
        self.failed = rate if self.failed is None else min(self.failed, rate)
        return "fail"

    @property
    def done(self) -> bool:
        return self.next_rate() is None


def capacity_search(quota_rate: float, spec: SideBySideSpec) -> BracketSearch:
    """A group's capacity search, starting at `capacity_start` times the rate its cost would fill its quota at."""
    if quota_rate <= 0:
        raise ValueError(f"a capacity search needs a rate above 0; got {quota_rate:g}")
    return BracketSearch(
        float(round(spec.capacity_start * quota_rate)),
        spec.capacity_coarse,
        spec.capacity_precision,
        spec.capacity_max_runs,
    )


def typical_rungs(spec: SideBySideSpec) -> int:
    """The rungs a capacity search runs, retries included, when its capacity lies between its second and
    third climbing rung and every failing rung fails again: what an estimate of a fresh start's length
    counts (the most a search may run, `capacity_max_runs` rungs each retried, is far from what one takes)."""
    search = capacity_search(1000.0, spec)
    capacity = search.start * spec.capacity_coarse**1.5
    rungs = 0  # bounded by the search: `capacity_max_runs` believed rungs, each failing one retried once
    while (rate := search.next_rate()) is not None:
        search.record(rate, rate <= capacity)
        rungs += 1
    return rungs


def top_cost_rate(
    sizing_rate: float,
    quota_shares: list[float],
    host_share: float,
    spec: SideBySideSpec,
) -> float:
    """The top cost step's rate scaled from the sizing step: the costliest group at `quota_share`, the host
    under `host_max_share` less a tenth; never below the low share (a busy host's steps are then flagged)."""
    limits = [spec.quota_share / share for share in quota_shares if share > 0]
    if host_share > 0:
        limits.append(0.9 * spec.host_max_share / host_share)
    factor = min([*limits, spec.sizing_max_growth])
    return max(sizing_rate * factor, sizing_rate * spec.low_share)


def fits(group_instances: Sequence[int], cpus: float, cores: int, reserve: float = 0.5) -> str | None:
    """Why these groups at `cpus` each plus the drivers' and PostgreSQL's reserve exceed `cores`, or None."""
    groups, instances = len(group_instances), sum(group_instances)
    need = instances * cpus + reserve
    if need <= cores + 1e-9:
        return None
    largest_cpus = (cores - reserve) / instances
    if len(set(group_instances)) > 1:
        counts = ", ".join(str(n) for n in group_instances)
        return (
            f"{groups} groups of {counts} instances x {cpus:g} CPU plus {reserve:g} core for the load drivers "
            f"and PostgreSQL need {need:g} cores; this machine has {cores}. These groups fit at --cpus "
            f"{largest_cpus:.2f} or less."
        )
    per_group = group_instances[0]
    most_groups = int((cores - reserve) // (per_group * cpus)) if cpus > 0 else 0
    return (
        f"{groups} groups of {per_group} x {cpus:g} CPU plus {reserve:g} core for the load drivers and "
        f"PostgreSQL need {need:g} cores; this machine has {cores}. At most {most_groups} group(s) fit at "
        f"{cpus:g} CPU, or {groups} groups at --cpus {largest_cpus:.2f} or less."
    )
