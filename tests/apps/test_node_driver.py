"""The Node.js driver: install stamp, launch command, knobs, versions, the test suite's summary line, and
real instances (one process with pg, a cluster with pg-native) through harness.engine.instances on the database of
`./bidbench test` (DATABASE_URL; those tests fail without it)."""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil
import pytest
from app_helpers import instance_spec

from harness.apps import node as node_driver
from harness.apps.node import ENTRY, NodeDriver, install_digest, install_env
from harness.db.cluster import free_port


def test_install_digest_follows_what_npm_ci_installs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = tmp_path / "node-app"
    (app / "src").mkdir(parents=True)
    manifest = {"name": "x", "scripts": {"test": "node --test"}, "dependencies": {"pg": "8.23.1"}}
    (app / "package.json").write_text(json.dumps(manifest))
    (app / "package-lock.json").write_text("{}")
    (app / ".npmrc").write_text("strict-allow-scripts=true\n")
    monkeypatch.setattr(node_driver, "APP_DIR", app)

    first = install_digest()
    (app / "src" / "main.js").write_text("// sources are not installed, they run from the checkout")
    manifest["scripts"]["test"] = "node --test --test-reporter=spec"
    (app / "package.json").write_text(json.dumps(manifest))
    assert install_digest() == first, "sources and scripts do not reinstall node_modules"
    for key, value in (("dependencies", {"pg": "8.23.2"}), ("allowScripts", {"libpq@1.11.0": True})):
        before = install_digest()
        manifest[key] = value
        (app / "package.json").write_text(json.dumps(manifest))
        assert install_digest() != before, key
    for name in ("package-lock.json", ".npmrc"):
        before = install_digest()
        (app / name).write_text((app / name).read_text() + " ")
        assert install_digest() != before, name


def test_concurrent_builds_install_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two harness commands building at once must not run two `npm ci` in one directory."""
    monkeypatch.setattr(node_driver, "INSTALL_STAMP", tmp_path / "stamp")
    monkeypatch.setattr(node_driver, "INSTALL_LOCK", tmp_path / "lock")
    installs: list[str] = []

    def fake_install(self: NodeDriver, digest: str) -> None:
        installs.append(digest)
        time.sleep(0.2)
        (tmp_path / "stamp").write_text(digest + "\n")

    monkeypatch.setattr(NodeDriver, "_install", fake_install)
    threads = [threading.Thread(target=NodeDriver().ensure_built) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(installs) == 1


def test_install_env_points_node_gyp_at_local_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("npm_config_nodedir", raising=False)
    node = subprocess.run(["node", "-p", "process.execPath"], capture_output=True, text=True).stdout.strip()
    prefix = Path(node).resolve().parent.parent
    env = install_env(node)
    if (prefix / "include" / "node" / "node_version.h").is_file():
        assert env["npm_config_nodedir"] == str(prefix)
    else:
        assert "npm_config_nodedir" not in env
    monkeypatch.setenv("npm_config_nodedir", "/somewhere/else")
    assert install_env(node)["npm_config_nodedir"] == "/somewhere/else", "an explicit choice wins"


def test_launch_is_one_node_process(tmp_path: Path) -> None:
    spec = instance_spec("node", tmp_path, NODE_WORKERS="2", PG_NATIVE="1", LOG_LEVEL="debug")
    (launch,) = NodeDriver().launches(spec)
    assert Path(launch.argv[0]).name == "node"
    assert launch.argv[1:] == ["--min-semi-space-size=16", "--max-semi-space-size=16", str(ENTRY)]
    assert launch.env["PORT"] == str(spec.port) and launch.env["DATABASE_URL"] == spec.database_url
    assert launch.env["NODE_WORKERS"] == "2" and launch.env["PG_NATIVE"] == "1"
    assert launch.env["LOG_LEVEL"] == "debug"
    assert launch.log_path == spec.run_dir / "app.log"
    assert launch.cwd == node_driver.APP_DIR
    (plain,) = NodeDriver().launches(instance_spec("node", tmp_path, NODE_FLAGS=""))
    assert plain.argv[1:] == [str(ENTRY)], "NODE_FLAGS empty: V8's own sizing"


def test_effective_knobs_fill_in_every_default(tmp_path: Path) -> None:
    knobs = NodeDriver().effective_knobs(instance_spec("node", tmp_path, DB_POOL_SIZE="4"))
    assert knobs == {
        "DB_POOL_SIZE": "4",
        "LOG_LEVEL": "info",
        "SERVER_TIMING": "1",
        "NODE_WORKERS": "0",
        "PG_NATIVE": "0",
        "NODE_FLAGS": "--min-semi-space-size=16 --max-semi-space-size=16",
        "BIDBENCH_UNFAIR_UNSORTED": "0",
        "BIDBENCH_UNFAIR_PER_FIELD": "0",
    }


def test_test_suite_summary_pattern_matches_the_reporter_line() -> None:
    (suite,) = NodeDriver().test_suites()
    assert suite.argv[1] == "--test" and suite.cwd == node_driver.APP_DIR
    assert "--test-reporter=./testing/summary-reporter.js" in suite.argv
    assert (suite.cwd / "testing" / "summary-reporter.js").is_file()
    line = "node --test: 485 tests, 485 passed, 0 failed, 0 cancelled, 0 skipped, 0 todo (21.0 s)"
    assert re.search(suite.summary_pattern, line)
    assert not re.search(suite.summary_pattern, "ℹ tests 485")


def test_runtime_versions() -> None:
    versions = NodeDriver().runtime_versions()
    assert re.match(r"^v\d+\.", versions["node"]) and int(versions["node"][1:].split(".")[0]) >= 20
    assert re.match(r"^\d+\.", versions["npm"])
    assert set(versions) >= {"node", "v8", "npm", "pg", "pg_native", "libpq_addon"}


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("knobs", "processes"),
    [({"PG_NATIVE": "0", "NODE_WORKERS": "0"}, 1), ({"PG_NATIVE": "1", "NODE_WORKERS": "2"}, 3)],
    ids=["pg-single", "pg-native-cluster"],
)
def test_real_instance_through_the_harness(
    tmp_path: Path, database_url: str, knobs: dict[str, str], processes: int
) -> None:
    from harness.engine.instances import running_instance

    driver = NodeDriver()
    driver.ensure_built()
    port = free_port()
    spec = instance_spec("node", tmp_path, port=port, database_url=database_url, DB_POOL_SIZE="2", **knobs)
    with running_instance(driver, spec) as instance:
        line = instance.startup_line()
        assert line is not None
        start = json.loads(line.removeprefix("bidbench-start "))
        assert start["impl"] == "node" and start["port"] == port and start["db_pool_size"] == 2
        assert start["pg_native"] == (knobs["PG_NATIVE"] == "1")
        assert start["node_workers"] == int(knobs["NODE_WORKERS"])
        assert ":***@" in start["db"] or "@" not in start["db"]
        status, headers, body = _get(f"{instance.base_url}/regions")
        assert status == 200
        assert headers["Content-Type"] == "application/json"
        assert headers["Server-Timing"].startswith("db;dur=")
        assert json.loads(body)["regions"][0]["id"] == 1
        status, _, body = _get(f"{instance.base_url}/items/abc")
        assert status == 400 and json.loads(body)["error"]["message"] == "invalid path parameter: id"
        process = instance.processes[0]
        assert 1 + len(psutil.Process(process.pid).children(recursive=True)) == processes
    assert process.returncode == 0, "SIGTERM to the process group is a clean stop"
    log = (spec.run_dir / "app.log").read_text()
    assert log.count("bidbench-start ") == 1
    assert "replacement" not in log, "a cluster stopped by the harness does not respawn workers"
