"""The suite's own database: a private clone of the seeded template, never the shared working database.

`./bidbench db reset` (any engineer, any test run) drops and re-creates `bidbench`, and two runs at once
(two engineers, CI and a developer) must not drop each other's state. So each run clones the template into
its own database, `bidbench_conf_<pid>`, dropped at the end (those of runs whose process is gone are dropped
at the start of the next run). A reset drops and re-clones it, as harness.db.seed.reset does, which is why
the apps are stopped before and started after every reset.

pg_stat_statements is cluster-wide. The suite resets and reads only the entries of its own database
(`pg_stat_statements_reset(0, dbid, 0)`, `WHERE dbid = ...`), so other users' statistics stay intact;
the statements it issues itself to do so mention pg_stat_statements and are filtered out.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import psycopg
from psycopg import sql

from harness.db import seed as seeding
from harness.db.checks import ITEMS_MISMATCH_SQL
from harness.db.cluster import EmbeddedCluster
from harness.db.ready import ensure_template
from harness.db.target import TEMPLATE_DB, DatabaseServer

CONFORMANCE_DB_PREFIX = "bidbench_conf_"
SEQUENCES = ("users_id_seq", "items_id_seq", "bids_id_seq")
SCALE = 1
SEED = 42


def _connect(url: str) -> psycopg.Connection:
    return psycopg.connect(url, autocommit=True, connect_timeout=10)


@dataclass(frozen=True)
class StatRow:
    query: str
    calls: int
    rows: int


class ConformanceDb:
    def __init__(self, server: DatabaseServer, name: str | None = None) -> None:
        self.server = server
        self.name = name or f"{CONFORMANCE_DB_PREFIX}{os.getpid()}"

    @property
    def url(self) -> str:
        return self.server.url(self.name)

    def connect(self) -> psycopg.Connection:
        conn = _connect(self.url)
        conn.execute("SET TimeZone = 'UTC'")
        return conn

    def reset(self) -> None:
        """Drop and re-clone from the template. Apps connected to it lose their connections."""
        last: Exception | None = None
        for _ in range(20):
            try:
                with _connect(self.server.admin_url()) as admin:
                    seeding.clone_template(admin, self.name)
                return
            except psycopg.errors.ObjectInUse as exc:  # someone is connected to the template right now
                last = exc
                time.sleep(0.25)
        raise RuntimeError(f"could not clone {TEMPLATE_DB}: {last}")

    def drop(self) -> None:
        with _connect(self.server.admin_url()) as admin:
            seeding.drop_database(admin, self.name)

    def fingerprint(self) -> dict[str, str]:
        """Every table's content checksum and every sequence position: equal means the same state."""
        with self.connect() as conn:
            sums = seeding.table_checksums(conn)
            for seq in SEQUENCES:
                row = conn.execute(
                    sql.SQL("SELECT last_value, is_called FROM {}").format(sql.Identifier(seq))
                ).fetchone()
                sums[seq] = f"{row[0]}:{row[1]}" if row else "?"
        return sums

    def invariant_violations(self, limit: int = 10) -> list[str]:
        """Items whose max_bid_cents / bid_count disagree with their bids (docs/design.md §2.3: no lost updates)."""
        with self.connect() as conn:
            rows = conn.execute(ITEMS_MISMATCH_SQL).fetchall()
        return [
            f"item {r[0]}: max_bid_cents={r[1]} bid_count={r[2]} but max(bids.amount_cents)={r[3]} count(bids)={r[4]}"
            for r in rows[:limit]
        ] + ([f"... and {len(rows) - limit} more items"] if len(rows) > limit else [])

    # Transaction ends, from the server's statement log (why: harness.conformance.dbwork.TX_ENDS). The
    # server logs each statement as it receives it ("statement: COMMIT", "execute S_1: COMMIT").

    def server_log(self) -> Path | None:
        """The embedded server's log file (log_line_prefix names the database), or None (external)."""
        if not self.server.embedded:
            return None
        cluster = EmbeddedCluster()
        if cluster.port != self.server.host_port[1] or not cluster.log_file.is_file():
            return None
        return cluster.log_file

    def log_statements(self) -> None:
        """Log every statement of this database's new sessions (reset drops the setting with the database)."""
        with _connect(self.server.admin_url()) as admin:
            admin.execute(
                sql.SQL("ALTER DATABASE {} SET log_statement = 'all'").format(sql.Identifier(self.name))
            )

    def log_offset(self) -> int:
        log = self.server_log()
        return log.stat().st_size if log is not None else 0

    def transaction_ends(self, offset: int) -> dict[str, int] | None:
        """BEGIN, COMMIT and ROLLBACK statements of this database logged since offset; None without a log."""
        log = self.server_log()
        if log is None:
            return None
        with log.open("rb") as f:
            f.seek(offset)
            text = f.read().decode("utf-8", "replace")
        counts = {"begin": 0, "commit": 0, "rollback": 0}
        pattern = re.compile(
            rf"@{re.escape(self.name)} LOG:  (?:statement|execute [^:]*): (BEGIN|COMMIT|ROLLBACK)\s*;?\s*$",
            re.IGNORECASE | re.MULTILINE,
        )
        for m in pattern.finditer(text):
            counts[m.group(1).lower()] += 1
        return counts

    def app_connections(self) -> int:
        """Connections to this database other than the suite's own (the app's pool)."""
        with _connect(self.server.admin_url()) as admin:
            row = admin.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                (self.name,),
            ).fetchone()
        return int(row[0]) if row else 0

    def wait_connections_stable(self, quiet_s: float = 1.0, timeout_s: float = 15.0) -> None:
        """Wait until the app's connection count has not changed for quiet_s (a pool still filling up
        would otherwise run its connect-time statements inside a measurement)."""
        deadline = time.monotonic() + timeout_s
        last = self.app_connections()
        since = time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.2)
            now = self.app_connections()
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet_s:
                break

    # The extension lives in the seeded database (the template creates it), so the suite reads it from there,
    # without connect()'s SET (its own statements mention pg_stat_statements and are dropped by `stats()`).

    def stats_reset(self) -> None:
        with _connect(self.url) as conn:
            conn.execute(
                "SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0)"
            )

    def stats(self) -> list[StatRow]:
        """The top-level statements of this database since the last reset, minus the suite's own."""
        with _connect(self.url) as conn:
            rows = conn.execute(
                "SELECT query, calls, rows FROM pg_stat_statements"
                " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND toplevel"
            ).fetchall()
        return [
            StatRow(str(r[0]), int(r[1]), int(r[2])) for r in rows if "pg_stat_statements" not in str(r[0])
        ]


def drop_stale(server: DatabaseServer) -> None:
    """Drop the private databases of earlier runs whose process no longer exists (this host only)."""
    with _connect(server.admin_url()) as admin:
        for (name,) in admin.execute("SELECT datname FROM pg_database").fetchall():
            m = re.fullmatch(re.escape(CONFORMANCE_DB_PREFIX) + r"(\d+)", name)
            if m and not psutil.pid_exists(int(m.group(1))):  # that run is gone
                seeding.drop_database(admin, name)


def prepare(server: DatabaseServer) -> ConformanceDb:
    """Make sure the template holds scale 1 / seed 42 (the golden data), then clone the private database."""
    ensure_template(server, SCALE, SEED)
    if server.embedded:
        drop_stale(server)
    db = ConformanceDb(server)
    db.reset()
    return db
