"""The database ready for work: the server up, and the template seeded with the data asked for.

The server is the embedded cluster (.bidbench/pg), or the one BIDBENCH_DATABASE_URL names; the template
holds one (scale, seed, indexes) at a time, and seeding it again is slow, so it is seeded only when it
holds something else (docs/design.md §2.2).
"""

from __future__ import annotations

from harness.console import console
from harness.db import seed as seeding
from harness.db.cluster import EmbeddedCluster
from harness.db.target import DatabaseServer, current_server, external_url
from harness.tools import toolchain


def embedded_cluster() -> EmbeddedCluster:
    return EmbeddedCluster()


def server() -> DatabaseServer:
    """The server in use: the external one when BIDBENCH_DATABASE_URL is set, else the embedded cluster."""
    return current_server()


def ensure_up() -> None:
    """Start the embedded cluster unless it runs (an external server is left alone); quiet when it did."""
    if external_url():
        return
    toolchain.ensure(["db"])
    report = embedded_cluster().up()
    if report.started:  # say something only when something happened
        for message in report.messages:
            console.print(f"db: {message}")


def template_holds(info: dict[str, str] | None, scale: int, seed: int, with_indexes: bool = True) -> bool:
    """Whether the template's description (harness.db.seed.template_info) is of this data set."""
    wanted = {"scale": str(scale), "seed": str(seed), "indexes": str(with_indexes)}
    return info is not None and all(info.get(key) == value for key, value in wanted.items())


def ensure_template(
    target: DatabaseServer,
    scale: int = 1,
    seed: int = 42,
    with_indexes: bool = True,
    *,
    restore: bool = False,
    announce: bool = False,
) -> dict[str, str]:
    """Seed the template unless it already holds (scale, seed, indexes); returns its description.

    Seeding also clones a fresh working database. When nothing is seeded, `restore` re-clones the working
    database from the template; without it the working data stays as it is (what someone changed, or the
    database another run uses). `announce` prints a line when it seeds."""
    info = seeding.template_info(target)
    if info is not None and template_holds(info, scale, seed, with_indexes):
        if restore:
            seeding.reset(target)
        return info
    result = seeding.seed(target, scale, seed, with_indexes=with_indexes)
    if announce:
        console.print(
            f"db: seeded scale={scale} seed={seed} checksum={result.checksum} in {result.seconds:.1f} s"
        )
    return seeding.template_info(target) or {}


def ensure_seeded(scale: int = 1, seed: int = 42) -> None:
    """The server up, the template at (scale, seed) with its indexes, and the working database restored."""
    ensure_up()
    ensure_template(server(), scale, seed, restore=True, announce=True)
