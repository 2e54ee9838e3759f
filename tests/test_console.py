"""The CLI's output when nothing is a terminal (a CI log, `> file`): tables keep their confidence intervals."""

from __future__ import annotations

import os
import subprocess
import sys

from harness import paths

PROBE = "from harness.console import console, widen_for_logs; widen_for_logs(); print(console.width)"


def _width(extra_env: dict[str, str]) -> int:
    env = {key: value for key, value in os.environ.items() if key != "COLUMNS"} | extra_env
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=paths.ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return int(done.stdout.strip())


def test_with_no_terminal_the_output_is_wide_enough_for_a_table_with_intervals() -> None:
    assert _width({}) == 160


def test_an_explicit_columns_setting_wins() -> None:
    assert _width({"COLUMNS": "100"}) == 100
