"""The claims CLI prints wide tables through the shared console: make it wide whatever terminal the tests
run from (a terminal on stdin keeps it at its own width, and ids then wrap inside table cells). And a
replication the CLI runs here restores no committed evidence into results/ (harness/claims/evidence.py
`restore`): a test names the evidence it uses."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.claims import evidence
from harness.console import console


@pytest.fixture(autouse=True)
def wide_console() -> Iterator[None]:
    # Restored as it was, unset included: monkeypatch would set the width it read back (80 with no
    # terminal) and fix every later test's console at that.
    saved = console._width
    console.width = 300
    yield
    console._width = saved


@pytest.fixture(autouse=True)
def no_committed_evidence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(evidence, "DIRECTORY", tmp_path / "no-evidence")
