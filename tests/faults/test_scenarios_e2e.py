"""slow-db, overload and kill-instance, short and bounded, on the fault scenarios' own cluster. node runs
every scenario; slow-db runs for every app in BIDBENCH_FAULT_IMPLS (default: all three). They share that
cluster with one another only, so they run one at a time on one worker, beside the shared database's
tests (tests/conftest.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from faults_helpers import TEST_RATE, assert_sound, instance_processes

from harness.faults import timeline
from harness.faults.runner import fault_cluster, run_scenario
from harness.faults.scenarios import OVERLOAD_RAMP_S, kill_instance, overload, slow_db
from harness.record.upgrade import trace_log

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("fault-cluster")]
IMPLS = os.environ.get("BIDBENCH_FAULT_IMPLS", "node,php,java").split(",")


@pytest.fixture(scope="module", autouse=True)
def stop_fault_cluster_afterwards() -> Iterator[None]:
    """The scenarios run on the faults' own cluster; stop it again if this module started it."""
    cluster = fault_cluster()
    was_running = cluster.initialized() and cluster.is_running()
    yield
    if not was_running:
        cluster.down()


@pytest.mark.parametrize("impl", IMPLS)
def test_slow_db(impl: str, tmp_path: Path) -> None:
    result = run_scenario(impl, slow_db(quick=True), TEST_RATE, cpus=0.5, results_dir=tmp_path)
    faults = assert_sound(result, tmp_path)
    windows = faults["windows"]
    # 100 ms on every database reply: the successes' p99 follows it up.
    assert windows["latency"]["p99_ok_ms"] is not None and windows["latency"]["p99_ok_ms"] >= 100
    # Every connection reset: the contract's 503, no 500.
    assert windows["reset"]["unavailable_503"] > 0 and windows["reset"]["server_5xx"] == 0
    assert result.row["first_success_s"] is not None
    # The 5 s checkout bound holds from the request's arrival in every app (java and php count queueing).
    assert result.row["fault_hangs"] == 0 and result.row["timeout"] == 0
    assert (result.folder.logs / "toxiproxy.log").exists()  # type: ignore[union-attr]


def test_overload_node(tmp_path: Path) -> None:
    scenario = overload(quick=True)
    result = run_scenario("node", scenario, TEST_RATE, cpus=0.5, results_dir=tmp_path)
    faults = assert_sound(result, tmp_path)
    assert result.row["peak_rate"] == 160
    assert result.row["peak_rss_mb"] and result.row["rss_bounded"]
    # The overload is offered in full: the requests due (by their intended send time, from the trace) in the
    # fault window after its 1 s ramp number 2x the capacity for that long. The old generator's cap of
    # virtual users dropped requests here; the driver queues them and times them from when they were due.
    assert result.folder is not None
    requests = [r for r in timeline.read_trace(trace_log(result.folder.logs)) if r.phase == "m"]
    t0 = faults["measure_start_unix"]
    held_from, held_to = scenario.fault_start_s + OVERLOAD_RAMP_S, scenario.fault_end_s
    due = [r for r in requests if held_from <= r.start_ms / 1000 - t0 < held_to]
    expected = result.row["peak_rate"] * (held_to - held_from)
    assert len(due) == pytest.approx(expected, rel=0.05), (len(due), expected)
    # The row reports that figure, and the run's validity as a finding (it does not decide the pass).
    assert result.row["fault_due_rps"] == pytest.approx(len(due) / (held_to - held_from), abs=0.1)
    assert isinstance(result.row["run_valid"], bool)
    assert result.row["run_valid"] == (not result.row["run_invalid_reasons"])
    # Arrivals are judged against the schedule's rate over the window (the driver's offered_rps), not the base
    # rate: every request due arrived, so Little's law holds (it failed with the base rate, 40 of ~64 req/s).
    littles_law = result.folder.read_json("verdict.json")["checks"]["littles_law"]
    assert littles_law["ok"], littles_law
    # And only there: before the fault the base rate.
    before = [r for r in requests if 0 <= r.start_ms / 1000 - t0 < scenario.fault_start_s]
    assert len(before) == pytest.approx(TEST_RATE.rate * scenario.fault_start_s, rel=0.05)


def test_kill_instance_node(tmp_path: Path) -> None:
    before = instance_processes()
    result = run_scenario("node", kill_instance(quick=True), TEST_RATE, cpus=0.5, results_dir=tmp_path)
    faults = assert_sound(result, tmp_path)
    assert faults["instances"]["node-1"]["killed_on_purpose"]
    assert faults["instances"]["node-0"]["ready_after"]
    assert result.row["connection_to_killed"] > 0  # the killed one refuses, as expected
    assert result.row["errors_to_survivors"] == 0  # the other keeps serving
    assert [e["action"] for e in faults["events"]] == ["kill"] and faults["events"][0]["detail"]["pids"]
    assert instance_processes(tmp_path) <= before
