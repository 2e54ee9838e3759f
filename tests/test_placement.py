"""The CPU split between the system under test and the load driver (issue #28)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import asdict

import pytest

from harness.console import UserError
from harness.engine.placement import ENV, pin_tree, plan_cpus, plan_here
from harness.engine.resources import format_cpuset, parse_cpuset


def test_two_cores_are_not_split_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    plan = plan_cpus(2, cpus={0, 1})
    assert not plan.split and plan.system_cpus is None and plan.driver_cpus is None
    assert ENV in plan.reason
    monkeypatch.setenv(ENV, "split")
    forced = plan_cpus(2, cpus={0, 1})
    assert forced.split and forced.system_cpus == "0" and forced.driver_cpus == "1"


@pytest.mark.parametrize(
    ("cores", "system", "driver"),
    [(3, "0-1", "2"), (4, "0-2", "3"), (8, "0-5", "6-7"), (16, "0-11", "12-15")],
)
def test_larger_machines_give_the_driver_a_quarter(cores: int, system: str, driver: str) -> None:
    plan = plan_cpus(cores, mode="auto", cpus=set(range(cores)))
    assert plan.split and (plan.system_cpus, plan.driver_cpus) == (system, driver)
    manifest = asdict(plan)
    assert (
        manifest["system_cpus"] == system and manifest["driver_cpus"] == driver and manifest["cores"] == cores
    )


def test_off_and_one_core_and_a_bad_mode() -> None:
    assert not plan_cpus(8, mode="off").split
    assert not plan_cpus(1, mode="split").split
    with pytest.raises(UserError, match=ENV):
        plan_cpus(4, mode="sometimes")


def test_split_follows_the_cpus_this_process_may_use() -> None:
    plan = plan_cpus(4, mode="split", cpus={2, 3, 6, 7})
    assert (plan.system_cpus, plan.driver_cpus) == ("2-3,6", "7")
    here = plan_here(mode="split")
    assert here.cores == len(os.sched_getaffinity(0))


def test_cpuset_lists_round_trip() -> None:
    for spec in ("0", "0-3", "0-2,5", "1,3,5-7"):
        assert format_cpuset(parse_cpuset(spec)) == spec


def test_pin_tree_pins_a_parent_and_its_child() -> None:
    cpu = max(os.sched_getaffinity(0))
    # Both sleep past the wait below; the test kills them when done.
    code = "import subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']); time.sleep(120)"
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        import time

        import psutil

        deadline = time.monotonic() + 60
        while not psutil.Process(proc.pid).children() and time.monotonic() < deadline:
            time.sleep(0.05)
        pinned = pin_tree(proc.pid, str(cpu))
        assert len(pinned) == 2
        assert all(os.sched_getaffinity(pid) == {cpu} for pid in pinned)
    finally:
        for child in psutil.Process(proc.pid).children(recursive=True):
            child.kill()
        proc.kill()
        proc.wait()
    assert pin_tree(proc.pid, "0") == []
