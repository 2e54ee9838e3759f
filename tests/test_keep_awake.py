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
from harness.engine.resources import Limits, detect_backend, new_group


@pytest.mark.parametrize("backend", sorted({detect_backend(), "none"}))
def test_spinners_run_at_the_lowest_class_in_their_group_and_stop(tmp_path: Path, backend: str) -> None:
    group = new_group(backend, "keep-awake-test", Limits())
    awake = KeepAwake(group, tmp_path / "awake.log", cores=2)
    try:
        with awake:
            pids = [p.pid for p in awake.procs]
            time.sleep(0.5)
            assert awake.alive() == 2
            assert all(os.sched_getscheduler(pid) == os.SCHED_IDLE for pid in pids)
            assert set(pids) <= set(group.pids())
            used = group.cpu_seconds()
            assert used > 0, "the group counts the spinners' CPU"
        assert not [pid for pid in pids if _running(pid)]
    finally:
        group.close()


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
