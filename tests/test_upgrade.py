"""Result folders written before the load driver was bidbench's own still read, through harness/record/upgrade.py
alone: the legacy file names and fields are taken from that module, never spelled out elsewhere."""

from __future__ import annotations

import json
from pathlib import Path

from harness.analysis.load import read_run
from harness.faults import timeline
from harness.record import upgrade


def _legacy_folder(root: Path) -> Path:
    folder = root / "20250101T000000Z-node-fixed-rate-aaaaaa"
    (folder / "logs").mkdir(parents=True)
    (folder / "manifest.json").write_text(
        json.dumps(
            {
                "run_id": folder.name,
                "impl": "node",
                "regime": "fixed-rate",
                "status": "completed",
                "runtimes": {"node": "20.10.0", upgrade._LEGACY_GROUP: "v1.8.1"},
            }
        )
    )
    (folder / "metrics.json").write_text(json.dumps({"requests": 10, "ok": 10, "dropped_iterations": 3}))
    checks = {"dropped_iterations": {"ok": False, "value": 3}, "loadgen_cpu": {"ok": True}}
    (folder / "verdict.json").write_text(json.dumps({"valid": False, "checks": checks}))
    summary = {"schema": 1, "requests": 10, "ok": 10, "dropped_iterations": 3, "latency_ms": {"p99": 4.0}}
    (folder / upgrade._LEGACY_SUMMARY).write_text(json.dumps(summary))
    # A legacy fault run's trace lines sat in the generator's log, with numeric error codes.
    (folder / "logs" / f"{upgrade._LEGACY_GROUP}.log").write_text(
        "bbt m 1700000000000 10000.0 0 1050 get_item 0 -\nbbt m 1700000000001 1.5 0 1211 get_item 0 -\n"
        "bbt m 1700000000002 2.0 0 1212 get_item 0 -\nbbt m 1700000000003 3.0 200 0 get_item 0 -\n"
    )
    return folder


def test_a_legacy_folder_reads_under_todays_names(tmp_path: Path) -> None:
    run = read_run(_legacy_folder(tmp_path))
    assert (
        run.metrics is not None and run.metrics["late_sends"] == 3 and "dropped_iterations" not in run.metrics
    )
    assert run.verdict is not None and set(run.verdict["checks"]) == {"late_sends", "loadgen_cpu"}
    assert run.manifest["runtimes"] == {"node": "20.10.0", "load_driver": f"{upgrade._LEGACY_GROUP} v1.8.1"}
    assert run.path is not None
    summary = upgrade.upgrade_load_summary(json.loads(upgrade.load_summary_path(run.path).read_text()))
    assert summary is not None and summary["late_sends"] == 3 and summary["latency_ms"] == {"p99": 4.0}


def test_a_legacy_trace_reads_with_todays_error_classes(tmp_path: Path) -> None:
    folder = _legacy_folder(tmp_path)
    requests = timeline.read_trace(upgrade.trace_log(folder / "logs"))
    assert [r.klass for r in requests] == ["timeout", "timeout", "connection", "ok"]


def test_todays_files_win_over_legacy_ones(tmp_path: Path) -> None:
    folder = _legacy_folder(tmp_path)
    (folder / upgrade.SUMMARY).write_text(json.dumps({"schema": 2, "requests": 5, "late_sends": 0}))
    (folder / "logs" / "trace.log").write_text("bbt m 1700000000000 1.0 200 - get_item 0 -\n")
    assert upgrade.load_summary_path(folder).name == upgrade.SUMMARY
    summary = upgrade.upgrade_load_summary(json.loads(upgrade.load_summary_path(folder).read_text()))
    assert summary == {"schema": 2, "requests": 5, "late_sends": 0}
    assert [r.error for r in timeline.read_trace(upgrade.trace_log(folder / "logs"))] == ["-"]


def test_todays_trace_error_classes_are_kept() -> None:
    assert [upgrade.trace_error_class(f) for f in ("-", "timeout", "refused", "reset", "other")] == [
        "-",
        "timeout",
        "refused",
        "reset",
        "other",
    ]
