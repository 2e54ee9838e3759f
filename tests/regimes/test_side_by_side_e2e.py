"""Side by side for real (harness/engine/side_by_side.py): node and php started, pre-warmed and measured
together through the real CLI, against a private PostgreSQL, with the real load driver and cgroups. The
assertions are on what is stored and on what a recomputation from the stored records gives; never on
how fast this shared machine was."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import psutil
import pytest
from cli_run import run_bidbench

from harness import paths
from harness.engine.driver import LoadSettings
from harness.engine.instances import INSTANCE_MARKER
from harness.engine.session import RunPlan
from harness.model.side_by_side import preset

pytestmark = pytest.mark.slow

COMMAND_BOUND_S = 420.0


def _bidbench(results: Path, database: str, *args: str) -> str:
    return run_bidbench(results, database, COMMAND_BOUND_S, *args)


def _instances_under(root: Path) -> list[int]:
    found = []
    for proc in psutil.process_iter():
        try:
            marker = proc.environ().get(INSTANCE_MARKER, "")
            if marker.startswith(str(root)) and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc.pid)
        except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
    return found


def _records(results: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(results.glob("*/side-by-side.json"))]


def test_two_apps_side_by_side_are_measured_in_the_same_seconds(tmp_path: Path, private_db: str) -> None:
    results = tmp_path / "results"
    first = tmp_path / "first.json"
    _bidbench(
        results,
        private_db,
        "side-by-side",
        "--impl",
        "node,php",
        "--preset",
        "quick",
        "-r",
        "1",
        "--json",
        str(first),
    )
    (record,) = _records(results)
    assert record["status"] == "completed", record["reason"]
    assert sorted(record["start_order"]) == ["node", "php"]
    cost = record["cost"]
    for label in ("node", "php"):
        steps = cost["steps"][label]
        assert [s["rate"] for s in steps] == cost["rates"]
        for step in steps:
            # Each group's own CPU, its own share of PostgreSQL's and its driver's, in the step's seconds.
            assert step["instance_cpu_s"] is not None and step["instance_cpu_s"] > 0
            assert step["db_cpu_s"] is not None and step["db_cpu_s"] >= 0
            assert step["loadgen_cpu_s"] is not None and step["loadgen_cpu_s"] > 0
            assert 0 <= step["steal_pct"] <= 100 and 0 <= step["host_busy_pct"] <= 100
        assert cost["backends"][label] >= 1
        # A backend a group opens inside a step is mapped within seconds and counted from its birth, so
        # one step may miss it; the group's share over its steps may not.
        assert sum(s["db_cpu_s"] for s in steps) > 0
    # Both drivers ran on one clock, the group started second half an interval after the first: the
    # same seconds of the host, the two streams interleaved evenly.
    (folder,) = [p.parent for p in results.glob("*/side-by-side.json")]
    assert record["arrival_phases"] == {record["start_order"][0]: 0.0, record["start_order"][1]: 0.5}
    drivers = {
        label: json.loads((folder / "load" / f"cost-{label}.json").read_text()) for label in ("node", "php")
    }
    assert drivers["node"]["started_at_unix"] == drivers["php"]["started_at_unix"]
    for label, summary in drivers.items():
        assert summary["settings"]["phase"] == record["arrival_phases"][label]
    for node_step, php_step in zip(cost["steps"]["node"], cost["steps"]["php"], strict=True):
        assert node_step["start_s"] == pytest.approx(php_step["start_s"], abs=0.01)
    # A step is compared only if every group kept up, unthrottled, and the host was under its limit.
    for index in cost["paired_steps"]:
        assert index not in cost["flagged_throttled"]
        for label in ("node", "php"):
            (step,) = [s for s in cost["steps"][label] if s["index"] == index]
            assert step["kept_up"] and step["host_busy_pct"] <= cost["host_max_pct"]
            assert not step["throttled_share"]
    if record["valid"]:
        for label in ("node", "php"):
            assert (
                cost["groups"][label]["app_us"] > 0
                and cost["groups"][label]["stack_us"] > cost["groups"][label]["app_us"]
            )
    else:
        assert "no cost for" in record["reason"] and "steps paired" in record["reason"]
    # Every printed figure comes back from the stored records alone.
    again = tmp_path / "again.json"
    _bidbench(results, private_db, "side-by-side", "--from", str(results), "--json", str(again))
    first_summary, second_summary = json.loads(first.read_text()), json.loads(again.read_text())
    for summary in (first_summary, second_summary):
        summary.pop("folders")
    assert first_summary == second_summary
    for root in record["session_roots"].values():
        assert not _instances_under(Path(root)), f"app processes left under {root}"
        assert not Path(root).exists(), f"{root}: the fresh start's runtime files were left behind"
    (folder,) = [p for p in results.iterdir() if p.is_dir() and (p / "logs").is_dir()]
    # each group's instance logs in a subfolder of its own (two groups of one app name instances alike)
    logs = {str(p.parent.relative_to(folder / "logs")) for p in (folder / "logs").rglob("*.log")}
    assert {"node/node-0", "php/php-0"} <= logs, logs


def test_a_group_that_cannot_start_fails_the_fresh_start_and_stops_the_others(
    tmp_path: Path, private_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.engine.side_by_side import Group, run_fresh_start

    monkeypatch.setenv("BIDBENCH_DATABASE_URL", private_db)
    base = RunPlan(impl="php", load=LoadSettings(targets=[]), cpus=0.5)
    groups = [
        Group("php", base),
        Group("node-broken", replace(base, impl="node", knobs={"NODE_WORKERS": "many"})),
    ]
    outcome = run_fresh_start(groups, preset("quick"), results_dir=tmp_path, seed=1)
    assert outcome.status == "failed"
    assert outcome.failed_group == "node-broken"
    assert "could not start" in outcome.reason
    assert not outcome.record["valid"]
    stored = json.loads((outcome.folder.path / "side-by-side.json").read_text())
    assert stored["failed_group"] == "node-broken"
    mine = {p.pid for p in psutil.Process().children(recursive=True)}
    assert not [pid for pid in _instances_under(paths.RUNTIME) if pid in mine]


def _drivers_aimed_at(urls: list[str]) -> list[int]:
    found = []
    for proc in psutil.process_iter(["name"]):
        try:
            if proc.info["name"] == "bidbench-load" and proc.status() != psutil.STATUS_ZOMBIE:
                targets = proc.environ().get("BB_TARGETS", "")
                if any(url in targets for url in urls):
                    found.append(proc.pid)
        except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
    return found


def _side_by_side_in_background(results: Path, database: str) -> subprocess.Popen[str]:
    """node and php side by side (quick preset, one fresh start) through the real CLI, its output piped."""
    env = dict(os.environ, BIDBENCH_RESULTS=str(results), BIDBENCH_DATABASE_URL=database, COLUMNS="220")
    return subprocess.Popen(
        [str(paths.ROOT / "bidbench"), "side-by-side", "--impl", "node,php", "--preset", "quick", "-r", "1"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _assert_nothing_left(record: dict[str, Any], when: str) -> None:
    """No app process under any group's session root, and no load driver aimed at any group."""
    for root in record["session_roots"].values():
        assert not _instances_under(Path(root)), f"app processes left under {root} {when}"
    urls = [url for group in record["urls"].values() for url in group]
    assert not _drivers_aimed_at(urls), f"load drivers left running {when}"


def test_ctrl_c_during_the_pre_warm_stops_every_group_and_driver_and_keeps_the_record(
    tmp_path: Path, private_db: str
) -> None:
    results = tmp_path / "results"
    proc = _side_by_side_in_background(results, private_db)
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:  # bounded: the command ends on its own within COMMAND_BOUND_S
        seen.append(line)
        if "pre-warming together" in line:
            time.sleep(1.0)
            proc.send_signal(signal.SIGINT)
            break
    try:
        rest, _ = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("side-by-side did not stop within 120 s of Ctrl-C")
    assert proc.returncode != 0, "".join(seen) + rest
    (record,) = _records(results)
    assert record["status"] == "interrupted" and not record["valid"]
    _assert_nothing_left(record, "after Ctrl-C")


def test_a_group_that_dies_mid_fresh_start_invalidates_it_for_every_group_and_is_named(
    tmp_path: Path, private_db: str
) -> None:
    results = tmp_path / "results"
    proc = _side_by_side_in_background(results, private_db)
    assert proc.stdout is not None
    seen, killed = [], []
    for line in proc.stdout:  # bounded: the command ends on its own within COMMAND_BOUND_S
        seen.append(line)
        if "cost steps" in line and not killed:
            time.sleep(1.0)
            for child in psutil.Process(proc.pid).children(recursive=True):
                try:
                    if child.name() == "node" and INSTANCE_MARKER in child.environ():
                        child.kill()
                        killed.append(child.pid)
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    continue
            break
    try:
        rest, _ = proc.communicate(timeout=COMMAND_BOUND_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("side-by-side did not end after one of its groups died")
    output = "".join(seen) + rest
    assert killed, output
    (record,) = _records(results)
    assert record["status"] == "failed" and not record["valid"], record
    assert record["failed_group"] == "node" and "died" in record["reason"], record["reason"]
    assert "node" in output and "died" in output
    _assert_nothing_left(record, "after a group died")
