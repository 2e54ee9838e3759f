"""docs/design.md §6 names every command the CLI has, so the design's tables stay the code's."""

from __future__ import annotations

import re

import typer

from harness import paths
from harness.cli.main import app


def _section_6() -> str:
    text = (paths.ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    return text.split("## 6. Regimes", 1)[1].split("\n## ", 1)[0]


def test_every_command_of_the_cli_is_in_the_design_regimes_section() -> None:
    commands = sorted(typer.main.get_command(app).commands)
    named = set(re.findall(r"`([a-z][a-z-]*)", _section_6()))
    assert len(commands) >= 19, commands
    assert [c for c in commands if c not in named] == []
