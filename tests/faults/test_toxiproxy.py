"""The real Toxiproxy binary (built once with Go into .bidbench/bin): start, proxy PostgreSQL, add latency,
reset connections, clear, stop."""

from __future__ import annotations

import time
from pathlib import Path

import psycopg
import pytest

from harness.db.target import DatabaseServer
from harness.faults.runner import _replace_port
from harness.faults.toxiproxy import Toxiproxy
from harness.tools import toolchain

pytestmark = pytest.mark.slow


def test_latency_reset_and_clear_through_a_real_proxy(shared_server: DatabaseServer, tmp_path: Path) -> None:
    toolchain.ensure(["faults"])
    assert toolchain.TOOLS["toxiproxy"].probe().found
    proxy = Toxiproxy(tmp_path / "toxiproxy.log")
    with proxy:
        port = proxy.create_proxy("postgres", shared_server.host_port)
        url = _replace_port(shared_server.url(), port)
        with psycopg.connect(url, connect_timeout=5) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
            proxy.add_toxic("postgres", "latency", "latency", {"latency": 200})
            started = time.monotonic()
            conn.execute("SELECT 1")
            assert time.monotonic() - started >= 0.19
            assert [t["type"] for t in proxy.toxics("postgres")] == ["latency"]
            proxy.clear("postgres")
            proxy.add_toxic("postgres", "reset", "reset_peer", {"timeout": 0}, stream="upstream")
            with pytest.raises(psycopg.OperationalError):
                conn.execute("SELECT 1")
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(url, connect_timeout=5)
        proxy.clear("postgres")
        with psycopg.connect(url, connect_timeout=5) as conn:
            assert conn.execute("SELECT 2").fetchone() == (2,)
    assert proxy.proc is not None and proxy.proc.poll() is not None
