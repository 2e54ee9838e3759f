"""The demo's plan: what it installs and how its check measures, against what its searches measure."""

from __future__ import annotations

import json
from pathlib import Path

from harness import demo, toolchain
from harness.apps import IMPLS
from harness.regimes.confirm import Confirmation


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


def _checked(impl: str, start: float, rates_ok: list[tuple[float, bool]], capacity: float) -> Confirmation:
    runs = [{"rate": rate, "ok": ok} for rate, ok in rates_ok]
    return Confirmation(impl, start, capacity, capacity * 1.2, True, runs, resolution=0.15)


def test_the_closing_lines_tell_a_move_beyond_the_search_resolution_from_one_within_it() -> None:
    checks = {
        "java": _checked("java", 960, [(960, True), (1150, True), (1380, True), (1660, False)], 1380),
        "node": _checked(
            "node", 1020, [(1020, False), (920, False), (830, True), (1000, True), (1200, False)], 1000
        ),
        "php": _checked("php", 650, [(650, True), (780, False)], 650),
    }
    lines = demo.check_verdicts(checks, 0.15)
    assert len(lines) == 2
    assert "moved the capacity of java from 960 to 1,380 req/s" in lines[0] and "15%" in lines[0]
    assert "held node at 1,000 req/s (searches 1,020)" in lines[1] and "php" not in "".join(lines)
    unconfirmed = Confirmation("php", 650, None, None, None, [{"rate": 650, "ok": False}])
    assert "capacity of php was not confirmed" in demo.check_verdicts({"php": unconfirmed}, 0.15)[0]


def test_the_closing_lines_tell_a_search_that_found_no_rate_from_an_invalid_measurement(
    tmp_path: Path,
) -> None:
    entries = []
    for name, reasons in (("no-rate", ["no rate met the SLO"]), ("busy", ["database_host"])):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "verdict.json").write_text(json.dumps({"valid": False, "reasons": reasons}))
        entries.append({"path": str(folder), "valid": False})
    no_rate, invalid = demo.split_exclusions(entries)
    assert [Path(e["path"]).name for e in no_rate] == ["no-rate"]
    assert [Path(e["path"]).name for e in invalid] == ["busy"]
