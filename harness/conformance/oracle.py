"""A reference reader: the expected body of a valid read request, computed from a database with the
contract's own statements (contract/queries.sql) and formatted by the wire rules.

It is independent of the three apps. The suite uses it to write the expected bodies of the golden read
cases into `contract/conformance/expected/*.json` (committed, reviewable data; `--check` verifies the
committed files against a fresh clone), and the negative-control fixtures use it to answer requests
themselves.

    python -m harness.conformance.oracle --write   # (re)write missing expected files
    python -m harness.conformance.oracle --check   # compare every expected file with the oracle
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import datetime
from typing import Any

import psycopg
import yaml

from harness import paths
from harness.conformance.canon import dumps, format_timestamp
from harness.conformance.cases import case_files
from harness.conformance.dbstate import prepare
from harness.conformance.queries import contract_statements
from harness.db import ready

EXPECTED_DIR = paths.CONFORMANCE_CASES / "expected"


def _sql(name: str) -> str:
    """The contract statement with psycopg placeholders (the text that reaches the server is $1, $2...)."""
    return re.sub(r"\$\d+", "%s", contract_statements()[name])


def _row(columns: list[str], row: tuple[Any, ...]) -> dict[str, Any]:
    return {
        c: format_timestamp(v) if isinstance(v, datetime) else v for c, v in zip(columns, row, strict=True)
    }


ITEM_SUMMARY = ["id", "category_id", "seller_id", "title", "initial_price_cents", "max_bid_cents", "bid_count",
                "start_time", "end_time"]  # fmt: skip
ITEM_DETAIL = ["id", "category_id", "seller_id", "seller_nickname", "title", "description", "initial_price_cents",
               "max_bid_cents", "bid_count", "start_time", "end_time"]  # fmt: skip
BID = ["id", "item_id", "bidder_id", "amount_cents", "created_at"]
USER = ["id", "nickname", "region_id", "rating", "created_at"]


def not_found(message: str) -> tuple[int, dict[str, Any]]:
    return 404, {"error": {"code": "not_found", "message": message}}


class Oracle:
    """Answers valid GET requests of the contract from the database (status, parsed body)."""

    def __init__(self, conn: psycopg.Connection, skip_top_bids_without_bids: bool = False) -> None:
        self.conn = conn
        self.skip_top_bids_without_bids = skip_top_bids_without_bids
        conn.execute("SET TimeZone = 'UTC'")

    def _all(self, name: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        return self.conn.execute(_sql(name), params, prepare=True).fetchall()  # type: ignore[arg-type]

    def get(self, path: str) -> tuple[int, dict[str, Any]]:
        raw_path, _, query = path.partition("?")
        params = dict(part.split("=", 1) for part in query.split("&") if "=" in part)
        limit = int(params.get("limit", "20"))
        offset = int(params.get("offset", "0"))
        parts = raw_path.strip("/").split("/")
        if raw_path == "/health":
            return 200, {"status": "ok"}
        if raw_path == "/ready":
            self._all("ready")
            return 200, {"status": "ready"}
        if raw_path in ("/regions", "/categories"):
            return 200, {parts[0]: [_row(["id", "name"], r) for r in self._all(f"list_{parts[0]}")]}
        if len(parts) == 3 and parts[0] == "categories" and parts[2] == "items":
            cid = int(parts[1])
            rows = self._all("list_category_items", (cid, limit, offset))
            if not rows and not self._all("category_exists", (cid,)):
                return not_found("category not found")
            return 200, {"items": [_row(ITEM_SUMMARY, r) for r in rows], "limit": limit, "offset": offset}
        if len(parts) == 2 and parts[0] == "items":
            iid = int(parts[1])
            rows = self._all("get_item", (iid,))
            if not rows:
                return not_found("item not found")
            item = _row(ITEM_DETAIL, rows[0])
            if self.skip_top_bids_without_bids and item["bid_count"] == 0:
                item["top_bids"] = []  # the deliberately unequal shortcut of a negative control
            else:
                item["top_bids"] = [_row(BID, r) for r in self._all("top_bids", (iid,))]
            return 200, item
        if len(parts) == 3 and parts[0] == "items" and parts[2] == "bids":
            iid = int(parts[1])
            rows = self._all("list_item_bids", (iid, limit, offset))
            if not rows and not self._all("item_exists", (iid,)):
                return not_found("item not found")
            return 200, {"bids": [_row(BID, r) for r in rows], "limit": limit, "offset": offset}
        if len(parts) == 2 and parts[0] == "users":
            rows = self._all("get_user", (int(parts[1]),))
            if not rows:
                return not_found("user not found")
            return 200, _row(USER, rows[0])
        raise ValueError(f"the oracle does not answer {path}")


def _oracle_cases() -> list[tuple[str, str]]:
    """(expected file name, request path) of every golden step that takes its body from a file."""
    out: list[tuple[str, str]] = []
    for case_file in case_files(paths.CONFORMANCE_CASES):
        doc = yaml.safe_load(case_file.read_text(encoding="utf-8"))
        for case in doc.get("cases", []):
            for step in case.get("steps") or [case]:
                body = (step.get("expect") or {}).get("body")
                if isinstance(body, dict) and set(body) == {"$file"}:
                    out.append((body["$file"], step["request"]["path"]))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--write", action="store_true", help="write expected files that are missing")
    parser.add_argument("--overwrite", action="store_true", help="rewrite every expected file")
    parser.add_argument("--check", action="store_true", help="compare expected files with the oracle")
    args = parser.parse_args(argv)
    ready.ensure_up()
    db = prepare(ready.server())
    failures = 0
    with db.connect() as conn:
        oracle = Oracle(conn)
        for file_name, path in _oracle_cases():
            target = EXPECTED_DIR / file_name
            status, body = oracle.get(path)
            text = dumps(body, indent=1) + "\n"
            if args.overwrite or (args.write and not target.exists()):
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
                print(f"wrote {target.relative_to(paths.ROOT)} ({status}) for GET {path}")
            elif args.check:
                if not target.exists():
                    print(f"missing {file_name} for GET {path}")
                    failures += 1
                elif json.loads(target.read_text(encoding="utf-8")) != json.loads(text):
                    print(f"differs: {file_name} for GET {path}")
                    failures += 1
    db.drop()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
