"""The bid invariants against a real PostgreSQL: a copy of the seeded database, then broken on purpose."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from harness.db.target import TEMPLATE_DB
from harness.faults import invariants
from harness.faults.timeline import Request


def _with_db(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, ""))


@pytest.fixture()
def scratch_db(database_url: str) -> Iterator[str]:
    name = f"bb_invariants_{uuid.uuid4().hex[:8]}"
    admin = _with_db(database_url, "postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE_DB}"')
    try:
        yield _with_db(database_url, name)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def ack(bid_id: int) -> Request:
    return Request("m", 0.0, 1.0, 201, "-", "place_bid", 0, bid_id)


def test_seeded_data_holds_the_invariants(scratch_db: str) -> None:
    report = invariants.check(scratch_db, [], invariants.max_bid_id(scratch_db))
    assert report.ok, report.describe()


def test_each_broken_invariant_is_found(scratch_db: str) -> None:
    since = invariants.max_bid_id(scratch_db)
    with psycopg.connect(scratch_db, autocommit=True) as conn:
        item = conn.execute("SELECT id FROM items WHERE bid_count = 0 ORDER BY id LIMIT 1").fetchone()[0]
        # A bid stored twice (as if a retried request inserted it again), each copy counted.
        stored = []
        for _ in range(2):
            row = conn.execute(
                "INSERT INTO bids (item_id, bidder_id, amount_cents, created_at) VALUES (%s, 1, 999999, now()) RETURNING id",
                (item,),
            ).fetchone()
            stored.append(row[0])
        conn.execute("UPDATE items SET max_bid_cents = 999999, bid_count = 2 WHERE id = %s", (item,))
        # A lost update: a counter that disagrees with the bids table.
        conn.execute("UPDATE items SET bid_count = bid_count + 1 WHERE id = (SELECT min(id) FROM items)")
    report = invariants.check(scratch_db, [ack(stored[0]), ack(stored[1]), ack(10**9)], since)
    assert not report.ok
    assert report.items_mismatched == 1
    assert report.duplicates == 1
    assert report.acknowledged_missing == 1
    assert report.new_rows == 2 and report.unacknowledged_rows == 0
    assert "FAILED" in report.describe()


def test_unacknowledged_rows_are_reported_not_failed(scratch_db: str) -> None:
    since = invariants.max_bid_id(scratch_db)
    with psycopg.connect(scratch_db, autocommit=True) as conn:
        item = conn.execute("SELECT id FROM items WHERE bid_count = 0 ORDER BY id LIMIT 1").fetchone()[0]
        conn.execute(
            "INSERT INTO bids (item_id, bidder_id, amount_cents, created_at) VALUES (%s, 2, 123456, now())",
            (item,),
        )
        conn.execute("UPDATE items SET max_bid_cents = 123456, bid_count = 1 WHERE id = %s", (item,))
    report = invariants.check(scratch_db, [], since)
    assert report.ok and report.unacknowledged_rows == 1


def test_a_database_recreated_during_the_run_is_not_checkable(scratch_db: str) -> None:
    report = invariants.check(
        scratch_db, [ack(10**9)], 0, database_oid_before=invariants.database_oid(scratch_db) + 1
    )
    assert not report.ok and "re-created" in report.error


def test_a_recreated_database_names_who_recreated_it(scratch_db: str) -> None:
    with psycopg.connect(scratch_db, autocommit=True) as conn:
        name = conn.execute("SELECT current_database()").fetchone()[0]
        conn.execute(
            f"COMMENT ON DATABASE \"{name}\" IS 'cloned 12:00:00 by pid 4242: tests/x.py::test_y (call)'"
        )
    report = invariants.check(scratch_db, [], 0, database_oid_before=invariants.database_oid(scratch_db) + 1)
    assert "by pid 4242: tests/x.py::test_y" in report.error
    assert invariants.check(
        scratch_db, [], invariants.max_bid_id(scratch_db), invariants.database_oid(scratch_db)
    ).ok
