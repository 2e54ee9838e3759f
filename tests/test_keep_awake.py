"""The keep-awake spinners (harness/engine/keep_awake.py): the kernel's lowest class, counted in their own
resource group, gone when stopped and gone when the process that started them dies."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from harness.engine.keep_awake import KeepAwake
from harness.engine.resources import GROUP_PARENT, detect_backend


def test_spinners_run_at_the_lowest_class_in_their_group_and_stop(tmp_path: Path) -> None:
    backend = detect_backend()
    if backend == "none":
        pytest.skip("no resource groups on this machine: keep-awake is refused here (tested below)")
    awake = KeepAwake.in_new_group(backend, tmp_path / "awake.log")
    assert awake is not None
    group = awake.group
    try:
        awake.start()
        try:
            pids = [p.pid for p in awake.procs]
            # Each spinner lowers its own class once its interpreter is up, and the group has the lowest
            # weight: on a machine kept busy by other work that can take a minute or more.
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline and not all(
                os.sched_getscheduler(pid) == os.SCHED_IDLE for pid in pids
            ):
                time.sleep(0.1)
            assert sum(1 for p in awake.procs if p.poll() is None) == 2
            assert all(os.sched_getscheduler(pid) == os.SCHED_IDLE for pid in pids)
            assert set(pids) <= set(group.pids())
            used = group.cpu_seconds()
            assert used > 0, "the group counts the spinners' CPU"
            _assert_lowest_priority_beside_bidbench(group)
        finally:
            awake.stop()
        assert not [pid for pid in pids if _running(pid)]
    finally:
        group.close()


def _assert_lowest_priority_beside_bidbench(group: object) -> None:
    paths = getattr(group, "paths", None)
    if paths is not None:  # cgroup v1
        cpu = paths["cpu"]
        assert (cpu / "cpu.shares").read_text().strip() == "2"
        assert cpu.parent.name != GROUP_PARENT
    path = getattr(group, "path", None)
    if path is not None and paths is None:  # cgroup v2
        assert (path / "cpu.weight").read_text().strip() == "1"
        assert path.parent.name != GROUP_PARENT


def test_keep_awake_is_refused_without_resource_groups(tmp_path: Path) -> None:
    assert KeepAwake.in_new_group("none", tmp_path / "awake.log") is None


def test_spinners_end_when_the_process_that_started_them_is_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    starter = textwrap.dedent(
        f"""
        import time
        from pathlib import Path
        from harness.engine.keep_awake import KeepAwake
        from harness.engine.resources import Limits, new_group
        awake = KeepAwake(new_group("none", "keep-awake-orphan", Limits()), Path({str(tmp_path / "log")!r}), cores=2)
        awake.start()
        Path({str(pid_file)!r}).write_text(" ".join(str(p.pid) for p in awake.procs))
        time.sleep(60)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", starter], cwd=Path(__file__).resolve().parents[1])
    try:
        deadline = time.monotonic() + 20
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pid_file.exists(), "the starter did not start its spinners"
        pids = [int(p) for p in pid_file.read_text().split()]
    finally:
        parent.kill()
        parent.wait(10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_running(p) for p in pids):
        time.sleep(0.1)
    assert not [p for p in pids if _running(p)], "a spinner outlived the process that started it"


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
