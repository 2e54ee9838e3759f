"""Concurrency invariants (docs/design.md §2.3): many bidders on one hot open item, then the books must balance.

16 threads x 25 bids race on item 54, each thread on its own keep-alive connection; amounts rise in steps
so that some bids win and many lose (409). The checks afterwards are listed in contract/conformance/README.md
("Concurrency, Schemathesis, HTTP syntax").
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field

from harness.conformance.client import JSON_HEADERS, Connection, RawRequest, TransportError
from harness.conformance.dbstate import ConformanceDb
from harness.conformance.results import CheckResult, checked
from harness.conformance.targets import Target

PART = "concurrency"
HOT_ITEM = 54
INITIAL_PRICE = 68_033
THREADS = 16
BIDS_PER_THREAD = 25
DEADLINE_S = 60.0
_MIN_RE = re.compile(r"^bid must be at least ([0-9]+) cents$")


@dataclass
class Outcome:
    accepted: list[tuple[int, int]] = field(default_factory=list)
    """(bid id, amount) of every 201."""
    rejected: int = 0
    problems: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _bidder(base_url: str, thread: int, outcome: Outcome, deadline: float) -> None:
    with Connection(base_url, timeout_s=15) as conn:
        for k in range(BIDS_PER_THREAD):
            if time.monotonic() > deadline:
                with outcome.lock:
                    outcome.problems.append(f"thread {thread}: deadline reached after {k} bids")
                return
            amount = INITIAL_PRICE + k * 1_000 + thread * 37
            bid = {"bidder_id": 1 + (thread * BIDS_PER_THREAD + k) % 10_000, "amount_cents": amount}
            req = RawRequest("POST", f"/items/{HOT_ITEM}/bids", JSON_HEADERS, json.dumps(bid).encode())
            try:
                response = conn.request(req)
            except (TransportError, OSError) as exc:
                with outcome.lock:
                    outcome.problems.append(f"thread {thread} bid {k}: no response: {exc}")
                conn.close()
                continue
            try:
                payload = json.loads(response.body or b"null")
            except ValueError:
                payload = None
            with outcome.lock:
                if response.status == 201 and isinstance(payload, dict):
                    if payload.get("amount_cents") != amount or payload.get("item_id") != HOT_ITEM:
                        outcome.problems.append(
                            f"thread {thread} bid {k}: 201 body does not echo the bid: {payload}"
                        )
                    outcome.accepted.append((int(payload.get("id", 0)), amount))
                elif response.status == 409 and isinstance(payload, dict):
                    outcome.rejected += 1
                    message = str(payload.get("error", {}).get("message", ""))
                    m = _MIN_RE.match(message)
                    if not m or int(m.group(1)) <= amount:
                        outcome.problems.append(
                            f"thread {thread} bid {k} ({amount}): unexpected 409 message {message!r}"
                        )
                else:
                    outcome.problems.append(
                        f"thread {thread} bid {k}: status {response.status}: {(response.body or b'')[:200]!r}"
                    )


def run_concurrency(target: Target, db: ConformanceDb) -> list[CheckResult]:
    outcome = Outcome()
    db.reset()
    started = time.monotonic()
    with target.running(db) as base_url:
        deadline = time.monotonic() + DEADLINE_S
        threads = [
            threading.Thread(target=_bidder, args=(base_url, t, outcome, deadline)) for t in range(THREADS)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=DEADLINE_S + 20)
    seconds = time.monotonic() - started
    problems = list(outcome.problems[:20])
    with db.connect() as conn:
        stored = conn.execute(
            "SELECT id, amount_cents FROM bids WHERE item_id = %s ORDER BY id", (HOT_ITEM,)
        ).fetchall()
        item = conn.execute(
            "SELECT max_bid_cents, bid_count FROM items WHERE id = %s", (HOT_ITEM,)
        ).fetchone()
    stored_pairs = sorted((int(i), int(a)) for i, a in stored)
    accepted = sorted(outcome.accepted)
    if len(accepted) != len(stored_pairs):
        problems.append(f"{len(accepted)} bids were answered 201 but {len(stored_pairs)} are stored")
    elif accepted != stored_pairs:
        problems.append("the (id, amount) of the 201 responses differ from the stored bids")
    amounts = [a for _, a in stored_pairs]
    if any(b <= a for a, b in zip(amounts, amounts[1:], strict=False)):
        problems.append("stored amounts do not strictly increase in bid-id order: bids were not serialized")
    if item is None:
        problems.append(f"item {HOT_ITEM} is gone")
    else:
        expected_max = max(amounts) if amounts else 0
        if int(item[0]) != expected_max or int(item[1]) != len(amounts):
            problems.append(
                f"item {HOT_ITEM}: max_bid_cents={item[0]} bid_count={item[1]}, "
                f"but its bids give max {expected_max} and count {len(amounts)}"
            )
    problems.extend(db.invariant_violations())
    if not accepted:
        problems.append("no bid was accepted at all")
    detail = {
        "requests": THREADS * BIDS_PER_THREAD,
        "accepted": len(accepted),
        "rejected": outcome.rejected,
        "stored": len(stored_pairs),
    }
    check = f"{THREADS} threads x {BIDS_PER_THREAD} bids on item {HOT_ITEM}"
    return [checked(PART, target.name, check, problems, detail=detail, seconds=seconds)]
