"""The demo's plan: what it installs and how its check measures, against what its searches measure."""

from __future__ import annotations

from harness import demo, toolchain
from harness.apps import IMPLS


def test_the_demo_ensures_every_tool_its_runs_use_and_not_the_fault_proxy() -> None:
    wanted = {tool for group in demo.DEMO_TOOLS for tool in toolchain.NEEDS.get(group, (group,))}
    for group in ("db", "load", *IMPLS):
        assert set(toolchain.NEEDS[group]) <= wanted, group
    assert "toxiproxy" not in wanted  # only `./bidbench faults` uses it


def test_the_check_windows_are_short_like_the_searches_and_hold_enough_requests() -> None:
    plan = demo.sizing()
    # A 20 s window is a different measurement from a search's 3 s probe (a GC stall fails the p99 of a
    # short window only); the check stays within a few seconds of the probes it checks.
    assert plan.duration_s <= plan.confirm.duration_s <= 2 * plan.duration_s
    assert plan.confirm.after_search
    assert plan.confirm.min_window_requests >= 2 * plan.search.min_window_requests
