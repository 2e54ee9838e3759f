"""The ./bidbench launcher bootstraps its own virtualenv from a clean clone."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness import paths


@pytest.mark.slow
def test_clean_clone_bootstraps_and_answers_help(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(paths.ROOT), str(clone)], check=True)
    first = subprocess.run(
        [str(clone / "bidbench"), "--help"],
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert first.returncode == 0, first.stderr
    assert "preparing the Python environment" in first.stderr
    assert "db" in first.stdout and "test" in first.stdout
    assert (clone / ".bidbench" / "venv" / "bin" / "python").exists()

    second = subprocess.run(
        [str(clone / "bidbench"), "db", "--help"], capture_output=True, text=True, timeout=60
    )
    assert second.returncode == 0
    assert "preparing the Python environment" not in second.stderr
    assert "seed" in second.stdout
