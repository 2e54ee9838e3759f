"""The one place that knows how result folders written by earlier versions of bidbench spelled things.

Records carry a schema version (harness/record/schema.py); an older one is upgraded here one version at a
time, so the record types and their readers only ever see today's form. Folders from before issue #27 were
written with k6: the driver's summary was `k6-summary.json`, its log `logs/k6.log`, its resource group `k6`,
and a request not sent in time was a "dropped iteration" (today's `late_sends`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.record.schema import (
    INDEX_LINE_VERSION,
    MANIFEST_VERSION,
    METRICS_VERSION,
    VERDICT_VERSION,
    version_of,
)

SUMMARY = "load-summary.json"
LOG = "loadgen.log"
GROUP = "loadgen"
_LEGACY_SUMMARY = "k6-summary.json"
_LEGACY_GROUP = "k6"


def load_summary_path(folder: Path) -> Path:
    current = folder / SUMMARY
    legacy = folder / _LEGACY_SUMMARY
    return legacy if not current.exists() and legacy.exists() else current


def upgrade_load_summary(summary: dict[str, Any]) -> dict[str, Any]:
    """A legacy summary's fields under today's names (late_sends was dropped_iterations)."""
    if "late_sends" in summary or "dropped_iterations" not in summary:
        return summary
    upgraded = dict(summary)
    upgraded["late_sends"] = upgraded.pop("dropped_iterations")
    upgraded.setdefault("latency_sent_ms", None)
    return upgraded


Step = Callable[[dict[str, Any]], dict[str, Any]]


def _to_current(
    what: str, data: Any, current: int, before_versioning: int, steps: dict[int, Step]
) -> dict[str, Any]:
    """`data` taken one version at a time up to `current`; a newer version raises SchemaError."""
    version = version_of(what, data, current, before_versioning=before_versioning)
    while version < current:
        data, version = steps[version](data), version + 1
    return data


def metrics_to_current(data: Any) -> dict[str, Any]:
    return _to_current("metrics.json", data, METRICS_VERSION, 1, {1: _metrics_1_to_2})


def _metrics_1_to_2(old: dict[str, Any]) -> dict[str, Any]:
    upgraded = {k: v for k, v in old.items() if k != "schema"}
    if "dropped_iterations" in upgraded and "late_sends" not in upgraded:
        upgraded["late_sends"] = upgraded.pop("dropped_iterations")
    upgraded["schema_version"] = 2
    return upgraded


def verdict_to_current(data: Any) -> dict[str, Any]:
    return _to_current("verdict.json", data, VERDICT_VERSION, 0, {0: _verdict_0_to_1})


def _verdict_0_to_1(old: dict[str, Any]) -> dict[str, Any]:
    upgraded = {**old, "schema_version": 1}
    checks = old.get("checks")
    if isinstance(checks, dict) and "dropped_iterations" in checks:
        upgraded["checks"] = {
            ("late_sends" if k == "dropped_iterations" else k): v for k, v in checks.items()
        }
    return upgraded


def manifest_to_current(data: Any) -> dict[str, Any]:
    return _to_current("manifest", data, MANIFEST_VERSION, 1, {1: _manifest_1_to_2})


def _manifest_1_to_2(old: dict[str, Any]) -> dict[str, Any]:
    upgraded = {k: v for k, v in old.items() if k != "schema"}
    regime = upgraded.get("regime")
    if isinstance(regime, str):
        upgraded["regime"] = {
            "name": regime,
            "group": upgraded.pop("group", None),
            "point": upgraded.pop("point", None),
            "repetition": upgraded.pop("repetition", None),
        }
    runtimes = upgraded.get("runtimes")
    if isinstance(runtimes, dict) and _LEGACY_GROUP in runtimes:
        moved = {k: v for k, v in runtimes.items() if k != _LEGACY_GROUP}
        moved.setdefault("load_driver", f"{_LEGACY_GROUP} {runtimes[_LEGACY_GROUP]}")
        upgraded["runtimes"] = moved
    upgraded["schema_version"] = 2
    return upgraded


def index_line_to_current(data: Any) -> dict[str, Any]:
    return _to_current("index line", data, INDEX_LINE_VERSION, 0, {0: _index_line_0_to_1})


def _index_line_0_to_1(old: dict[str, Any]) -> dict[str, Any]:
    return {"slo_met": False, **old, "schema_version": 1}


# The numeric error codes of legacy traces that meant "no answer in time".
_LEGACY_TIMEOUT_CODES = {"1050", "1211"}


def trace_error_class(field: str) -> str:
    """A trace line's error field as today's class: timeout, refused, reset, other, or "-" for none."""
    if not field.isdigit():
        return field
    if field == "0":
        return "-"
    return "timeout" if field in _LEGACY_TIMEOUT_CODES else "other"


def trace_log(logs: Path) -> Path:
    """A fault run's trace: logs/trace.log, or the legacy driver log that carried the trace lines."""
    current = logs / "trace.log"
    legacy = logs / f"{_LEGACY_GROUP}.log"
    return legacy if not current.exists() and legacy.exists() else current
