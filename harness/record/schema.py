"""What every record of a result folder shares: a schema version, and refusing a version newer than this code.

A record (results/README.md) is written with its kind's current version; a reader upgrades an older one
through harness/record/upgrade.py, one version at a time, and refuses a newer one instead of guessing.
"""

from __future__ import annotations

from typing import Any

# Each record kind's current version, here so that the upgrades (upgrade.py) and the records (which read
# through them) build on one module instead of on each other.
INDEX_LINE_VERSION = 1
MANIFEST_VERSION = 2
METRICS_VERSION = 2
VERDICT_VERSION = 1


class SchemaError(ValueError):
    """A record this version of bidbench cannot read: from a newer version, or not a record at all."""


def version_of(kind: str, data: Any, current: int, before_versioning: int) -> int:
    """The record's schema version: its `schema_version`, or `before_versioning` for records written before
    they carried one. A newer version than `current` is refused with a message saying what to do."""
    if not isinstance(data, dict):
        raise SchemaError(f"a {kind} must be a JSON object, not {type(data).__name__}")
    version = data.get("schema_version", before_versioning)
    if isinstance(version, bool) or not isinstance(version, int):
        raise SchemaError(f"a {kind}'s schema_version must be an integer, not {version!r}")
    if version > current:
        raise SchemaError(
            f"this {kind} has schema_version {version}, newer than this bidbench reads ({current}): "
            "read it with the bidbench version that wrote it, or update bidbench"
        )
    return version
