"""infra/k8s/merge_summaries.py: merging the per-runner k6 summaries of a k6-operator TestRun."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from infra_helpers import K8S


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("merge_summaries", K8S / "merge_summaries.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["merge_summaries"] = module
    spec.loader.exec_module(module)
    return module


merge = _load()


def _latency(p50: float, p99: float, mx: float, mean: float) -> dict[str, float]:
    return {
        "mean": mean,
        "p50": p50,
        "p90": p99 - 1,
        "p95": p99 - 0.5,
        "p99": p99,
        "p999": mx - 0.1,
        "max": mx,
    }


def _summary(
    requests: int, ok: int, p99: float, mx: float, mean: float, window: float = 60.0
) -> dict[str, Any]:
    """A runner's summary in the shape loadgen-k6/bidbench.js writes (schema 1)."""
    return {
        "schema": 1,
        "script": "bidbench.js",
        "k6_version": "v1.8.1",
        "settings": {"targets": ["http://java:8080"], "mix": "browse", "model": "open", "rate": 300},
        "open_items": {"count": 100, "source": "setup"},
        "window_s": window,
        "requests": requests,
        "ok": ok,
        "app_errors": requests - ok,
        "sys_errors": 0,
        "throughput": {"ok_rps": round(ok / window, 3), "all_rps": round(requests / window, 3)},
        "offered_rps": 300,
        "dropped_iterations": 1,
        "dropped_iterations_total": 2,
        "vus_max": 70,
        "vus_peak": 12,
        "iteration_ms": {"mean": mean, "p99": p99, "max": mx},
        "latency_ms": _latency(2.0, p99, mx, mean),
        "server_timing_ms": {"samples": ok, "db": {"mean": 1.0, "p50": 0.9, "p99": 3.0}, "app": None},
        "invalid": {"requests": 0, "share": 0},
        "per_type": {
            "get_item": {
                "requests": requests,
                "ok": ok,
                "app_errors": requests - ok,
                "sys_errors": 0,
                "latency_ms": _latency(2.0, p99, mx, mean),
                "server_timing_ms": {"samples": ok, "db": {"mean": 1.0, "p50": 0.9, "p99": 3.0}, "app": None},
            }
        },
        "warmup": {
            "window_s": 15,
            "requests": 100,
            "sys_errors": 0,
            "latency_ms": {"mean": 3, "p50": 2, "p99": 9},
        },
        "test_run_duration_s": 75.2,
    }


def test_counts_and_rates_add_and_means_are_weighted() -> None:
    merged = merge.merge_summaries(
        [_summary(9000, 8990, 20.0, 50.0, 3.0), _summary(3000, 3000, 30.0, 80.0, 5.0)]
    )
    assert merged["requests"] == 12000
    assert merged["ok"] == 11990
    assert merged["app_errors"] == 10
    assert merged["dropped_iterations"] == 2
    assert merged["vus_max"] == 140
    assert merged["throughput"]["ok_rps"] == pytest.approx(11990 / 60, abs=0.01)
    assert merged["latency_ms"]["mean"] == pytest.approx((9000 * 3.0 + 3000 * 5.0) / 12000)
    assert merged["latency_ms"]["max"] == 80.0
    assert merged["per_type"]["get_item"]["requests"] == 12000
    assert merged["server_timing_ms"]["samples"] == 11990
    assert merged["warmup"]["requests"] == 200
    assert merged["test_run_duration_s"] == 75.2


def test_percentiles_are_bounded_not_averaged() -> None:
    merged = merge.merge_summaries(
        [_summary(9000, 9000, 20.0, 50.0, 3.0), _summary(3000, 3000, 30.0, 80.0, 5.0)]
    )
    assert merged["latency_ms"]["p99"] == 30.0, "the upper bound, never the mean 25.0"
    bounds = merged["merge"]["percentile_bounds"]
    assert bounds["latency_ms.p99"] == [20.0, 30.0]
    assert bounds["per_type.get_item.latency_ms.p99"] == [20.0, 30.0]
    assert merged["merge"]["runners"] == 2


def test_settings_must_agree_and_differences_are_reported() -> None:
    first, second = _summary(10, 10, 1.0, 2.0, 1.0), _summary(10, 10, 1.0, 2.0, 1.0)
    assert merge.merge_summaries([first, second])["merge"]["conflicts"] == {}
    second["settings"]["mix"] = "bid"
    merged = merge.merge_summaries([first, second])
    assert merged["merge"]["conflicts"] == {"settings.mix": ["browse", "bid"]}
    assert merged["settings"]["mix"] == "browse"
    assert merged["offered_rps"] == 300, "every runner reports the total offered rate: it is kept, not added"


def test_a_runner_without_requests_does_not_break_the_merge() -> None:
    empty = _summary(0, 0, 1.0, 1.0, 1.0)
    empty["latency_ms"] = None
    merged = merge.merge_summaries([_summary(100, 100, 5.0, 9.0, 2.0), empty])
    assert merged["requests"] == 100
    assert merged["latency_ms"]["p99"] == 5.0


def test_the_summary_is_found_in_a_runner_log() -> None:
    summary = _summary(100, 100, 5.0, 9.0, 2.0)
    log = (
        'time="2026-11-21T10:00:00Z" level=info msg="setup: 100 open items"\n'
        "          /\\      Grafana   /‾‾/\n"
        "{not json at all\n"
        f"{json.dumps(summary, indent=1)}\n"
        'time="2026-11-21T10:01:15Z" level=info msg="test finished"\n'
    )
    assert merge.extract_summary(log) == summary
    with pytest.raises(merge.SummaryError):
        merge.extract_summary("no summary here\n")


def test_other_summary_formats_are_refused() -> None:
    with pytest.raises(merge.SummaryError):
        merge.merge_summaries([{"schema": 2, "requests": 1}])
    with pytest.raises(merge.SummaryError):
        merge.merge_summaries([])


def test_the_command_line_merges_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = []
    for i, requests in enumerate((100, 300)):
        path = tmp_path / f"runner-{i}.log"
        path.write_text(
            "k6 says hello\n" + json.dumps(_summary(requests, requests, 5.0 + i, 9.0, 2.0), indent=1)
        )
        inputs.append(str(path))
    out = tmp_path / "merged.json"
    assert merge.main([*inputs, "-o", str(out)]) == 0
    merged = json.loads(out.read_text())
    assert merged["requests"] == 400
    assert merged["merge"]["sources"] == inputs
    assert "merged 2 runners: 400 requests" in capsys.readouterr().err
    assert merge.main([str(tmp_path / "missing.log")]) == 1
