"""A database that accepts connections and never answers (a hung server, a route that drops its replies) is
the contract's 503 `database unavailable` after its 5 s checkout timeout in every app (rule 8), counted from
the request's arrival: one timeout, not one per connection attempt. PHP once tried twice, 8-10 s in all."""

from __future__ import annotations

import http.client
import json
import shutil
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from harness import paths
from harness.apps import IMPLS, driver
from harness.apps.base import InstanceSpec
from harness.db.cluster import free_port
from harness.engine.instances import running_instance

CHECKOUT_TIMEOUT_S = 5.0
"""The contract's pool checkout timeout (contract/README.md, rule 8)."""
EARLY_S = 1.1
"""libpq counts its connect_timeout in whole wall-clock seconds, so PHP and node's pg-native may give up
up to a second before it is due."""
TWO_ATTEMPTS_S = 2 * (CHECKOUT_TIMEOUT_S - EARLY_S)
"""The least that two connection attempts of a full timeout each take."""


@contextmanager
def silent_database() -> Iterator[int]:
    """A port that completes TCP handshakes (the kernel does that for a listening socket) and never says a
    word: no connection error for a client to report, only its own timeout."""
    with socket.create_server(("127.0.0.1", 0), backlog=256) as server:
        yield server.getsockname()[1]


def _get(port: int, path: str) -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=4 * CHECKOUT_TIMEOUT_S)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        conn.close()


@pytest.mark.slow
@pytest.mark.parametrize("impl", IMPLS)
def test_a_hung_database_is_a_503_after_one_checkout_timeout(impl: str) -> None:
    app = driver(impl)
    app.ensure_built()
    run_dir = paths.RUNTIME / "tests" / f"{impl}-hung-db-{uuid.uuid4().hex[:8]}"
    try:
        with silent_database() as db_port:
            url = f"postgresql://bidbench:secret@127.0.0.1:{db_port}/bidbench"
            spec = InstanceSpec(impl, 0, free_port(), url, run_dir, {"DB_POOL_SIZE": "2"})
            with running_instance(app, spec, ready_timeout_s=120, ready_path="/health"):
                started = time.monotonic()
                status, body = _get(spec.port, "/regions")
                took = time.monotonic() - started
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    error = body.get("error")
    assert status == 503 and error == {"code": "db_unavailable", "message": "database unavailable"}, body
    assert took > CHECKOUT_TIMEOUT_S - EARLY_S, f"503 after {took:.2f} s: it did not wait for the checkout"
    assert took < TWO_ATTEMPTS_S, f"503 after {took:.2f} s: more than one checkout timeout"
