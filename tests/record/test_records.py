"""The result records (harness/record/): a round trip keeps every field, an older record arrives upgraded,
and a record from a newer bidbench is refused with a message that says so."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness import paths
from harness.analysis.load import AnalysisError, discover, read_run
from harness.record import index_line, manifest
from harness.record.folders import RunFolder, append_index, git_state, new_run_folder
from harness.record.index_line import IndexLine, append_line, read_index, read_lines
from harness.record.manifest import Manifest, RegimeRef, read_manifest, write_manifest
from harness.record.schema import SchemaError


def _manifest(run_id: str) -> Manifest:
    return Manifest.new(
        run_id,
        "node",
        "default",
        RegimeRef("fixed-rate", "node/default/fixed-rate/rate=300", {"rate": 300}, 2),
        load={"model": "open", "rate": 300, "users": None},
        instances=1,
        cpu_limit_cores=1.0,
        slo={"p99_ms": 50.0},
        sections={"session": {"window": 0, "fresh_start": True}, "knobs": {"NODE_WORKERS": "0"}},
    )


def test_a_manifest_round_trips(tmp_path: Path) -> None:
    folder = new_run_folder("node", "fixed-rate", tmp_path)
    written = _manifest(folder.run_id)
    written.finish("completed", None)
    write_manifest(folder, written)
    data = folder.read_json("manifest.json")
    assert data["schema_version"] == manifest.SCHEMA_VERSION and "schema" not in data
    assert data["regime"] == {
        "name": "fixed-rate",
        "group": "node/default/fixed-rate/rate=300",
        "point": {"rate": 300},
        "repetition": 2,
    }
    assert data["knobs"] == {"NODE_WORKERS": "0"} and data["status"] == "completed"
    assert read_manifest(folder) == written
    assert Manifest.from_json(written.to_json()).to_json() == written.to_json()


def test_an_index_line_round_trips(tmp_path: Path) -> None:
    folder = new_run_folder("node", "fixed-rate", tmp_path)
    record = _manifest(folder.run_id)
    record.finish("failed", "node exited")
    line = IndexLine.of(folder, record, valid=False, slo_met=False)
    append_line(line, tmp_path)
    assert read_lines(tmp_path) == [line]
    (raw,) = (json.loads(text) for text in (tmp_path / "index.jsonl").read_text().splitlines())
    assert raw["schema_version"] == index_line.SCHEMA_VERSION
    assert {k: raw[k] for k in ("impl", "regime", "group", "point", "repetition", "status")} == {
        "impl": "node",
        "regime": "fixed-rate",
        "group": "node/default/fixed-rate/rate=300",
        "point": {"rate": 300},
        "repetition": 2,
        "status": "failed",
    }


def _old_folder(root: Path) -> Path:
    """A folder as the first versions wrote it: `schema` 1, the flat regime layout, k6 in the runtimes."""
    folder = root / "20250101T000000Z-php-users-bbbbbb"
    folder.mkdir(parents=True)
    old = {
        "schema": 1,
        "run_id": folder.name,
        "created_utc": "2025-01-01T00:00:00.000000Z",
        "status": "completed",
        "impl": "php",
        "variant": "default",
        "regime": "users",
        "group": "php/default/users/users=8",
        "point": {"users": 8},
        "repetition": 1,
        "load": {"model": "closed", "users": 8},
        "instances": 2,
        "cpu_limit_cores": 0.5,
        "runtimes": {"php": "8.2", "k6": "v0.50"},
    }
    (folder / "manifest.json").write_text(json.dumps(old))
    (folder / "metrics.json").write_text(json.dumps({"throughput_rps": 100.0}))
    (folder / "verdict.json").write_text(json.dumps({"valid": True}))
    return folder


def test_an_old_manifest_is_upgraded_before_anyone_reads_it(tmp_path: Path) -> None:
    folder = _old_folder(tmp_path)
    record = read_manifest(RunFolder(folder))
    assert record.regime == RegimeRef("users", "php/default/users/users=8", {"users": 8}, 1)
    assert record.sections == {"runtimes": {"php": "8.2", "load_driver": "k6 v0.50"}}
    run = read_run(folder)
    assert (run.regime, run.point, run.repetition) == ("users", "users=8", 1)
    assert run.record is not None and run.record.regime == record.regime
    assert (run.instances, run.cpu_limit, run.users) == (2, 0.5, 8)
    assert "schema" not in run.manifest and "point" not in run.manifest


def test_an_index_line_from_before_versioning_is_upgraded(tmp_path: Path) -> None:
    append_index(
        {
            "run_id": "r",
            "path": "r",
            "impl": "java",
            "regime": "fixed-rate",
            "status": "completed",
            "valid": True,
        },
        tmp_path,
    )
    (line,) = read_lines(tmp_path)
    assert line.valid and line.slo_met is False and line.variant == "default"
    assert read_index(tmp_path)[0]["schema_version"] == index_line.SCHEMA_VERSION


def test_a_manifest_from_a_newer_bidbench_is_refused(tmp_path: Path) -> None:
    newer = {**_manifest("x").to_json(), "schema_version": manifest.SCHEMA_VERSION + 1}
    with pytest.raises(SchemaError, match=r"schema_version 3, newer than this bidbench reads \(2\)"):
        Manifest.from_json(newer)
    folder = _old_folder(tmp_path)
    (folder / "manifest.json").write_text(json.dumps(newer))
    run = read_run(folder)
    assert not run.is_valid and any("newer than this bidbench reads" in r for r in run.reasons)


def test_an_index_line_from_a_newer_bidbench_is_refused(tmp_path: Path) -> None:
    (tmp_path / "index.jsonl").write_text(
        json.dumps({"schema_version": 99, "run_id": "r", "path": "r"}) + "\n"
    )
    with pytest.raises(SchemaError, match="index line has schema_version 99"):
        read_lines(tmp_path)
    with pytest.raises(AnalysisError, match="index.jsonl:1: this index line has schema_version 99"):
        discover([], index=tmp_path / "index.jsonl")


def test_the_replication_report_never_makes_a_checkout_dirty(tmp_path: Path) -> None:
    """`replicate` rewrites the report and its evidence after every claim; the runs of the claims after it
    stay clean."""
    report = tmp_path / paths.REPLICATION_REPORT.relative_to(paths.ROOT)
    sums = tmp_path / paths.REPLICATION_EVIDENCE.relative_to(paths.ROOT) / "SHA256SUMS"
    sums.parent.mkdir(parents=True)
    report.write_text("old\n")
    sums.write_text("old\n")
    code = tmp_path / "app.py"
    code.write_text("x = 1\n")

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    assert git_state(tmp_path)["dirty"] is False
    report.write_text("new verdicts\n")
    sums.write_text("new sums\n")
    assert git_state(tmp_path)["dirty"] is False
    code.write_text("x = 2\n")
    assert git_state(tmp_path)["dirty"] is True
