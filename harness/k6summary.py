"""Reading the JSON summary written by loadgen-k6/bidbench.js (its shape is documented in loadgen-k6/README.md)."""

from __future__ import annotations

from typing import Any

REQUIRED = ("requests", "ok", "app_errors", "sys_errors", "dropped_iterations", "latency_ms")


def digest_summary(summary: dict[str, Any]) -> dict[str, Any]:
    missing = [key for key in REQUIRED if key not in summary]
    if missing:
        raise ValueError(f"the k6 summary lacks {', '.join(missing)}; is loadgen-k6/bidbench.js current?")
    return {
        "requests": int(summary["requests"]),
        "ok": int(summary["ok"]),
        "app_errors": int(summary["app_errors"]),
        "sys_errors": int(summary["sys_errors"]),
        "dropped_iterations": int(summary["dropped_iterations"]),
        "latency_ms": summary["latency_ms"],
        "per_type": summary.get("per_type", {}),
        "server_timing_ms": summary.get("server_timing_ms", {}),
        "over_1s": int(summary.get("over_1s") or 0),
        "statuses": summary.get("statuses", {}),
    }
