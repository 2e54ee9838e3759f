"""`./bidbench faults slow-clients`: slow uploads must not starve other clients (issue #31, item 1).

About 31 held partial POST bodies once froze the Java app for every other client (a blocking body read
parked each on a pool thread). Self-contained (no load driver): the app is started as a run starts it, on a
private clone of the seeded database; a closed loop of ordinary GETs measures a baseline, then again while
200 slow-body connections (`Content-Length: 100`, 6 bytes sent or none) are held. The full version holds
them past the contract's 30 s body-stall timeout (408, or a close for nginx: a documented exemption), then
releases each with a body the contract refuses before any database work.

Reported per app: both p99s and their ratio (target: within 2x), the ordinary requests that failed, and
every answer the slow connections got (never a 5xx); to results/slow-clients/<UTC time>.json.
"""

from __future__ import annotations

import http.client
import json
import os
import select
import shutil
import socket
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.table import Table

from harness import apps, paths
from harness.apps.base import InstanceSpec
from harness.conformance.dbstate import prepare
from harness.console import console
from harness.db import ready
from harness.db.cluster import free_port
from harness.engine.instances import running_instance
from harness.engine.resources import Limits, detect_backend
from harness.faults import timeline
from harness.record.folders import new_stamped

SLOW_CONNECTIONS = 200
DECLARED_BYTES = 100
PARTIAL_BYTES = 6
STALL_TIMEOUT_S = 30.0
"""The contract's body-stall timeout: the full version holds the connections past it."""
RATIO_TARGET = 2.0
# A body the contract refuses (step 7.4, unknown fields) before any database work: releasing the held
# uploads writes nothing. Exactly DECLARED_BYTES long.
SLOW_BODY = (b'{"x":"' + b"a" * (DECLARED_BYTES - 8) + b'"}')[:DECLARED_BYTES]
assert len(SLOW_BODY) == DECLARED_BYTES
COLUMNS = ("app", "baseline p99 ms", "p99 under attack ms", "ratio", "ordinary failures", "slow answers",
           "verdict")  # fmt: skip


@dataclass(frozen=True)
class Plan:
    clients: int = 4
    """Closed-loop client threads, each on its own keep-alive connection."""
    warmup_requests: int = 400
    requests: int = 2000
    """Ordinary requests per measured phase (baseline, under attack)."""
    phase_limit_s: float = 90.0
    """A phase stops here even if it has not sent all its requests."""
    connections: int = SLOW_CONNECTIONS
    hold_past_stall: bool = True
    """Hold the slow connections until the body-stall timeout has passed (the full version)."""
    answer_timeout_s: float = 10.0


QUICK = Plan(clients=3, warmup_requests=100, requests=300, phase_limit_s=20.0, hold_past_stall=False)
FULL = Plan()


def _paths_cycle(index: int) -> str:
    """Ordinary reads over the seeded data: an item, a category page, the regions, health."""
    item, category = 1 + (index * 7919) % 15000, 1 + index % 19
    return (f"/items/{item}", f"/categories/{category}/items?limit=10", "/regions", "/health")[index % 4]


@dataclass
class Phase:
    name: str
    sent: int = 0
    ok: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def p99(self) -> float | None:
        return percentile(self.latencies_ms, 99.0)

    def summary(self) -> dict[str, Any]:
        return {
            "sent": self.sent,
            "ok_2xx": self.ok,
            "failures": dict(self.failures),
            "p50_ms": percentile(self.latencies_ms, 50.0),
            "p99_ms": self.p99(),
            "max_ms": max(self.latencies_ms) if self.latencies_ms else None,
            "seconds": round(self.seconds, 3),
        }


def percentile(values: list[float], q: float) -> float | None:
    """timeline.percentile (nearest rank), rounded to the µs."""
    found = timeline.percentile(values, q)
    return None if found is None else round(found, 3)


def closed_loop(port: int, name: str, total: int, clients: int, limit_s: float) -> Phase:
    """`total` GETs from `clients` threads, each awaiting its answer; stops at `limit_s`, counting all."""
    phase = Phase(name)
    lock = threading.Lock()
    counter = iter(range(total))
    deadline = time.monotonic() + limit_s

    def client() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            while time.monotonic() < deadline:
                with lock:
                    index = next(counter, None)
                if index is None:
                    return
                path = _paths_cycle(index)
                started = time.perf_counter()
                try:
                    conn.request("GET", path)
                    response = conn.getresponse()
                    response.read()
                    outcome = None if 200 <= response.status < 300 else f"status {response.status}"
                    if response.will_close:
                        conn.close()
                except (OSError, http.client.HTTPException) as exc:
                    outcome = exc.__class__.__name__
                    conn.close()
                elapsed_ms = (time.perf_counter() - started) * 1000.0
                with lock:
                    phase.sent += 1
                    if outcome is None:
                        phase.ok += 1
                        phase.latencies_ms.append(elapsed_ms)
                    else:
                        phase.failures[outcome] += 1
        finally:
            conn.close()

    started = time.monotonic()
    threads = [threading.Thread(target=client, name=f"closed-loop-{i}", daemon=True) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=limit_s + 15)
    phase.seconds = time.monotonic() - started
    if phase.sent < total:
        phase.failures[f"not sent within {limit_s:g} s"] += total - phase.sent
    return phase


@dataclass
class SlowConnection:
    sock: socket.socket | None
    partial: bool
    received: bytes = b""
    closed_by_server: bool = False
    error: str = ""


def open_slow(port: int, count: int) -> list[SlowConnection]:
    """`count` connections that each send a POST's headers and 6 of its 100 body bytes (every other one:
    none), then hold. A connection that cannot be opened is kept as an error."""
    head = (
        f"POST /items HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {DECLARED_BYTES}\r\n\r\n"
    ).encode()
    slow: list[SlowConnection] = []
    for i in range(count):
        partial = i % 2 == 0
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(head + (SLOW_BODY[:PARTIAL_BYTES] if partial else b""))
            sock.setblocking(False)
            slow.append(SlowConnection(sock, partial))
        except OSError as exc:
            slow.append(SlowConnection(None, partial, error=f"connect: {exc.__class__.__name__}"))
    return slow


def poll_slow(slow: list[SlowConnection]) -> None:
    """Collect whatever the server sent on the held connections so far (an early 408, a close)."""
    for conn in slow:
        if conn.sock is None or conn.closed_by_server:
            continue
        try:
            while True:
                data = conn.sock.recv(65536)
                if not data:
                    conn.closed_by_server = True
                    break
                conn.received += data
        except BlockingIOError:
            pass
        except OSError as exc:
            conn.closed_by_server = True
            conn.error = conn.error or exc.__class__.__name__


def release_slow(slow: list[SlowConnection], timeout_s: float) -> None:
    """Send the rest of every body still held, read the answers (bounded by timeout_s), close all."""
    for conn in slow:
        if conn.sock is None or conn.closed_by_server or conn.received:
            continue
        try:
            conn.sock.settimeout(2)
            conn.sock.sendall(SLOW_BODY[PARTIAL_BYTES:] if conn.partial else SLOW_BODY)
            conn.sock.setblocking(False)
        except OSError as exc:
            conn.error = conn.error or f"send: {exc.__class__.__name__}"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        waiting = [
            c for c in slow if c.sock is not None and not c.closed_by_server and not _complete(c.received)
        ]
        if not waiting:
            break
        readable, _, _ = select.select([c.sock for c in waiting], [], [], 0.2)
        if readable:
            poll_slow(waiting)
    for conn in slow:
        if conn.sock is not None:
            conn.sock.close()


def _complete(data: bytes) -> bool:
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == b"content-length":
            return len(body) >= int(value.strip() or b"0")
    return True


def slow_answers(slow: list[SlowConnection]) -> dict[str, int]:
    """What each slow connection got: 'status N', 'closed, no answer', 'no answer' or the error."""
    out: Counter[str] = Counter()
    for conn in slow:
        if conn.error and not conn.received:
            out[conn.error] += 1
        elif conn.received.startswith(b"HTTP/1."):
            parts = conn.received.split(b" ", 2)
            out[f"status {parts[1].decode('latin-1')}"] += 1
        elif conn.received:
            out["not HTTP: " + conn.received[:20].decode("latin-1", "replace")] += 1
        elif conn.closed_by_server:
            out["closed, no answer"] += 1
        else:
            out["no answer"] += 1
    return dict(out)


def server_errors(answers: dict[str, int]) -> int:
    return sum(n for k, n in answers.items() if k.startswith("status 5"))


@dataclass
class AppResult:
    impl: str
    cpus: float | None
    backend: str
    baseline: dict[str, Any]
    under_attack: dict[str, Any]
    ratio: float | None
    slow_connections: int
    slow_answers: dict[str, int]
    held_s: float
    alive_after: bool

    @property
    def passed(self) -> bool:
        """Other clients were served (every ordinary request a 2xx) and no slow connection got a 5xx."""
        return (
            self.alive_after
            and not self.baseline["failures"]
            and not self.under_attack["failures"]
            and self.under_attack["ok_2xx"] > 0
            and server_errors(self.slow_answers) == 0
        )


def run_app(impl: str, database_url: str, plan: Plan, cpus: float | None) -> AppResult:
    """One app: start it under the run's resource limits, baseline, attack, release, stop."""
    app = apps.driver(impl)
    app.ensure_built()
    backend = detect_backend() if cpus else "none"
    run_dir = paths.RUNTIME / "slow-clients" / f"{os.getpid()}-{impl}"
    shutil.rmtree(run_dir, ignore_errors=True)
    spec = InstanceSpec(
        impl=impl, index=0, port=free_port(), database_url=database_url, run_dir=run_dir, knobs={}
    )
    try:
        with running_instance(app, spec, backend=backend, limits=Limits(cpus=cpus)) as instance:
            port = spec.port
            closed_loop(port, "warm-up", plan.warmup_requests, plan.clients, plan.phase_limit_s)
            baseline = closed_loop(port, "baseline", plan.requests, plan.clients, plan.phase_limit_s)
            opened = time.monotonic()
            slow = open_slow(port, plan.connections)
            try:
                time.sleep(0.5)  # let the server take every held request in
                attack = closed_loop(port, "under attack", plan.requests, plan.clients, plan.phase_limit_s)
                if plan.hold_past_stall:
                    # Past the contract's stall timeout (+5 s of slack): the apps answer on their own.
                    until = opened + STALL_TIMEOUT_S + 5.0
                    while time.monotonic() < until:
                        time.sleep(min(1.0, max(0.0, until - time.monotonic())))
                        poll_slow(slow)
                poll_slow(slow)
                held_s = time.monotonic() - opened
            finally:
                release_slow(slow, plan.answer_timeout_s)
            alive = all(p.poll() is None for p in instance.processes)
            check = closed_loop(port, "after", 20, 1, 10.0)
            alive = alive and check.ok == 20
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    base_p99, attack_p99 = baseline.p99(), attack.p99()
    ratio = round(attack_p99 / base_p99, 2) if base_p99 and attack_p99 is not None else None
    return AppResult(
        impl=impl,
        cpus=cpus,
        backend=backend,
        baseline=baseline.summary(),
        under_attack=attack.summary(),
        ratio=ratio,
        slow_connections=plan.connections,
        slow_answers=slow_answers(slow),
        held_s=round(held_s, 1),
        alive_after=alive,
    )


def write_results(results: list[AppResult], plan: Plan, results_dir: Path | None = None) -> Path:
    path = new_stamped("slow-clients", ".json", results_dir)
    doc = {
        "scenario": "slow-clients",
        "plan": asdict(plan),
        "slow_request": {
            "method": "POST",
            "path": "/items",
            "declared_bytes": DECLARED_BYTES,
            "sent_bytes": [PARTIAL_BYTES, 0],
        },
        "ratio_target": RATIO_TARGET,
        "apps": [{**asdict(r), "passed": r.passed} for r in results],
    }
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path


def print_table(results: list[AppResult]) -> None:
    table = Table(*COLUMNS, title=f"slow-clients: {SLOW_CONNECTIONS} held slow-body connections")
    for r in results:
        failures = {
            **r.baseline["failures"],
            **{f"attack {k}": v for k, v in r.under_attack["failures"].items()},
        }
        ratio = "-" if r.ratio is None else f"{r.ratio:.2f}" + (" (>2x)" if r.ratio > RATIO_TARGET else "")
        table.add_row(
            r.impl,
            str(r.baseline["p99_ms"]),
            str(r.under_attack["p99_ms"]),
            ratio,
            ", ".join(f"{k}: {v}" for k, v in failures.items()) or "none",
            ", ".join(f"{k}: {v}" for k, v in sorted(r.slow_answers.items())),
            "pass" if r.passed else "FAIL",
        )
    console.print(table)


def main(impls: list[str], cpus: float | None, quick: bool) -> int:
    """The CLI entry: every app, one after the other, on a private clone of the seeded database."""
    plan = QUICK if quick else FULL
    ready.ensure_up()
    db = prepare(ready.server())
    results: list[AppResult] = []
    try:
        for impl in impls:
            console.print(
                f"[bold]slow-clients[/] {impl}: {plan.connections} slow uploads held, "
                f"{plan.requests} ordinary GETs per phase from {plan.clients} clients, CPU limit {cpus}"
            )
            results.append(run_app(impl, db.url, plan, cpus))
    finally:
        db.drop()
    print_table(results)
    path = write_results(results, plan)
    console.print(f"-> {path}")
    return 0 if all(r.passed for r in results) else 1
