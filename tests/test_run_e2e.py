"""End-to-end measured runs with real apps, the real load driver and real cgroups: the result folder, the verdict,
and that nothing is left behind when a run goes wrong (Ctrl-C, a crashed app, the driver failing, no database)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import psutil
import pytest
from ownership import instance_processes, left_of, session_roots, tree_footprint

from harness import paths
from harness.apps import IMPLS
from harness.engine.driver import LoadSettings
from harness.engine.session import RunPlan, execute
from harness.engine.validity import DISTURBED, UNACCOUNTED_MAX_PCT
from harness.record.index_line import read_index

RUN_FILES = (
    "manifest.json",
    "load-summary.json",
    "metrics.json",
    "timeseries.csv",
    "pg_stat_statements.json",
    "verdict.json",
)
# The checks that fail when the shared host, not the app, was the limit (the driver or the database host
# out of CPU, or another tenant's work: the suite's other workers count as one).
MEASUREMENT_LIMITS = {"loadgen_cpu", "database_host", DISTURBED}
pytestmark = pytest.mark.slow


def _plan(impl: str, results_dir: Path, **changes: object) -> RunPlan:
    plan = RunPlan(
        impl=impl,
        load=LoadSettings(targets=[], rate=50, duration_s=6, warmup_s=5),
        cpus=1.0,
        results_dir=results_dir,
        # At these rates a JVM's JIT never goes quiet, so the pre-warm ran to its 60 s cap; these tests check
        # that a pre-warm runs and is recorded, not how warm it leaves the app.
        prewarm_max_s=15.0,
    )
    return replace(plan, **changes)  # type: ignore[arg-type]


def _own_app_instance(
    deadline_s: float, tree_of: int | None = None, earlier: frozenset[int] = frozenset()
) -> psutil.Process | None:
    """The app instance this test's run started: a descendant of this process (or of `tree_of`) carrying the
    harness's instance marker, and not one of `earlier` (an earlier test's instance under a CPU quota of 0.05
    can still be exiting). Matching on the name alone once picked a short-lived `node --version` probe."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        instances = [p for p in instance_processes(tree_of=tree_of) if p.pid not in earlier]
        if instances:
            return instances[0]
        time.sleep(0.5)
    return None


@pytest.fixture(autouse=True)
def no_leftovers(tmp_path: Path) -> Iterator[None]:
    """No app process of this test's runs outlives them: those under the session roots its stored manifests
    name (an orphan has left this process's tree), or still in its tree. Another checkout's `serve` or
    benchmark is neither, so it never fails this check."""
    yield
    deadline = time.monotonic() + 10
    while (left := instance_processes(session_roots(tmp_path))) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not left, f"orphan processes after the run: {[p.cmdline() for p in left]}"


@pytest.mark.parametrize("impl", IMPLS)
def test_smoke_run_writes_a_complete_valid_folder(impl: str, tmp_path: Path, database_url: str) -> None:
    outcome = execute(_plan(impl, tmp_path), quiet=True)
    assert outcome.status == "completed", outcome.reason
    for name in RUN_FILES:
        assert outcome.folder.has(name), name
    assert (outcome.folder.logs / f"{impl}-0").is_dir() and (outcome.folder.logs / "loadgen.log").exists()
    metrics, verdict = outcome.folder.read_json("metrics.json"), outcome.folder.read_json("verdict.json")
    # Valid, unless the shared host itself was the limit (the driver or the database host out of CPU): then
    # only those checks failed, and the verdict says so.
    failed = {name for name, check in verdict["checks"].items() if not check["ok"]}
    assert verdict["valid"] == (not failed) and failed <= MEASUREMENT_LIMITS, verdict["reasons"]
    assert metrics["sys_errors"] == 0 and metrics["ok"] > 0
    assert metrics["throughput_rps"] == pytest.approx(50, rel=0.1)
    assert 0 < metrics["cpu_pct_total"] < 100
    assert metrics["memory_per_instance_mb"] > 1
    manifest = outcome.folder.read_json("manifest.json")
    assert manifest["status"] == "completed" and manifest["resource_backend"]["name"]
    assert manifest["knobs"]["DB_POOL_SIZE"] == "10"
    assert manifest["instances_detail"][0]["startup"].startswith("bidbench-start ")
    assert any(entry["run_id"] == outcome.folder.run_id for entry in read_index(tmp_path))
    pg = outcome.folder.read_json("pg_stat_statements.json")
    # Every request did database work; the window edges are sampled, so allow a little slack.
    assert sum(row["calls"] for row in pg) >= 0.9 * metrics["ok"]


def test_cpu_figure_agrees_with_an_independent_reading(tmp_path: Path, database_url: str) -> None:
    """The run's CPU % against the cgroup's own cumulative counter, read from the time series file."""
    outcome = execute(
        _plan("node", tmp_path, load=LoadSettings(targets=[], rate=150, duration_s=8, warmup_s=3)), quiet=True
    )
    assert outcome.status == "completed", outcome.reason
    rows = [line.split(",") for line in (outcome.folder.path / "timeseries.csv").read_text().splitlines()[1:]]
    node_rows = [(float(r[0]), float(r[5])) for r in rows if r[1] == "node-0"]
    busy = [(t, c) for (t, c) in node_rows]
    (t0, c0), (t1, c1) = busy[0], busy[-1]
    overall = (c1 - c0) / (t1 - t0) * 100
    metrics = outcome.folder.read_json("metrics.json")
    # The window figure is over the measurement window only; the overall one includes the warm-up.
    assert metrics["cpu_pct_total"] == pytest.approx(overall, rel=0.5)
    assert metrics["cpu_pct_total"] > 0


def test_far_past_capacity_is_invalid_or_over_slo_for_the_right_reason(
    tmp_path: Path, database_url: str
) -> None:
    """node starved on purpose: 0.05 CPU, offered several times what it carries. Two outcomes are honest,
    and which one comes depends on how fast the host works off the pre-warm's backlog, never on the test: a
    run that completes is over its SLO or invalid for a reason starvation gives; a run whose instance is
    still busy with that backlog when the harness stops waiting fails the driver's start check, and is kept,
    marked failed, with that reason."""
    plan = _plan(
        "node",
        tmp_path,
        cpus=0.05,
        # Never settles at its quota, so the pre-warm would run to its cap; a short one overloads it as well.
        prewarm_max_s=6.0,
        load=LoadSettings(targets=[], rate=400, duration_s=5, warmup_s=2),
    )
    outcome = execute(plan, quiet=True)
    manifest = outcome.folder.read_json("manifest.json")
    # The pre-warm (half the rate) overloads the instance as well; the harness waits for its backlog.
    assert manifest["prewarm"]["idle_wait_s"] > 0
    (entry,) = [e for e in read_index(tmp_path) if e["run_id"] == outcome.folder.run_id]
    if outcome.status == "failed":
        assert "the target was unreachable at start" in outcome.reason, outcome.reason
        assert manifest["status"] == entry["status"] == "failed"
        assert "the target was unreachable at start" in manifest["failure_reason"]
        assert not entry["valid"] and not entry["slo_met"]
        return
    assert outcome.status == "completed", outcome.reason
    assert entry["status"] == "completed" and not entry["slo_met"]
    verdict = outcome.folder.read_json("verdict.json")
    assert not verdict["slo"]["met"]
    failed = {name for name, check in verdict["checks"].items() if not check["ok"]}
    assert not verdict["valid"] or not all(verdict["slo"]["parts"].values())
    assert failed <= {
        "late_sends",
        "system_errors",
        "littles_law",
        "steady_state",
        "loadgen_cpu",
        "database_host",
        DISTURBED,
    }
    assert failed & {"late_sends", "system_errors", "littles_law"} or not verdict["slo"]["parts"]["p99"]


def test_crashed_app_is_stored_as_failed_and_nothing_is_left(tmp_path: Path, database_url: str) -> None:
    plan = _plan("node", tmp_path, load=LoadSettings(targets=[], rate=50, duration_s=20, warmup_s=2))
    result: dict[str, object] = {}

    def run() -> None:
        try:
            result["outcome"] = execute(plan, quiet=True)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            result["error"] = exc

    runner = threading.Thread(target=run)
    earlier = frozenset(p.pid for p in instance_processes())
    runner.start()
    try:
        victim = _own_app_instance(deadline_s=60, earlier=earlier)
        assert victim is not None, "the run started no app instance within 60 s"
        time.sleep(4)
        # Gone already means the run ended for another reason: the outcome below says which.
        with contextlib.suppress(psutil.NoSuchProcess):
            victim.send_signal(signal.SIGKILL)
    finally:
        # Whatever happened above, the run must end before the leftover check looks for orphans.
        runner.join(timeout=120)
    assert "outcome" in result, f"the run stored no folder: {result.get('error')!r}"
    outcome = result["outcome"]
    assert outcome.status == "failed", outcome.reason  # type: ignore[attr-defined]
    assert "died" in outcome.reason, outcome.reason  # type: ignore[attr-defined]
    manifest = outcome.folder.read_json("manifest.json")  # type: ignore[attr-defined]
    assert manifest["status"] == "failed" and "died" in manifest["failure_reason"]


def test_driver_failure_is_stored_as_failed(tmp_path: Path, database_url: str) -> None:
    outcome = execute(
        _plan("node", tmp_path, load=LoadSettings(targets=[], mix="no-such-mix", duration_s=3, warmup_s=1)),
        quiet=True,
    )
    assert outcome.status == "failed"
    assert "load driver exited with code 2, a bad setting" in outcome.reason
    assert "BB_MIX" in outcome.reason
    assert outcome.folder.read_json("manifest.json")["status"] == "failed"


def test_database_that_will_not_answer_is_stored_as_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.db.cluster import free_port

    monkeypatch.setenv("BIDBENCH_DATABASE_URL", f"postgresql://nobody:x@127.0.0.1:{free_port()}/postgres")
    outcome = execute(_plan("node", tmp_path), quiet=True)
    assert outcome.status == "failed"
    assert "connect" in outcome.reason.lower()
    assert outcome.folder.read_json("manifest.json")["failure_reason"]


def test_ctrl_c_stops_everything_and_keeps_the_run_marked_interrupted(
    tmp_path: Path, database_url: str
) -> None:
    env = dict(os.environ, BIDBENCH_RESULTS=str(tmp_path))
    proc = subprocess.Popen(
        [
            str(paths.ROOT / "bidbench"),
            "run",
            "--impl",
            "node",
            "--rate",
            "50",
            "--duration",
            "30s",
            "--warmup",
            "2s",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        # Started as a background job of a non-interactive shell would start it (`./bidbench run ... &` in a
        # script, some CI runners): with SIGINT ignored on entry. It must stop on SIGINT all the same.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        # Interrupted while its instance serves the run's load (the window's manifest is written by then).
        instance = _own_app_instance(deadline_s=180, tree_of=proc.pid)
        assert instance is not None, "the run started no app instance within 180 s"
        deadline = time.monotonic() + 120
        while not session_roots(tmp_path) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
        pids, groups = tree_footprint(proc.pid)
    finally:
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, output
    entries = read_index(tmp_path)
    assert entries and entries[-1]["status"] == "interrupted"
    assert instance.pid in pids
    assert not left_of(pids, groups), "the interrupted run left these behind"


def test_a_run_beside_another_tenants_work_is_invalid_for_that_alone(
    tmp_path: Path, database_url: str
) -> None:
    """A CPU-bound process of this test's own, outside every measured group, stands in for another tenant
    for the whole run (bounded in time, stopped at the end): the window reads its CPU as unexplained, and
    the verdict fails the host check, the one a claim runs a fresh start again for. A quiet or a busy host
    only adds to the unexplained share, so the check fails either way."""
    spin = "import time\nend = time.monotonic() + 90\nwhile time.monotonic() < end: pass"
    tenant = subprocess.Popen([sys.executable, "-c", spin])
    try:
        outcome = execute(_plan("node", tmp_path), quiet=True)
    finally:
        tenant.kill()
        tenant.wait(timeout=10)
    assert outcome.status == "completed", outcome.reason
    metrics, verdict = outcome.folder.read_json("metrics.json"), outcome.folder.read_json("verdict.json")
    host = verdict["checks"][DISTURBED]
    assert metrics["unaccounted_pct"] > UNACCOUNTED_MAX_PCT and not host["ok"], (
        metrics["unaccounted_pct"],
        host,
    )
    assert host["value"] == pytest.approx(metrics["unaccounted_pct"])
    assert "no measured process explains" in host["detail"] and not verdict["valid"]
    assert host["detail"] in verdict["reasons"]
