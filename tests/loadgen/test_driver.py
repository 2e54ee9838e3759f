"""The load driver (loadgen/, bidbench-load), run for a few seconds each against a fake service on 127.0.0.1.

Checks the summary's shape (loadgen/README.md), that its counts add up and agree with what the server
answered, the invalid share, Server-Timing per type, round-robin over targets, the closed model, the payload
mix around the body limit (413 past it), the warm-up ramp, the reproducible request plan, the setup's probe
retry, and the exit codes for bad settings and an unreachable target.
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

from harness.tools import toolchain

LATENCY_KEYS = {"mean", "p50", "p90", "p95", "p99", "p999", "max"}
SHORT_KEYS = {"mean", "p50", "p99"}
COUNT_KEYS = {"requests", "ok", "app_errors", "sys_errors", "over_1s", "statuses"}
"""Counts every summary carries, for the whole run and for each request type."""
TYPE_KEYS = COUNT_KEYS | {"latency_ms", "latency_sent_ms", "server_timing_ms", "hdr"}
TOP_KEYS = COUNT_KEYS | {
    "schema",
    "driver",
    "driver_version",
    "settings",
    "open_items",
    "partial",
    "shards",
    "started_at_unix",
    "measure_start_unix",
    "window_s",
    "errors",
    "throughput",
    "offered_rps",
    "late_sends",
    "max_inflight",
    "latency_ms",
    "latency_sent_ms",
    "latency_expected_ms",
    "server_timing_ms",
    "invalid",
    "per_type",
    "warmup",
    "test_run_duration_s",
}
MIXED_TYPES = {
    "list_categories",
    "list_category_items",
    "get_item",
    "list_item_bids",
    "get_user",
    "place_bid",
    "create_user",
    "create_item",
    "update_item",
}
INVALID_TYPES = {"invalid_json", "invalid_route", "invalid_id", "invalid_paging", "invalid_content_type"}
BROWSE_TYPES = {"list_categories", "list_category_items", "get_item", "list_item_bids", "get_user"}


@pytest.fixture(scope="session")
def driver() -> Path:
    """The driver binary, built (or rebuilt when its sources changed) by the toolchain step."""
    toolchain.ensure(["load"])
    binary = toolchain.driver_path()
    assert binary.exists(), f"the toolchain did not build {binary}"
    return binary


def launch(
    driver: Path, env: dict[str, str], timeout: float = 30, args: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """The driver with the BB_* settings given and none inherited from the environment."""
    clean = {key: value for key, value in os.environ.items() if not key.startswith("BB_")}
    clean.pop("JOB_COMPLETION_INDEX", None)
    return subprocess.run(
        [str(driver), *args], env={**clean, **env}, capture_output=True, text=True, timeout=timeout
    )


def run_driver(driver: Path, env: dict[str, str], tmp_path: Path, timeout: float = 30) -> dict[str, Any]:
    summary = tmp_path / f"summary-{len(list(tmp_path.iterdir()))}.json"
    proc = launch(driver, {**env, "BB_SUMMARY": str(summary)}, timeout)
    assert proc.returncode == 0, (
        f"the driver exited {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    )
    assert len(proc.stdout.strip().splitlines()) == 1, "stdout is one line when BB_SUMMARY is set"
    assert proc.stdout.startswith("bidbench-load: ")
    result: dict[str, Any] = json.loads(summary.read_text())
    return result


@pytest.fixture
def service() -> Iterator[FakeService]:
    with FakeService() as fake:
        yield fake


def check_shape(summary: dict[str, Any]) -> None:
    assert TOP_KEYS <= set(summary), TOP_KEYS - set(summary)
    assert summary["schema"] == 2 and summary["driver"] == "bidbench-load"
    assert summary["partial"] is False and summary["shards"] == 1
    assert summary["requests"] == summary["ok"] + summary["app_errors"] + summary["sys_errors"]
    assert sum(summary["statuses"].values()) == summary["requests"]
    for key in ("latency_ms", "latency_sent_ms"):
        lat = summary[key]
        assert set(lat) == LATENCY_KEYS
        assert 0 < lat["p50"] <= lat["p90"] <= lat["p95"] <= lat["p99"] <= lat["p999"] <= lat["max"]
    assert set(summary["throughput"]) == {"ok_rps", "all_rps"}
    assert summary["throughput"]["all_rps"] == pytest.approx(
        summary["requests"] / summary["window_s"], abs=0.01
    )
    totals = {"requests": 0, "ok": 0, "app_errors": 0, "sys_errors": 0, "over_1s": 0}
    for name, entry in summary["per_type"].items():
        assert TYPE_KEYS <= set(entry), name
        assert entry["requests"] == entry["ok"] + entry["app_errors"] + entry["sys_errors"], name
        assert sum(entry["statuses"].values()) == entry["requests"], name
        if entry["requests"]:
            assert set(entry["latency_ms"]) == LATENCY_KEYS
        for key in totals:
            totals[key] += entry[key]
    assert totals == {key: summary[key] for key in totals}


def test_mixed_open_model_with_invalid_requests_over_two_targets(
    driver: Path, service: FakeService, tmp_path: Path
) -> None:
    with FakeService() as second:
        summary = run_driver(
            driver,
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
    # The schedule's counts are exact: 300/s for the 2 s measurement; the 1 s warm-up ramps from 30/s to
    # 300/s (165 requests), counted apart.
    assert summary["requests"] == 600
    assert summary["warmup"]["requests"] == 165
    assert summary["offered_rps"] == 300
    assert summary["settings"]["mix"] == "mixed" and summary["settings"]["invalid_share"] == 0.125
    assert summary["settings"]["targets"] == [service.url, second.url]
    # Round-robin by request number over both targets, and everything served was counted: a request
    # belongs to the phase it was sent in, so none is lost at the boundary.
    assert abs(served[0] - served[1]) <= 1, served
    assert sum(served) == summary["requests"] + summary["warmup"]["requests"]
    # Open items came from the setup's paging (the fake has five per category 1..19).
    assert summary["open_items"] == {"count": 95, "source": "setup"}

    per_type = summary["per_type"]
    assert set(per_type) == MIXED_TYPES | INVALID_TYPES
    expected = {"invalid_json": 400, "invalid_route": 404, "invalid_id": 400, "invalid_paging": 400}
    expected["invalid_content_type"] = 415
    for name in INVALID_TYPES:
        entry = per_type[name]
        assert entry["expected_status"] == expected[name], name
        assert entry["ok"] == 0 and entry["app_errors"] == entry["requests"] > 0, name
        assert entry["statuses"] == {str(expected[name]): entry["requests"]}, name
    invalid_requests = sum(per_type[name]["requests"] for name in INVALID_TYPES)
    assert summary["invalid"]["requests"] == invalid_requests
    assert 0.125 - 0.05 <= invalid_requests / summary["requests"] <= 0.125 + 0.05
    # Valid requests all succeed against the fake (bids are far above its 5000-cent maximum).
    valid_ok = sum(per_type[name]["ok"] for name in MIXED_TYPES)
    assert valid_ok == summary["requests"] - invalid_requests
    assert per_type["get_item"]["requests"] > per_type["create_user"]["requests"]
    # Server-Timing parsed from every response, per type too: the fake always says db 0.250, app 0.750.
    timing = summary["server_timing_ms"]
    assert timing["samples"] == summary["requests"]
    assert set(timing["db"]) == SHORT_KEYS and timing["db"]["mean"] == pytest.approx(0.25)
    assert timing["app"]["p99"] == pytest.approx(0.75)
    for name, entry in per_type.items():
        entry_timing = entry["server_timing_ms"]
        assert entry_timing["samples"] == entry["requests"], name
        assert entry_timing["db"]["p50"] == pytest.approx(0.25) and entry_timing["app"][
            "mean"
        ] == pytest.approx(0.75)


def test_counts_agree_with_the_server_including_system_errors(driver: Path, tmp_path: Path) -> None:
    with FakeService(error_every=10) as fake:
        summary = run_driver(
            driver,
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
    assert summary["warmup"]["requests"] == 0 and summary["requests"] == 300
    assert summary["ok"] == classes["2xx"]
    assert summary["app_errors"] == classes["4xx"]
    assert summary["sys_errors"] == classes["5xx"] == summary["statuses"]["503"] == 30
    # A 503 is an answer, not a transport error.
    assert summary["errors"] == {"timeout": 0, "refused": 0, "reset": 0, "other": 0}
    assert summary["latency_expected_ms"]["max"] <= summary["latency_ms"]["max"]


def test_closed_model_with_think_time(driver: Path, service: FakeService, tmp_path: Path) -> None:
    summary = run_driver(
        driver,
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
    assert summary["settings"]["rate"] is None and summary["settings"]["think_ms"] == 50
    # 4 users, each one request per (50 ms think + a few ms): at most 4 * 2 s / 50 ms = 160.
    # The think time bounds the count from above; a busy machine may lower it, so the floor is loose.
    assert 40 <= summary["requests"] <= 164
    assert summary["ok"] == summary["requests"]
    assert summary["max_inflight"] <= 4
    assert set(summary["per_type"]) == BROWSE_TYPES


@pytest.mark.parametrize(("size", "status"), [(2000, 201), (65536, 201), (65537, 413), (200_000, 413)])
def test_payload_bodies_have_the_exact_size(
    driver: Path, service: FakeService, tmp_path: Path, size: int, status: int
) -> None:
    summary = run_driver(
        driver,
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
    assert entry["requests"] == summary["requests"] == 20
    status_class = "ok" if status == 201 else "app_errors"
    assert entry[status_class] == entry["requests"]
    assert entry["statuses"] == {str(status): entry["requests"]}
    assert summary["statuses"] == entry["statuses"]
    assert summary["sys_errors"] == 0
    assert summary["settings"]["payload_bytes"] == size
    assert summary["settings"]["payload_over_limit"] == (size > 65536)


def test_request_plan_is_reproducible(driver: Path, service: FakeService, tmp_path: Path) -> None:
    def plan(seed: str) -> list[dict[str, Any]]:
        summary = run_driver(
            driver,
            {
                "BB_TARGETS": service.url,
                "BB_MIX": "mixed",
                "BB_PLAN": "300",
                "BB_SEED": seed,
                "BB_INVALID_SHARE": "0.125",
            },
            tmp_path,
        )
        steps: list[dict[str, Any]] = summary["plan"]
        return steps

    first = plan("42")
    assert len(first) == 300
    assert [step["i"] for step in first] == list(range(300))
    assert {step["type"] for step in first} == MIXED_TYPES | INVALID_TYPES
    for step in first:
        assert step["url"].startswith(service.url + "/")
        assert (step["body"] is None) == (step["method"] == "GET"), step
    # The plan sends nothing.
    assert service.server.total() == 0

    def shape(steps: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
        return [(step["type"], step["method"], step["url"]) for step in steps]

    assert shape(first) == shape(plan("42"))
    assert shape(first) != shape(plan("43"))


def test_open_model_warm_up_ramps_to_the_rate(driver: Path, service: FakeService, tmp_path: Path) -> None:
    common = {
        "BB_TARGETS": service.url,
        "BB_MIX": "browse",
        "BB_RATE": "200",
        "BB_WARMUP": "4s",
        "BB_DURATION": "1s",
    }
    ramped = run_driver(driver, {**common, "BB_WARMUP_RAMP": "0.5"}, tmp_path)
    constant = run_driver(driver, {**common, "BB_WARMUP_RAMP": "0"}, tmp_path)
    # Ramping from 100/s (a warm instance's previous rate): 300 over the 2 s ramp, then 400.
    from_previous = run_driver(driver, {**common, "BB_WARMUP_FROM": "100"}, tmp_path)
    assert from_previous["settings"]["warmup_from"] == 100
    assert from_previous["warmup"]["requests"] == 700
    assert ramped["settings"]["warmup_ramp"] == 0.5 and constant["settings"]["warmup_ramp"] == 0
    # Constant: 200/s for 4 s = 800. Ramped: 20 -> 200/s over 2 s (220), then 200/s for 2 s (400) = 620.
    assert constant["warmup"]["requests"] == 800
    assert ramped["warmup"]["requests"] == 620
    # The measurement is unaffected.
    assert ramped["requests"] == constant["requests"] == from_previous["requests"] == 200


def test_setup_retries_a_probe_that_timed_out(driver: Path, tmp_path: Path) -> None:
    """An instance still working off a backlog answers setup late: the driver waits for it instead of failing."""
    with FakeService(stalled_setup_requests=2, stall_s=2.5) as fake:
        summary = run_driver(
            driver,
            {
                "BB_TARGETS": fake.url,
                "BB_MIX": "browse",
                "BB_RATE": "20",
                "BB_WARMUP": "0s",
                "BB_DURATION": "1s",
                "BB_TIMEOUT": "1s",
            },
            tmp_path,
        )
        setup_requests = fake.server.setup_requests
    check_shape(summary)
    assert summary["sys_errors"] == 0 and summary["ok"] == 20
    assert setup_requests == 1  # only answered setup requests are counted: the two stalled ones are not


def test_exit_code_3_when_nothing_listens(driver: Path, tmp_path: Path) -> None:
    with FakeService() as fake:
        url = fake.url  # a port that was free a moment ago and is closed now
    summary = tmp_path / "s.json"
    proc = launch(driver, {"BB_TARGETS": url, "BB_DURATION": "1s", "BB_SUMMARY": str(summary)})
    assert proc.returncode == 3, proc.stderr
    assert "is the target up?" in proc.stderr
    assert not summary.exists()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("BB_MIX", "shopping"),
        ("BB_RATE", "0"),
        ("BB_MODEL", "half-open"),
        ("BB_TARGETS", "https://127.0.0.1:1"),
        ("BB_DURATION", "ten seconds"),
        ("BB_STAGES", "10s"),
        ("BB_INVALID_SHARE", "2"),
        ("BB_PAYLOAD_BYTES", "0"),
        ("BB_SHARD_INDEX", "1"),
    ],
)
def test_exit_code_2_for_a_bad_setting(driver: Path, service: FakeService, name: str, value: str) -> None:
    env = {"BB_TARGETS": service.url, "BB_DURATION": "1s", "BB_WARMUP": "0s", name: value}
    proc = launch(driver, env)
    assert proc.returncode == 2, proc.stderr
    assert f"{name}=" in proc.stderr
    assert proc.stdout == ""
    assert service.server.total() == 0


def test_exit_code_2_for_a_payload_too_small_to_be_an_item(driver: Path, service: FakeService) -> None:
    proc = launch(driver, {"BB_TARGETS": service.url, "BB_MIX": "payload", "BB_PAYLOAD_BYTES": "50"})
    assert proc.returncode == 2 and "BB_PAYLOAD_BYTES" in proc.stderr, proc.stderr
