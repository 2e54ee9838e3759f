"""CFS throttling, per-process memory and cpusets of resource groups (issue #28), on the real kernel
accounting of this machine where it has cgroups, on fake cgroup files where it has not (cgroup v2).

Every child process here ends on its own within seconds and is killed by the test anyway; every group is
removed. No assert depends on timing: the machine is shared."""

from __future__ import annotations

import csv
import os
import time
from pathlib import Path

import pytest
from ownership import process_in

from harness.engine import resources
from harness.engine.resources import (
    CgroupV1Group,
    CgroupV2Group,
    Limits,
    ProcessTreeGroup,
    ResourceGroup,
    SystemdScopeGroup,
    Throttling,
    new_group,
    parse_cpu_stat_throttling,
)
from harness.engine.sampler import Sampler

# Spins for at most 2.5 s of wall time, whatever happens to the test.
SPINNER = "import time\nend = time.monotonic() + 2.5\nwhile time.monotonic() < end: pass\n"
# About 0.4 CPU of demand: 4 ms of spinning, 6 ms of sleep, for at most 2.5 s.
DUTY = (
    "import time\nend = time.monotonic() + 2.5\nwhile time.monotonic() < end:\n"
    "    t = time.monotonic() + 0.004\n    while time.monotonic() < t: pass\n    time.sleep(0.006)\n"
)
RUN_S = 2.0
V1 = Path("/sys/fs/cgroup/cpu/cpu.stat").is_file() and Path("/sys/fs/cgroup/cpuset/cpuset.cpus").is_file()
needs_v1 = pytest.mark.skipif(not V1 or os.geteuid() != 0, reason="needs cgroup v1 (cpu, cpuset) as root")


def _throttled_over(group: ResourceGroup, code: str) -> tuple[Throttling, Throttling]:
    with process_in(group, code) as proc:
        before = group.cpu_throttling()
        time.sleep(RUN_S)
        after = group.cpu_throttling()
        assert proc.poll() is None or proc.returncode == 0
    assert before is not None and after is not None
    return before, after


def _share(before: Throttling, after: Throttling) -> float:
    periods = after.periods - before.periods
    return (after.throttled_periods - before.throttled_periods) / periods if periods else 0.0


# --- parsing -------------------------------------------------------------------------------------------


def test_cpu_stat_parsing_v2_and_v1() -> None:
    v2 = (
        "usage_usec 5000000\nuser_usec 4000000\nsystem_usec 1000000\n"
        "nr_periods 400\nnr_throttled 120\nthrottled_usec 2500000\nnr_bursts 0\nburst_usec 0\n"
    )
    assert parse_cpu_stat_throttling(v2) == Throttling(400, 120, 2.5)
    v1 = "nr_periods 10\nnr_throttled 4\nthrottled_time 300000000\nnr_bursts 0\nburst_time 0\n"
    assert parse_cpu_stat_throttling(v1) == Throttling(10, 4, 0.3)
    # v2 without the cpu controller enabled: usage lines only, no CFS counters.
    assert parse_cpu_stat_throttling("usage_usec 1\nuser_usec 1\nsystem_usec 0\n") is None
    assert parse_cpu_stat_throttling("") is None


def test_cgroup_v2_group_reads_a_fake_cpu_stat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resources, "CGROUP_ROOT", tmp_path)
    group = CgroupV2Group("fake", Limits(cpus=0.5))
    assert (group.path / "cpu.max").read_text() == "50000 100000"  # the kernel's 100 ms period
    pinned = CgroupV2Group("fake-10ms", Limits(cpus=0.5, cfs_period_us=10_000))
    assert (pinned.path / "cpu.max").read_text() == "5000 10000"
    assert pinned.describe()["cfs_quota_period_us"] == [5000, 10000]
    (group.path / "cpu.stat").write_text("usage_usec 10\nnr_periods 7\nnr_throttled 3\nthrottled_usec 1500\n")
    assert group.cpu_throttling() == Throttling(7, 3, 0.0015)
    (group.path / "cpu.stat").write_text("usage_usec 10\n")
    assert group.cpu_throttling() is None
    unlimited = CgroupV2Group("fake-unlimited", Limits())
    (unlimited.path / "cpu.stat").write_text(
        "usage_usec 10\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n"
    )
    assert unlimited.cpu_throttling() is None, "no quota: nothing can be throttled, say unknown"


def test_systemd_scope_reads_its_cgroup(tmp_path: Path) -> None:
    group = SystemdScopeGroup("fake", Limits(cpus=0.25))
    group._cgroup_path = tmp_path
    (tmp_path / "cpu.stat").write_text("usage_usec 10\nnr_periods 9\nnr_throttled 9\nthrottled_usec 90000\n")
    assert group.cpu_throttling() == Throttling(9, 9, 0.09)


def test_process_tree_fallback_cannot_know() -> None:
    group = ProcessTreeGroup("tree", Limits(cpus=0.2))
    with process_in(group, "import time; time.sleep(1)"):
        assert group.cpu_throttling() is None
        assert group.describe()["cpuset_applied"] is None


def test_window_throttling_from_synthetic_samples() -> None:
    from harness.engine.sampler import Sample

    sampler = Sampler({})
    for t, (p, n, s) in enumerate([(0, 0, 0.0), (100, 40, 0.2), (200, 90, 0.5), (300, 140, 0.8)]):
        sampler.samples.append(Sample(float(t), "x", 0.0, 0, 0, Throttling(p, n, s)))
        sampler.samples.append(Sample(float(t), "y", 0.0, 0, 0, None))
    window = sampler.window_throttling("x", 1.0, 3.0)
    assert window is not None
    assert window["periods"] == 200 and window["throttled_periods"] == 100
    assert window["throttled_share"] == pytest.approx(0.5)
    assert window["throttled_s"] == pytest.approx(0.6)
    assert sampler.window_throttling("y", 1.0, 3.0) is None
    assert sampler.window_throttling("missing", 1.0, 3.0) is None


# --- a real cgroup v1 group ----------------------------------------------------------------------------


@needs_v1
def test_spinning_child_at_a_fifth_of_a_cpu_is_throttled() -> None:
    group = new_group("cgroup-v1", "test-throttle", Limits(cpus=0.2))
    assert group.cpu_throttling() is not None
    before, after = _throttled_over(group, SPINNER)
    assert after.throttled_periods - before.throttled_periods > 0
    assert after.throttled_s > before.throttled_s
    print(f"spinner at 0.2 CPU: throttled share {_share(before, after):.2f}")


@needs_v1
def test_throttled_share_grows_as_the_quota_shrinks() -> None:
    """A child wanting ~0.4 CPU: hardly throttled at 1.5 CPU (more than one thread can use), often at 0.2."""
    shares = {}
    for cpus in (1.5, 0.2):
        group = new_group("cgroup-v1", f"test-duty-{int(cpus * 10)}", Limits(cpus=cpus))
        shares[cpus] = _share(*_throttled_over(group, DUTY))
    print(f"~0.4 CPU demand: throttled share {shares}")
    assert shares[0.2] > shares[1.5]
    assert shares[1.5] == 0.0, "one thread cannot exhaust a 1.5 CPU quota"


@needs_v1
def test_group_without_quota_reports_none() -> None:
    group = new_group("cgroup-v1", "test-noquota", Limits())
    try:
        assert group.cpu_throttling() is None
    finally:
        group.close()


@needs_v1
def test_sampler_records_throttling_and_writes_it_to_the_csv(tmp_path: Path) -> None:
    group = new_group("cgroup-v1", "test-sampled", Limits(cpus=0.2))
    sampler = Sampler({"spin": group}, interval_s=0.5)
    with process_in(group, SPINNER):
        sampler.start()
        time.sleep(RUN_S)
        sampler.stop()
    window = sampler.window_throttling("spin", 0.0, sampler.samples[-1].t)
    assert window is not None
    assert window["throttled_periods"] > 0 and window["periods"] >= window["throttled_periods"]
    assert 0 < window["throttled_share"] <= 1
    path = tmp_path / "timeseries.csv"
    sampler.write_csv(path)
    with path.open() as handle:
        rows = list(csv.reader(handle))
    assert rows[0][:6] == ["t_s", "component", "cpu_pct", "rss_mb", "pss_mb", "cpu_seconds_total"]
    assert rows[0][6:] == ["nr_periods_total", "nr_throttled_total", "throttled_s_total"]
    assert all(len(row) == 9 for row in rows)
    throttled = [int(row[7]) for row in rows[1:] if row[7]]
    assert throttled == sorted(throttled) and throttled[-1] > 0


@needs_v1
def test_per_process_memory_names_the_primary_and_its_workers() -> None:
    """A parent forking two children, as a node cluster primary does its workers."""
    code = (
        "import subprocess, sys, time\n"
        "ps = [subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']) for _ in range(2)]\n"
        "time.sleep(120)\n"
    )
    group = new_group("cgroup-v1", "test-procs", Limits())
    sampler = Sampler({"tree": group}, interval_s=0.5)
    with process_in(group, code) as proc:
        # Three Python starts take seconds on a busy host: wait for them (child_in kills all three after).
        deadline = time.monotonic() + 60
        while len(group.pids()) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(group.pids()) == 3, "the parent and its two workers did not start within 60 s"
        sampler.start()
        time.sleep(1.2)
        sampler.stop()
        parent = proc.pid
    procs = sampler.window_memory_by_process("tree", 0.0, sampler.samples[-1].t)
    assert [p["role"] for p in procs] == ["primary", "worker", "worker"]
    assert procs[0]["pid"] == parent
    assert all(p["name"].startswith("python") and p["rss_steady_mb"] > 1 for p in procs)
    total = sampler.window_memory("tree", 0.0, sampler.samples[-1].t)
    assert sum(p["pss_last_mb"] for p in procs) <= total["rss_steady_mb"] * 1.5


# --- cpusets --------------------------------------------------------------------------------------------


@needs_v1
def test_cpuset_applied_on_v1_reads_back() -> None:
    last = max(os.sched_getaffinity(0))
    group = new_group("cgroup-v1", "test-cpuset", Limits(cpuset=str(last)))
    assert isinstance(group, CgroupV1Group)
    assert group.cpuset_applied is True and group.cpuset_note is None
    assert (group.paths["cpuset"] / "cpuset.cpus").read_text().strip() == str(last)
    with process_in(group, "import time; time.sleep(3)") as proc:
        assert os.sched_getaffinity(proc.pid) == {last}
    assert group.describe()["cpuset_applied"] is True


@needs_v1
@pytest.mark.parametrize("spec", ["64", "0-64", "one"])
def test_cpuset_of_a_missing_cpu_is_refused_gracefully(spec: str) -> None:
    group = new_group("cgroup-v1", "test-nocpu", Limits(cpus=0.5, cpuset=spec))
    assert group.cpuset_applied is False
    assert group.cpuset_note and spec in group.cpuset_note
    parent_cpus = (group.paths["cpuset"].parent / "cpuset.cpus").read_text().strip()
    assert (group.paths["cpuset"] / "cpuset.cpus").read_text().strip() == parent_cpus
    with process_in(group, "import time; time.sleep(3)") as proc:
        # Still a working group: the child joined it and runs on the inherited CPUs.
        assert proc.pid in group.pids()
    description = group.describe()
    assert description["cpuset_applied"] is False and description["cpuset_note"]


def test_cpuset_on_v2_needs_the_controller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resources, "CGROUP_ROOT", tmp_path)
    written = resources._write

    def write(path: Path, value: str, tolerate: bool = False) -> None:
        # The fake parent keeps the controller list the test gave it, as the kernel would report it.
        if path.name != "cgroup.subtree_control":
            written(path, value, tolerate)

    monkeypatch.setattr(resources, "_write", write)
    parent = tmp_path / resources.GROUP_PARENT
    parent.mkdir()
    (parent / "cgroup.subtree_control").write_text("cpu memory\n")
    (parent / "cpuset.cpus.effective").write_text("0-1\n")
    refused = CgroupV2Group("no-controller", Limits(cpuset="1"))
    assert refused.cpuset_applied is False and "not enabled" in (refused.cpuset_note or "")
    assert not (refused.path / "cpuset.cpus").exists()
    (parent / "cgroup.subtree_control").write_text("cpu cpuset memory\n")
    applied = CgroupV2Group("with-controller", Limits(cpuset="1"))
    assert applied.cpuset_applied is True
    assert (applied.path / "cpuset.cpus").read_text() == "1"
    missing = CgroupV2Group("missing-cpu", Limits(cpuset="5"))
    assert missing.cpuset_applied is False and "5" in (missing.cpuset_note or "")


def test_process_tree_cpuset_of_a_missing_cpu_is_refused() -> None:
    group = ProcessTreeGroup("tree-nocpu", Limits(cpuset="999"))
    assert group.cpuset_applied is False
    with process_in(group, "import time; time.sleep(2)") as proc:
        assert proc.poll() is None


# --- lifting the quota for the pre-warm ------------------------------------------------------------------


def test_cgroup_v2_lift_writes_max_and_puts_the_quota_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resources, "CGROUP_ROOT", tmp_path)
    group = CgroupV2Group("fake-lift", Limits(cpus=0.5))
    assert group.lift_cpu_limit(True)
    assert (group.path / "cpu.max").read_text() == "max 100000"
    assert group.lift_cpu_limit(False)
    assert (group.path / "cpu.max").read_text() == "50000 100000"
    assert not CgroupV2Group("fake-lift-unlimited", Limits()).lift_cpu_limit(True), "no quota to lift"


def test_a_systemd_scope_gets_the_quota_and_its_period() -> None:
    argv = SystemdScopeGroup("scope", Limits(cpus=0.5, cfs_period_us=20_000)).wrap(["true"])
    assert "CPUQuota=50%" in argv and "CPUQuotaPeriodSec=20000us" in argv


def test_fallback_backends_cannot_lift_a_running_quota() -> None:
    assert not ProcessTreeGroup("tree", Limits(cpus=0.5)).lift_cpu_limit(True)
    assert not SystemdScopeGroup("scope", Limits(cpus=0.5)).lift_cpu_limit(True)


@needs_v1
def test_lifted_v1_quota_lets_a_spinner_run_unthrottled_then_caps_it_again() -> None:
    group = new_group("cgroup-v1", "test-lift", Limits(cpus=0.2))
    assert isinstance(group, CgroupV1Group)
    quota_file = group.paths["cpu"] / "cpu.cfs_quota_us"
    quota = quota_file.read_text().strip()
    with process_in(group, SPINNER):
        assert group.lift_cpu_limit(True)
        assert quota_file.read_text().strip() == "-1"
        before = group.cpu_throttling()
        time.sleep(0.5)
        during = group.cpu_throttling()
        assert group.lift_cpu_limit(False)
        assert quota_file.read_text().strip() == quota
        time.sleep(0.5)
        after = group.cpu_throttling()
    assert before is not None and during is not None and after is not None
    assert during.throttled_periods == before.throttled_periods, "no quota, no throttled period"
    assert after.throttled_periods > during.throttled_periods, "the quota is back"
