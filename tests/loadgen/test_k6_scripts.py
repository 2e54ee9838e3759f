"""The k6 scripts (loadgen-k6/), run for a few seconds each against a fake service on 127.0.0.1.

Checks the summary's shape (loadgen-k6/README.md), that its counts add up and agree with what the server
answered, the invalid share, Server-Timing parsing, round-robin over targets, the closed model, the payload
mix around the body limit, the reproducible request plan, and that bare.js runs.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_service import FakeService  # sibling module: pytest puts this folder on sys.path

from harness import paths, toolchain

SCRIPTS = paths.ROOT / "loadgen-k6"
LATENCY_KEYS = {"mean", "p50", "p90", "p95", "p99", "p999", "max"}
SHORT_KEYS = {"mean", "p50", "p99"}
TOP_KEYS = {
    "schema",
    "script",
    "k6_version",
    "settings",
    "open_items",
    "window_s",
    "requests",
    "ok",
    "app_errors",
    "sys_errors",
    "statuses",
    "throughput",
    "offered_rps",
    "dropped_iterations",
    "dropped_iterations_total",
    "vus_max",
    "vus_peak",
    "iteration_ms",
    "latency_ms",
    "latency_expected_ms",
    "server_timing_ms",
    "invalid",
    "per_type",
    "warmup",
    "test_run_duration_s",
}
TYPE_KEYS = {"requests", "ok", "app_errors", "sys_errors", "latency_ms", "server_timing_ms"}


def run_k6(script: str, env: dict[str, str], tmp_path: Path, timeout: float = 30) -> dict[str, Any]:
    binary = toolchain.k6_path()
    if not binary.exists():
        pytest.fail(f"k6 is not installed at {binary}: run ./bidbench setup")
    summary = tmp_path / f"{script}-{len(list(tmp_path.iterdir()))}.json"
    full_env = {**os.environ, **env, "BB_SUMMARY": str(summary)}
    # --address= : no REST API server, so parallel k6 processes do not fight over port 6565.
    argv = [str(binary), "run", "-q", "--address=", "--no-usage-report", str(SCRIPTS / script)]
    proc = subprocess.run(argv, env=full_env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"k6 exited {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    assert len(proc.stdout.strip().splitlines()) <= 2, "stdout should stay short when BB_SUMMARY is set"
    return json.loads(summary.read_text())


@pytest.fixture
def service() -> Iterator[FakeService]:
    with FakeService() as fake:
        yield fake


def check_shape(summary: dict[str, Any]) -> None:
    assert TOP_KEYS <= set(summary), TOP_KEYS - set(summary)
    assert summary["schema"] == 1
    assert summary["k6_version"].startswith("v1.")
    assert summary["requests"] == summary["ok"] + summary["app_errors"] + summary["sys_errors"]
    assert set(summary["latency_ms"]) == LATENCY_KEYS
    lat = summary["latency_ms"]
    assert 0 < lat["p50"] <= lat["p90"] <= lat["p95"] <= lat["p99"] <= lat["p999"] <= lat["max"]
    assert set(summary["throughput"]) == {"ok_rps", "all_rps"}
    assert summary["throughput"]["all_rps"] == pytest.approx(
        summary["requests"] / summary["window_s"], abs=0.01
    )
    totals = {"requests": 0, "ok": 0, "app_errors": 0, "sys_errors": 0}
    for name, entry in summary["per_type"].items():
        assert TYPE_KEYS <= set(entry), name
        assert entry["requests"] == entry["ok"] + entry["app_errors"] + entry["sys_errors"], name
        if entry["requests"]:
            assert set(entry["latency_ms"]) == LATENCY_KEYS
        for key in totals:
            totals[key] += entry[key]
    assert totals == {key: summary[key] for key in totals}


def test_mixed_open_model_with_invalid_requests_over_two_targets(
    service: FakeService, tmp_path: Path
) -> None:
    with FakeService() as second:
        summary = run_k6(
            "bidbench.js",
            {
                "BB_TARGETS": f"{service.url},{second.url}/",
                "BB_MIX": "mixed",
                "BB_MODEL": "open",
                "BB_RATE": "300",
                "BB_WARMUP": "1s",
                "BB_DURATION": "2s",
                "BB_INVALID_SHARE": "0.125",
            },
            tmp_path,
        )
        served = (service.server.total(), second.server.total())
    check_shape(summary)
    # Measurement window only: 300/s for 2 s, the 1 s warm-up excluded (but served). The warm-up ramps
    # from 30/s to 300/s over its 1 s: about 165 requests.
    # Counts depend on k6's scheduling, which a busy machine delays a little: 10 % tolerance.
    assert summary["requests"] == pytest.approx(600, rel=0.1)
    assert summary["warmup"]["requests"] == pytest.approx(165, rel=0.1)
    assert summary["dropped_iterations"] == 0
    assert summary["offered_rps"] == 300
    assert summary["settings"]["mix"] == "mixed" and summary["settings"]["invalid_share"] == 0.125
    # Round-robin by iteration over both targets.
    assert abs(served[0] - served[1]) <= 2, served
    # Everything served was counted, except the warm-up requests in flight at the boundary (no grace
    # stop). Those are rate x response time: a handful, more when the machine is busy (4 seen under load).
    uncounted = sum(served) - (summary["requests"] + summary["warmup"]["requests"])
    assert 0 <= uncounted <= max(3, 0.02 * sum(served)), (served, uncounted)
    # Open items came from setup() paging (the fake has five per category 1..19).
    assert summary["open_items"] == {"count": 95, "source": "setup"}

    per_type = summary["per_type"]
    assert set(per_type) == {
        "list_categories",
        "list_category_items",
        "get_item",
        "list_item_bids",
        "get_user",
        "place_bid",
        "create_user",
        "create_item",
        "update_item",
        "invalid_json",
        "invalid_route",
        "invalid_id",
        "invalid_paging",
        "invalid_content_type",
    }
    invalid = [name for name in per_type if name.startswith("invalid_")]
    for name in invalid:
        entry = per_type[name]
        assert entry["expected_status"] in (400, 404, 415)
        assert entry["ok"] == 0 and entry["app_errors"] == entry["requests"], name
    invalid_requests = sum(per_type[name]["requests"] for name in invalid)
    assert summary["invalid"]["requests"] == invalid_requests
    assert 0.125 - 0.05 <= invalid_requests / summary["requests"] <= 0.125 + 0.05
    # Valid requests all succeed against the fake (bids are far above its 5000-cent maximum).
    valid_ok = sum(per_type[name]["ok"] for name in per_type if name not in invalid)
    assert valid_ok == summary["requests"] - invalid_requests
    assert per_type["get_item"]["requests"] > per_type["create_user"]["requests"]
    # Server-Timing parsed from every response: the fake always says db 0.250, app 0.750.
    timing = summary["server_timing_ms"]
    assert timing["samples"] == summary["requests"]
    assert set(timing["db"]) == SHORT_KEYS and timing["db"]["mean"] == pytest.approx(0.25)
    assert timing["app"]["p99"] == pytest.approx(0.75)
    assert per_type["get_item"]["server_timing_ms"]["samples"] == per_type["get_item"]["requests"]


def test_counts_agree_with_the_server_including_system_errors(tmp_path: Path) -> None:
    with FakeService(error_every=10) as fake:
        summary = run_k6(
            "bidbench.js",
            {
                "BB_TARGETS": fake.url,
                "BB_MIX": "browse",
                "BB_RATE": "150",
                "BB_WARMUP": "0s",
                "BB_DURATION": "2s",
                "BB_INVALID_SHARE": "0.2",
            },
            tmp_path,
        )
        classes = dict(fake.server.classes)
    check_shape(summary)
    assert summary["warmup"]["requests"] == 0
    assert summary["ok"] == classes["2xx"]
    assert summary["app_errors"] == classes["4xx"]
    assert summary["sys_errors"] == classes["5xx"] > 0


def test_closed_model_with_think_time(service: FakeService, tmp_path: Path) -> None:
    summary = run_k6(
        "bidbench.js",
        {
            "BB_TARGETS": service.url,
            "BB_MIX": "browse",
            "BB_MODEL": "closed",
            "BB_USERS": "4",
            "BB_THINK_MS": "50",
            "BB_WARMUP": "1s",
            "BB_DURATION": "2s",
        },
        tmp_path,
    )
    check_shape(summary)
    assert summary["offered_rps"] is None and summary["settings"]["users"] == 4
    # 4 users, each one request per (50 ms think + a few ms): at most 4 * 2 s / 50 ms = 160.
    # The think time bounds the count from above; a busy machine may lower it, so the floor is loose.
    assert 4 <= summary["requests"] <= 164
    assert summary["ok"] == summary["requests"]
    assert set(summary["per_type"]) == {
        "list_categories",
        "list_category_items",
        "get_item",
        "list_item_bids",
        "get_user",
    }
    assert summary["iteration_ms"]["mean"] >= 50


@pytest.mark.parametrize(("size", "status_class"), [(2000, "ok"), (65536, "ok"), (65537, "app_errors")])
def test_payload_bodies_have_the_exact_size(
    service: FakeService, tmp_path: Path, size: int, status_class: str
) -> None:
    summary = run_k6(
        "bidbench.js",
        {
            "BB_TARGETS": service.url,
            "BB_MIX": "payload",
            "BB_PAYLOAD_BYTES": str(size),
            "BB_RATE": "20",
            "BB_WARMUP": "0s",
            "BB_DURATION": "1s",
        },
        tmp_path,
    )
    check_shape(summary)
    assert service.server.body_lengths == {size}
    entry = summary["per_type"]["payload"]
    assert entry["requests"] == summary["requests"] >= 15
    assert entry[status_class] == entry["requests"]
    status = "201" if status_class == "ok" else "413"
    assert entry["statuses"] == {status: entry["requests"], "other": 0}
    assert summary["statuses"] == entry["statuses"]
    assert summary["settings"]["payload_over_limit"] == (size > 65536)


def test_request_plan_is_reproducible(service: FakeService, tmp_path: Path) -> None:
    def plan(seed: str) -> list[tuple[str, str, str]]:
        summary = run_k6(
            "bidbench.js",
            {
                "BB_TARGETS": service.url,
                "BB_MIX": "mixed",
                "BB_PLAN": "300",
                "BB_SEED": seed,
                "BB_INVALID_SHARE": "0.125",
            },
            tmp_path,
        )
        return [(step["type"], step["method"], step["url"]) for step in summary["plan"]]

    first = plan("42")
    assert len(first) == 300
    assert first == plan("42")
    assert first != plan("43")


def test_bare_loop(service: FakeService, tmp_path: Path) -> None:
    summary = run_k6("bare.js", {"BB_TARGETS": service.url, "BB_RATE": "50", "BB_DURATION": "1s"}, tmp_path)
    assert summary["requests"] + summary["dropped_iterations"] == pytest.approx(50, rel=0.1)
    assert summary["requests"] > 40 and summary["failed"] == 0


def test_open_model_warm_up_ramps_to_the_rate(service: FakeService, tmp_path: Path) -> None:
    common = {
        "BB_TARGETS": service.url,
        "BB_MIX": "browse",
        "BB_RATE": "200",
        "BB_WARMUP": "4s",
        "BB_DURATION": "1s",
    }
    ramped = run_k6("bidbench.js", {**common, "BB_WARMUP_RAMP": "0.5"}, tmp_path)
    constant = run_k6("bidbench.js", {**common, "BB_WARMUP_RAMP": "0"}, tmp_path)
    # Ramping from 100/s (a warm instance's previous rate): 300 over the ramp, then 400.
    from_previous = run_k6("bidbench.js", {**common, "BB_WARMUP_FROM": "100"}, tmp_path)
    assert from_previous["settings"]["warmup_from"] == 100
    assert from_previous["warmup"]["requests"] == pytest.approx(700, abs=30)
    assert ramped["settings"]["warmup_ramp"] == 0.5 and constant["settings"]["warmup_ramp"] == 0
    # Constant: 200/s for 4 s = 800. Ramped: 20 -> 200/s over 2 s (220), then 200/s for 2 s (400) = 620.
    assert constant["warmup"]["requests"] == pytest.approx(800, abs=20)
    assert ramped["warmup"]["requests"] == pytest.approx(620, abs=30)
    # The measurement is unaffected.
    assert ramped["requests"] == pytest.approx(200, abs=5) and constant["requests"] == pytest.approx(
        200, abs=5
    )


def test_setup_retries_a_probe_that_timed_out(tmp_path: Path) -> None:
    """An instance still working off a backlog answers setup late: k6 waits for it instead of failing."""
    with FakeService(stalled_setup_requests=2, stall_s=2.5) as fake:
        summary = run_k6(
            "bidbench.js",
            {
                "BB_TARGETS": fake.url,
                "BB_MIX": "browse",
                "BB_RATE": "20",
                "BB_WARMUP": "0s",
                "BB_DURATION": "1s",
                "BB_TIMEOUT": "1s",
            },  # fmt: skip
            tmp_path,
        )
        setup_requests = fake.server.setup_requests
    check_shape(summary)
    assert summary["sys_errors"] == 0 and summary["ok"] > 0
    assert setup_requests >= 1  # only answered setup requests are counted: the two stalled ones are not


def test_setup_fails_at_once_when_nothing_listens(tmp_path: Path) -> None:
    with FakeService() as fake:
        url = fake.url  # a port that was free a moment ago and is closed now
    binary = toolchain.k6_path()
    argv = [str(binary), "run", "-q", "--address=", "--no-usage-report", str(SCRIPTS / "bidbench.js")]
    env = {**os.environ, "BB_TARGETS": url, "BB_DURATION": "1s", "BB_SUMMARY": str(tmp_path / "s.json")}
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 107
    assert "is the target up?" in proc.stderr
