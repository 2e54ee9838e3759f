"""Where Go-built tools come from: Toxiproxy through a per-user copy (a fresh clone does not relink it),
and the load driver from loadgen/'s own sources, rebuilt exactly when they change.

A stand-in `go` on PATH writes a shell script as Toxiproxy's "binary": those tests are about where
binaries come from and go to, not about Go. The driver tests run the real `go build` (seconds).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from harness import paths
from harness.console import UserError
from harness.tools import toolchain


def _write_executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def fake_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `go` whose `install` leaves a toxiproxy `server`, and logs each install."""
    bindir = tmp_path / "gobin"
    bindir.mkdir()
    log = tmp_path / "go-installs.log"
    _write_executable(
        bindir / "go",
        f"""#!/bin/sh
if [ "$1" = env ]; then echo https://proxy.example; exit 0; fi
echo "$2" >> {log}
printf '#!/bin/sh\\necho "toxiproxy version git"\\n' > "$GOBIN/server"
chmod +x "$GOBIN/server"
""",
    )
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(paths, "BIN", tmp_path / "project" / "bin")
    monkeypatch.setattr(paths, "USER_CACHE", tmp_path / "user-cache")
    return log


def _installs(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def test_first_build_fills_the_user_cache_and_a_fresh_clone_copies_it(fake_go: Path) -> None:
    paths.BIN.mkdir(parents=True)
    toolchain.TOOLS["toxiproxy"].build()
    assert _installs(fake_go) == [f"{toolchain.TOXIPROXY_PACKAGE}@{toolchain.TOXIPROXY_VERSION}"]
    assert toolchain.TOOLS["toxiproxy"].probe().found
    cached = paths.USER_CACHE / "bin" / f"toxiproxy-server-{toolchain.TOXIPROXY_VERSION}"
    assert [p.name for p in cached.parent.iterdir()] == [cached.name]  # no partial copy left behind

    toolchain.toxiproxy_path().unlink()  # a fresh clone: no project-local binary
    toolchain.TOOLS["toxiproxy"].build()
    assert len(_installs(fake_go)) == 1, "the second build should copy, not run go install"
    assert toolchain.TOOLS["toxiproxy"].probe().found


def test_an_unwritable_cache_does_not_fail_the_build(fake_go: Path) -> None:
    paths.BIN.mkdir(parents=True)
    paths.USER_CACHE.mkdir()
    (paths.USER_CACHE / "bin").write_text("a file where the cache's folder should be")
    toolchain.TOOLS["toxiproxy"].build()
    assert toolchain.TOOLS["toxiproxy"].probe().found


def test_no_go_says_how_to_get_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(paths, "BIN", tmp_path / "bin")
    monkeypatch.setattr(paths, "USER_CACHE", tmp_path / "user-cache")
    with pytest.raises(UserError, match="needs Go"):
        toolchain.TOOLS["driver"].build()


@pytest.fixture
def driver_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of loadgen/ and an empty bin dir, so the real build can be watched without touching ours."""
    copy = tmp_path / "loadgen"
    shutil.copytree(paths.LOADGEN, copy, ignore=shutil.ignore_patterns("*_test.go", "testdata"))
    monkeypatch.setattr(paths, "LOADGEN", copy)
    monkeypatch.setattr(paths, "BIN", tmp_path / "bin")
    return copy


def test_the_driver_is_built_from_its_sources_and_rebuilt_when_they_change(driver_sources: Path) -> None:
    assert not toolchain.TOOLS["driver"].probe().found
    toolchain.ensure(["driver"])
    first = toolchain.TOOLS["driver"].probe()
    assert first.found and first.version.startswith("0.")
    version = subprocess.run([str(toolchain.driver_path()), "version"], capture_output=True, text=True)
    assert version.returncode == 0 and "bidbench-load" in version.stdout

    main = driver_sources / "cmd" / "bidbench-load" / "main.go"
    main.write_text(main.read_text() + "\n// a change\n")
    assert not toolchain.TOOLS["driver"].probe().found, "a changed source must make the binary stale"
    toolchain.ensure(["driver"])
    second = toolchain.TOOLS["driver"].probe()
    assert second.found and second.version != first.version


def test_a_test_file_change_does_not_rebuild_the_driver(driver_sources: Path) -> None:
    toolchain.ensure(["driver"])
    (driver_sources / "internal" / "pace" / "extra_test.go").write_text("package pace\n")
    assert toolchain.TOOLS["driver"].probe().found


def test_the_newest_versioned_postgresql_is_found_past_dirs_named_otherwise(tmp_path: Path) -> None:
    for name in ("14", "15", "16", "current", "17"):
        (tmp_path / name / "bin").mkdir(parents=True)
    for name in ("14", "15", "16", "current"):
        _write_executable(tmp_path / name / "bin" / "postgres", "#!/bin/sh\n")
    # 17 has no server binary (client packages only), so 16 is the newest server.
    assert toolchain.find_pg_bindir(tmp_path) == tmp_path / "16" / "bin"


def test_a_dir_not_named_by_a_version_is_no_crash_when_no_server_is_new_enough(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("14", "current"):
        (tmp_path / name / "bin").mkdir(parents=True)
        _write_executable(tmp_path / name / "bin" / "postgres", "#!/bin/sh\n")
    monkeypatch.setattr(toolchain.shutil, "which", lambda _name: None)
    with pytest.raises(UserError, match="PostgreSQL 15\\+ server binaries were not found"):
        toolchain.find_pg_bindir(tmp_path)
