"""Where things live. Every project-local path is derived here, so nothing else hard-codes layout."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = ROOT / "contract"
SCHEMA_SQL = CONTRACT / "schema.sql"
OPENAPI = CONTRACT / "openapi.yaml"
CONFORMANCE_CASES = CONTRACT / "conformance"
INFRA = ROOT / "infra"
POSTGRES_CONF = INFRA / "postgres" / "postgresql.conf"
LOADGEN = ROOT / "loadgen"
RESULTS = Path(os.environ.get("BIDBENCH_RESULTS", ROOT / "results"))
# Written by `./bidbench replicate` after every claim, so it never makes a run's checkout "dirty".
REPLICATION_REPORT = ROOT / "docs" / "replication" / "REPORT.md"

# Git-ignored local state: the virtualenv, tools we build, the embedded database, runtime dirs.
STATE = Path(os.environ.get("BIDBENCH_STATE", ROOT / ".bidbench"))
BIN = STATE / "bin"
CACHE = STATE / "cache"
# Per-user, shared by checkouts: tools we build (Toxiproxy) by version, so a fresh clone copies them.
USER_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "bidbench"


def traversable_by_others(path: Path) -> bool:
    """Whether every existing directory on the way to path lets other users through (o+x)."""
    probe = path
    while not probe.exists():
        probe = probe.parent
    return all(directory.stat().st_mode & 0o001 for directory in [probe, *probe.parents])


def world_reachable_state() -> Path:
    """Where state that unprivileged helpers must reach lives: the PostgreSQL data directory (its server
    runs as an unprivileged user when we are root) and instance runtime dirs (nginx and PHP-FPM workers
    run as nobody). That is .bidbench/ itself, unless we are root inside a checkout others cannot enter
    (e.g. below /root, or a mode-700 temporary directory); then a per-checkout folder in /var/tmp."""
    if os.geteuid() != 0 or traversable_by_others(STATE):
        return STATE
    digest = hashlib.sha256(str(ROOT).encode()).hexdigest()[:10]
    shared = Path("/var/tmp") / f"bidbench-{digest}"
    shared.mkdir(parents=True, exist_ok=True)
    shared.chmod(0o755)
    return shared


RUNTIME = world_reachable_state() / "run"


def app_dir(impl: str) -> Path:
    return ROOT / f"{impl}-app"
