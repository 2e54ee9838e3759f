"""Seeding into a template database, cheap resets from it, and the content checksum.

`seed` builds `bidbench_template` (schema + COPY of the generated rows + pg_stat_statements), marks it
a template and clones the working database `bidbench` from it. `reset` drops and re-clones the working
database, which takes about a second at scale 1, so every measured run starts from the same state.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import islice

import psycopg
from psycopg import sql

from harness import paths
from harness.console import UserError
from harness.db.generator import Generator
from harness.db.target import TEMPLATE_DB, WORKING_DB, DatabaseServer

TABLES = ("regions", "categories", "users", "items", "bids")
COPY_COLUMNS = {
    "regions": "id, name",
    "categories": "id, name",
    "users": "id, nickname, region_id, rating, created_at",
    "items": "id, seller_id, category_id, title, description, initial_price_cents, max_bid_cents, "
    "bid_count, start_time, end_time",
    "bids": "id, item_id, bidder_id, amount_cents, created_at",
}
# Only these indexes are dropped by the no-index variant (RUBiS Revisited §3); primary keys stay.
SECONDARY_INDEXES = (
    "items_category_end_time_idx",
    "bids_item_amount_idx",
    "items_seller_idx",
    "bids_bidder_idx",
)


@dataclass(frozen=True)
class SeedInfo:
    scale: int
    seed: int
    checksum: str
    row_counts: dict[str, int]
    seconds: float


def _connect(url: str, autocommit: bool = True) -> psycopg.Connection:
    try:
        return psycopg.connect(url, autocommit=autocommit, connect_timeout=10)
    except psycopg.OperationalError as exc:
        raise UserError(
            f"cannot connect to PostgreSQL ({exc.__class__.__name__}: {str(exc).strip()}). "
            "Start the embedded database with `./bidbench db up`."
        ) from exc


def drop_database(admin: psycopg.Connection, name: str) -> None:
    admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def clone_template(admin: psycopg.Connection, name: str) -> None:
    drop_database(admin, name)
    admin.execute(
        sql.SQL("CREATE DATABASE {} TEMPLATE {} STRATEGY FILE_COPY").format(
            sql.Identifier(name), sql.Identifier(TEMPLATE_DB)
        )
    )


def _copy(conn: psycopg.Connection, table: str, rows: Iterable[str]) -> None:
    statement = sql.SQL("COPY {} ({}) FROM STDIN").format(sql.Identifier(table), sql.SQL(COPY_COLUMNS[table]))
    rows = iter(rows)
    with conn.cursor() as cur, cur.copy(statement) as copy:
        # Every row ends in a newline, so only an exhausted iterator joins to "".
        while batch := "".join(islice(rows, 5000)):
            copy.write(batch)


def table_checksums(conn: psycopg.Connection) -> dict[str, str]:
    """md5 of each table's rows as text, in primary-key order, rendered in UTC."""
    conn.execute("SET TimeZone = 'UTC'")
    conn.execute("SET DateStyle = 'ISO, YMD'")
    sums: dict[str, str] = {}
    for table in TABLES:
        query = sql.SQL(
            "SELECT coalesce(md5(string_agg(t::text, E'\\n' ORDER BY t.id)), '') FROM {} t"
        ).format(sql.Identifier(table))
        row = conn.execute(query).fetchone()
        sums[table] = row[0] if row else ""
    return sums


def combined_checksum(sums: dict[str, str]) -> str:
    digest = hashlib.sha256()
    for table in TABLES:
        digest.update(f"{table}={sums[table]}\n".encode())
    return digest.hexdigest()[:16]


def checksum(server: DatabaseServer, dbname: str = WORKING_DB) -> str:
    with _connect(server.url(dbname)) as conn:
        return combined_checksum(table_checksums(conn))


def row_counts(conn: psycopg.Connection) -> dict[str, int]:
    counts = {}
    for table in TABLES:
        row = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table))).fetchone()
        counts[table] = int(row[0]) if row else 0
    return counts


def seed(server: DatabaseServer, scale: int, seed_value: int, with_indexes: bool = True) -> SeedInfo:
    started = time.monotonic()
    generator = Generator(scale, seed_value)
    with _connect(server.admin_url()) as admin:
        drop_database(admin, WORKING_DB)
        if _exists(admin, TEMPLATE_DB):
            # A template database cannot be dropped until it is unmarked.
            admin.execute(sql.SQL("ALTER DATABASE {} IS_TEMPLATE false").format(sql.Identifier(TEMPLATE_DB)))
        drop_database(admin, TEMPLATE_DB)
        admin.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'").format(
                sql.Identifier(TEMPLATE_DB)
            )
        )

    with _connect(server.url(TEMPLATE_DB), autocommit=False) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        conn.execute(paths.SCHEMA_SQL.read_text())
        if not with_indexes:
            for index in SECONDARY_INDEXES:
                conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(index)))
        item_rows, bid_rows = generator.items_and_bids()
        rows = (generator.regions(), generator.categories(), generator.users(), item_rows, bid_rows)
        for table, table_rows in zip(TABLES, rows, strict=True):
            _copy(conn, table, table_rows)
        for table in ("users", "items", "bids"):
            conn.execute(
                sql.SQL("SELECT setval(pg_get_serial_sequence({t}, 'id'), (SELECT max(id) FROM {i}))").format(
                    t=sql.Literal(table), i=sql.Identifier(table)
                )
            )
        conn.commit()
        conn.autocommit = True
        conn.execute("VACUUM (ANALYZE, FREEZE)")
        checksum_value = combined_checksum(table_checksums(conn))
        counts = row_counts(conn)

    comment = f"bidbench scale={scale} seed={seed_value} checksum={checksum_value} indexes={with_indexes}"
    with _connect(server.admin_url()) as admin:
        _comment(admin, TEMPLATE_DB, comment)
        admin.execute(sql.SQL("ALTER DATABASE {} IS_TEMPLATE true").format(sql.Identifier(TEMPLATE_DB)))
    reset(server)
    return SeedInfo(scale, seed_value, checksum_value, counts, time.monotonic() - started)


def _exists(admin: psycopg.Connection, dbname: str) -> bool:
    return admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone() is not None


def template_info(server: DatabaseServer) -> dict[str, str] | None:
    """scale, seed, checksum and indexes of the seeded template, or None if there is none."""
    with _connect(server.admin_url()) as admin:
        row = admin.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", (TEMPLATE_DB,)
        ).fetchone()
    if not row or not row[0] or not row[0].startswith("bidbench "):
        return None
    return dict(part.split("=", 1) for part in row[0].split()[1:])


def reset(server: DatabaseServer) -> float:
    """Re-clone the working database from the template. Returns the seconds it took."""
    started = time.monotonic()
    with _connect(server.admin_url()) as admin:
        if not _exists(admin, TEMPLATE_DB):
            raise UserError(
                "there is no seeded template yet. Run `./bidbench db seed --scale 1 --seed 42` first."
            )
        clone_template(admin, WORKING_DB)
        # Who re-cloned it: a run whose working database was re-created under it can then name the culprit.
        _comment(admin, WORKING_DB, _cloned_by())
    return time.monotonic() - started


def _comment(admin: psycopg.Connection, dbname: str, text: str) -> None:
    admin.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(sql.Identifier(dbname), sql.Literal(text)))


def _cloned_by() -> str:
    who = os.environ.get("PYTEST_CURRENT_TEST") or " ".join(sys.argv)
    return f"cloned {time.strftime('%H:%M:%S')} by pid {os.getpid()}: {who[:300]}"


def working_origin(conn: psycopg.Connection) -> str | None:
    """Who last re-cloned the database `conn` is on, and when (reset's note), if it says."""
    row = conn.execute(
        "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = current_database()"
    ).fetchone()
    return str(row[0]) if row and row[0] else None
