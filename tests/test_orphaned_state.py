"""Runtime state in /var/tmp (harness/paths.py `world_reachable_state`, as root in a checkout others cannot
enter) outlives a deleted clone; the next command removes it, and nothing else."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness import paths
from harness.cli import main as cli_main


def _state(base: Path, name: str, checkout: Path | None, pid: int | None = None) -> Path:
    folder = base / f"bidbench-{name}"
    (folder / "pg" / "data").mkdir(parents=True)
    (folder / "pg" / "data" / "PG_VERSION").write_text("15\n")
    if checkout is not None:
        (folder / paths.CHECKOUT_NOTE).write_text(f"{checkout}\n")
    if pid is not None:
        (folder / "pg" / "data" / "postmaster.pid").write_text(f"{pid}\n/some/data\n")
    return folder


def _exited_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_only_the_state_of_a_deleted_checkout_with_nothing_running_is_orphaned(tmp_path: Path) -> None:
    base = tmp_path / "var-tmp"
    alive_checkout = tmp_path / "clone"
    alive_checkout.mkdir()
    gone = tmp_path / "deleted-clone"
    orphan = _state(base, "aaaa", gone)
    stale_pid = _state(base, "bbbb", gone, pid=_exited_pid())
    _state(base, "cccc", alive_checkout)
    _state(base, "dddd", gone, pid=os.getpid())  # a server still running from the deleted clone
    _state(base, "eeee", None)  # written before notes: whose it is cannot be told
    _state(base, "ffff", Path("relative/path"))
    (base / "other-tool").mkdir()
    assert paths.orphaned_states(base) == [orphan, stale_pid]


def test_a_command_removes_the_orphans_and_says_whose_they_were(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base = tmp_path / "var-tmp"
    kept_checkout = tmp_path / "clone"
    kept_checkout.mkdir()
    orphan = _state(base, "aaaa", tmp_path / "deleted-clone")
    kept = _state(base, "cccc", kept_checkout)
    monkeypatch.setattr(paths, "SHARED_STATE_BASE", base)
    cli_main._remove_orphaned_states()
    assert not orphan.exists() and kept.is_dir()
    said = "".join(capsys.readouterr().err.split())  # long paths wrap at the terminal's width
    assert f"removed{orphan}:thestateof{tmp_path / 'deleted-clone'}" in said
