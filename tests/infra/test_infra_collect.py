"""`./bidbench collect` (harness/engine/distributed.py): the shards of a distributed load, run for real (two
`bidbench-load run` processes with BB_SHARDS=2 against the loopback fake service), read from a pod log and
a summary file, merged by `bidbench-load merge` and stored as one result folder."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.console import UserError
from harness.engine import distributed

ROOT = Path(__file__).resolve().parents[2]


def _fake_service() -> Any:
    spec = importlib.util.spec_from_file_location("fake_service", ROOT / "tests/loadgen/fake_service.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fake_service"] = module
    spec.loader.exec_module(module)
    return module.FakeService


@pytest.fixture(scope="module")
def driver() -> Path:
    """The driver as `./bidbench setup` provides it (built from loadgen/ when missing or out of date)."""
    return distributed.driver_binary()


@pytest.fixture(scope="module")
def shard_outputs(driver: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Two shards of one run, started together: shard 0 as `kubectl logs` shows a pod (diagnostics, then
    the summary on stdout), shard 1 writing BB_SUMMARY."""
    folder = tmp_path_factory.mktemp("shards")
    with _fake_service()() as service:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "BB_TARGETS": service.url,
            "BB_MIX": "browse",
            "BB_RATE": "60",
            "BB_WARMUP": "1s",
            "BB_DURATION": "3s",
            "BB_SHARDS": "2",
        }
        with (folder / "pod-0.log").open("w") as log0:
            first = subprocess.Popen(
                [str(driver), "run"],
                env={**env, "JOB_COMPLETION_INDEX": "0"},
                stdout=log0,
                stderr=subprocess.STDOUT,
            )
            second = subprocess.Popen(
                [str(driver), "run"],
                env={**env, "BB_SHARD_INDEX": "1", "BB_SUMMARY": str(folder / "shard-1.json")},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            assert first.wait(timeout=60) == 0 and second.wait(timeout=60) == 0
    yield folder


def test_each_input_is_one_shard_of_the_run(shard_outputs: Path) -> None:
    inputs = distributed.find_inputs([shard_outputs])
    assert [p.name for p in inputs] == ["pod-0.log", "shard-1.json"]
    shards = [distributed.shard_of(p, distributed.read_summary(p)) for p in inputs]
    assert [(s.index, s.shards, s.partial) for s in shards] == [(0, 2, False), (1, 2, False)]
    distributed.check_shards(shards)
    with pytest.raises(UserError, match="expected shards 0..1 of 2"):
        distributed.check_shards([shards[0], shards[0]])
    with pytest.raises(UserError, match="expected shards 0..1 of 2"):
        distributed.check_shards(shards[1:])


def test_a_log_without_a_whole_summary_is_refused(shard_outputs: Path, tmp_path: Path) -> None:
    text = (shard_outputs / "pod-0.log").read_text()
    truncated = tmp_path / "truncated.log"
    truncated.write_text(text[: len(text) - 40])
    with pytest.raises(UserError, match="not complete JSON"):
        distributed.read_summary(truncated)
    other = tmp_path / "other.log"
    other.write_text('starting\n{"driver": "something-else", "requests": 1}\n')
    with pytest.raises(UserError, match="not a bidbench-load summary"):
        distributed.read_summary(other)
    empty = tmp_path / "empty.log"
    empty.write_text("waiting for java\n")
    with pytest.raises(UserError, match="no JSON summary"):
        distributed.read_summary(empty)


def test_collect_merges_the_shards_into_one_result_folder(
    shard_outputs: Path, tmp_path: Path, driver: Path
) -> None:
    summaries = [distributed.read_summary(p) for p in distributed.find_inputs([shard_outputs])]
    outcome = distributed.collect([shard_outputs], "node", results_dir=tmp_path, binary=driver)
    assert outcome.status == "completed", outcome.reason
    folder = outcome.folder
    merged = folder.read_json(distributed.SUMMARY_FILE)
    assert merged["driver"] == "bidbench-load" and merged["shards"] == 2
    # Counts add up; the pooled maximum is the largest shard maximum (the percentiles come from the
    # pooled histograms, so they are exact; the driver's own tests check that).
    assert merged["requests"] == sum(s["requests"] for s in summaries) > 0
    assert merged["latency_ms"]["max"] == max(s["latency_ms"]["max"] for s in summaries)
    assert merged["settings"]["rate"] == 60, "BB_RATE is the total over the shards"

    metrics = folder.read_json("metrics.json")
    assert metrics["requests"] == merged["requests"] and metrics["ok"] == merged["ok"]
    assert metrics["window_s"] == 3 and metrics["offered_rps"] == 60
    assert metrics["shards"] == 2
    assert metrics["resources_known"] is False and metrics["normalized_throughput"] is None
    assert metrics["loadgen_cpu_pct"] is None

    verdict = folder.read_json("verdict.json")
    assert verdict["checks"]["loadgen_cpu"]["value"] is None, "not measured, and not made up"
    assert verdict["checks"]["late_sends"]["value"] == merged["late_sends"], "the driver's own evidence"
    skew = verdict["checks"]["shard_start_skew"]
    assert skew["value"] >= 0 and skew["threshold"] == distributed.MAX_START_SKEW_S

    manifest = folder.read_json("manifest.json")
    assert manifest["status"] == "completed" and manifest["regime"]["name"] == "remote"
    assert manifest["target"]["resource_source"] == "none" and "UNKNOWN" in manifest["target"]["note"]
    assert manifest["target"]["urls"] == merged["settings"]["targets"]
    assert [s["index"] for s in manifest["distributed"]["shards"]] == [0, 1]
    assert manifest["runtimes"] == {"bidbench-load": merged["driver_version"]}
    assert sorted(p.name for p in folder.logs.iterdir()) == ["pod-0.log", "shard-1.json"]
    (entry,) = [json.loads(line) for line in (tmp_path / "index.jsonl").read_text().splitlines()]
    assert entry["run_id"] == folder.run_id and entry["regime"] == "remote" and entry["status"] == "completed"


def test_the_collect_command(shard_outputs: Path, tmp_path: Path, driver: Path) -> None:
    """`./bidbench collect --from DIR`, through the CLI (the command is registered, its exit status)."""
    done = subprocess.run(
        [sys.executable, "-m", "harness", "collect", "--from", str(shard_outputs), "--impl", "php"],
        env=dict(os.environ, BIDBENCH_RESULTS=str(tmp_path / "results")),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 shards" in done.stdout and "result folder:" in done.stdout
    (folder,) = (tmp_path / "results").glob("*-php-remote-*")
    assert json.loads((folder / "manifest.json").read_text())["impl"] == "php"
