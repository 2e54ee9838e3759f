"""Every app listens with the same accept backlog. Against an overloaded instance the load driver opens up to
5000 connections at once; a listener whose queue is full drops their handshakes, and each dropped one waits
for the client's SYN retransmit (1 s, then 3 s, 7 s, ...). Jetty's default (the JVM's 50) made java alone
pay that: 3000 connections at once took 3-120 s against it where node (511) and nginx (4096) took seconds."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from harness import paths
from harness.apps import IMPLS, driver
from harness.apps.base import LISTEN_BACKLOG, InstanceSpec
from harness.db.cluster import free_port
from harness.engine.instances import running_instance


def _listen_backlog(port: int) -> int:
    """The backlog of the socket listening on `port`: Send-Q of its LISTEN line in `ss`."""
    out = subprocess.run(
        ["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True, check=True
    ).stdout
    lines = [line.split() for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one listener on port {port}: {out!r}"
    return int(lines[0][2])


@pytest.mark.slow
@pytest.mark.parametrize("impl", IMPLS)
def test_every_app_listens_with_the_same_backlog(impl: str, database_url: str) -> None:
    if shutil.which("ss") is None:
        pytest.skip("needs `ss` (iproute2) to read a listening socket's backlog")
    # The kernel caps every listen() at net.core.somaxconn.
    expected = min(LISTEN_BACKLOG, int(Path("/proc/sys/net/core/somaxconn").read_text()))
    app = driver(impl)
    app.ensure_built()
    run_dir = paths.RUNTIME / "tests" / f"{impl}-backlog-{uuid.uuid4().hex[:8]}"
    spec = InstanceSpec(impl=impl, index=0, port=free_port(), database_url=database_url, run_dir=run_dir)
    try:
        with running_instance(app, spec):
            assert _listen_backlog(spec.port) == expected
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
