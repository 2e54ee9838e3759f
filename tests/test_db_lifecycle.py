"""The embedded database's lifecycle against a real PostgreSQL: up, idempotent up, down, crash recovery."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psycopg
import pytest

from harness import paths
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


def _db_command(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, BIDBENCH_STATE=str(state))
    env.pop("BIDBENCH_DATABASE_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "harness", "db", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=paths.ROOT,
        stdin=subprocess.DEVNULL,
    )


def _clients_once_closed_backends_exit(cluster: EmbeddedCluster) -> dict[str, int]:
    """A backend leaves pg_stat_activity a moment after its client closes, later on a busy host: poll, bounded."""
    deadline = time.monotonic() + 30
    clients = cluster.clients()
    while clients and time.monotonic() < deadline:
        time.sleep(0.1)
        clients = cluster.clients()
    return clients


def test_db_down_is_refused_while_a_client_is_connected_and_names_it() -> None:
    """`db down` under a running measurement would pull the server from under it: refused, naming who is
    connected, until the client leaves or --force is given. Its own state directory: the shared server is
    never touched."""
    # Not below /tmp/pytest-of-root (mode 700): PostgreSQL's unprivileged user must reach it when we are root.
    state = paths.world_reachable_state() / "test-clusters" / f"down-{uuid.uuid4().hex[:8]}"
    state.mkdir(parents=True)
    cluster = EmbeddedCluster(base_dir=state / "pg")
    try:
        cluster.up()
        with psycopg.connect(cluster.url(), application_name="holder-of-the-test", connect_timeout=5):
            assert cluster.clients() == {"holder-of-the-test": 1}
            refused = _db_command(state, "down")
            assert refused.returncode != 0
            assert "holder-of-the-test (1)" in refused.stderr + refused.stdout
            assert "--force" in refused.stderr + refused.stdout
            assert cluster.is_running()
        assert _clients_once_closed_backends_exit(cluster) == {}
        stopped = _db_command(state, "down")
        assert stopped.returncode == 0, stopped.stderr
        assert "stopped" in stopped.stdout
        assert not cluster.is_running()
    finally:
        cluster.destroy()
        shutil.rmtree(state, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root hands the cluster's files to the server's user")
def test_a_single_file_and_a_tree_are_both_handed_to_the_server_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nobody = pwd.getpwnam("nobody")
    cluster = EmbeddedCluster(base_dir=tmp_path / "cluster")
    monkeypatch.setattr(cluster, "_server_user", lambda: nobody)
    single = tmp_path / "runtime.conf"
    single.write_text("port = 1\n")
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "file").write_text("x")
    cluster._chown_to_server_user(single)
    cluster._chown_to_server_user(tree)
    for path in (single, tree, tree / "sub", tree / "sub" / "file"):
        assert path.stat().st_uid == nobody.pw_uid, path
