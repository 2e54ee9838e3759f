"""The claims CLI prints wide tables through the shared console: make it wide whatever terminal the tests
run from (a terminal on stdin keeps it at its own width, and ids then wrap inside table cells)."""

from __future__ import annotations

import pytest

from harness.console import console


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(console, "width", 300)
