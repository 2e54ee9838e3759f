"""`./bidbench overhead`: what each load generator costs in CPU per request, measured by the kernel (#27);
the generators and how to read the table are in the command's help (harness/cli/overhead.py).

A generator's figure is its process's user + system CPU time (the rusage os.wait4 returns when it exits,
so it is that process alone, start-up included) divided by the requests it completed. The order rotates
each repetition, so none always runs first or after the same neighbour on a shared machine.
"""

from __future__ import annotations

import ipaddress
import json
import os
import platform
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.table import Column, Table

from harness import apps, paths
from harness.apps.base import InstanceSpec
from harness.console import UserError, console
from harness.db import ready
from harness.db.cluster import free_port
from harness.engine import instances
from harness.engine.resources import Limits, detect_backend
from harness.engine.session import RunPlan, _instance_knobs
from harness.record.folders import new_stamped
from harness.tools import toolchain

GENERATORS = ("driver", "bare", "wrk", "vegeta")
PROCESS_GRACE_S = 30.0
"""How long past its planned duration a generator may run before it is killed (start-up, drain, timeouts)."""
ACCURACY_DELAY_MS = 5.0
ACCURACY_RATE = 500.0
STALL_MS = 1000.0
STALL_AT_S = 3.0
STALL_MAX_CONNS = 2


def cpu_us_per_request(user_s: float, system_s: float, requests: int) -> float:
    """CPU µs one request cost: (user + system seconds) / requests. 0 requests give NaN, not a division
    error, so a failed repetition shows as such instead of ending the benchmark."""
    if requests <= 0:
        return float("nan")
    return (user_s + system_s) * 1e6 / requests


@dataclass(frozen=True)
class Spread:
    median: float
    low: float
    high: float
    n: int

    def describe(self, digits: int = 1) -> str:
        if self.n == 0:
            return "-"
        if self.n == 1:
            return f"{self.median:.{digits}f}"
        return f"{self.median:.{digits}f} ({self.low:.{digits}f}-{self.high:.{digits}f})"


def spread(values: Sequence[float]) -> Spread:
    """Median and min-max of the finite values (a failed repetition's NaN is left out)."""
    finite = [v for v in values if v == v and v not in (float("inf"), float("-inf"))]
    if not finite:
        return Spread(float("nan"), float("nan"), float("nan"), 0)
    return Spread(statistics.median(finite), min(finite), max(finite), len(finite))


@dataclass
class Sample:
    """One generator's one repetition: the kernel's account of its process, and what it reported."""

    generator: str
    repetition: int
    position: int
    """Its place in the repetition's order (0 = ran first)."""
    user_s: float
    system_s: float
    requests: int
    wall_s: float
    voluntary_switches: int
    involuntary_switches: int
    exit_code: int
    late_sends: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def us_per_request(self) -> float:
        return cpu_us_per_request(self.user_s, self.system_s, self.requests)

    @property
    def wakeups_per_request(self) -> float:
        return self.voluntary_switches / self.requests if self.requests > 0 else float("nan")

    def record(self) -> dict[str, Any]:
        out = asdict(self)
        out["cpu_us_per_request"] = _finite_or_none(self.us_per_request)
        out["voluntary_switches_per_request"] = _finite_or_none(self.wakeups_per_request)
        out["achieved_rps"] = round(self.requests / self.wall_s, 1) if self.wall_s > 0 else None
        return out


def _finite_or_none(value: float) -> float | None:
    return round(value, 3) if value == value else None


def summarize(samples: Sequence[Sample]) -> dict[str, dict[str, Any]]:
    """Per generator: the median and range of µs/request (what the table prints), and of late sends."""
    out: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(s.generator for s in samples):
        mine = [s for s in samples if s.generator == name]
        lates = [s.late_sends for s in mine if s.late_sends is not None]
        out[name] = {
            "cpu_us_per_request": asdict(spread([s.us_per_request for s in mine])),
            "voluntary_switches_per_request": asdict(spread([s.wakeups_per_request for s in mine])),
            "late_sends": asdict(spread([float(v) for v in lates])) if lates else None,
            "repetitions": len(mine),
            "failed": sum(1 for s in mine if s.exit_code != 0 or s.requests <= 0),
        }
    return out


def rotation(names: Sequence[str], repetition: int) -> list[str]:
    """Repetition r runs the generators starting from the r-th: each takes each place equally often."""
    shift = repetition % len(names) if names else 0
    return [*names[shift:], *names[:shift]]


@dataclass(frozen=True)
class Finished:
    exit_code: int
    user_s: float
    system_s: float
    wall_s: float
    voluntary_switches: int
    involuntary_switches: int


def run_measured(argv: list[str], env: dict[str, str], timeout_s: float, stem: Path) -> Finished:
    """Run argv in its own process group, its output in stem.out and stem.err, and return the kernel's
    rusage of that process (os.wait4).

    Bounded: past timeout_s its group is killed (SIGKILL) and the figures are those of the killed process.
    Never leaves it behind: the group is killed on any way out."""
    started = time.monotonic()
    with stem.with_suffix(".out").open("wb") as out, stem.with_suffix(".err").open("wb") as err:
        proc = subprocess.Popen(
            argv, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True
        )
    try:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        while pid != proc.pid:
            if time.monotonic() >= started + timeout_s:
                _kill_group(proc.pid)
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.05)
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
    except BaseException:
        _kill_group(proc.pid)
        proc.wait(timeout=10)
        raise
    # os.wait4 reaped it: tell Popen, or it would try to wait for a pid that is no longer its child.
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Finished(
        exit_code=proc.returncode,
        user_s=usage.ru_utime,
        system_s=usage.ru_stime,
        wall_s=time.monotonic() - started,
        voluntary_switches=usage.ru_nvcsw,
        involuntary_switches=usage.ru_nivcsw,
    )


def _kill_group(pid: int) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


@dataclass(frozen=True)
class Setup:
    target: str
    rate: float
    seconds: float
    wrk_connections: int = 2
    driver: Path = Path("bidbench-load")
    wrk: Path = Path("wrk")
    vegeta: Path = Path("vegeta")
    max_conns: int | None = None


def driver_env(setup: Setup, mix: str, summary: Path) -> dict[str, str]:
    env = _plain_env()
    env.update(
        BB_TARGETS=setup.target,
        BB_MIX=mix,
        BB_MODEL="open",
        BB_RATE=f"{setup.rate:g}",
        # No warm-up: every request the process sends is in its summary's count, as its CPU is in rusage.
        BB_WARMUP="0",
        BB_DURATION=f"{setup.seconds:g}s",
        BB_SUMMARY=str(summary),
    )
    if setup.max_conns:
        env["BB_MAX_CONNS"] = str(setup.max_conns)
    return env


def _sample(name: str, repetition: int, position: int, done: Finished, requests: int, **kw: Any) -> Sample:
    kernel = {**asdict(done), "wall_s": round(done.wall_s, 3)}
    return Sample(generator=name, repetition=repetition, position=position, requests=requests, **kernel, **kw)


def run_driver(setup: Setup, mix: str, name: str, repetition: int, position: int, folder: Path) -> Sample:
    stem = folder / f"{name}-{repetition}"
    summary = stem.with_suffix(".summary.json")
    done = run_measured(
        [str(setup.driver), "run"], driver_env(setup, mix, summary), setup.seconds + PROCESS_GRACE_S, stem
    )
    data = _json_object(summary.read_text)
    latency = data.get("latency_ms") or {}
    return _sample(
        name,
        repetition,
        position,
        done,
        int(data.get("requests") or 0),
        late_sends=data.get("late_sends"),
        extra={
            "ok": data.get("ok"),
            "sys_errors": data.get("sys_errors"),
            "max_inflight": data.get("max_inflight"),
            "p50_ms": latency.get("p50"),
            "p99_ms": latency.get("p99"),
        },
    )


def _json_object(read: Callable[[], str]) -> dict[str, Any]:
    try:
        data = json.loads(read())
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return {}
    return data if isinstance(data, dict) else {}


WRK_REQUESTS = re.compile(r"^\s*(\d+) requests in ([\d.]+)(m?s|m)\b", re.MULTILINE)


def parse_wrk(text: str) -> int:
    """The request count of wrk's report ("  123456 requests in 10.00s, 12.34MB read"); 0 if absent."""
    match = WRK_REQUESTS.search(text)
    return int(match.group(1)) if match else 0


def run_wrk(setup: Setup, repetition: int, position: int, folder: Path) -> Sample:
    stem = folder / f"wrk-{repetition}"
    connections = max(1, setup.wrk_connections)
    seconds = max(1, round(setup.seconds))
    argv = [str(setup.wrk), "-t1", f"-c{connections}", f"-d{seconds}s", setup.target + "/health"]
    done = run_measured(argv, _plain_env(), setup.seconds + PROCESS_GRACE_S, stem)
    text = stem.with_suffix(".out").read_text(errors="replace")
    return _sample("wrk", repetition, position, done, parse_wrk(text), extra={"connections": connections})


def run_vegeta(setup: Setup, repetition: int, position: int, folder: Path) -> Sample:
    stem = folder / f"vegeta-{repetition}"
    targets = folder / "vegeta-targets.txt"
    targets.write_text(f"GET {setup.target}/health\n")
    results = stem.with_suffix(".bin")
    argv = [str(setup.vegeta), "attack", f"-rate={setup.rate:g}/1s", f"-duration={setup.seconds:g}s"]
    argv += [f"-targets={targets}", f"-output={results}", "-timeout=10s"]
    done = run_measured(argv, _plain_env(), setup.seconds + PROCESS_GRACE_S, stem)
    report = vegeta_report(setup.vegeta, results)
    results.unlink(missing_ok=True)  # its report is kept; the encoded results are 100+ bytes a request
    latencies = report.get("latencies") or {}
    return _sample(
        "vegeta",
        repetition,
        position,
        done,
        int(report.get("requests") or 0),
        extra={
            "success": report.get("success"),
            "p50_ms": latencies.get("50th", 0) / 1e6 if latencies else None,
            "p99_ms": latencies.get("99th", 0) / 1e6 if latencies else None,
        },
    )


def vegeta_report(vegeta: Path, results: Path) -> dict[str, Any]:
    argv = [str(vegeta), "report", "-type=json", str(results)]
    return _json_object(lambda: subprocess.run(argv, capture_output=True, text=True, timeout=120).stdout)


def _plain_env() -> dict[str, str]:
    return {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "TMPDIR") if k in os.environ}


def run_one(name: str, setup: Setup, repetition: int, position: int, folder: Path) -> Sample:
    if name in ("driver", "bare"):
        return run_driver(setup, "browse" if name == "driver" else "bare", name, repetition, position, folder)
    if name == "wrk":
        return run_wrk(setup, repetition, position, folder)
    return run_vegeta(setup, repetition, position, folder)  # benchmark() refused any other name


def tool_versions(setup: Setup) -> dict[str, str]:
    def first_line(argv: list[str]) -> str:
        return (toolchain.output_of(argv, timeout=10).splitlines() or [""])[0]

    vegeta = re.search(r"Version:\s*(\S+)", toolchain.output_of([str(setup.vegeta), "-version"], timeout=10))
    return {
        "driver": first_line([str(setup.driver), "version"]),
        "wrk": first_line([str(setup.wrk), "--version"]),
        "vegeta": vegeta.group(1) if vegeta else toolchain.VEGETA_VERSION,
    }


def check_loopback(url: str) -> str:
    """A base URL on this machine only (127.0.0.0/8, ::1, localhost); returned without a trailing slash."""
    parsed = urllib.parse.urlsplit(url.strip())
    host = parsed.hostname or ""
    if parsed.scheme != "http" or not host or not parsed.port:
        raise UserError(f"--target-url {url!r}: expected http://127.0.0.1:PORT")
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise UserError(
            f"--target-url {url!r}: only loopback targets (127.0.0.1, ::1, localhost) are measured"
        )
    return url.strip().rstrip("/")


@contextmanager
def started_app(impl: str, cpus: float | None) -> Iterator[str]:
    """The app started as measured runs start it (seeded database, built, its resource group, its knobs),
    stopped on the way out whatever happens."""
    toolchain.ensure(["db", impl])
    ready.ensure_seeded()
    driver = apps.driver(impl)
    driver.ensure_built()
    spec = InstanceSpec(
        impl=impl,
        index=0,
        port=free_port(),
        database_url=ready.server().url(),
        run_dir=paths.RUNTIME / f"overhead-{os.getpid()}" / impl,
        knobs=_instance_knobs(RunPlan(impl=impl)),
    )
    console.print(f"overhead: starting {impl} on {spec.host}:{spec.port} (CPU limit {cpus or 'none'}) ...")
    with instances.running_instance(driver, spec, detect_backend(), Limits(cpus=cpus), 180) as instance:
        yield instance.base_url


@contextmanager
def fake_target(
    port: int, delay_ms: float, stall_at_s: float | None = None, max_s: float = 300
) -> Iterator[str]:
    argv = [sys.executable, "-m", "harness.tools.fake_target", "--port", str(port)]
    argv += ["--delay-ms", f"{delay_ms:g}", "--max-s", f"{max_s:g}"]
    if stall_at_s is not None:
        argv += ["--stall-at-s", f"{stall_at_s:g}", "--stall-ms", f"{STALL_MS:g}"]
    proc = subprocess.Popen(argv, cwd=paths.ROOT, start_new_session=True, stdin=subprocess.DEVNULL)
    try:
        wait_listening(port, proc, 10)
        yield f"http://127.0.0.1:{port}"
    finally:
        _kill_group(proc.pid)
        proc.wait(timeout=10)


def wait_listening(port: int, proc: subprocess.Popen[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise UserError(f"the fake target exited at start (code {proc.returncode})")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise UserError(f"the fake target did not listen on 127.0.0.1:{port} within {timeout_s:g} s")


@dataclass(frozen=True)
class Options:
    impl: str = "java"
    target_url: str | None = None
    rate: float = 1000.0
    seconds: float = 20.0
    repetitions: int = 5
    warmup_s: float = 10.0
    generators: tuple[str, ...] = GENERATORS
    wrk_connections: int = 2
    cpus: float | None = None
    accuracy: bool = False


def machine() -> dict[str, Any]:
    return {
        "cores": os.cpu_count(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def benchmark(options: Options) -> int:
    """The whole command: tools, target, warm-up, interleaved repetitions, table and JSON. Exit code."""
    unknown = [g for g in options.generators if g not in GENERATORS]
    if unknown or not options.generators:
        raise UserError(f"--generators takes a comma-separated list of {', '.join(GENERATORS)}")
    if options.accuracy:
        return accuracy(options)
    setup = Setup(
        target="",
        rate=options.rate,
        seconds=options.seconds,
        wrk_connections=options.wrk_connections,
        driver=toolchain.ensure_path("load"),
        wrk=toolchain.ensure_path("wrk") if "wrk" in options.generators else Path("wrk"),
        vegeta=toolchain.ensure_path("go", "vegeta") if "vegeta" in options.generators else Path("vegeta"),
    )
    folder = new_stamped("overhead")
    target = (
        nullcontext(check_loopback(options.target_url))
        if options.target_url
        else started_app(options.impl, options.cpus)
    )
    with target as url:
        return measure(options, replace(setup, target=url), folder)


def measure(options: Options, setup: Setup, folder: Path) -> int:
    names = list(options.generators)
    console.print(
        f"overhead: {', '.join(names)} against {setup.target} at {setup.rate:g} req/s, "
        f"{setup.seconds:g} s x {options.repetitions} interleaved repetitions; results: {folder}"
    )
    started = time.time()
    load_before = machine()["load_average"]
    if options.warmup_s > 0:
        console.print(
            f"overhead: warming the target up for {options.warmup_s:g} s (driver, browse; not counted)"
        )
        warm = replace(setup, seconds=options.warmup_s)
        run_driver(warm, "browse", "warmup", 0, 0, folder)
    samples: list[Sample] = []
    for repetition in range(1, options.repetitions + 1):
        for position, name in enumerate(rotation(names, repetition - 1)):
            sample = run_one(name, setup, repetition, position, folder)
            samples.append(sample)
            console.print(f"  rep {repetition} {name:<7} {describe_sample(sample)}", markup=False)
    summary = summarize(samples)
    record = {
        "kind": "overhead",
        "schema": 1,
        "started_at": datetime.fromtimestamp(started, timezone.utc).isoformat(),
        "seconds_total": round(time.time() - started, 1),
        "target": setup.target,
        "impl": None if options.target_url else options.impl,
        "settings": {
            "rate": setup.rate,
            "seconds": setup.seconds,
            "repetitions": options.repetitions,
            "warmup_s": options.warmup_s,
            "generators": names,
            "wrk_connections": setup.wrk_connections,
            "cpus": options.cpus,
            "paths": {"driver": "browse mix", "bare": "/health", "wrk": "/health", "vegeta": "/health"},
        },
        "versions": tool_versions(setup),
        "machine": {**machine(), "load_average_before": load_before},
        "formula": "cpu_us_per_request = (user_s + system_s) * 1e6 / requests, per process (os.wait4 rusage); "
        "summary = median and min-max over repetitions",
        "summary": summary,
        "samples": [s.record() for s in samples],
    }
    (folder / "overhead.json").write_text(json.dumps(record, indent=2) + "\n")
    print_table(summary, setup)
    console.print(f"result folder: {folder}")
    failed = sum(v["failed"] for v in summary.values())
    if failed:
        console.print(f"[yellow]{failed} repetition(s) failed (exit code or no requests): see {folder}[/]")
    return 1 if failed else 0


def describe_sample(sample: Sample) -> str:
    late = f", late {sample.late_sends}" if sample.late_sends is not None else ""
    return (
        f"{sample.requests} requests, cpu {sample.user_s + sample.system_s:.2f} s, "
        f"{sample.us_per_request:.1f} µs/request, {sample.wakeups_per_request:.2f} wake-ups/request{late}"
        f"{'' if sample.exit_code == 0 else f', exit {sample.exit_code}'}"
    )


def print_table(summary: dict[str, dict[str, Any]], setup: Setup) -> None:
    table = Table(
        "generator",
        "what it sends",
        *(Column(name, justify="right") for name in ("CPU µs/request", "wake-ups/request", "late sends")),
        title=f"CPU per request at {setup.rate:g} req/s (median of repetitions, min-max)",
    )
    what = {
        "driver": "bidbench-load, browse mix, open model",
        "bare": "bidbench-load, GET /health, open model",
        "wrk": f"wrk, GET /health, closed loop, {setup.wrk_connections} conns",
        "vegeta": "vegeta attack, GET /health, open model",
    }
    for name, row in summary.items():
        late = row["late_sends"]
        table.add_row(
            name,
            what.get(name, name),
            Spread(**row["cpu_us_per_request"]).describe(),
            Spread(**row["voluntary_switches_per_request"]).describe(2),
            Spread(**late).describe(0) if late else "-",
        )
    console.print(table)


def accuracy(options: Options) -> int:
    """p50 against a fixed 5 ms answer, and the two p99s around a 1 s freeze with 2 connections at most."""
    driver = toolchain.ensure_path("load")
    folder = new_stamped("overhead")
    seconds = max(options.seconds, 5.0)
    with fake_target(free_port(), ACCURACY_DELAY_MS, max_s=seconds + 120) as url:
        setup = Setup(target=url, rate=ACCURACY_RATE, seconds=seconds, driver=driver)
        console.print(
            f"accuracy 1: a target answering after {ACCURACY_DELAY_MS:g} ms, {ACCURACY_RATE:g} req/s, {seconds:g} s"
        )
        sample = run_driver(setup, "bare", "fixed-delay", 1, 0, folder)
        data = _json_object((folder / "fixed-delay-1.summary.json").read_text)
        p50 = (data.get("latency_ms") or {}).get("p50")
        fixed: dict[str, Any] = {
            "delay_ms": ACCURACY_DELAY_MS,
            "rate": ACCURACY_RATE,
            "seconds": seconds,
            "p50_ms": p50,
            "p50_error_ms": round(p50 - ACCURACY_DELAY_MS, 3) if p50 is not None else None,
            "latency_ms": data.get("latency_ms"),
            "late_sends": data.get("late_sends"),
            "sample": sample.record(),
        }
    with fake_target(free_port(), 1.0, stall_at_s=STALL_AT_S, max_s=seconds + 120) as url:
        setup = Setup(
            target=url, rate=ACCURACY_RATE, seconds=seconds, driver=driver, max_conns=STALL_MAX_CONNS
        )
        console.print(
            f"accuracy 2: the target freezes {STALL_MS:g} ms once, {STALL_AT_S:g} s in; "
            f"the driver holds at most {STALL_MAX_CONNS} connections (BB_MAX_CONNS)"
        )
        sample = run_driver(setup, "bare", "stall", 1, 0, folder)
        data = _json_object((folder / "stall-1.summary.json").read_text)
        stall: dict[str, Any] = {
            "stall_ms": STALL_MS,
            "stall_at_s": STALL_AT_S,
            "max_conns": STALL_MAX_CONNS,
            "rate": ACCURACY_RATE,
            "seconds": seconds,
            "intended_p99_ms": (data.get("latency_ms") or {}).get("p99"),
            "sent_p99_ms": (data.get("latency_sent_ms") or {}).get("p99"),
            "latency_ms": data.get("latency_ms"),
            "latency_sent_ms": data.get("latency_sent_ms"),
            "late_sends": data.get("late_sends"),
            "sample": sample.record(),
        }
    checks = {"fixed_delay": fixed, "stall": stall}
    record = {"kind": "overhead-accuracy", "schema": 1, "machine": machine(), "checks": checks}
    (folder / "accuracy.json").write_text(json.dumps(record, indent=2) + "\n")
    console.print(
        f"fixed {ACCURACY_DELAY_MS:g} ms target: p50 {fixed['p50_ms']} ms "
        f"({_signed(fixed['p50_error_ms'])} ms from the target's answer time)"
    )
    console.print(
        f"1 s freeze, {STALL_MAX_CONNS} connections: p99 from the intended start {stall['intended_p99_ms']} ms "
        f"(shows the freeze); p99 from the actual send {stall['sent_p99_ms']} ms (hides it: the requests "
        f"that waited for a connection were sent after the freeze)"
    )
    console.print(f"result folder: {folder}")
    return 0


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}"
