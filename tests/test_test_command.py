"""`./bidbench test` itself: running one test is one command, and Ctrl-C leaves nothing behind and says which
suite it stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ownership import instance_processes, left_of, tree_footprint

from harness import paths
from harness.cli.test_suites import one_test_command

BIDBENCH = str(paths.ROOT / "bidbench")
README = paths.ROOT / "README.md"
# A node run with a pre-warm: its instance serves load for a minute, so the interrupt lands mid-run.
LONG_TEST = "tests/test_run_e2e.py::test_smoke_run_writes_a_complete_valid_folder[node]"


def test_one_test_command_is_the_readme_s() -> None:
    command = one_test_command(["tests/test_run_e2e.py::test_driver_failure_is_stored_as_failed"])
    assert command == (
        "./bidbench test --only python tests/test_run_e2e.py::test_driver_failure_is_stored_as_failed"
    )
    assert "./bidbench test --only python tests/" in README.read_text()
    assert one_test_command(["-k", "smoke"]) == "./bidbench test --only python -- -k smoke"


def test_pytest_run_directly_prints_the_one_test_command(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    node = "tests/test_run_e2e.py::test_driver_failure_is_stored_as_failed"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", node],
        cwd=paths.ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0
    assert f"    ./bidbench test --only python {node}\n" in done.stdout, done.stdout[-2000:]


@pytest.mark.slow
def test_ctrl_c_stops_the_running_suite_leaves_nothing_and_names_it(database_url: str) -> None:
    proc = subprocess.Popen(
        [BIDBENCH, "test", "--only", "python", LONG_TEST],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=dict(os.environ, COLUMNS="200"),
    )
    try:
        deadline = time.monotonic() + 300
        while (
            not instance_processes(tree_of=proc.pid) and proc.poll() is None and time.monotonic() < deadline
        ):
            time.sleep(0.5)
        assert instance_processes(tree_of=proc.pid), "the suite started no app instance within 300 s"
        pids, groups = tree_footprint(proc.pid)
    finally:
        # As `kill -INT` from a script or a CI runner's cancel: only ./bidbench gets the signal.
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=180)
    assert proc.returncode == 130, output[-3000:]
    assert "interrupted in suite python (pytest)" in output, output[-3000:]
    assert not left_of(pids, groups), f"left behind after Ctrl-C:\n{output[-3000:]}"


def test_a_test_on_the_shared_database_is_in_its_worker_group(
    database_url: str, request: pytest.FixtureRequest
) -> None:
    """Under `--dist loadgroup` xdist sends a group to one worker by a suffix on the node id; a group added after
    xdist read them (conftest's hook running second) would let two workers reset the shared database under
    each other. Outside loadgroup there is no suffix to check, and no second worker either."""
    # On a worker xdist resets --dist to "no" and keeps the choice in option.loadgroup.
    if not getattr(request.config.option, "loadgroup", False):
        assert "@" not in request.node.nodeid
        return
    assert request.node.nodeid.endswith("@shared-database"), request.node.nodeid
