"""verdict.json as a record (harness/record/verdict.py): a round trip keeps every check, an older file
arrives upgraded, and a file from a newer bidbench is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from record_helpers import write_fixed_rate_run

from harness.analysis.load import read_run
from harness.record import verdict as verdict_record
from harness.record.folders import new_run_folder
from harness.record.schema import SchemaError
from harness.record.verdict import Check, Verdict, write_verdict


def _verdict() -> Verdict:
    return Verdict(
        valid=False,
        reasons=["the load driver used 90 % CPU (limit 80 %)"],
        checks={
            "loadgen_cpu": Check(False, 90.0, 80.0, "the load driver used 90 % CPU (limit 80 %)"),
            "late_sends": Check(True, 0, 0, "none"),
        },
        slo={"definition": "p99 <= 50 ms", "met": False},
    )


def test_a_verdict_round_trips_with_todays_keys(tmp_path: Path) -> None:
    folder = new_run_folder("node", "fixed-rate", tmp_path)
    written = _verdict()
    write_verdict(folder, written)
    data = folder.read_json("verdict.json")
    assert data == {
        "schema_version": verdict_record.SCHEMA_VERSION,
        "valid": False,
        "reasons": written.reasons,
        "checks": {
            "loadgen_cpu": {
                "ok": False,
                "value": 90.0,
                "threshold": 80.0,
                "detail": "the load driver used 90 % CPU (limit 80 %)",
            },
            "late_sends": {"ok": True, "value": 0, "threshold": 0, "detail": "none"},
        },
        "slo": {"definition": "p99 <= 50 ms", "met": False},
    }
    assert Verdict.from_json(folder.read_json(verdict_record.FILE)) == written


def test_notes_are_written_only_when_there_are_some() -> None:
    record = Verdict(valid=True, reasons=[], notes=["the capacity is a lower bound"])
    assert record.to_json()["notes"] == ["the capacity is a lower bound"]
    assert Verdict.from_json(record.to_json()) == record
    assert "notes" not in _verdict().to_json()


def test_a_k6_era_verdict_is_upgraded() -> None:
    old = {
        "valid": False,
        "checks": {"dropped_iterations": {"ok": False, "value": 3}, "loadgen_cpu": {"ok": True}},
    }
    record = Verdict.from_json(old)
    assert set(record.checks) == {"late_sends", "loadgen_cpu"}
    assert record.checks["late_sends"] == Check(False, 3, None, "")
    assert record.to_json()["schema_version"] == verdict_record.SCHEMA_VERSION


def test_a_verdict_from_a_newer_bidbench_is_refused(tmp_path: Path) -> None:
    newer = {**_verdict().to_json(), "schema_version": verdict_record.SCHEMA_VERSION + 1}
    with pytest.raises(
        SchemaError, match=r"verdict.json has schema_version 2, newer than this bidbench reads \(1\)"
    ):
        Verdict.from_json(newer)
    run = read_run(write_fixed_rate_run(tmp_path, "cccccc", {"throughput_rps": 100.0}, newer))
    assert run.verdict is None and not run.is_valid
    assert any("newer than this bidbench reads" in reason for reason in run.reasons)
