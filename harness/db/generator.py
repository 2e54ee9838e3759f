"""The deterministic data generator (docs/design.md §2.2; STEP paper §3.2: fixed seeds, reproducible data).

Rows are a pure function of (scale, seed): each table draws from its own `random.Random` seeded with a
string, whose seeding (SHA-512 of the string) and Mersenne-Twister stream are stable across Python
versions and machines. Rows are produced as PostgreSQL COPY text, so loading is bulk, not row by row.

Timestamps are fixed, not relative to today: ended auctions ended during 2025 and open auctions end
during 2036, so the set of open items (and every seeded response) is the same on any day before 2036.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

REGIONS = [
    "Alabama", "Alaska", "Arizona", "California", "Colorado", "Florida", "Georgia", "Hawaii",
    "Idaho", "Illinois", "Maine", "Montana", "Nevada", "New York", "Ohio", "Oregon",
    "Texas", "Utah", "Vermont", "Washington",
]  # fmt: skip
CATEGORIES = [
    "Antiques & Art", "Books", "Business, Office & Industrial", "Clothing & Accessories", "Coins",
    "Collectibles", "Computers", "Consumer Electronics", "Dolls & Bears", "Home & Garden",
    "Jewelry, Gems & Watches", "Movies & Television", "Music", "Photo", "Pottery & Glass",
    "Sports", "Stamps", "Tickets & Travel", "Toys & Hobbies", "Everything Else",
]  # fmt: skip
ADJECTIVES = ["vintage", "rare", "mint", "signed", "antique", "boxed", "limited", "classic", "used", "new"]
NOUNS = ["lamp", "camera", "guitar", "watch", "stamp", "poster", "radio", "vase", "bicycle", "book"]
WORDS = (
    "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore "
    "et dolore magna aliqua condition original shipping included working tested"
).split()

USERS_PER_SCALE = 10_000
OPEN_ITEMS_PER_SCALE = 10_000
ENDED_ITEMS_PER_SCALE = 5_000
MAX_BIDS_PER_ITEM = 10

USERS_EPOCH = datetime(2024, 1, 1, tzinfo=timezone.utc)
ENDED_EPOCH = datetime(2025, 1, 1, tzinfo=timezone.utc)
OPEN_START_EPOCH = datetime(2025, 6, 1, tzinfo=timezone.utc)
OPEN_END_EPOCH = datetime(2036, 1, 1, tzinfo=timezone.utc)
DAY = 86_400


def ts(moment: datetime) -> str:
    """COPY text for timestamptz(3): UTC, millisecond precision."""
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{moment.microsecond // 1000:03d}+00"


def _offset(rng: random.Random, *span: int) -> timedelta:
    return timedelta(seconds=rng.randrange(*span), milliseconds=rng.randrange(1000))


def copy_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


class Generator:
    def __init__(self, scale: int, seed: int) -> None:
        if scale < 1:
            raise ValueError("scale must be >= 1")
        self.seed = seed
        self.users_count = USERS_PER_SCALE * scale
        self.items_count = (OPEN_ITEMS_PER_SCALE + ENDED_ITEMS_PER_SCALE) * scale

    def _rng(self, table: str) -> random.Random:
        return random.Random(f"bidbench:{self.seed}:{table}")

    def regions(self) -> Iterator[str]:
        for region_id, name in enumerate(REGIONS, start=1):
            yield f"{region_id}\t{copy_escape(name)}\n"

    def categories(self) -> Iterator[str]:
        for category_id, name in enumerate(CATEGORIES, start=1):
            yield f"{category_id}\t{copy_escape(name)}\n"

    def users(self) -> Iterator[str]:
        rng = self._rng("users")
        for user_id in range(1, self.users_count + 1):
            region_id = rng.randint(1, len(REGIONS))
            rating = rng.randint(-5, 50)
            created = USERS_EPOCH + _offset(rng, 365 * DAY)
            yield f"{user_id}\tuser{user_id}\t{region_id}\t{rating}\t{ts(created)}\n"

    def items_and_bids(self) -> tuple[list[str], list[str]]:
        """Items and their bids together, so every item's max_bid_cents and bid_count match its bids."""
        rng = self._rng("items")
        item_rows: list[str] = []
        bid_rows: list[str] = []
        bid_id = 0
        ended_share = ENDED_ITEMS_PER_SCALE / (OPEN_ITEMS_PER_SCALE + ENDED_ITEMS_PER_SCALE)
        for item_id in range(1, self.items_count + 1):
            ended = rng.random() < ended_share
            if ended:
                category_id = rng.randint(1, len(CATEGORIES))
                start = ENDED_EPOCH + _offset(rng, 330 * DAY)
                end = start + _offset(rng, DAY, 30 * DAY)
            else:
                # The last category only gets ended auctions: the contract's "empty category" paging edge.
                category_id = rng.randint(1, len(CATEGORIES) - 1)
                start = OPEN_START_EPOCH + _offset(rng, 365 * DAY)
                end = OPEN_END_EPOCH + _offset(rng, 59 * DAY)
            seller_id = rng.randint(1, self.users_count)
            title = f"{rng.choice(ADJECTIVES)} {rng.choice(NOUNS)} #{item_id}"
            description = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 40)))
            initial_price = rng.randint(100, 100_000)

            bid_count = rng.randint(0, MAX_BIDS_PER_ITEM)
            amount = initial_price
            bid_time = start
            for _ in range(bid_count):
                bid_id += 1
                amount += rng.randint(1, 1_000)
                bid_time += _offset(rng, 1, 3_600)
                bidder_id = rng.randint(1, self.users_count)
                bid_rows.append(f"{bid_id}\t{item_id}\t{bidder_id}\t{amount}\t{ts(bid_time)}\n")
            max_bid = amount if bid_count else 0
            item_rows.append(
                f"{item_id}\t{seller_id}\t{category_id}\t{copy_escape(title)}\t{copy_escape(description)}\t"
                f"{initial_price}\t{max_bid}\t{bid_count}\t{ts(start)}\t{ts(end)}\n"
            )
        return item_rows, bid_rows
