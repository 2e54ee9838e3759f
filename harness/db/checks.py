"""SQL checks of the data's own consistency, shared by the conformance suite and the fault scenarios."""

from __future__ import annotations

# Items whose max_bid_cents / bid_count disagree with their bids (docs/design.md §2.3: no lost or duplicated bids):
# id, max_bid_cents, bid_count, max(bids.amount_cents), count(bids).
ITEMS_MISMATCH_SQL = """
SELECT i.id, i.max_bid_cents, i.bid_count, coalesce(b.max_amount, 0), coalesce(b.n, 0)
FROM items i
LEFT JOIN (SELECT item_id, max(amount_cents) AS max_amount, count(*) AS n FROM bids GROUP BY item_id) b
       ON b.item_id = i.id
WHERE i.max_bid_cents <> coalesce(b.max_amount, 0) OR i.bid_count <> coalesce(b.n, 0)
ORDER BY i.id
"""
