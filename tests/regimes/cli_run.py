"""Running the real `./bidbench` command in a test: its results and database the test's own, and a bound
past which it is stopped with SIGINT (the CLI's own Ctrl-C cleanup stops its instances) and fails."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from harness import paths


def run_bidbench(results: Path, database: str, bound_s: float, *args: str) -> str:
    """Runs `./bidbench <args>` with BIDBENCH_RESULTS and BIDBENCH_DATABASE_URL set; returns its output."""
    env = dict(os.environ, BIDBENCH_RESULTS=str(results), BIDBENCH_DATABASE_URL=database, COLUMNS="200")
    proc = subprocess.Popen(
        [str(paths.ROOT / "bidbench"), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        output, _ = proc.communicate(timeout=bound_s)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)
        try:
            output, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            output, _ = proc.communicate()
        pytest.fail(f"./bidbench {' '.join(args)} ran past {bound_s:g} s:\n{output[-3000:]}")
    assert proc.returncode == 0, output
    return output
