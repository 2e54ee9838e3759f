"""Reading the load driver's JSON summary (its fields are documented in loadgen/README.md)."""

from __future__ import annotations

from typing import Any

from harness.record.upgrade import upgrade_load_summary

REQUIRED = ("requests", "ok", "app_errors", "sys_errors", "late_sends", "latency_ms")


def digest_summary(summary: dict[str, Any]) -> dict[str, Any]:
    summary = upgrade_load_summary(summary)
    missing = [key for key in REQUIRED if key not in summary]
    if missing:
        raise ValueError(
            f"the load summary lacks {', '.join(missing)}; was it written by loadgen/ (bidbench-load)?"
        )
    if summary.get("partial"):
        raise ValueError("the load driver was interrupted: its summary is partial")
    return {
        "requests": int(summary["requests"]),
        "ok": int(summary["ok"]),
        "app_errors": int(summary["app_errors"]),
        "sys_errors": int(summary["sys_errors"]),
        "late_sends": int(summary["late_sends"]),
        "offered_rps": summary.get("offered_rps"),
        "latency_ms": summary["latency_ms"],
        "latency_sent_ms": summary.get("latency_sent_ms"),
        "per_type": summary.get("per_type", {}),
        "server_timing_ms": summary.get("server_timing_ms", {}),
        "over_1s": int(summary.get("over_1s") or 0),
        "statuses": summary.get("statuses", {}),
        "measure_start_unix": summary.get("measure_start_unix"),
        "steps": summary.get("steps"),
        "ladder": summary.get("ladder"),
    }
