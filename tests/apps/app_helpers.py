"""Helpers shared by the per-app harness tests."""

from __future__ import annotations

from pathlib import Path

from harness.apps.base import InstanceSpec

UNREACHABLE_DB = "postgresql://u:p@127.0.0.1:1/db"


def instance_spec(
    impl: str, tmp_path: Path, port: int = 18999, database_url: str = UNREACHABLE_DB, **knobs: str
) -> InstanceSpec:
    """An instance spec with a private run dir; by default it points at no database at all."""
    return InstanceSpec(
        impl=impl, index=0, port=port, database_url=database_url, run_dir=tmp_path / "run", knobs=dict(knobs)
    )
