"""Where things live. Every project-local path is derived here, so nothing else hard-codes layout."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = ROOT / "contract"
SCHEMA_SQL = CONTRACT / "schema.sql"
OPENAPI = CONTRACT / "openapi.yaml"
CONFORMANCE_CASES = CONTRACT / "conformance"
INFRA = ROOT / "infra"
POSTGRES_CONF = INFRA / "postgres" / "postgresql.conf"
LOADGEN = ROOT / "loadgen-k6"
RESULTS = Path(os.environ.get("BIDBENCH_RESULTS", ROOT / "results"))

# Git-ignored local state: the virtualenv, tools we build, the embedded database, runtime dirs.
STATE = Path(os.environ.get("BIDBENCH_STATE", ROOT / ".bidbench"))
BIN = STATE / "bin"
RUNTIME = STATE / "run"
CACHE = STATE / "cache"


def app_dir(impl: str) -> Path:
    return ROOT / f"{impl}-app"
