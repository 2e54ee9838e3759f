"""Shared pieces of the scenario tests: a fixed rate (tests never depend on stored capacities) and the
assertions every scenario must pass (issue #12: any 500, crash, orphan or broken invariant fails)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import ownership
from ownership import session_roots

from harness.faults.runner import FaultResult, RateChoice
from harness.record.index_line import read_index

TEST_RATE = RateChoice(rate=40.0, capacity=80.0, source="test: fixed 40 req/s, capacity taken as 80")


def instance_processes(results_dir: Path | None = None, roots: Iterable[Path] = ()) -> set[int]:
    """Live app processes of this test run: in this process's tree, under the session roots of the runs
    stored in `results_dir`, or under `roots`. Another checkout's `serve` or benchmark is never counted."""
    owned = [*roots, *(session_roots(results_dir) if results_dir is not None else [])]
    return {proc.pid for proc in ownership.instance_processes(owned)}


def assert_sound(result: FaultResult, results_dir: Path) -> dict[str, Any]:
    row = result.row
    assert result.status == "completed", result.reason
    assert result.folder is not None
    for name in ("faults.json", "timeline.csv", "invariants.json", "manifest.json", "metrics.json"):
        assert result.folder.has(name), name
    assert row["server_5xx"] == 0, f"{result.impl} answered 5xx other than 503: {row}"
    assert row["survived"], f"{result.impl} did not survive {result.scenario}: {row}"
    assert row["invariants_ok"], row["invariants"]
    assert row["orphans"] == 0
    assert row["ok"] > 0
    manifest = result.folder.read_json("manifest.json")
    assert manifest["faults"]["scenario"] == result.scenario
    assert any(
        e["run_id"] == result.folder.run_id and e["regime"] == "faults" for e in read_index(results_dir)
    )
    faults = result.folder.read_json("faults.json")
    assert all(not e["error"] for e in faults["events"]), faults["events"]
    assert result.passed
    return faults
