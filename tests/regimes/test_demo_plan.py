"""The demo's plan: what it installs, and that its ladders fit its time."""

from __future__ import annotations

from harness.apps import IMPLS
from harness.engine import prewarm
from harness.regimes import demo, floor
from harness.regimes.ladder import ladder_rates
from harness.tools import toolchain


def test_the_demo_ensures_every_tool_its_runs_use_and_not_the_fault_proxy() -> None:
    wanted = {tool for group in demo.DEMO_TOOLS for tool in toolchain.NEEDS.get(group, (group,))}
    for group in ("db", "load", *IMPLS):
        assert set(toolchain.NEEDS[group]) <= wanted, group
    assert "toxiproxy" not in wanted  # only `./bidbench faults` uses it


def test_the_demo_is_planned_to_fit_ten_minutes() -> None:
    plan = demo.sizing()
    ladder = plan.ladder
    # A JVM uses its pre-warm's whole cap; node and php settle after the ramp and three blocks.
    settled = prewarm.RAMP_S + prewarm.SETTLE_BLOCKS * prewarm.SETTLE_BLOCK_S
    start_up = 3.0  # database reset, instance start, stop (a JVM's start at 0.5 CPU: about 3.5 s)
    idle_read = 0.5 + prewarm.IDLE_WINDOW_S  # the cost fit's intercept, after every pre-warm
    compare_s = 6.0

    def fresh_start(
        prewarm_s: float, steps: float, step_s: float, warmup_s: float = ladder.warmup_s
    ) -> float:
        return start_up + prewarm_s + idle_read + warmup_s + steps * step_s

    calibration_warmup = ladder.calibration_warmup

    java_runs = plan.repetitions + len(plan.scaling_impls)
    # A ladder stops `stop_after` steps past its break. In the demos of 2026-11-26 java broke at up to 1.1
    # times the calibration's first failing rate, node at up to 1.63 (its calibration broke early), php at
    # up to 0.94.
    rates = ladder_rates(10_000.0, ladder)

    def steps_run(break_share: float) -> int:
        return min(len(rates), sum(1 for r in rates if r <= break_share * 10_000) + ladder.stop_after)

    assert steps_run(0.94) < steps_run(1.1) < ladder.steps  # the fine steps past the break are not run
    # A calibration from 800 req/s per CPU breaks within 4 of its steps and stops two steps later.
    planned = (
        java_runs * fresh_start(ladder.prewarm_max_s, steps_run(1.1), ladder.step_s)
        + plan.repetitions * fresh_start(settled, steps_run(1.63), ladder.step_s)
        + plan.repetitions * fresh_start(settled, steps_run(0.94), ladder.step_s)
        + fresh_start(ladder.prewarm_max_s, 6, ladder.calibration_step_s, calibration_warmup)
        + (len(IMPLS) - 1) * fresh_start(settled, 6, ladder.calibration_step_s, calibration_warmup)
        + 1.0
        + floor.WARMUP_S
        + floor.STEPS * ladder.step_s
        + compare_s
    )
    assert planned <= 10 * 60, f"the demo is planned at {planned / 60:.2f} min"
    assert plan.repetitions >= 3 and ladder.steps >= 5  # enough points for a slope with an interval


def test_each_step_near_capacity_holds_enough_requests_for_a_p99() -> None:
    plan = demo.sizing()
    # At the lowest capacity seen here (php, ~800 req/s at 0.5 CPU), a step holds >= 1000 requests.
    assert 800 * plan.ladder.step_s >= 1000
