"""Fixtures shared by the conformance test modules: a private conformance database and the golden sessions."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.conformance.cases import Session, load_sessions
from harness.conformance.dbstate import ConformanceDb


@pytest.fixture(scope="module")
def db() -> Iterator[ConformanceDb]:
    from harness.conformance.dbstate import prepare
    from harness.db.ready import ensure_up, server

    ensure_up()
    database = prepare(server())
    try:
        yield database
    finally:
        database.drop()


@pytest.fixture(scope="module")
def sessions() -> list[Session]:
    return load_sessions()
