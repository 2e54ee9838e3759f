"""tests/infra/tools.py: a tool that cannot be had is an error that says what to do (never a skip), and a
binary kept per user is copied, not rebuilt."""

from __future__ import annotations

from pathlib import Path

import pytest
import tools

from harness import paths


def test_without_go_the_error_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(paths, "BIN", tmp_path / "bin")
    monkeypatch.setattr(paths, "USER_CACHE", tmp_path / "cache")
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    with pytest.raises(tools.ToolError, match=r"Go is not installed: run `./bidbench setup`"):
        tools.ensure(tools.GoTool(*tools.KUBECONFORM))


def test_a_binary_kept_per_user_is_copied_with_its_version(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(paths, "BIN", tmp_path / "bin")
    monkeypatch.setattr(paths, "USER_CACHE", tmp_path / "cache")
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))  # no Go: only the copy can succeed
    name, package, version = tools.KUSTOMIZE
    cached = tmp_path / "cache" / "bin" / f"{name}-{version}"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"#!/bin/sh\n")
    cached.chmod(0o755)
    tool = tools.GoTool(name, package, version)
    assert tools.ensure(tool) == tmp_path / "bin" / name
    assert tool.present() and tool.stamp.read_text().strip() == version
    tool.stamp.write_text("v0.0.1\n")
    assert not tool.present(), "another version's binary is not this one"
