#!/usr/bin/env python3
"""Entrypoint of the seed image: `./bidbench db seed` against the server in BIDBENCH_DATABASE_URL.

It calls the harness's own seeding code (harness/db/seed.py with harness/db/generator.py), so a
container database gets the same rows and the same checksum as `./bidbench db seed` with the same
scale and seed. Only the seeding modules are imported, not the whole CLI (which loads the statistics
stack), so the image stays small. Arguments are those of the CLI, with or without the leading `db seed`:

    bidbench-seed db seed --scale 1 --seed 42 [--no-indexes]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(os.environ.get("BIDBENCH_ROOT", "/opt/bidbench"))
sys.path.insert(0, str(ROOT))

from harness.console import UserError  # noqa: E402 - the harness lives at BIDBENCH_ROOT
from harness.db import seed as seeding  # noqa: E402
from harness.db.target import current_server, external_url, mask_password  # noqa: E402


def parse(argv: list[str]) -> argparse.Namespace:
    if argv[:2] == ["db", "seed"]:
        argv = argv[2:]
    parser = argparse.ArgumentParser(prog="bidbench-seed", description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=1, help="data size: scale 1 is 10k users, 15k items")
    parser.add_argument("--seed", type=int, default=42, help="random seed")
    parser.add_argument("--no-indexes", action="store_true", help="omit the secondary indexes")
    args = parser.parse_args(argv)
    if args.scale < 1:
        parser.error("--scale must be 1 or more")
    return args


def main(argv: list[str]) -> int:
    args = parse(argv)
    url = external_url()
    if not url:
        print(
            "bidbench-seed: set BIDBENCH_DATABASE_URL=postgresql://USER:PASSWORD@HOST:5432/postgres "
            "(a role with CREATEDB)",
            file=sys.stderr,
        )
        return 2
    print(f"seeding {mask_password(url)}: scale={args.scale} seed={args.seed}", flush=True)
    try:
        info = seeding.seed(current_server(), args.scale, args.seed, with_indexes=not args.no_indexes)
    except UserError as exc:
        print(f"bidbench-seed: {exc}", file=sys.stderr)
        return 1
    counts = ", ".join(f"{table} {count}" for table, count in info.row_counts.items())
    print(f"seeded scale={args.scale} seed={args.seed} in {info.seconds:.1f} s: {counts}")
    print(f"checksum {info.checksum}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
