"""PostgreSQL's CPU attributed to the process that asked (harness/engine/pg_backends.py), against the real
server: this test process is a "group", its connection's backend is found through the socket table and
its CPU grows with the work the test asks for."""

from __future__ import annotations

import os

import psutil
import psycopg
import pytest

from harness.engine.pg_backends import (
    BackendLedger,
    BackendShare,
    backend_cpu_seconds,
    backend_owners,
    server_processes,
)


def _port(url: str) -> int:
    return int(psycopg.conninfo.conninfo_to_dict(url).get("port") or 5432)


def _backends() -> list[int]:
    """The server's processes: the postmaster's children, as the side-by-side engine reads them."""
    from harness.db.cluster import EmbeddedCluster

    pid = EmbeddedCluster().server_pid()
    assert pid is not None, "the embedded PostgreSQL is not running"
    return [p.pid for p in psutil.Process(pid).children(recursive=True)]


def test_a_connection_is_attributed_to_the_group_holding_its_client_end(database_url: str) -> None:
    port = _port(database_url)
    with psycopg.connect(database_url) as conn:
        backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        backends = _backends()
        owners = backend_owners(port, {"tests": {os.getpid()}}, backends)
        assert owners.get(backend) == "tests"
        # Nobody else's backend is taken for ours.
        assert set(owners.values()) == {"tests"}
        assert backend_owners(port, {"others": {1}}, backends) == {}


def test_the_ledger_counts_the_backend_cpu_of_the_work_asked_for(database_url: str) -> None:
    port = _port(database_url)
    with psycopg.connect(database_url) as conn:
        ledger = BackendLedger(port, lambda: {"tests": {os.getpid()}}, _backends)
        ledger.refresh()
        share = BackendShare("tests", ledger)
        before = share.cpu_seconds()
        backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        cpu_before = backend_cpu_seconds(backend)
        conn.execute("SELECT count(*) FROM generate_series(1, 2000000)").fetchone()
        after = share.cpu_seconds()
        cpu_after = backend_cpu_seconds(backend)
        assert cpu_before is not None and cpu_after is not None and cpu_after > cpu_before
        assert after > before
        assert ledger.backends() == {"tests": 1}
        assert share.usage().cpu_seconds == pytest.approx(after, rel=0.5)


def test_a_gone_process_has_no_cpu() -> None:
    assert backend_cpu_seconds(2**22 + 12345) is None


def test_the_server_processes_hold_our_backend_whatever_cluster_it_is(database_url: str) -> None:
    with psycopg.connect(database_url) as conn:
        backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        assert backend in server_processes()
        owners = backend_owners(_port(database_url), {"tests": {os.getpid()}}, server_processes())
        assert owners.get(backend) == "tests"
