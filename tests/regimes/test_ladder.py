"""What one ladder yields (harness/model/ladder_math.py), its rates (harness/regimes/ladder.py), and one real
ladder end to end against a real app."""

from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.analysis.ladder_tables import ladder_row, spread
from harness.console import UserError
from harness.engine.driver import LoadSettings
from harness.engine.ladder_digest import _first_step_missed
from harness.engine.session import RunPlan
from harness.engine.validity import Slo
from harness.model.ladder_math import capacity, cost_fit, saturation
from harness.regimes import ladder as ladder_module
from harness.regimes.ladder import (
    LadderSettings,
    calibration_censored,
    first_failing_rate,
    geometric,
    ladder_plan,
    ladder_rates,
    latency_floor,
    prewarm_rate_for,
    run_one,
    with_cost_passes,
)


def step(
    rate: float, p99: float, met: bool, cpu_s: float | None = None, kept_up: bool = True
) -> dict[str, Any]:
    completed = rate * 3
    return {
        "index": 0,
        "rate": rate,
        "step_s": 3.0,
        "completed": completed,
        "throughput_rps": rate if kept_up else rate * 0.7,
        "p99_ms": p99,
        "slo_met": met,
        "kept_up": kept_up,
        "instance_cpu_s": cpu_s if cpu_s is not None else 0.1 * 3 + 120e-6 * completed,
    }


def test_with_the_idle_cpu_read_only_the_slope_is_fitted() -> None:
    # 10 % idle and 120 µs a request, plus noise the free fit would trade between slope and intercept.
    noise = (0.004, -0.006, 0.005, -0.003)
    steps = [
        step(r, 2.0, True, 0.1 * 3 + 120e-6 * r * 3 + e)
        for r, e in zip((200, 300, 450, 675), noise, strict=True)
    ]
    fit = cost_fit(steps, idle_pct=10.0)
    assert fit is not None and fit.idle_measured and fit.idle_pct == 10.0 and fit.steps_used == 4
    assert fit.us_per_request == pytest.approx(120.0, rel=0.01)
    assert fit.ci95 is not None and fit.ci95[0] <= fit.us_per_request <= fit.ci95[1]
    free = cost_fit(steps)
    assert free is not None and not free.idle_measured
    assert abs(free.us_per_request - 120.0) > abs(fit.us_per_request - 120.0)
    # One step is enough once the intercept is known.
    single = cost_fit(steps[:1], idle_pct=10.0)
    assert single is not None and single.us_per_request == pytest.approx(120.0 + 0.004 / 600 * 1e6)
    assert single.ci95 is None


def test_a_flat_cpu_line_has_no_r_squared_and_no_division_by_zero() -> None:
    # Every step used the same CPU: a slope of 0 that explains nothing, and no spread for R² to divide by.
    steps = [step(r, 2.0, True, 0.5) for r in (200, 300, 450)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = cost_fit(steps)
        # Through the idle CPU, at one rate: statsmodels takes the single x column for a constant.
        through_idle = cost_fit([step(300, 2.0, True, 0.5) for _ in range(3)], idle_pct=10.0)
    assert fit is not None and fit.us_per_request == pytest.approx(0.0, abs=1e-9)
    assert fit.r_squared is None
    assert through_idle is not None and through_idle.r_squared is None
    sloped = cost_fit([step(r, 2.0, True) for r in (200, 300, 450)])
    assert sloped is not None and sloped.r_squared == pytest.approx(1.0)


def test_the_cost_is_the_slope_and_the_idle_cpu_the_intercept() -> None:
    steps = [step(r, 2.0, True) for r in (200, 300, 450, 675)] + [
        step(1000, 900.0, False, 2.0, kept_up=False)
    ]
    fit = cost_fit(steps)
    assert fit is not None and fit.steps_used == 4  # the step past saturation is left out
    assert fit.us_per_request == pytest.approx(120.0)
    assert fit.idle_pct == pytest.approx(10.0)
    assert fit.ci95 is not None and fit.ci95[0] <= 120.0 <= fit.ci95[1]


def test_a_cost_needs_two_steps_below_saturation() -> None:
    assert cost_fit([step(200, 2.0, True), step(300, 900.0, False, kept_up=False)]) is None


def test_the_capacity_is_bracketed_by_the_highest_pass_and_the_fail_above_it() -> None:
    steps = [step(200, 10, True), step(300, 60, False), step(450, 30, True), step(675, 90, False)]
    cap = capacity(steps, 50.0)
    assert cap is not None and cap.bracketed and (cap.below, cap.above) == (450, 675)
    # p99 crosses 50 ms a third of the way from 30 to 90 ms.
    assert cap.rps == pytest.approx(450 + (675 - 450) / 3)
    assert "1 lower step(s) failed" in cap.how


def test_a_ladder_that_never_failed_gives_a_lower_bound_and_one_that_never_passed_nothing() -> None:
    cap = capacity([step(200, 5, True), step(300, 6, True)], 50.0)
    assert cap is not None and not cap.bracketed and cap.rps == 300 and cap.text() == ">= 300"
    assert capacity([step(200, 80, False)], 50.0) is None


def test_a_failure_the_host_caused_brackets_nothing() -> None:
    """A step above the last pass whose requests went out late, or that the host or driver could not
    serve within budget, gives a lower bound: the SLO miss may be the driver's, not the app's."""
    late = {**step(675, 90, False), "late_sends": 12}
    cap = capacity([step(200, 10, True), step(450, 30, True), late], 50.0)
    assert cap is not None and not cap.bracketed and cap.rps == 450 and cap.above is None
    assert "lower bound" in cap.how
    busy = {**step(675, 90, False), "late_sends": 0, "valid": False}
    cap = capacity([step(200, 10, True), step(450, 30, True), busy], 50.0)
    assert cap is not None and not cap.bracketed
    clean = {**step(675, 90, False), "late_sends": 0, "valid": True}
    cap = capacity([step(200, 10, True), step(450, 30, True), clean], 50.0)
    assert cap is not None and cap.bracketed and cap.above == 675


def test_late_sends_from_an_app_at_its_quota_bracket_the_capacity() -> None:
    """An overloaded app holds every connection of the driver, so requests wait for one and go out late: node
    at 1,388 req/s, 25 % of its periods throttled, sent 47 late with the host 42 % busy. That failure is the
    app's and brackets the capacity; the same late sends with CPU to spare (or no quota to tell) do not."""
    at_quota = {**step(675, 110, False), "late_sends": 47, "valid": True, "throttled_share": 0.25}
    cap = capacity([step(200, 10, True), step(450, 30, True), at_quota], 50.0)
    assert cap is not None and cap.bracketed and (cap.below, cap.above) == (450, 675)
    for share in (0.05, None):
        spare = {**at_quota, "throttled_share": share}
        cap = capacity([step(200, 10, True), step(450, 30, True), spare], 50.0)
        assert cap is not None and not cap.bracketed and cap.rps == 450


def test_a_ladder_whose_failing_step_sent_late_at_its_quota_stays_valid() -> None:
    from harness.engine.ladder_digest import ladder_verdict, ladder_yield

    def digested(rate: float, p99: float, met: bool, late: int, throttled: float) -> dict[str, Any]:
        return {
            **step(rate, p99, met),
            "late_sends": late,
            "valid": True,
            "problems": [],
            "throttled_share": throttled,
        }

    slo = Slo()
    records = [
        digested(200, 2, True, 0, 0.0),
        digested(450, 3, True, 0, 0.0),
        digested(900, 110, False, 47, 0.25),
    ]
    outcome = ladder_yield(records, slo)
    assert outcome["capacity"]["bracketed"] is True
    assert ladder_verdict(records, outcome, slo, "overloaded").valid
    records[1]["late_sends"] = 2  # late below the failing step: a stall where the app met the SLO
    assert not ladder_verdict(records, ladder_yield(records, slo), slo, "overloaded").valid


def test_a_ladder_the_host_disturbed_is_invalid_and_says_it_was_the_host_alone() -> None:
    """Another tenant's work in a deciding step invalidates the ladder under a check of its own, so the
    claims can run that fresh start again; a problem of the measurement's own (the driver short of CPU)
    beside it is not the host's doing, and such a ladder is not run again."""
    from harness.engine.ladder_digest import ladder_verdict, ladder_yield
    from harness.engine.validity import DISTURBED, disturbed_only

    def digested(rate: float, p99: float, met: bool) -> dict[str, Any]:
        return {**step(rate, p99, met), "late_sends": 0, "problems": [], "disturbances": []}

    slo = Slo()
    records = [digested(200, 2, True), digested(450, 3, True), digested(900, 110, False)]
    outcome = ladder_yield(records, slo)
    assert not disturbed_only(ladder_verdict(records, outcome, slo, "overloaded"))
    records[1]["disturbances"] = ["18 % of the machine was busy with work no measured process explains"]
    verdict = ladder_verdict(records, outcome, slo, "overloaded")
    assert not verdict.valid and not verdict.checks[DISTURBED].ok and disturbed_only(verdict)
    assert verdict.reasons == [f"step 0 (450 req/s): {records[1]['disturbances'][0]}"]
    records[0]["problems"] = ["the load driver used 60 % CPU (limit 45 %)"]
    assert not disturbed_only(ladder_verdict(records, outcome, slo, "overloaded"))
    assert not disturbed_only(None)


def test_a_calibration_broken_by_the_host_still_sizes_the_ladder() -> None:
    """The calibration of node with pg-native broke at 7,689 req/s on a step the host was too busy to
    offer: that is still where its ladder must reach past, not "no rate breaks the SLO"."""
    busy = {**step(7689, 3500, False, kept_up=False), "late_sends": 0, "valid": False}
    steps = [step(3417, 1.2, True), step(5126, 5.0, True), busy]
    assert first_failing_rate({"ladder": {"steps": steps}}) == 7689


def test_a_ladder_whose_failing_step_was_host_limited_stays_valid() -> None:
    """The host-limited step decides nothing, so its late sends do not invalidate the ladder; late sends
    in a step below the capacity still do."""
    from harness.engine.ladder_digest import ladder_verdict, ladder_yield

    def digested(rate: float, p99: float, met: bool, late: int) -> dict[str, Any]:
        return {**step(rate, p99, met), "late_sends": late, "valid": True, "problems": []}

    slo = Slo()
    top = Slo().p99_ms
    records = [digested(200, 2, True, 0), digested(450, 3, True, 0), digested(900, top * 3, False, 40)]
    outcome = ladder_yield(records, slo)
    assert outcome["capacity"]["bracketed"] is False
    assert ladder_verdict(records, outcome, slo, "done").valid
    records[0]["late_sends"] = 3  # a late step below a pass: a stall inside the deciding steps
    records[0]["slo_met"] = False
    outcome = ladder_yield(records, slo)
    verdict = ladder_verdict(records, outcome, slo, "done")
    assert outcome["capacity"]["rps"] == 450 and verdict.valid is False


def test_saturation_is_the_highest_completed_rate() -> None:
    assert saturation([step(200, 5, True), step(1000, 900, False, kept_up=False)]) == 700


def test_a_row_averages_capacities_only_when_every_ladder_bracketed_one() -> None:
    bracketed = [
        {"capacity_rps": 1000.0, "cpu_us_per_request": 100.0},
        {"capacity_rps": 1100.0, "cpu_us_per_request": 110.0},
    ]
    row = ladder_row("java x1", bracketed, [True, True])
    assert row.capacity_text == spread([1000.0, 1100.0]).text() and row.capacity_text.startswith("1,050 [")
    mixed = [*bracketed, {"capacity_at_least_rps": 900.0, "cpu_us_per_request": 105.0}]
    row = ladder_row("java x1", mixed, [True, True, True])
    assert row.capacity_text == ">= 900 (1 of 3 ladders never failed)"
    assert row.cost_us.n == 3 and row.cost_us.cv_pct == pytest.approx(4.76, abs=0.01)
    assert ladder_row("java x1", mixed, [True, False, False]).valid == 1


def test_spread_of_one_value_has_no_interval() -> None:
    one = spread([5.0])
    assert one.mean == 5.0 and one.low is None and one.text() == "5 (n=1)"


def _ratios(rates: tuple[float, ...]) -> list[float]:
    return [b / a for a, b in zip(rates, rates[1:], strict=False)]


def test_the_ladder_spans_well_below_to_past_the_calibration_failure() -> None:
    rates = ladder_rates(2000.0, LadderSettings(steps=8, low=0.25, high=1.4, middle=None))
    assert rates[0] == 500 and rates[-1] == 2800 and len(rates) == 8
    ratios = _ratios(rates)
    assert max(ratios) - min(ratios) < 0.01  # geometric
    assert first_failing_rate({"ladder": {"steps": [step(200, 5, True), step(300, 70, False)]}}) == 300
    assert first_failing_rate({"ladder": {"steps": [step(200, 5, True)]}}) is None
    # A lone failure below passing steps is a stall: the calibration looks past it.
    stalled = [step(200, 70, False), step(300, 5, True), step(450, 5, True), step(675, 90, False)]
    assert first_failing_rate({"ladder": {"steps": stalled}}) == 675
    assert first_failing_rate({"ladder": {"steps": [step(200, 70, False)]}}) == 200


def test_a_calibration_that_failed_from_its_first_step_starts_again_from_lower(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An app that carries 100 req/s, calibrated from 400: the first run only fails, the second (from about
    a fifth of 400) passes below 100 and breaks above it, and sizes the ladder. One that carries 1 req/s
    stops after its descents, sized from its last first step."""
    starts: list[float] = []
    capacity_rps = [100.0]

    def fake_run(plan: RunPlan, prewarm_rate: float, quiet: bool = False) -> Any:
        starts.append(plan.load.steps[0])
        ran: list[dict[str, Any]] = []
        for rate in plan.load.steps:
            met = rate < capacity_rps[0]
            ran.append(step(rate, 5 if met else 90, met))
            if sum(not s["slo_met"] for s in ran) == 2:
                break
        return SimpleNamespace(metrics={"ladder": {"steps": ran}}, folder=None, reason="", status="completed")

    monkeypatch.setattr(ladder_module, "run_one", fake_run)
    base = RunPlan(impl="java", load=LoadSettings(targets=[]), cpus=0.5)
    settings = LadderSettings(calibration_start_per_cpu=800.0)
    failing, outcome = ladder_module.calibrate(base, settings, instances=1)
    assert starts == [400.0, 79.0]
    assert failing == 119.0 and not calibration_censored(outcome.metrics)
    capacity_rps[0], starts[:] = 1.0, []
    failing, outcome = ladder_module.calibrate(base, settings, instances=1)
    assert len(starts) == settings.calibration_descents + 1 and calibration_censored(outcome.metrics)
    assert failing == starts[-1] < 20


def test_a_descended_calibration_that_meets_a_latency_floor_descends_no_further(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An app whose every request waits about the same (an unpooled data source: a mean over the SLO's at
    any rate, a p99 within it) fails every first step. The first failure may be overload, so it descends
    once; the descended run meets the same floor, and a third start, lower still, would too."""
    starts: list[float] = []

    def fake_run(plan: RunPlan, prewarm_rate: float, quiet: bool = False) -> Any:
        starts.append(plan.load.steps[0])
        # above 150 req/s the app is overloaded too: its tail leaves the SLO
        ran = [step(rate, 20 if rate < 150 else 900, False) for rate in plan.load.steps[:2]]
        ladder = {"steps": ran, "stop_p99_ms": plan.load.stop_p99_ms}
        return SimpleNamespace(metrics={"ladder": ladder}, folder=None, reason="", status="completed")

    monkeypatch.setattr(ladder_module, "run_one", fake_run)
    base = RunPlan(impl="java", load=LoadSettings(targets=[]), cpus=0.5)
    settings = LadderSettings(calibration_start_per_cpu=800.0)
    failing, outcome = ladder_module.calibrate(base, settings, instances=1)
    assert starts == [400.0, 79.0] and failing == 79.0
    assert calibration_censored(outcome.metrics) and latency_floor(outcome.metrics)


def test_a_latency_floor_is_a_first_step_that_kept_up_and_missed_on_its_mean_alone() -> None:
    def ladder(*steps: dict[str, Any]) -> dict[str, Any]:
        return {"ladder": {"steps": list(steps), "stop_p99_ms": 50}}

    assert latency_floor(ladder(step(40, 30, False), step(59, 26, False)))
    assert not latency_floor(ladder(step(200, 9400, False)))  # the tail left the SLO: overload
    assert not latency_floor(ladder(step(40, 30, False, kept_up=False)))
    assert not latency_floor(ladder(step(40, 5, True), step(59, 30, False)))  # its first step passed
    assert not latency_floor({"ladder": {"steps": [step(40, 30, False)]}})  # no SLO recorded
    assert not latency_floor(None)


def test_the_ladder_is_fine_from_its_middle_up_where_the_capacity_is_bracketed() -> None:
    settings = LadderSettings()
    rates = ladder_rates(2000.0, settings)
    assert len(rates) == settings.steps == 16 and rates[0] == 500 and rates[-1] == 4000
    below, above = rates[: settings.steps_below_middle], rates[settings.steps_below_middle :]
    assert above[0] == 1000 and max(below) < 1000  # the middle: half the calibration's break
    coarse, fine = _ratios((*below, above[0])), _ratios(above)
    assert min(coarse) > 1.25 and max(fine) < 1.13  # the grid at the break is 4 times finer in log terms
    assert sorted(set(rates)) == list(rates)
    with pytest.raises(UserError, match="at least 5 steps"):
        ladder_rates(2000.0, LadderSettings(steps=4))
    # The cost passes repeat the steps below the middle, not the lower half of 16, which reaches the break.
    base = RunPlan(impl="node", load=LoadSettings(targets=[]), cpus=0.5)
    plan = ladder_plan(base, "node", 1, 0, rates, replace(settings, cost_passes=3))
    assert plan.load.steps == below * 2 + rates
    # Three overloaded steps end it: one pause fails the two fine steps it straddles.
    assert plan.load.stop_after == 3
    assert plan.load.env(Path("s"), Path("p"), Path("t"))["BB_STOP_AFTER"] == "3"


def test_the_claims_keep_one_geometric_grid() -> None:
    from harness.claims.ladders import settings_for
    from harness.claims.model import LadderShape

    settings = settings_for(LadderShape())
    rates = ladder_rates(2000.0, settings)
    assert len(rates) == LadderShape().steps and max(_ratios(rates)) - min(_ratios(rates)) < 0.01
    base = RunPlan(impl="node", load=LoadSettings(targets=[]), cpus=0.5)
    assert ladder_plan(base, "node", 1, 0, rates, settings).load.stop_after == 2


def test_a_ladder_needs_a_rising_range() -> None:
    with pytest.raises(Exception, match="at least 2 steps"):
        geometric(100, 50, 4)


def test_one_real_ladder_end_to_end(tmp_path: Path, database_url: str) -> None:
    """A short ladder on node with given rates: stored, each step digested, the cost fitted."""
    base = RunPlan(
        impl="node", load=LoadSettings(targets=[]), cpus=0.5, slo=Slo(), results_dir=tmp_path, prewarm=True
    )
    settings = LadderSettings(
        steps=4, step_s=2.0, warmup_s=1.0, prewarm_max_s=4.0, cost_passes=2, middle=None
    )
    plan = ladder_plan(base, "node", 1, 0, (100.0, 200.0, 300.0, 400.0), settings)
    outcome = run_one(plan, prewarm_rate=100.0, quiet=True)
    assert outcome.status == "completed", outcome.reason
    metrics = outcome.metrics or {}
    steps = metrics["ladder"]["steps"]
    # The step below the middle once more before the whole ladder: the driver runs the rates as given.
    assert [s["rate"] for s in steps] == [100.0, 100.0, 200.0, 300.0, 400.0]
    assert metrics["ladder"]["cpu_cost"]["steps_used"] == 5
    # The intercept is the idle CPU read after the pre-warm, stored where the fit can be redone from.
    prewarmed = outcome.folder.read_json("manifest.json")["prewarm"]
    for cost, idle in (("cpu_cost", "idle_cpu_pct"), ("db_cost", "db_idle_cpu_pct")):
        assert prewarmed[idle] is not None and prewarmed[idle] >= 0
        assert metrics["ladder"][cost]["idle_measured"] is True
        assert metrics["ladder"][cost]["idle_pct"] == prewarmed[idle]
    for s in steps:
        assert s["finished_in_window"] == pytest.approx(s["rate"] * 2, abs=s["rate"] * 0.1)
        assert s["instance_cpu_s"] is not None and s["instance_cpu_s"] > 0
    assert metrics["cpu_us_per_request"] is not None and metrics["cpu_us_per_request"] > 0
    assert metrics["ladder"]["capacity"] is not None  # at these rates node keeps the SLO: a lower bound
    assert (
        outcome.folder.has("load-summary.json")
        and outcome.folder.read_json("manifest.json")["regime"]["name"] == "ladder"
    )
    # The pre-warm ran its course: a ladder's steps once made the driver refuse the pre-warm's ramp.
    manifest = outcome.folder.read_json("manifest.json")
    prewarm = manifest["prewarm"]
    assert prewarm["driver_exit"] in (None, 0) and prewarm["seconds"] >= 3, prewarm
    # Pre-warmed without the quota where the backend can lift it; the steps ran with it back on.
    cgroups = manifest["resource_backend"]["name"] in ("cgroup-v1", "cgroup-v2")
    assert prewarm["limit_lifted"] is cgroups
    if cgroups:
        assert all(s["throttling"] and s["throttling"][0]["periods"] > 0 for s in steps), steps
        assert manifest["instances_detail"][0]["group"]["cfs_quota_period_us"] == [50_000, 100_000]


def test_without_the_quota_the_prewarm_runs_at_the_break() -> None:
    settings = LadderSettings()
    rates = ladder_rates(1000.0, settings)
    assert prewarm_rate_for(rates, settings) == max(r for r in rates if r <= 1000.0)


def test_the_claims_prewarm_warm_up_fit_and_throttle_as_the_ladders_do() -> None:
    """Inside the quota no claim's JVM settled and java's first steps failed on its compilations, so the
    claims pre-warm without it and warm up as long as the ladders; the CFS period and the cost's intercept
    are the ladders' since method 3."""
    from harness.claims.ladders import settings_for
    from harness.claims.model import LadderShape

    settings = settings_for(LadderShape())
    assert settings.cost_passes == 1
    assert settings.warmup_s == LadderSettings().warmup_s
    assert settings.calibration_start_per_cpu == 400.0 < LadderSettings().calibration_start_per_cpu
    base = RunPlan(impl="node", load=LoadSettings(targets=[]), cpus=0.5)
    claims_plan = ladder_plan(base, "node", 1, 0, (100.0, 200.0), settings)
    ladders_plan = ladder_plan(base, "node", 1, 0, (100.0, 200.0), LadderSettings())
    assert claims_plan.idle_intercept is True and ladders_plan.idle_intercept is True
    assert claims_plan.cfs_period_us == ladders_plan.cfs_period_us == base.cfs_period_us
    assert claims_plan.prewarm_unlimited is True and ladders_plan.prewarm_unlimited is True


def test_cost_passes_run_the_lower_half_before_the_whole_ladder() -> None:
    rates = (100.0, 150.0, 225.0, 340.0, 510.0)
    assert with_cost_passes(rates, 1) == rates
    assert with_cost_passes(rates, 3) == (100.0, 150.0, 100.0, 150.0, *rates)
    eight = tuple(float(r) for r in range(1, 9))
    assert with_cost_passes(eight, 3)[:6] == (1.0, 2.0, 3.0, 1.0, 2.0, 3.0)  # the 3 below the middle
    with pytest.raises(UserError, match="at least 1 pass"):
        with_cost_passes(rates, 0)
    base = RunPlan(impl="node", load=LoadSettings(targets=[]), cpus=0.5)
    given = LadderSettings(cost_passes=2, step_s=2.0, middle=None)  # rates a user gives: one grid
    plan = ladder_plan(base, "node", 1, 0, rates, given)
    assert plan.load.steps == (100.0, 150.0, *rates)
    assert plan.load.duration_s == 7 * 2.0
    assert ladder_plan(base, "node", 1, 0, rates, replace(given, cost_passes=1)).load.steps == rates


def test_passes_below_the_break_leave_the_capacity_to_the_ascent() -> None:
    passes = [step(r, 2.0, True) for r in (100, 150) * 3]
    ascent = [step(225, 3.0, True), step(340, 40.0, True), step(510, 90.0, False, 2.0, kept_up=False)]
    ladder = passes + ascent
    bracket = capacity(ladder, 50.0)
    assert bracket is not None and bracket.bracketed and (bracket.below, bracket.above) == (340, 510)
    fit = cost_fit(ladder)
    assert fit is not None and fit.steps_used == 8 and fit.us_per_request == pytest.approx(120.0)


def test_the_cli_runs_given_rates_as_one_grid() -> None:
    from harness.cli.options import ladder_settings

    computed = ladder_settings((), 16, "2s", 3)
    assert (computed.steps, computed.step_s, computed.cost_passes) == (16, 2.0, 3)
    assert computed.middle == LadderSettings().middle
    given = ladder_settings((100.0, 200.0, 300.0, 400.0, 500.0), 16, "1.5s", 2)
    assert (given.steps, given.step_s, given.middle) == (5, 1.5, None)


def test_a_ladder_without_a_passing_step_says_what_its_first_step_measured() -> None:
    """The reason names the first step's latency beside the SLO: a mean above the bound at 2 req/s (a
    connection opened per request) is not fixed by a lower start."""
    text = _first_step_missed({"rate": 2.0, "p99_ms": 15.24, "mean_ms": 8.31}, Slo())
    assert text.startswith("the first step (2 req/s) already missed the SLO (p99 15.2 ms, mean 8.3 ms; ")
    assert Slo().describe() in text and "unless that latency is the app's at any load" in text
    assert "mean -;" in _first_step_missed({"rate": 2.0, "p99_ms": 15.0, "mean_ms": None}, Slo())
