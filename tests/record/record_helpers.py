"""A result folder written by hand, for the record readers' tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_fixed_rate_run(root: Path, suffix: str, metrics: dict[str, Any], verdict: dict[str, Any]) -> Path:
    """A completed node fixed-rate folder under `root` with these metrics.json and verdict.json."""
    folder = root / f"20260101T000000Z-node-fixed-rate-{suffix}"
    folder.mkdir()
    manifest = {"impl": "node", "regime": "fixed-rate", "status": "completed"}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    (folder / "metrics.json").write_text(json.dumps(metrics))
    (folder / "verdict.json").write_text(json.dumps(verdict))
    return folder
