"""metrics.json as a record (harness/record/metrics.py): a round trip writes exactly the keys a run writes
today, an older file arrives upgraded, and a file from a newer bidbench is refused."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from record_helpers import write_fixed_rate_run

from harness.analysis.load import read_run
from harness.record import metrics as metrics_record
from harness.record.folders import RunFolder, new_run_folder
from harness.record.metrics import (
    LadderSection,
    LadderWindow,
    MeasuredWindow,
    Metrics,
    read_metrics,
    write_metrics,
)
from harness.record.schema import SchemaError


def _window() -> dict[str, Any]:
    """A fixed-rate run's whole-window figures, as the session's digest writes them."""
    return {
        "window_s": 20.0,
        "requests": 6000,
        "ok": 5990,
        "app_errors": 10,
        "sys_errors": 0,
        "late_sends": 0,
        "throughput_rps": 299.5,
        "offered_rps": 300.0,
        "latency_ms": {"mean": 2.1, "p50": 1.8, "p99": 6.2},
        "latency_sent_ms": {"mean": 2.0, "p99": 6.0},
        "over_1s_pct": 0.0,
        "statuses": {"200": 5990, "404": 10},
        "per_type": {"get_item": {"requests": 1200, "ok": 1200}},
        "server_timing_ms": {"samples": 6000},
        "instances": [{"name": "instance-0", "cpu_pct": 41.0, "pss_steady_mb": 168.0}],
        "resources_known": True,
        "cpu_pct_total": 41.0,
        "cpu_limit_cores": 1.0,
        "utilized_cpu": 0.41,
        "normalized_throughput": 7.3,
        "memory_per_instance_mb": 168.0,
        "loadgen_cpu_pct": 22.0,
        "db_cpu_pct": 15.0,
        "host_busy_pct": 40.0,
        "unaccounted_pct": 2.0,
        "steal_pct": 0.5,
    }


def _step(index: int, rate: float) -> dict[str, Any]:
    """One ladder step with every key harness/engine/ladder_digest.py writes."""
    step: dict[str, Any] = {f.name: None for f in fields(LadderWindow) if f.name != "extra"}
    step.update(index=index, rate=rate, step_s=2.0, requests=int(rate * 2), kept_up=True, problems=[])
    step["throttling"] = [None]
    return step


def _ladder_figures() -> dict[str, Any]:
    return {
        **_window(),
        "memory_by_process": {"instance-0": {"primary": 80.0}},
        "ladder": {
            "rates": [100.0, 200.0],
            "step_s": 2.0,
            "completed_steps": 2,
            "stopped": "all steps done",
            "stop_p99_ms": 50.0,
            "stop_after": 2,
            "steps": [_step(0, 100.0), _step(1, 200.0)],
            "cpu_cost": {"us_per_request": 900.0},
            "db_cost": None,
            "capacity": {"rps": 200.0, "bracketed": False},
            "saturation_rps": 199.0,
        },
        "cpu_us_per_request": 900.0,
        "capacity_at_least_rps": 200.0,
        "jvm_heap_after_gc": [{"used_mb": 40.0}],
    }


def test_a_runs_metrics_round_trip_with_todays_keys(tmp_path: Path) -> None:
    folder = new_run_folder("java", "ladder", tmp_path)
    figures = _ladder_figures()
    record = Metrics.of(figures)
    assert record.window == MeasuredWindow(**_window())
    assert isinstance(record.ladder, LadderSection) and [s.rate for s in record.ladder.steps] == [
        100.0,
        200.0,
    ]
    assert record.ladder.extra == {"completed_steps": 2, "stop_p99_ms": 50.0, "stop_after": 2}
    assert set(record.sections) == {
        "memory_by_process",
        "cpu_us_per_request",
        "capacity_at_least_rps",
        "jvm_heap_after_gc",
    }
    write_metrics(folder, record)
    written = folder.read_json("metrics.json")
    assert written == {"schema_version": metrics_record.SCHEMA_VERSION, **figures}
    assert read_metrics(folder) == record
    assert Metrics.from_json(record.to_json()).to_json() == record.to_json()


def test_a_capacity_search_without_capacity_has_only_its_sections() -> None:
    record = Metrics(window=None, sections={"capacity_rps": 0.0, "capacity_bound_by_measurement": False})
    assert record.to_json() == {
        "schema_version": metrics_record.SCHEMA_VERSION,
        "capacity_rps": 0.0,
        "capacity_bound_by_measurement": False,
    }
    assert Metrics.from_json(record.to_json()) == record


def test_a_metrics_json_with_the_old_schema_field_is_upgraded(tmp_path: Path) -> None:
    old = {"schema": 1, **_window()}
    record = Metrics.from_json(old)
    assert record.window == MeasuredWindow(**_window()) and record.sections == {}
    upgraded = record.to_json()
    assert "schema" not in upgraded and upgraded["schema_version"] == metrics_record.SCHEMA_VERSION


def test_a_k6_era_metrics_json_is_upgraded(tmp_path: Path) -> None:
    k6_era = {key: value for key, value in _window().items() if key != "late_sends"}
    k6_era["dropped_iterations"] = 3
    record = Metrics.from_json(k6_era)
    assert record.window is not None and record.window.late_sends == 3
    assert "dropped_iterations" not in record.to_json()
    # A folder of the first versions: no version, no window, the driver's old name for late sends.
    folder = tmp_path / "20250101T000000Z-node-fixed-rate-aaaaaa"
    folder.mkdir()
    (folder / "manifest.json").write_text(
        json.dumps({"impl": "node", "regime": "fixed-rate", "status": "completed"})
    )
    (folder / "metrics.json").write_text(json.dumps({"requests": 10, "ok": 10, "dropped_iterations": 3}))
    (folder / "verdict.json").write_text(json.dumps({"valid": True}))
    run = read_run(folder)
    assert run.metrics == {
        "schema_version": metrics_record.SCHEMA_VERSION,
        "requests": 10,
        "ok": 10,
        "late_sends": 3,
    }
    assert Metrics.from_json(json.loads((folder / "metrics.json").read_text())).window is None


def test_a_metrics_json_from_a_newer_bidbench_is_refused(tmp_path: Path) -> None:
    newer = {**Metrics.of(_window()).to_json(), "schema_version": metrics_record.SCHEMA_VERSION + 1}
    with pytest.raises(
        SchemaError, match=r"metrics.json has schema_version 3, newer than this bidbench reads \(2\)"
    ):
        Metrics.from_json(newer)
    run = read_run(write_fixed_rate_run(tmp_path, "bbbbbb", newer, {"valid": True}))
    assert run.metrics is None and any("newer than this bidbench reads" in r for r in run.reasons)


def test_readers_that_index_dicts_get_the_upgraded_files(tmp_path: Path) -> None:
    """claims, campaigns and the faults runner read metrics and verdicts through the records."""
    from harness.record.metrics import read_metrics_json
    from harness.record.verdict import read_verdict_json

    folder = RunFolder(tmp_path)
    assert read_metrics_json(folder) is None and read_verdict_json(folder) == {}
    folder.write_json("metrics.json", {"schema": 1, "dropped_iterations": 4})
    folder.write_json("verdict.json", {"valid": False, "checks": {"dropped_iterations": {"passed": False}}})
    metrics = read_metrics_json(folder)
    assert metrics is not None and "dropped_iterations" not in metrics and "schema" not in metrics
    verdict = read_verdict_json(folder)
    assert "late_sends" in verdict["checks"] and "dropped_iterations" not in verdict["checks"]
