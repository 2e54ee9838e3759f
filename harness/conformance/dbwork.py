"""Database-work parity (docs/design.md §3.2): statements and rows per request type, from pg_stat_statements.

The procedure (warm-up first, so connect-time session statements such as pgjdbc's `SET application_name`
fall before the measurement) and its one tolerance, COMMIT and ROLLBACK (`LENIENT`), are described in
contract/conformance/README.md, "Database-work parity and its tolerance". Statement texts are mapped to
their contract/queries.sql names through `queries.normalize`; texts not in the contract are failures.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness import paths
from harness.conformance.cases import CaseError, parse_request
from harness.conformance.client import Connection, RawRequest, TransportError, send
from harness.conformance.dbstate import ConformanceDb
from harness.conformance.queries import contract_statements, name_of, normalize
from harness.conformance.results import CheckResult, checked, number
from harness.conformance.targets import Target

PART = "dbwork"
DBWORK_FILE = paths.CONFORMANCE_CASES / "dbwork.yaml"
LENIENT = ("commit", "rollback")
"""pgjdbc sends COMMIT/ROLLBACK as named prepared statements; PostgreSQL 15's pg_stat_statements records a
cached utility statement only on its first execution per connection, so their counts there are a lower
bound: they must not exceed the expectation; BEGIN (a simple-protocol statement in all three drivers) is
exact. The exact count of transaction ends comes from the server's statement log instead (`TX_ENDS`)."""
TX_ENDS = ("begin", "commit", "rollback")
"""Counted exactly from the server's statement log (log_statement = 'all' on the private database):
every driver's BEGIN, COMMIT and ROLLBACK, simple or extended protocol (issue #31: a skipped COMMIT
passed the pg_stat_statements check)."""
WARMUP_THREADS = 32
WARMUP_REQUESTS_PER_THREAD = 8


@dataclass(frozen=True)
class WorkType:
    name: str
    requests: tuple[RawRequest, ...]
    statements: dict[str, int]
    rows: int


@dataclass
class Measured:
    calls: dict[str, int] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)
    statuses: dict[int, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    ends: dict[str, int] | None = None
    """BEGIN/COMMIT/ROLLBACK from the server's statement log; None when the log cannot be read."""

    @property
    def total_rows(self) -> int:
        return sum(self.rows.values())

    def strict_calls(self) -> int:
        return sum(v for k, v in self.calls.items() if k not in LENIENT)

    def per_request(self, count: int) -> dict[str, Any]:
        """Statements and rows per request, and the calls: what the report shows of every target."""
        return {
            "statements_per_request": self.strict_calls() / count,
            "rows_per_request": self.total_rows / count,
            "calls": self.calls,
        }


def _fill(value: Any, ident: Any, n: int) -> Any:
    if isinstance(value, str):
        return value.replace("{id}", str(ident)).replace("{n}", str(n))
    if isinstance(value, dict):
        return {k: _fill(v, ident, n) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, ident, n) for v in value]
    return value


def load_work(path: Path = DBWORK_FILE) -> tuple[int, list[WorkType]]:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    count = int(doc.get("count", 20))
    known = set(contract_statements()) | {"begin", "commit", "rollback"}
    types: list[WorkType] = []
    for raw in doc["types"]:
        name = raw["name"]
        where = f"{path.name} type {name!r}"
        statements = {str(k): int(v) for k, v in (raw.get("statements") or {}).items()}
        unknown = set(statements) - known
        if unknown:
            raise CaseError(f"{where}: statements not in contract/queries.sql: {sorted(unknown)}")
        templates = raw["requests"] if "requests" in raw else [raw["request"]]
        ids = raw.get("ids") or [""]
        requests = tuple(
            parse_request(_fill(templates[n % len(templates)], ids[n % len(ids)], n), where)
            for n in range(count)
        )
        types.append(WorkType(name, requests, statements, int(raw["rows"])))
    return count, types


def warm_up(base_url: str) -> None:
    """Open every pooled connection (and touch every PHP-FPM child) before anything is measured."""

    def burst() -> None:
        with contextlib.suppress(TransportError, OSError), Connection(base_url) as conn:
            for _ in range(WARMUP_REQUESTS_PER_THREAD):
                conn.request(RawRequest("GET", "/ready"))

    threads = [threading.Thread(target=burst) for _ in range(WARMUP_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)


def measure(target: Target, db: ConformanceDb, types: list[WorkType]) -> dict[str, Measured]:
    out: dict[str, Measured] = {}
    db.reset()
    db.log_statements()
    with target.running(db) as base_url:
        warm_up(base_url)
        db.wait_connections_stable()
        with Connection(base_url) as conn:
            for work in types:
                db.stats_reset()
                offset = db.log_offset()
                m = Measured()
                for req in work.requests:
                    fresh = req.declared_length is not None or req.chunk_size
                    try:
                        response = send(base_url, req) if fresh else conn.request(req)
                    except (TransportError, OSError) as exc:
                        m.errors.append(f"{req.describe()}: {exc.__class__.__name__}: {exc}")
                        conn.close()
                        continue
                    m.statuses[response.status] = m.statuses.get(response.status, 0) + 1
                    if response.status >= 500:
                        m.errors.append(f"{req.describe()}: status {response.status}")
                for row in db.stats():
                    key = name_of(row.query) or f"not in the contract: {normalize(row.query)[:160]}"
                    m.calls[key] = m.calls.get(key, 0) + row.calls
                    m.rows[key] = m.rows.get(key, 0) + row.rows
                # Every answer is in, so every statement of the type has been received and logged.
                m.ends = db.transaction_ends(offset)
                out[work.name] = m
    return out


def check_type(work: WorkType, count: int, m: Measured) -> list[str]:
    problems: list[str] = list(m.errors)
    for name in sorted(set(work.statements) | set(m.calls)):
        expected = work.statements.get(name, 0) * count
        actual = m.calls.get(name, 0)
        if name in LENIENT and name in work.statements:
            if actual > expected:
                problems.append(
                    f"{name}: {actual} calls for {count} requests, more than the {expected} expected"
                )
            continue
        if actual != expected:
            what = "missing or skipped" if actual < expected else "extra"
            problems.append(
                f"{name}: {number(actual / count)} per request ({actual} calls), expected {number(expected / count)} "
                f"({what}{'; a statement text not in contract/queries.sql' if name.startswith('not in') else ''})"
            )
    if m.ends is None:
        problems.append(
            "transaction ends not counted: the server's statement log is not readable (an external "
            "database); COMMIT and ROLLBACK would only be a lower bound"
        )
    else:
        for name in TX_ENDS:
            expected = work.statements.get(name, 0) * count
            actual = m.ends.get(name, 0)
            if actual != expected:
                what = "skipped" if actual < expected else "extra"
                problems.append(
                    f"{name}: {actual} in the server's statement log for {count} requests, expected "
                    f"{expected} ({what} transaction {'starts' if name == 'begin' else 'ends'})"
                )
    if m.total_rows != work.rows:
        detail = ", ".join(f"{k} {v}" for k, v in sorted(m.rows.items()) if v)
        problems.append(
            f"rows: {number(m.total_rows / count)} per request ({m.total_rows} in all: {detail or 'none'}), "
            f"expected {number(work.rows / count)} ({work.rows})"
        )
    return problems


def run_dbwork(targets: list[Target], db: ConformanceDb, extra: dict[str, Any]) -> list[CheckResult]:
    count, types = load_work()
    measured: dict[str, dict[str, Measured]] = {}
    results: list[CheckResult] = []
    for target in targets:
        started = time.monotonic()
        measured[target.name] = measure(target, db, types)
        seconds = time.monotonic() - started
        for work in types:
            m = measured[target.name][work.name]
            problems = check_type(work, count, m)
            if problems and len(targets) > 1:
                problems.append("other targets: " + "; ".join(
                    f"{other.name} {number(measured[other.name][work.name].strict_calls() / count)} statements, "
                    f"{number(measured[other.name][work.name].total_rows / count)} rows per request"
                    for other in targets if other.name in measured and other is not target
                ))  # fmt: skip
            detail = {
                **m.per_request(count),
                "rows": m.rows,
                "statuses": {str(k): v for k, v in m.statuses.items()},
                "transaction_ends_logged": m.ends,
            }
            results.append(
                checked(PART, target.name, work.name, problems, detail=detail, seconds=seconds / len(types))
            )
    extra["dbwork"] = {
        "requests_per_type": count,
        "lenient": list(LENIENT),
        "types": {
            work.name: {
                "expected_statements": work.statements,
                "expected_statements_per_request": sum(
                    v for k, v in work.statements.items() if k not in LENIENT
                ),
                "expected_rows_per_request": work.rows / count,
                "measured": {name: measured[name][work.name].per_request(count) for name in measured},
            }
            for work in types
        },
    }
    return results
