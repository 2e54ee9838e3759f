"""docs/design.md §6 names every command the CLI has, so the design's tables stay the code's."""

from __future__ import annotations

import re

import typer
from typer.testing import CliRunner

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


def test_the_command_list_shows_each_summary_as_reflowed_text_not_its_source_lines() -> None:
    """A help wrapped in the source came out ragged in `./bidbench --help`: rich mode keeps line breaks."""
    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "100"}, prog_name="bidbench")
    assert result.exit_code == 0, result.output
    panel = result.output.split("Commands", 1)[1]
    rows = [line.strip("│ ").rstrip() for line in panel.splitlines() if line.startswith("│")]
    ladder_start = next(i for i, row in enumerate(rows) if row.startswith("ladder "))
    # Every line of the ladder's summary but its last is filled to the column's width, give or take a word.
    summary = rows[ladder_start : ladder_start + 4]
    assert min(len(row) for row in summary) > 70, summary
    assert "One ladder is one repetition" in " ".join(" ".join(rows).split())
