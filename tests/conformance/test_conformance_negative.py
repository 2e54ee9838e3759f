"""Negative controls (issue 6): deliberately unequal variants must make the suite fail, with a diagnosis that
names the unequal implementation and the request type. Each control runs the real machinery (golden,
differential, dbwork) against real app processes on the suite's private database.

Controls, next to two honest node instances (`node-a`, `node-b`, so that a majority exists):
- `node+unsorted`: the node app with BIDBENCH_UNFAIR_UNSORTED=1 (list queries without ORDER BY);
- `node+perfield`: the node app with BIDBENCH_UNFAIR_PER_FIELD=1 (GET /items/{id} reads each field with its
  own SELECT): byte-identical answers, so only the parity check can see it;
- `node+cache`: a proxy caching GET /items/{id} (conformance_fixtures.CachingTarget);
- `node+skip`: a proxy answering GET /items/{id} itself and skipping top_bids for items without bids
  (conformance_fixtures.SkippingTarget): byte-identical answers, so only the parity check can see it;
- `node+nocommit`: the node app with tests/conformance/skip_commit.cjs preloaded: node-postgres never
  sends COMMIT. pg_stat_statements counts COMMIT leniently (a lower bound, for pgjdbc's sake), so only
  the transaction ends counted from the server's statement log see it (issue #31 item 9).
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conformance_fixtures import CachingTarget, SkippingTarget  # noqa: E402

from harness.conformance.cases import Session  # noqa: E402
from harness.conformance.dbstate import ConformanceDb  # noqa: E402
from harness.conformance.results import CheckResult, failed  # noqa: E402
from harness.conformance.runner import run_targets  # noqa: E402
from harness.conformance.targets import AppTarget, Target  # noqa: E402

pytestmark = pytest.mark.slow


def _honest() -> list[Target]:
    return [AppTarget("node", "node-a"), AppTarget("node", "node-b")]


def _failures(results: list[CheckResult], part: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for r in failed(results):
        if r.part == part:
            out.setdefault(r.target, set()).add(r.check)
    return out


def _problems(results: list[CheckResult], part: str, target: str, check: str) -> str:
    return "\n".join(
        p for r in results if (r.part, r.target, r.check) == (part, target, check) for p in r.problems
    )


def _without_syntax(sessions: list[Session]) -> list[Session]:
    """The sessions without the request-syntax cases (25_http_syntax.yaml): they test the HTTP parser of
    the app's own stack, and a proxy in front parses and re-encodes every request with its own."""
    return [
        dataclasses.replace(s, cases=[c for c in s.cases if c.file != "25_http_syntax.yaml"])
        for s in sessions
    ]


def test_unsorted_list_queries_are_caught(db: ConformanceDb, sessions: list[Session]) -> None:
    unfair = AppTarget("node", "node+unsorted", {"BIDBENCH_UNFAIR_UNSORTED": "1"})
    reads = [s for s in sessions if s.name == "reads"]
    code, results = run_targets(
        [*_honest(), unfair], ["golden", "dbwork", "differential"], db=db, sessions=reads, quiet=True
    )
    assert code != 0

    dbwork = _failures(results, "dbwork")
    assert set(dbwork) == {"node+unsorted"}, dbwork
    # Every list request type, including the ones whose bytes happen not to change (regions and
    # categories are stored in id order; an item's bids come out of its index in order).
    assert {"list_regions", "list_categories", "category_items", "item_bids"} <= dbwork["node+unsorted"]
    assert {"get_item", "get_user", "place_bid"}.isdisjoint(dbwork["node+unsorted"])
    text = _problems(results, "dbwork", "node+unsorted", "list_regions")
    assert "list_regions" in text and "select id,name from regions" in text and "not in contract" in text

    golden = _failures(results, "golden")
    assert set(golden) == {"node+unsorted"}, golden
    assert any(check.startswith("category items") for check in golden["node+unsorted"])

    differential = _failures(results, "differential")
    assert set(differential) == {"node+unsorted"}, differential
    text = _problems(results, "differential", "node+unsorted", next(iter(differential["node+unsorted"])))
    assert "GET /categories/{id}/items" in text


def test_per_field_selects_are_caught_by_the_parity_check_alone(
    db: ConformanceDb, sessions: list[Session]
) -> None:
    unfair = AppTarget("node", "node+perfield", {"BIDBENCH_UNFAIR_PER_FIELD": "1"})
    reads = [s for s in sessions if s.name == "reads"]
    code, results = run_targets(
        [*_honest(), unfair], ["golden", "dbwork", "differential"], db=db, sessions=reads, quiet=True
    )
    assert code != 0
    # The same bytes as the honest apps: no golden case and no differential comparison sees it ...
    assert _failures(results, "golden") == {}
    assert _failures(results, "differential") == {}
    # ... only the database work does, and only for the request types of GET /items/{id}, which reads
    # field by field: a found item, a missing one (its existence check is not get_item either), a re-read.
    dbwork = _failures(results, "dbwork")
    assert dbwork == {"node+perfield": {"get_item", "get_item_missing", "get_item_repeated"}}, dbwork
    text = _problems(results, "dbwork", "node+perfield", "get_item")
    assert "select title from items where id=?" in text and "not in contract" in text, text


def test_a_cached_row_is_caught(db: ConformanceDb, sessions: list[Session]) -> None:
    cheat = CachingTarget("node+cache", AppTarget("node"))
    writes = [s for s in sessions if s.name == "writes"]
    code, results = run_targets([*_honest(), cheat], ["golden", "dbwork"], db=db, sessions=writes, quiet=True)
    assert code != 0

    dbwork = _failures(results, "dbwork")
    assert set(dbwork) == {"node+cache"}, dbwork
    assert "get_item_repeated" in dbwork["node+cache"]
    text = _problems(results, "dbwork", "node+cache", "get_item_repeated")
    assert "get_item" in text and "missing or skipped" in text

    golden = _failures(results, "golden")
    assert golden == {"node+cache": {"a read after a write sees the write (no cached rows)"}}, golden
    text = _problems(results, "golden", "node+cache", "a read after a write sees the write (no cached rows)")
    assert "GET /items/40" in text and "max_bid_cents" in text


def test_a_skipped_query_is_caught_by_the_parity_check_alone(
    db: ConformanceDb, sessions: list[Session]
) -> None:
    cheat = SkippingTarget("node+skip", AppTarget("node"))
    code, results = run_targets(
        [*_honest(), cheat], ["golden", "dbwork"], db=db, sessions=_without_syntax(sessions), quiet=True
    )
    assert code != 0
    # The shortcut returns the very same bytes: every golden case passes ...
    assert _failures(results, "golden") == {}
    # ... and only the database work gives it away, for the request type it cheats on.
    dbwork = _failures(results, "dbwork")
    assert dbwork == {"node+skip": {"get_item"}}, dbwork
    text = _problems(results, "dbwork", "node+skip", "get_item")
    assert "top_bids: 0.55 per request (11 calls), expected 1" in text


def test_a_skipped_commit_is_caught_by_the_transaction_ends(db: ConformanceDb) -> None:
    preload = Path(__file__).resolve().parent / "skip_commit.cjs"
    cheat = AppTarget("node", "node+nocommit", {"NODE_OPTIONS": f"--require {preload}"})
    code, results = run_targets([*_honest(), cheat], ["dbwork"], db=db, quiet=True)
    assert code != 0
    dbwork = _failures(results, "dbwork")
    # Only the type whose transactions commit; the refused bids roll back as before.
    assert dbwork == {"node+nocommit": {"place_bid"}}, dbwork
    text = _problems(results, "dbwork", "node+nocommit", "place_bid")
    assert "commit: 0 in the server's statement log for 20 requests, expected 20" in text, text
    # The statements and rows pg_stat_statements sees are those of an honest app: that check alone passes.
    assert "per request" not in text.split("other targets:")[0], text
