"""What a side-by-side fresh start runs (docs/method.md, "Side by side"): the one place its settings and
their named presets are defined. The engine (harness/engine/side_by_side.py) runs it; the CLI offers
the presets."""

from __future__ import annotations

from dataclasses import dataclass

REGIME = "side-by-side"


@dataclass(frozen=True)
class SideBySideSpec:
    cost_rates: int = 4
    """Distinct rates of the cost steps, every group at the same rate in the same seconds."""
    cost_passes: int = 2
    """How often the cost rates run, low to high each time: more points for each group's cost fit."""
    step_s: float = 4.0
    warmup_s: float = 6.0
    """Before the cost steps, ramping to the first rate, with the quotas back after the pre-warm."""
    sizing_warmup_s: float = 3.0
    """The sizing step only needs a first reading of each group's CPU, not a settled one."""
    sizing_rate_per_cpu: float = 300.0
    """The sizing step's rate per CPU of one group: low enough for every app, high enough to read a cost."""
    quota_share: float = 0.6
    """The top cost step keeps the costliest group at this share of its CPU limit: the steps must stay
    below saturation, where CPU and requests are proportional."""
    host_max_share: float = 0.8
    """A cost step with the machine busier than this share of all its cores (steal included) is flagged
    and left out: the groups must not fight each other for CPU."""
    low_share: float = 0.4
    """The lowest cost rate as a share of the top one. At the lowest rates the ratio is noisiest (waking
    from idle is a hypervisor exit on a VM), so the rates stay in the upper part of the range."""
    capacity: bool = True
    capacity_low: float = 0.5
    """The capacity's first rung, as a share of the rate at which the group's cost would fill its quota."""
    capacity_high: float = 1.3
    capacity_rungs: int = 10
    capacity_step_s: float = 2.0
    capacity_warmup_s: float = 2.0
    stop_after: int = 2
    """Consecutive failing rungs that end a group's capacity search."""
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
        step_s=3.0,
        capacity_low=0.65,
        capacity_high=1.3,
        capacity_rungs=5,
        capacity_warmup_s=1.0,
        prewarm_max_s=30.0,
    ),
    "cost-only": SideBySideSpec(capacity=False, cost_passes=3),
    "quick": SideBySideSpec(
        cost_rates=2,
        cost_passes=1,
        step_s=2.0,
        warmup_s=2.0,
        capacity_rungs=3,
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


def capacity_rungs(quota_rate: float, spec: SideBySideSpec) -> tuple[float, ...]:
    """One group's capacity rungs, geometric around the rate at which its cost would fill its quota."""
    if quota_rate <= 0 or spec.capacity_rungs < 2:
        raise ValueError(f"capacity rungs need a rate above 0 and 2 rungs; got {quota_rate:g}")
    low, high = spec.capacity_low * quota_rate, spec.capacity_high * quota_rate
    ratio = (high / low) ** (1 / (spec.capacity_rungs - 1))
    return tuple(float(round(low * ratio**k)) for k in range(spec.capacity_rungs))


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
    factor = min(limits) if limits else 1.0
    return max(sizing_rate * factor, sizing_rate * spec.low_share)


def fits(groups: int, cpus: float, instances: int, cores: int, reserve: float = 0.5) -> str | None:
    """Why `groups` groups of `instances` x `cpus` do not fit on `cores` (None if they do): their limits
    plus the load drivers' and PostgreSQL's reserve must fit on the machine."""
    need = groups * instances * cpus + reserve
    if need <= cores + 1e-9:
        return None
    most_groups = int((cores - reserve) // (instances * cpus)) if cpus > 0 else 0
    largest_cpus = (cores - reserve) / (groups * instances)
    return (
        f"{groups} groups of {instances} x {cpus:g} CPU plus {reserve:g} core for the load drivers and "
        f"PostgreSQL need {need:g} cores; this machine has {cores}. At most {most_groups} group(s) fit at "
        f"{cpus:g} CPU, or {groups} groups at --cpus {largest_cpus:.2f} or less."
    )
