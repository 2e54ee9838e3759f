"""Confirming a capacity with full fixed-rate runs, the way a user would check it (`./bidbench run --rate X`).

The search's probes are short windows on warm instances; a user's check is a fresh start with the usual
warm-up and window. So after the searches, each implementation's capacity is re-run that way:
- at the search's capacity: if the run is not valid or misses the SLO, step down 10 % and try again
  (at most `max_down` times);
- then at 1.2x the confirmed rate, which must break the SLO. If it does not, the short probes were too
  pessimistic: the higher rate becomes the confirmed one and 1.2x of it is tried next (at most `max_up`
  runs above).
Every confirmation run is an ordinary stored run (regime `capacity-confirm`).
By default each run is a fresh start, and implementations are interleaved (A B C A B C) like the searches.
With `after_search`, an implementation's runs are consecutive windows that continue the session of its
last search (`confirm_in_session`, called by `run_capacity` when that search ends): the demo's way to
afford the check, since a fresh start with its pre-warm costs tens of seconds. Every window warms up
`warmup_s` at its rate (ramping from the previous rate), after the instances have worked off any backlog,
as a fresh start's run would; not the search's short re-warm. After an overloaded window an app can stay
slower for a few seconds (the lab log (docs/lab/), capacity search, "After an overloaded window").
"""

from __future__ import annotations

import statistics
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.engine.driver import FIXED_RATE_WARMUP_S
from harness.regimes.campaign import Campaign, LazySession, PointResult
from harness.regimes.capacity import (
    MEASUREMENT_LIMITS,
    CapacityPlan,
    point_text,
    rate_plan,
    round_rate,
    window_for,
)

REGIME = "capacity-confirm"


class ProbeOutcome(Protocol):
    status: str

    @property
    def valid(self) -> bool: ...

    @property
    def slo_met(self) -> bool: ...

    def failure_kinds(self) -> set[str]: ...


@dataclass(frozen=True)
class ConfirmSettings:
    """Defaults match `./bidbench run`: a fresh start, its warm-up (`FIXED_RATE_WARMUP_S`), 20 s window."""

    duration_s: float = 20.0
    warmup_s: float = FIXED_RATE_WARMUP_S
    above: float = 1.2
    step_down: float = 0.9
    max_down: int = 2  # step-downs after the first run at the search's capacity
    max_up: int = 2  # runs above a confirmed rate (the 1.2x check, and one step up if that still holds)
    granularity: float = 10.0
    min_window_requests: int = 0  # as in SearchSettings: the window holds at least this many requests
    after_search: bool = False
    """An implementation's runs as windows that continue its last search's session (see the module's doc)
    instead of a fresh start each."""

    @property
    def max_runs(self) -> int:
        return 1 + self.max_down + self.max_up


@dataclass
class Confirmation:
    impl: str
    start: float
    capacity: float | None = None  # highest rate whose fixed-rate run was valid and met the SLO
    above_rate: float | None = None
    above_broke: bool | None = None  # None: not run, or only the load generator / host gave out
    runs: list[dict[str, Any]] = field(default_factory=list)
    capacity_metrics: dict[str, Any] = field(default_factory=dict)
    resolution: float = 0.10
    """The search's tolerance: it stops bisecting once the failing rate is within this share above the
    held one, so its figure is not defined more closely than that."""

    @property
    def consistent(self) -> bool:
        """The capacity holds under a fixed-rate run, and 1.2x of it breaks the SLO."""
        return self.capacity is not None and self.above_broke is True

    @property
    def moved(self) -> bool:
        """Consistent, but at another rate than the searches' figure: the check had to step to get there."""
        return self.consistent and bool(self.runs) and self.capacity != self.runs[0]["rate"]

    @property
    def moved_beyond_resolution(self) -> bool:
        """Moved further from the searches' figure than the search's own resolution: there the searches'
        figure is off, not just rounded differently by a check whose steps (10 %, 1.2x) are as coarse."""
        return (
            self.moved
            and self.capacity is not None
            and abs(self.capacity - self.start) > self.resolution * self.start
        )

    def summary(self) -> str:
        if self.capacity is None:
            return f"no fixed-rate run from {round(self.start):g} req/s down met the SLO within {len(self.runs)} runs"
        if self.above_rate is None:
            return f"{self.capacity:g} req/s holds; no higher rate was run"
        if self.above_broke is None:
            return f"{self.capacity:g} req/s holds; whether {self.above_rate:g} breaks it is unknown"
        if not self.above_broke:
            return f"{self.capacity:g} req/s holds, and so did every higher rate tried (step limit reached)"
        return f"{self.capacity:g} req/s holds; {self.above_rate:g} req/s breaks the SLO"


def _passed(result: ProbeOutcome) -> bool:
    return result.status == "completed" and result.valid and result.slo_met


def _only_measurement_limits(result: ProbeOutcome) -> bool:
    kinds = result.failure_kinds()
    return bool(kinds & MEASUREMENT_LIMITS) and not kinds - MEASUREMENT_LIMITS


def confirm_steps(state: Confirmation, settings: ConfirmSettings) -> Generator[float, ProbeOutcome, None]:
    """Yields the rates to run at a fixed rate; receives each run's result; leaves the answer in `state`."""

    def record(rate: float, role: str, result: ProbeOutcome) -> bool:
        ok = _passed(result)
        state.runs.append(
            {"rate": rate, "role": role, "ok": ok, "failed_checks": sorted(result.failure_kinds())}
        )
        return ok

    rate = round_rate(state.start, settings.granularity)
    for _ in range(1 + settings.max_down):
        result = yield rate
        if record(rate, "at capacity", result):
            state.capacity = rate
            break
        lower = round_rate(rate * settings.step_down, settings.granularity)
        rate = lower if lower < rate else rate - settings.granularity
        if rate < settings.granularity:
            return
    if state.capacity is None:
        return
    for _ in range(settings.max_up):
        above = round_rate(state.capacity * settings.above, settings.granularity)
        if above <= state.capacity:
            above = state.capacity + settings.granularity
        state.above_rate = above
        result = yield above
        if record(above, f"{settings.above:g}x", result):
            state.capacity = above
            state.above_broke = False
            continue
        state.above_broke = None if _only_measurement_limits(result) else True
        return


def start_rate(records: list[dict[str, Any]]) -> float | None:
    """Where confirmation starts: the mean of the searches' capacities (searches that found none excluded)."""
    found = [float(r["capacity_rps"]) for r in records if r.get("capacity_rps")]
    return statistics.fmean(found) if found else None


@dataclass
class _Check:
    """One implementation's fixed-rate check: its steps, and the run of each step."""

    campaign: Campaign
    plan: CapacityPlan
    settings: ConfirmSettings
    state: Confirmation
    steps: Generator[float, ProbeOutcome, None]
    pending: float | None = None

    @classmethod
    def start(
        cls,
        campaign: Campaign,
        plan: CapacityPlan,
        impl: str,
        rows: list[dict[str, Any]],
        settings: ConfirmSettings,
    ) -> _Check:
        begin = start_rate(rows)
        state = Confirmation(impl, begin or 0.0, resolution=plan.settings.tolerance)
        check = cls(campaign, plan, settings, state, confirm_steps(state, settings))
        if begin:
            check.pending = next(check.steps)
            campaign.planned_runs += 2
            if not settings.after_search:
                campaign.planned_starts += 2
        return check

    def run_next(self, session: LazySession | None) -> None:
        assert self.pending is not None
        impl, rate, settings, campaign = self.state.impl, self.pending, self.settings, self.campaign
        attempt = len(self.state.runs) + 1
        run_plan = rate_plan(
            self.plan.base,
            impl,
            rate,
            window_for(rate, settings.duration_s, settings.min_window_requests),
            settings.warmup_s,
            regime=REGIME,
            group=campaign.key(REGIME, impl, point_text(self.plan.point), f"run{attempt}", f"rate={rate:g}"),
            point={**self.plan.point, "rate": rate},
            repetition=0,
            expect_below_capacity=False,
        )
        how = "fresh start" if session is None else "window after its last search"
        label = f"{impl} confirm {rate:g} req/s (fixed rate, {how}) run {attempt}"
        result: PointResult = campaign.run_point(run_plan, label, session, rewarm_s=settings.warmup_s)
        try:
            self.pending = self.steps.send(result)
        except StopIteration:
            self.pending = None
        last = self.state.runs[-1]
        last["run_id"] = result.folder.run_id
        if last["ok"] and last["rate"] == self.state.capacity:
            self.state.capacity_metrics = dict(result.metrics or {})


def confirm_capacity(
    campaign: Campaign,
    plan: CapacityPlan,
    records: dict[str, list[dict[str, Any]]],
    settings: ConfirmSettings | None = None,
) -> dict[str, Confirmation]:
    """Fixed-rate confirmation runs for every implementation with a capacity, each a fresh start,
    interleaved A B C A B C."""
    settings = settings or ConfirmSettings(
        granularity=plan.settings.granularity, min_window_requests=plan.settings.min_window_requests
    )
    checks = [_Check.start(campaign, plan, impl, rows, settings) for impl, rows in records.items()]
    while any(check.pending is not None for check in checks):
        for check in checks:
            if check.pending is not None:
                check.run_next(None)
    return {check.state.impl: check.state for check in checks}


def confirm_in_session(
    campaign: Campaign,
    plan: CapacityPlan,
    impl: str,
    rows: list[dict[str, Any]],
    settings: ConfirmSettings,
    session: LazySession,
) -> Confirmation:
    """One implementation's check as windows of `session`, the one its last search ran in."""
    check = _Check.start(campaign, plan, impl, rows, settings)
    while check.pending is not None:
        check.run_next(session)
    return check.state
