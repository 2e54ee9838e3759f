"""What a side-by-side fresh start runs (docs/method.md, "Side by side"): the one place its settings and
their named presets are defined. The engine (harness/engine/side_by_side.py) runs it; the CLI offers
the presets."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

REGIME = "side-by-side"

THROTTLED_MAX_SHARE = 0.0
"""A cost step in which any group's quota throttled it in more than this share of its CFS periods is left
out for every group. The cost steps run well below the quotas, so a throttled period means a burst (a JIT
compiling, a major collection) that filled one: a transient that lands in one group's step and not in the
other's, and that one step moves the group's fitted cost by several per cent. Leaving the step out for all
groups keeps the comparison paired (docs/method.md, "Side by side"; the lab log (docs/lab/),
2026-11-28-throttled-steps)."""


@dataclass(frozen=True)
class SideBySideSpec:
    cost_rates: int = 4
    """Distinct rates of the cost steps, every group at the same rate in the same seconds."""
    cost_passes: int = 6
    """How often the cost rates run, low to high each time. A runtime's occasional background work (a JVM's
    compiler, in some fresh starts) lands in one step or another, and a step in which it filled a quota is
    left out; the longer the steps run in all, the less one burst more or fewer moves a fresh start's cost
    (the lab log (docs/lab/), side-by-side steps and young generation)."""
    step_s: float = 4.0
    warmup_s: float = 12.0
    """Before the cost steps, ramping to the first rate, with the quotas back after the pre-warm. A JVM
    pre-warmed without its quota needs about ten seconds under load inside it before its CPU per request
    settles (docs/method.md, "Warm-up after the pre-warm"); the first fresh start's sizing steps gave it
    that time, the later ones, which reuse its rates, did not."""
    sizing_warmup_s: float = 3.0
    """The sizing step only needs a first reading of each group's CPU, not a settled one."""
    sizing_rate_per_cpu: float = 300.0
    """The first sizing step's rate per CPU of one group: low enough for every app, high enough to read a
    cost."""
    sizing_steps: int = 2
    """Each sizing step runs at the top rate the one before it foresaw. A request costs more at low rates
    than near the top, so one step from a low rate foresees a busier machine than the top step then
    finds, and the cost steps would run lower than they could, where the ratio is noisiest."""
    sizing_max_growth: float = 3.0
    """A sizing step foresees at most this many times its own rate: a reading taken far below the top
    is checked by the next step before the cost steps trust it."""
    quota_share: float = 0.6
    """The top cost step keeps the costliest group at this share of its CPU limit: the steps must stay
    below saturation, where CPU and requests are proportional."""
    host_max_share: float = 0.8
    """A cost step with the machine busier than this share of all its cores (steal included) is flagged
    and left out: the groups must not fight each other for CPU."""
    low_share: float = 0.5
    """The lowest cost rate as a share of the top one. At the lowest rates the ratio is noisiest (waking
    from idle is a hypervisor exit on a VM), so the rates stay in the upper part of the range."""
    keep_cores_awake: bool = False
    """One SCHED_IDLE spinner per core while the groups are measured (harness/engine/keep_awake.py): an
    idle core of a virtual machine halts, and what a wake-up costs then depends on how busy the rest of
    the host happens to be."""
    capacity: bool = True
    capacity_start: float = 1.0
    """A group's first capacity rung, as a share of the rate at which its cost in the cost steps would fill
    its quota. The cost steps run at low rates, where a request costs more than near saturation, so
    the capacity lies above that rate, and the search climbs from it."""
    capacity_coarse: float = 1.35
    """The climb's factor until a rung fails; then the bracket is halved (geometrically)."""
    capacity_precision: float = 1.08
    """The search ends when the failing rung is within this factor of the passing one."""
    capacity_max_runs: int = 10
    capacity_step_s: float = 4.0
    """A rung's p99 is judged over this long: near its capacity a runtime under a quota stalls now and then
    (a collection, a throttled period), and in a short step one stall decides the rung."""
    capacity_warmup_s: float = 2.0
    prewarm_max_s: float = 60.0
    prewarm_rate_per_cpu: float = 800.0
    """The pre-warm runs without the quota, busy enough for a JIT to compile what the steps will run."""

    @property
    def cost_step_count(self) -> int:
        return self.cost_rates * self.cost_passes


PRESETS: dict[str, SideBySideSpec] = {
    "standard": SideBySideSpec(),
    # Three fresh starts in about eight minutes: fewer cost rates and capacity rungs that start nearer the
    # quota, each group's search ending two rungs past its break.
    "demo": SideBySideSpec(
        cost_rates=3,
        cost_passes=2,
        step_s=3.0,
        # Shorter than a JVM's settling inside its quota (the standard preset's warm-up): the demo's eight
        # minutes go to three fresh starts instead.
        warmup_s=4.0,
        sizing_warmup_s=1.5,
        capacity_precision=1.16,
        capacity_max_runs=4,
        capacity_step_s=1.5,
        capacity_warmup_s=1.0,
        # Three groups pre-warming at once share two cores; a fresh JVM's JIT goes idle later than alone.
        prewarm_max_s=45.0,
    ),
    # The claims' preset. Its settings are part of each stored fresh start's key (a claim reuses and
    # recomputes only fresh starts run as it asks), so they stay as the committed evidence ran them.
    "cost-only": SideBySideSpec(capacity=False, cost_passes=3, warmup_s=6.0, capacity_step_s=2.0),
    "quick": SideBySideSpec(
        cost_rates=2,
        cost_passes=1,
        step_s=2.0,
        warmup_s=2.0,
        capacity_max_runs=3,
        capacity_step_s=1.5,
        capacity_warmup_s=1.0,
        prewarm_max_s=10.0,
    ),
}


def preset(name: str) -> SideBySideSpec:
    """A named preset; an unknown name is refused with the list of valid ones."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; choose one of: {', '.join(PRESETS)}") from None


def start_order(groups: int, repetition: int, comparison: str) -> list[int]:
    """Which group starts first in this fresh start: the comparison's groups in turn, from an offset its key
    fixes, so every group starts first equally often over a comparison's fresh starts. A random order
    leaves that to chance over five fresh starts, and the group started first can read cheaper (docs/lab/
    2026-11-28-targets-and-jvm-threads.md); a fixed rotation cancels that over the comparison and keeps a
    resumed claim's fresh starts in the order they would have had."""
    offset = int(hashlib.sha256(comparison.encode()).hexdigest(), 16) % groups
    first = (offset + repetition) % groups
    return [(first + k) % groups for k in range(groups)]


def arrival_phases(started: list[str]) -> dict[str, float]:
    """Each group's arrival phase, by its place in the fresh start's start order: k/n of an interval after
    the shared schedule's due times, so the groups' streams interleave evenly and no group's requests
    always trail another's by the same share of an interval. With the offsets the drivers' start-up left,
    the group whose requests trailed read up to 12 % cheaper at some rates and dearer at others (docs/lab/
    2026-11-28-throttled-steps.md); turning with the start order, each group takes each place in turn."""
    return {label: k / len(started) for k, label in enumerate(started)}


def rate_scales(instances: dict[str, int]) -> dict[str, float]:
    """What each group's rates are multiplied by when the groups are driven together: its instance count
    over the smallest group's, so every instance of every group runs at the same rate. A request costs
    less the busier its instance (docs/method.md, "9. Side by side"): at equal rates per group, a group of
    two instances would run each at half the load and read dearer for it."""
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
    """One group's capacity search, one rung at a time: climb by `coarse` from `start` until a rung fails,
    then halve the bracket geometrically until it is within `precision`. A failing rung is run once more
    before it is believed: a lone stall of a few hundred ms fails a short step that the rate itself does
    not, and a retry that passes records the stall instead. Below a first failing rung it steps down
    `downs` times before it gives up ("below the first rung")."""

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
            if self.downs <= 0:
                return None
            return float(round(self.failed / self.coarse))
        if self.failed / self.passed <= self.precision:
            return None
        middle = float(round(math.sqrt(self.passed * self.failed)))
        return middle if self.passed < middle < self.failed else None

    def record(self, rate: float, met_slo: bool) -> str:
        """What the rung was: "pass", "fail" (confirmed), "retry" (a first failure, run again) or "stall"
        (a retry that passed). A retry does not count against `max_runs`: its rung is counted once, when
        it is believed."""
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


def top_cost_rate(
    sizing_rate: float,
    quota_shares: list[float],
    host_share: float,
    spec: SideBySideSpec,
) -> float:
    """The top cost step's rate, scaled from the sizing step: the costliest group at `quota_share` of its
    limit, and the machine under `host_max_share` (with a tenth of margin). Never below the sizing rate's
    low share, so a busy host still gets steps, which are then flagged if they are too busy."""
    limits = [spec.quota_share / share for share in quota_shares if share > 0]
    if host_share > 0:
        limits.append(0.9 * spec.host_max_share / host_share)
    factor = min([*limits, spec.sizing_max_growth])
    return max(sizing_rate * factor, sizing_rate * spec.low_share)


def fits(group_instances: Sequence[int], cpus: float, cores: int, reserve: float = 0.5) -> str | None:
    """Why groups of these instance counts at `cpus` each do not fit on `cores` (None if they do): their
    limits plus the load drivers' and PostgreSQL's reserve must fit on the machine."""
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
