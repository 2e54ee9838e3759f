"""No lost or duplicated bids after a fault scenario (issue #12, point 5):

- every item's `max_bid_cents` and `bid_count` equal the maximum and the count of its rows in `bids`;
- every bid answered 201 has its row (the trace records the id of each 201);
- no two new rows with the same item, bidder and amount (amounts come from the clock in quarter cents).

New rows without a 201 are reported, not failed: a request can commit and still lose its answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import psycopg

from harness.db.checks import ITEMS_MISMATCH_SQL
from harness.db.seed import working_origin
from harness.faults.timeline import Request

DUPLICATES_SQL = """
SELECT item_id, bidder_id, amount_cents, count(*) FROM bids WHERE id > %s
GROUP BY item_id, bidder_id, amount_cents HAVING count(*) > 1
"""


@dataclass
class InvariantReport:
    ok: bool
    items_mismatched: int = 0
    acknowledged_bids: int = 0
    acknowledged_missing: int = 0
    duplicates: int = 0
    new_rows: int = 0
    unacknowledged_rows: int = 0
    examples: list[str] = field(default_factory=list)
    error: str = ""

    def describe(self) -> str:
        if self.error:
            return f"not checked: {self.error}"
        if self.ok:
            return f"ok ({self.acknowledged_bids} acknowledged bids, all stored once)"
        counts = (
            (self.items_mismatched, "items whose max_bid/bid_count disagree with bids"),
            (self.acknowledged_missing, "bids answered 201 without a row"),
            (self.duplicates, "duplicated bids"),
        )
        return "FAILED: " + "; ".join(f"{n} {what}" for n, what in counts if n)


def max_bid_id(url: str) -> int:
    with psycopg.connect(url, connect_timeout=10) as conn:
        row = conn.execute("SELECT coalesce(max(id), 0) FROM bids").fetchone()
        return int(row[0]) if row else 0


OID_SQL = "SELECT oid FROM pg_database WHERE datname = current_database()"


def database_oid(url: str) -> int:
    """The working database's identity: a reset (DROP + CREATE from the template) gives it a new oid."""
    with psycopg.connect(url, connect_timeout=10) as conn:
        row = conn.execute(OID_SQL).fetchone()
        return int(row[0]) if row else 0


def check(
    url: str, requests: Sequence[Request], since_bid_id: int, database_oid_before: int | None = None
) -> InvariantReport:
    """The invariants over the working database `url`; since_bid_id is max(bids.id) before the run.
    With database_oid_before, a database re-created during the run (another run on this machine reset it)
    is reported as not checkable instead of as lost bids."""
    acknowledged = sorted({r.bid_id for r in requests if r.bid_id is not None and r.status == 201})
    try:
        with psycopg.connect(url, connect_timeout=10) as conn:
            conn.execute("SET statement_timeout = '60s'")
            row = conn.execute(OID_SQL).fetchone()
            if database_oid_before is not None and row and int(row[0]) != database_oid_before:
                origin = working_origin(conn)
                return InvariantReport(
                    False,
                    acknowledged_bids=len(acknowledged),
                    error="the working database was re-created during the run (another run on this machine "
                    f"reset it{': ' + origin if origin else ''}), so its bids cannot be checked; run the "
                    "scenario again",
                )
            mismatched = conn.execute(ITEMS_MISMATCH_SQL).fetchall()
            found = {
                int(row[0])
                for row in conn.execute("SELECT id FROM bids WHERE id = ANY(%s)", (acknowledged,)).fetchall()
            }
            duplicates = conn.execute(DUPLICATES_SQL, (since_bid_id,)).fetchall()
            new_ids = {
                int(row[0])
                for row in conn.execute("SELECT id FROM bids WHERE id > %s", (since_bid_id,)).fetchall()
            }
    except psycopg.Error as exc:
        return InvariantReport(
            False, acknowledged_bids=len(acknowledged), error=f"{type(exc).__name__}: {exc}"
        )
    missing = [bid for bid in acknowledged if bid not in found]
    examples = [
        f"item {r[0]}: max_bid_cents={r[1]} bid_count={r[2]}, bids say max={r[3]} count={r[4]}"
        for r in mismatched[:5]
    ]
    examples += [f"bid {bid} answered 201 but has no row" for bid in missing[:5]]
    examples += [f"item {r[0]} bidder {r[1]} amount {r[2]} stored {r[3]} times" for r in duplicates[:5]]
    duplicate_rows = sum(int(r[3]) - 1 for r in duplicates)
    return InvariantReport(
        ok=not mismatched and not missing and not duplicates,
        items_mismatched=len(mismatched),
        acknowledged_bids=len(acknowledged),
        acknowledged_missing=len(missing),
        duplicates=duplicate_rows,
        new_rows=len(new_ids),
        unacknowledged_rows=len(new_ids - set(acknowledged)),
        examples=examples,
    )
