"""Shared fixtures. Tests use real parts: a real PostgreSQL, real app processes, the real load driver."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import paths
from harness.cli.test_suites import one_test_command
from harness.db.cluster import EmbeddedCluster
from harness.db.target import DatabaseServer

# The suite runs on several pytest-xdist workers (`./bidbench test`, harness/cli/test_suites.py): it
# mostly waits on real servers and fixed-length steps, not on the CPU. A run resets the shared working
# database from its template at its start, which would drop it under another test's app, so every test
# runs on one worker, one at a time, unless it works on a private cluster or database of its own: those
# spread over the workers.
SHARED_DATABASE_GROUP = "shared-database"
_SHARED_DATABASE_FIXTURES = {"database_url", "shared_server"}
_PRIVATE_DATABASE_FIXTURES = {"private_db", "scratch_cluster", "outage_cluster", "db"}
"""`db` is the conformance suite's own database (tests/conformance/conftest.py), cloned from the template."""
_WITHOUT_DATABASE = ("test_launcher.py",)
"""Tests that work in a clone of their own, with its own state directory."""


# First: xdist's worker reads the groups in a hook of its own, registered after this file, so it would run
# first and miss them.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        # A module that names its own group works on a cluster of its own, shared only within the group
        # (the fault scenarios' .bidbench/pg-faults).
        own_group = item.get_closest_marker("xdist_group") is not None
        if own_group and fixtures & _SHARED_DATABASE_FIXTURES:
            # xdist would join the two names into a third group, which runs beside the shared one.
            raise pytest.UsageError(
                f"{item.nodeid}: a test in a group of its own cannot also use the shared database"
            )
        private = (
            own_group or bool(fixtures & _PRIVATE_DATABASE_FIXTURES) or item.path.name in _WITHOUT_DATABASE
        )
        if fixtures & _SHARED_DATABASE_FIXTURES or not private:
            item.add_marker(pytest.mark.xdist_group(SHARED_DATABASE_GROUP))


@pytest.fixture(scope="session")
def database_url(request: pytest.FixtureRequest) -> str:
    """The seeded working database prepared by `./bidbench test` (scale 1, seed 42)."""
    url = os.environ.get("DATABASE_URL")
    if not url:
        command = one_test_command(request.config.invocation_params.args)
        pytest.fail(
            f"DATABASE_URL is not set: this test needs the seeded test database. Run it as\n    {command}\n"
            "which prepares the database, then runs pytest with these arguments",
            pytrace=False,
        )
    return url


@pytest.fixture(scope="session")
def shared_server(database_url: str) -> DatabaseServer:
    return DatabaseServer(base_url=database_url, embedded=True)


def _scratch_dir() -> Path:
    # Not below /tmp/pytest-of-root (mode 700): the unprivileged server user must reach it when we are root.
    base = paths.world_reachable_state() / "test-clusters" / uuid.uuid4().hex[:8]
    base.mkdir(parents=True)
    return base


@pytest.fixture(scope="module")
def scratch_cluster() -> Iterator[EmbeddedCluster]:
    """A private throw-away cluster, so lifecycle tests never disturb the shared database."""
    base = _scratch_dir()
    cluster = EmbeddedCluster(base_dir=base)
    try:
        yield cluster
    finally:
        cluster.destroy()
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def private_db(scratch_cluster: EmbeddedCluster) -> str:
    """BIDBENCH_DATABASE_URL of a private cluster, for one module's commands only: every run resets the
    working database from its template at its start, and another run's reset must not drop it under
    these."""
    scratch_cluster.up()
    return scratch_cluster.url()
