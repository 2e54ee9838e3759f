"""Go-built tools (k6, toxiproxy) go through a per-user copy, so a fresh clone does not relink them.

A stand-in `go` on PATH writes a shell script as the "binary": these tests are about where binaries come
from and go to, not about Go (the real k6 build runs in every clean-clone `./bidbench test`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from harness import paths, toolchain
from harness.console import UserError


def _write_executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def fake_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `go` whose `install` leaves a k6 that prints `version_file`'s text, and logs each install."""
    bindir = tmp_path / "gobin"
    bindir.mkdir()
    log = tmp_path / "go-installs.log"
    version_file = tmp_path / "built-version"
    version_file.write_text(toolchain.K6_VERSION)
    _write_executable(
        bindir / "go",
        f"""#!/bin/sh
if [ "$1" = env ]; then echo https://proxy.example; exit 0; fi
echo "$2" >> {log}
printf '#!/bin/sh\\necho "k6 %s (go1.26)"\\n' "$(cat {version_file})" > "$GOBIN/k6"
chmod +x "$GOBIN/k6"
""",
    )
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(paths, "BIN", tmp_path / "project" / "bin")
    monkeypatch.setattr(paths, "USER_CACHE", tmp_path / "user-cache")
    return log


def _installs(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def test_first_build_fills_the_user_cache_and_a_fresh_clone_copies_it(fake_go: Path) -> None:
    toolchain.TOOLS["k6"].build()
    assert _installs(fake_go) == [f"go.k6.io/k6@{toolchain.K6_VERSION}"]
    assert toolchain._probe_k6().found
    cached = paths.USER_CACHE / "bin" / f"k6-{toolchain.K6_VERSION}"
    assert [p.name for p in cached.parent.iterdir()] == [cached.name]  # no partial copy left behind

    toolchain.k6_path().unlink()  # a fresh clone: no project-local binary
    toolchain.TOOLS["k6"].build()
    assert len(_installs(fake_go)) == 1, "the second build should copy, not run go install"
    assert toolchain._probe_k6().found


def test_a_cached_copy_of_another_version_is_rebuilt(fake_go: Path, tmp_path: Path) -> None:
    cached = paths.USER_CACHE / "bin" / f"k6-{toolchain.K6_VERSION}"
    cached.parent.mkdir(parents=True)
    _write_executable(cached, '#!/bin/sh\necho "k6 v0.1.0"\n')

    toolchain.TOOLS["k6"].build()
    assert len(_installs(fake_go)) == 1
    assert toolchain._probe_k6().version == toolchain.K6_VERSION
    assert "k6 " + toolchain.K6_VERSION in cached.read_text()


def test_an_unwritable_cache_does_not_fail_the_build(fake_go: Path) -> None:
    paths.USER_CACHE.mkdir()
    (paths.USER_CACHE / "bin").write_text("a file where the cache's folder should be")
    toolchain.TOOLS["k6"].build()
    assert toolchain._probe_k6().found


def test_no_go_and_no_cached_copy_says_how_to_get_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(paths, "BIN", tmp_path / "bin")
    monkeypatch.setattr(paths, "USER_CACHE", tmp_path / "user-cache")
    with pytest.raises(UserError, match="needs Go"):
        toolchain.TOOLS["k6"].build()
