"""Fixtures of the regimes' end-to-end tests."""

from __future__ import annotations

import pytest

from harness.db.cluster import EmbeddedCluster


@pytest.fixture(scope="module")
def private_db(scratch_cluster: EmbeddedCluster) -> str:
    """BIDBENCH_DATABASE_URL of a private cluster, for one module's commands only: every run resets the
    working database from its template at its start, and another run's reset must not drop it under
    these."""
    scratch_cluster.up()
    return scratch_cluster.url()
