"""The embedded database's lifecycle against a real PostgreSQL: up, idempotent up, down, crash recovery."""

from __future__ import annotations

import os
import signal
import time

import psycopg

from harness.db.cluster import EmbeddedCluster


def _select_one(cluster: EmbeddedCluster) -> int:
    with psycopg.connect(cluster.url(), connect_timeout=5) as conn:
        row = conn.execute("SELECT 1").fetchone()
    assert row is not None
    return int(row[0])


def test_up_creates_and_starts_then_up_again_is_a_no_op(scratch_cluster: EmbeddedCluster) -> None:
    first = scratch_cluster.up()
    assert first.started
    assert any("created a new cluster" in m for m in first.messages)
    assert _select_one(scratch_cluster) == 1

    second = scratch_cluster.up()
    assert not second.started
    assert any("already running" in m for m in second.messages)


def test_settings_file_is_applied(scratch_cluster: EmbeddedCluster) -> None:
    scratch_cluster.up()
    with psycopg.connect(scratch_cluster.url(), connect_timeout=5) as conn:
        preload = conn.execute("SHOW shared_preload_libraries").fetchone()
        listen = conn.execute("SHOW listen_addresses").fetchone()
    assert preload is not None and "pg_stat_statements" in preload[0]
    assert listen is not None and listen[0] == "127.0.0.1"


def test_down_then_up(scratch_cluster: EmbeddedCluster) -> None:
    scratch_cluster.up()
    assert scratch_cluster.down()
    assert not scratch_cluster.is_running()
    assert not scratch_cluster.down()
    assert scratch_cluster.up().started
    assert _select_one(scratch_cluster) == 1


def test_killed_server_is_recovered_with_a_message_and_keeps_committed_data(
    scratch_cluster: EmbeddedCluster,
) -> None:
    scratch_cluster.up()
    with psycopg.connect(scratch_cluster.url(), autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS survivor")
        conn.execute("CREATE TABLE survivor (v int)")
        conn.execute("INSERT INTO survivor VALUES (7)")
        conn.execute("CHECKPOINT")
    pid = scratch_cluster.server_pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 60  # a bound for a busy host; a killed server is gone at once
    while scratch_cluster.is_running() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not scratch_cluster.is_running()

    report = scratch_cluster.up()
    assert report.started
    assert any("stale pid file" in m for m in report.messages)
    with psycopg.connect(scratch_cluster.url()) as conn:
        row = conn.execute("SELECT v FROM survivor").fetchone()
    assert row == (7,)
