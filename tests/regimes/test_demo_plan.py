"""The demo's plan: what it installs, and that its ladders fit its time."""

from __future__ import annotations

from harness import demo, toolchain
from harness.apps import IMPLS


def test_the_demo_ensures_every_tool_its_runs_use_and_not_the_fault_proxy() -> None:
    wanted = {tool for group in demo.DEMO_TOOLS for tool in toolchain.NEEDS.get(group, (group,))}
    for group in ("db", "load", *IMPLS):
        assert set(toolchain.NEEDS[group]) <= wanted, group
    assert "toxiproxy" not in wanted  # only `./bidbench faults` uses it


def test_the_demo_ladders_are_planned_to_fit_ten_minutes() -> None:
    plan = demo.sizing()
    ladder = plan.ladder
    # Per fresh start: start-up (~5 s for a JVM), the pre-warm's cap, the warm-up and every step.
    per_ladder = 5 + ladder.prewarm_max_s + ladder.warmup_s + ladder.steps * ladder.step_s
    per_calibration = (
        5 + ladder.prewarm_max_s + ladder.warmup_s + ladder.calibration_steps * ladder.calibration_step_s
    )
    ladders = len(IMPLS) * plan.repetitions + len(plan.scaling_impls)
    planned = ladders * per_ladder + len(IMPLS) * per_calibration
    assert planned <= 10 * 60, f"the demo's ladders alone are planned at {planned / 60:.1f} min"
    assert plan.repetitions >= 3 and ladder.steps >= 5  # enough points for a slope with an interval


def test_each_step_near_capacity_holds_enough_requests_for_a_p99() -> None:
    plan = demo.sizing()
    # At the lowest capacity seen here (php, ~800 req/s at 0.5 CPU), a step holds >= 1000 requests.
    assert 800 * plan.ladder.step_s >= 1000
