"""The group key under which a claim's cell stores its runs (what the results index and each manifest
record): the runner finds stored runs by it, and the replication report tells by it which rows share
fresh starts."""

from __future__ import annotations

from dataclasses import asdict

from harness.claims import ladders
from harness.claims import side_by_side as sbs
from harness.claims.model import Cell, Claim, Size, is_side_by_side
from harness.regimes.campaign import campaign_name


def campaign_for(claim: Claim, size: Size) -> str:
    settings = {
        "claim": claim.id,
        "regime": claim.regime,
        # without the repetitions: more repetitions extend the same campaign
        "size": {k: v for k, v in asdict(size).items() if k not in ("repetitions", "ladder", "instances")},
        "variants": [asdict(v) for v in claim.variants],
    }
    return campaign_name(f"claim-{claim.id}", settings)


def cell_group(claim: Claim, size: Size, cell: Cell) -> str:
    """The group key of a cell's runs (what the results index and each manifest record)."""
    if is_side_by_side(claim):
        return sbs.key_of(size, sbs.lineup_of(claim, size, cell))
    if claim.regime == "ladder":
        return ladders.group_of(size, cell)
    name = campaign_for(claim, size)
    return "/".join([name, "claim", cell.impl, cell.variant.name, f"rate={size.rate:g}"])
