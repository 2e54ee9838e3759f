"""The CLI's output when nothing is a terminal (a CI log, `> file`): tables keep their confidence intervals,
and progress is one line per phase."""

from __future__ import annotations

import os
import subprocess
import sys

from harness import paths

PROBE = "from harness.console import console, widen_for_logs; widen_for_logs(); print(console.width)"

PHASES = """
from harness.engine.session import Progressor
with Progressor("node x1") as progress:
    for second in range(4):
        progress.phase("warm-up", completed=second, total=8, live=f"{100 * second} req/s  CPU 30 %")
    for second in range(4, 8):
        progress.phase("measure", completed=second, total=8, live="400 req/s  CPU 41 %")
"""


def _output_without_terminal(code: str, drop: str, extra_env: dict[str, str] | None = None) -> str:
    """What `code` prints with stdin, stdout and stderr not terminals, `drop` unset from the environment."""
    env = {key: value for key, value in os.environ.items() if key != drop} | (extra_env or {})
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=paths.ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def _width(extra_env: dict[str, str]) -> int:
    return int(_output_without_terminal(PROBE, "COLUMNS", extra_env).strip())


def test_with_no_terminal_the_output_is_wide_enough_for_a_table_with_intervals() -> None:
    assert _width({}) == 160


def test_an_explicit_columns_setting_wins() -> None:
    assert _width({"COLUMNS": "100"}) == 100


def test_with_no_terminal_each_phase_is_one_line_and_no_bar_is_drawn() -> None:
    # Without CI set: the plain lines must come from the missing terminal, not from the CI switch.
    output = _output_without_terminal(PHASES, "CI")
    assert output.splitlines() == ["  node x1 warm-up", "  node x1 measure"]
