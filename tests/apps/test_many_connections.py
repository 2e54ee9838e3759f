"""Thousands of open keep-alive connections, as the load driver holds against an overloaded instance (it opens up to
5000 when requests queue): every app must keep them all, answer every request on them, and still be
alive and answering afterwards. Java runs on a small heap here so that per-connection state that grows
with the number of open connections (Jetty's header-field cache once was: ~40 KB each, and the JVM died
of OutOfMemoryError in a capacity search) fails this test instead of a benchmark."""

from __future__ import annotations

import asyncio
import resource
import shutil
import time
import urllib.request
import uuid

import pytest

from harness import paths
from harness.apps import IMPLS, driver
from harness.apps.base import AppDriver, InstanceSpec
from harness.db.cluster import free_port
from harness.engine.instances import running_instance

CONNECTIONS = 3000
REQUESTS_PER_CONNECTION = 2
DEADLINE_S = 120.0
# 3000 caches of ~40 KB would need ~120 MB: twice this heap.
SMALL_JAVA_HEAP = "-Xmx64m -XX:+UseG1GC"


def _raise_open_files_limit(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < needed:
        pytest.skip(f"needs {needed} open files; this machine's hard limit is {hard}")
    if soft != resource.RLIM_INFINITY and soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


async def _read_response(reader: asyncio.StreamReader) -> int:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    status = int(head.split(" ", 2)[1])
    length = next(
        int(line.split(":", 1)[1])
        for line in head.split("\r\n")
        if line.lower().startswith("content-length:")
    )
    await reader.readexactly(length)
    return status


async def _hold_connections(port: int) -> list[int]:
    """Opens CONNECTIONS connections, sends REQUESTS_PER_CONNECTION requests on each, and keeps every
    connection open until all of them have finished (or failed), so that the server holds them all at once."""
    request = f"GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUser-Agent: bidbench-test\r\n\r\n".encode()
    all_settled = asyncio.Event()
    settled = 0
    statuses: list[int] = []

    def settle() -> None:
        nonlocal settled
        settled += 1
        if settled == CONNECTIONS:
            all_settled.set()

    async def one_connection() -> None:
        writer: asyncio.StreamWriter | None = None
        try:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                for _ in range(REQUESTS_PER_CONNECTION):
                    writer.write(request)
                    await writer.drain()
                    statuses.append(await _read_response(reader))
            finally:
                settle()
            await all_settled.wait()
        finally:
            if writer is not None:
                writer.close()

    async def every_connection() -> list[BaseException | None]:
        return await asyncio.gather(*(one_connection() for _ in range(CONNECTIONS)), return_exceptions=True)

    outcomes = await asyncio.wait_for(every_connection(), DEADLINE_S)
    failures = [repr(outcome) for outcome in outcomes if outcome is not None]
    assert not failures, (
        f"{len(failures)} of {CONNECTIONS} connections failed, e.g. {sorted(set(failures))[:3]}"
    )
    return statuses


def _answers(port: int) -> int:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/regions", timeout=10) as response:
        return response.status


@pytest.mark.slow
@pytest.mark.parametrize("impl", IMPLS)
def test_thousands_of_keep_alive_connections(impl: str, database_url: str) -> None:
    _raise_open_files_limit(CONNECTIONS + 512)
    app = driver(impl)
    app.ensure_built()
    knobs = {"JVM_FLAGS": SMALL_JAVA_HEAP} if impl == "java" else {}
    # Under the runtime dir, not pytest's tmp_path: PHP's workers run as another user when root runs this.
    run_dir = paths.RUNTIME / "tests" / f"{impl}-connections-{uuid.uuid4().hex[:8]}"
    spec = InstanceSpec(
        impl=impl, index=0, port=free_port(), database_url=database_url, run_dir=run_dir, knobs=knobs
    )
    try:
        _hold_and_check(app, spec)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def _hold_and_check(app: AppDriver, spec: InstanceSpec) -> None:
    impl = spec.impl
    with running_instance(app, spec) as instance:
        started = time.monotonic()
        statuses = asyncio.run(_hold_connections(spec.port))
        held_s = time.monotonic() - started
        assert len(statuses) == CONNECTIONS * REQUESTS_PER_CONNECTION
        assert set(statuses) == {200}, {s: statuses.count(s) for s in set(statuses)}
        assert all(p.poll() is None for p in instance.processes), f"{impl} died after {held_s:.0f} s"
        assert _answers(spec.port) == 200
        processes = list(instance.processes)
    assert all(p.returncode == 0 for p in processes), f"{impl} did not stop cleanly: {processes}"
