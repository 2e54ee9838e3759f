"""The overhead command's logic: rusage to µs/request, medians and ranges, the result JSON, the process
runner's bounds, and one short end-to-end run against the fake target (no timing asserted)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.console import UserError
from harness.db.cluster import free_port
from harness.regimes import overhead
from harness.regimes.overhead import Sample, Spread


def sample(
    generator: str, repetition: int, user: float, system: float, requests: int, **kw: object
) -> Sample:
    return Sample(
        generator=generator,
        repetition=repetition,
        position=0,
        user_s=user,
        system_s=system,
        requests=requests,
        wall_s=20.0,
        voluntary_switches=2 * requests,
        involuntary_switches=0,
        exit_code=0,
        **kw,  # type: ignore[arg-type]
    )


def test_cpu_per_request_adds_user_and_system_time() -> None:
    assert overhead.cpu_us_per_request(1.5, 0.5, 20_000) == pytest.approx(100.0)
    assert overhead.cpu_us_per_request(0.0, 0.0, 10) == 0.0


def test_no_requests_is_nan_not_an_error() -> None:
    assert math.isnan(overhead.cpu_us_per_request(1.0, 1.0, 0))


def test_spread_is_the_median_and_range_of_finite_values() -> None:
    assert overhead.spread([3.0, 1.0, 2.0, float("nan")]) == Spread(2.0, 1.0, 3.0, 3)
    assert overhead.spread([4.0, 1.0]) == Spread(2.5, 1.0, 4.0, 2)
    empty = overhead.spread([float("nan")])
    assert empty.n == 0 and empty.describe() == "-"


def test_spread_describe() -> None:
    assert Spread(80.04, 70.0, 90.5, 5).describe() == "80.0 (70.0-90.5)"
    assert Spread(80.04, 80.04, 80.04, 1).describe() == "80.0"


def test_rotation_puts_each_generator_in_each_place() -> None:
    names = list(overhead.GENERATORS)
    orders = [overhead.rotation(names, r) for r in range(len(names))]
    for place in range(len(names)):
        assert sorted(order[place] for order in orders) == sorted(names)
    assert overhead.rotation(names, 0) == names


def test_summarize_per_generator() -> None:
    samples = [
        sample("driver", 1, 1.0, 1.0, 20_000, late_sends=0),
        sample("vegeta", 1, 3.0, 3.0, 20_000),
        sample("driver", 2, 1.2, 1.0, 20_000, late_sends=2),
        sample("vegeta", 2, 3.5, 3.0, 20_000),
        sample("driver", 3, 0.8, 1.0, 20_000, late_sends=1),
    ]
    summary = overhead.summarize(samples)
    assert list(summary) == ["driver", "vegeta"]
    assert summary["driver"]["cpu_us_per_request"] == {"median": 100.0, "low": 90.0, "high": 110.0, "n": 3}
    assert summary["driver"]["late_sends"]["median"] == 1.0
    assert summary["driver"]["late_sends"]["high"] == 2.0
    assert summary["driver"]["voluntary_switches_per_request"]["median"] == 2.0
    assert summary["vegeta"]["late_sends"] is None
    assert summary["vegeta"]["cpu_us_per_request"]["median"] == pytest.approx(312.5)
    assert summary["driver"]["failed"] == 0


def test_a_failed_repetition_is_counted_and_left_out_of_the_median() -> None:
    failed = sample("wrk", 2, 0.1, 0.1, 0)
    summary = overhead.summarize([sample("wrk", 1, 0.25, 0.25, 20_000), failed])
    assert summary["wrk"]["failed"] == 1
    assert summary["wrk"]["cpu_us_per_request"]["n"] == 1
    assert failed.record()["cpu_us_per_request"] is None


def test_sample_record_is_json_and_recomputable() -> None:
    record = sample("bare", 1, 0.6, 0.4, 20_000, late_sends=0).record()
    again = json.loads(json.dumps(record))
    assert again["cpu_us_per_request"] == 50.0
    assert (again["user_s"] + again["system_s"]) * 1e6 / again["requests"] == again["cpu_us_per_request"]
    assert again["achieved_rps"] == 1000.0


def test_parse_wrk() -> None:
    text = (
        "Running 20s test @ http://127.0.0.1:8080/health\n  1 threads and 2 connections\n"
        "  Thread Stats   Avg      Stdev     Max   +/- Stdev\n    Latency   101.00us   20.00us   1.00ms   90.00%\n"
        "  412345 requests in 20.00s, 40.12MB read\nRequests/sec:  20617.25\n"
    )
    assert overhead.parse_wrk(text) == 412345
    assert overhead.parse_wrk("unable to connect to 127.0.0.1:1 Connection refused") == 0


def test_loopback_only() -> None:
    assert overhead.check_loopback("http://127.0.0.1:8080/") == "http://127.0.0.1:8080"
    assert overhead.check_loopback("http://localhost:9000") == "http://localhost:9000"
    assert overhead.check_loopback("http://[::1]:9000") == "http://[::1]:9000"
    for bad in ("http://10.0.0.5:8080", "http://example.com:80", "https://127.0.0.1:8443", "127.0.0.1:80"):
        with pytest.raises(UserError):
            overhead.check_loopback(bad)


def test_run_measured_reads_the_childs_own_cpu(tmp_path: Path) -> None:
    burn = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"
    done = overhead.run_measured([sys.executable, "-c", burn], {}, 30, tmp_path / "run")
    assert done.exit_code == 0
    assert done.user_s + done.system_s >= 0.25


def test_run_measured_kills_a_process_past_its_time(tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    script = f"import os, time\nopen({str(marker)!r}, 'w').write(str(os.getpid()))\ntime.sleep(60)\n"
    started = time.monotonic()
    done = overhead.run_measured([sys.executable, "-c", script], {}, 1.0, tmp_path / "run")
    assert time.monotonic() - started < 15
    assert done.exit_code == -9
    pid = int(marker.read_text())
    assert subprocess.run(["kill", "-0", str(pid)], capture_output=True).returncode != 0


def test_fake_target_answers_and_goes_away() -> None:
    import urllib.request

    port = free_port()
    with overhead.fake_target(port, 1.0, max_s=30) as url:
        with urllib.request.urlopen(url + "/health", timeout=5) as response:
            assert response.status == 200
            assert json.loads(response.read()) == {"ok": True}
    import socket

    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0


def test_end_to_end_all_four_generators(tmp_path: Path) -> None:
    """./bidbench overhead --target-url <fake> --seconds 2 --repetitions 1: the JSON has all four, each
    with requests and a positive figure (no timing asserted: the machine is shared)."""
    root = Path(__file__).resolve().parents[2]
    with overhead.fake_target(free_port(), 0.5, max_s=240) as url:
        done = subprocess.run(
            [str(root / "bidbench"), "overhead", "--target-url", url, "--seconds", "2", "--repetitions", "1",
             "--warmup", "0", "--rate", "200"],
            cwd=root,
            env={**__import__("os").environ, "BIDBENCH_RESULTS": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=600,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (result,) = (tmp_path / "overhead").glob("*/overhead.json")
    data = json.loads(result.read_text())
    assert set(data["summary"]) == set(overhead.GENERATORS)
    assert {s["generator"] for s in data["samples"]} == set(overhead.GENERATORS)
    for s in data["samples"]:
        assert s["requests"] > 0, s
        assert s["cpu_us_per_request"] > 0, s
        assert s["exit_code"] == 0, s
    for name, row in data["summary"].items():
        assert row["cpu_us_per_request"]["median"] > 0, name
    assert "result folder:" in done.stdout
