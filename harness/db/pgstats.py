"""pg_stat_statements snapshots and deltas: the database work of a measurement window (docs/design.md §3.2, §9)."""

from __future__ import annotations

from typing import Any

import psycopg

from harness.db.target import WORKING_DB, DatabaseServer

SNAPSHOT_SQL = """
SELECT s.queryid::text AS queryid, s.query, s.calls, s.rows, s.total_exec_time
  FROM pg_stat_statements s
  JOIN pg_database d ON d.oid = s.dbid
 WHERE d.datname = %s
   AND s.query NOT LIKE '%%pg_stat_statements%%'
"""


def snapshot(server: DatabaseServer, dbname: str = WORKING_DB) -> list[dict[str, Any]]:
    with psycopg.connect(server.url(dbname), connect_timeout=5, autocommit=True) as conn:
        rows = conn.execute(SNAPSHOT_SQL, (dbname,)).fetchall()
    keys = ("queryid", "query", "calls", "rows", "total_exec_time_ms")
    return [dict(zip(keys, (r[0], r[1], int(r[2]), int(r[3]), float(r[4])), strict=True)) for r in rows]


def delta(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per statement: what happened between two snapshots. Statements with no new calls are left out."""
    earlier = {row["queryid"]: row for row in before}
    out = []
    for row in after:
        prior = earlier.get(row["queryid"], {"calls": 0, "rows": 0, "total_exec_time_ms": 0.0})
        calls = row["calls"] - prior["calls"]
        if calls <= 0:
            continue
        spent = round(row["total_exec_time_ms"] - prior["total_exec_time_ms"], 3)
        out.append({**row, "calls": calls, "rows": row["rows"] - prior["rows"], "total_exec_time_ms": spent})
    return sorted(out, key=lambda r: -r["calls"])
