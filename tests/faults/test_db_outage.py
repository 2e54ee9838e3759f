"""db-outage, short: PostgreSQL stopped for 6 s mid-run (on a scratch cluster, never the shared one), then
started again. Every app must answer 503 (never 500, never hang), recover without a restart, and keep
every acknowledged bid. /ready, polled throughout, must say 503 at once while the database is down (not
after a pool's checkout attempt) and 200 soon after its return (issue #42: java took 500 ms and 4.5-5 s)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from faults_helpers import TEST_RATE, assert_sound, instance_processes

from harness.db.cluster import EmbeddedCluster
from harness.faults.runner import run_scenario
from harness.faults.scenarios import db_outage

pytestmark = pytest.mark.slow
IMPLS = os.environ.get("BIDBENCH_FAULT_IMPLS", "node,php,java").split(",")
READY_OUTAGE_P50_MS = 50.0
READY_RECOVERY_S = 2.0
"""The contract's targets are 50 ms and 1 s; the recovery bound has room for a busy 2-core host, and is still
well below the 4.5-5 s of a pool whose reconnect back-off has grown."""


@pytest.fixture(scope="module")
def outage_cluster(scratch_cluster: EmbeddedCluster) -> Iterator[EmbeddedCluster]:
    """The scratch cluster, running, as the database every run of this module uses."""
    scratch_cluster.up()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BIDBENCH_DATABASE_URL", scratch_cluster.url())
        yield scratch_cluster


@pytest.mark.parametrize("impl", IMPLS)
def test_db_outage(impl: str, outage_cluster: EmbeddedCluster, tmp_path: Path) -> None:
    before = instance_processes()
    port = outage_cluster.port
    result = run_scenario(
        impl, db_outage(quick=True), TEST_RATE, cpus=0.5, cluster=outage_cluster, results_dir=tmp_path
    )
    faults = assert_sound(result, tmp_path)
    row = result.row
    assert [e["action"] for e in faults["events"]] == ["db-stop", "db-start"]
    assert outage_cluster.is_running() and outage_cluster.port == port  # back, on the port the apps know
    assert row["unavailable_503"] > 0, "no 503 during a 6 s outage"
    assert row["first_success_s"] is not None, "no success after the database came back"
    assert faults["windows"]["after"]["ok"] > 0
    assert instance_processes() <= before
    assert row["fault_hangs"] == 0 and row["timeout"] == 0, "responses slower than the 5 s checkout bound"
    ready = faults["ready"]
    assert ready and all(f["outage_probes"] > 0 for f in ready.values()), ready
    assert row["ready_outage_statuses"] == [503], f"/ready during the outage: {ready}"
    assert row["ready_outage_p50_ms"] < READY_OUTAGE_P50_MS, f"/ready slow to say 503: {ready}"
    assert row["ready_recovery_s"] is not None, f"/ready never 200 again: {ready}"
    assert row["ready_recovery_s"] < READY_RECOVERY_S, f"/ready slow to come back: {ready}"
