"""The demo's plan: what it installs, and that its side-by-side fresh starts fit its time."""

from __future__ import annotations

from harness.apps import IMPLS
from harness.engine import prewarm
from harness.model.side_by_side import cost_step_rates
from harness.regimes import demo
from harness.tools import toolchain


def test_the_demo_ensures_every_tool_its_runs_use_and_not_the_fault_proxy() -> None:
    wanted = {tool for group in demo.DEMO_TOOLS for tool in toolchain.needs_by_group().get(group, (group,))}
    for group in ("db", "load", *IMPLS):
        assert set(toolchain.needs_by_group()[group]) <= wanted, group
    assert "toxiproxy" not in wanted  # only `./bidbench faults` uses it


def test_the_demo_is_planned_to_fit_eight_minutes_after_set_up() -> None:
    plan = demo.sizing()
    spec = plan.spec
    start_up = (
        15.0  # database reset, three instances started one after another (a JVM's start is the longest)
    )
    idle_read = 2 * prewarm.IDLE_WINDOW_S + 2.0
    sizing_step = spec.sizing_steps * (spec.sizing_warmup_s + spec.step_s)
    cost_steps = spec.warmup_s + len(cost_step_rates(1000.0, spec)) * spec.step_s
    # Every group's search runs at most capacity_max_runs rungs; a rung is its warm-up, its step, the
    # driver's start and the wait for the instance to go idle again.
    run_s = spec.capacity_warmup_s + spec.capacity_step_s + 1.5
    # A failing rung is run once more before it is believed (the retry is not counted in max_runs); the
    # demos' searches retried 0-2 rungs per app, one on the whole.
    capacity = len(IMPLS) * (spec.capacity_max_runs + 1) * run_s
    fresh_start = start_up + spec.prewarm_max_s + idle_read + sizing_step + cost_steps + capacity
    planned = plan.repetitions * fresh_start + 10.0  # the comparison and its report
    assert planned <= 8 * 60, f"the demo is planned at {planned / 60:.2f} min"
    assert (
        plan.repetitions >= 3
    )  # the fewest fresh starts that give every ratio an interval with 2 degrees of freedom


def test_each_capacity_step_holds_enough_requests_for_a_p99() -> None:
    spec = demo.sizing().spec
    # At the lowest capacity seen here (php, ~800 req/s at 0.5 CPU), a rung near it holds >= 1000 requests.
    assert 800 * spec.capacity_step_s >= 1000
