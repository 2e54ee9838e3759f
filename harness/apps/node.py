"""The Node.js driver: installs node-app/ with `npm ci` and launches one node process per instance (docs/design.md §4).

One instance is one `node src/main.js`: a single serving process, or a node:cluster primary with NODE_WORKERS
workers (one process tree); it may open max(NODE_WORKERS, 1) x DB_POOL_SIZE database connections.
`npm ci` compiles pg-native's libpq addon (node-gyp), approved in node-app/package.json (`allowScripts`) and
node-app/.npmrc, so a clean clone builds it without anyone approving anything by hand.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness import paths
from harness.apps import base
from harness.apps import knobs as knob_defaults
from harness.apps.base import AppAdapter, AppDriver, InstanceSpec, ProcessLaunch, TestSuite
from harness.console import UserError

APP_DIR = paths.app_dir("node")
ENTRY = APP_DIR / "src" / "main.js"
INSTALL_STAMP = paths.CACHE / "node-app.install.sha256"
INSTALL_LOCK = paths.CACHE / "node-app.install.lock"
# What `npm ci` installs from; the node version is part of the stamp because the libpq addon is compiled
# against one Node ABI and must be rebuilt when node changes. Of package.json only the fields that change
# what gets installed count: editing a script must not reinstall node_modules under a running instance.
INSTALL_INPUTS = ("package-lock.json", ".npmrc")
INSTALL_FIELDS = ("dependencies", "optionalDependencies", "devDependencies", "overrides", "allowScripts")

# V8's young generation fixed at the size V8 would grow it to (16 MiB semi-spaces on 64 bits), as java's heap
# is fixed by its flags: left to V8, whether it grew differed between fresh starts, and node's memory and
# capacity followed that draw (the lab log, docs/lab/, young generation).
DEFAULT_NODE_FLAGS = "--min-semi-space-size=16 --max-semi-space-size=16"

# Knobs only this driver reads, on top of harness.apps.knobs.
DRIVER_KNOBS: dict[str, str] = {"NODE_FLAGS": DEFAULT_NODE_FLAGS, **base.UNFAIR_KNOBS}

# Prints the compiled addon's path when pg-native loads; fails (non-zero) when the build is missing.
_PG_NATIVE_PROBE = "require('pg-native'); console.log(require.resolve('libpq'))"

# node --test with the readable spec reporter, plus one summary line at the end for `./bidbench test`.
_TEST_ARGS = [
    "--test",
    "--test-reporter=spec",
    "--test-reporter-destination=stdout",
    "--test-reporter=./testing/summary-reporter.js",
    "--test-reporter-destination=stdout",
]


def _tool(name: str) -> str:
    return base.on_path(shutil.which(name), f"{name} is not on PATH; install Node.js 20+ (./bidbench setup)")


def _output(argv: list[str], cwd: Path | None = None) -> str:
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({exc})"
    return done.stdout.strip() if done.returncode == 0 else f"unknown ({done.stderr.strip()[:200]})"


def install_digest() -> str:
    digest = hashlib.sha256()
    manifest_path = APP_DIR / "package.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    relevant = {key: manifest.get(key) for key in INSTALL_FIELDS}
    digest.update(json.dumps(relevant, sort_keys=True).encode())
    for name in INSTALL_INPUTS:
        path = APP_DIR / name
        content = path.read_bytes() if path.is_file() else b"(missing)"
        digest.update(name.encode() + b"\0" + content + b"\0")
    digest.update(_output([_tool("node"), "--version"]).encode())
    return digest.hexdigest()


@contextmanager
def _install_lock() -> Iterator[None]:
    """One `npm ci` at a time: two harness commands building at once would delete each other's files. Closing
    the file releases the lock."""
    INSTALL_LOCK.parent.mkdir(parents=True, exist_ok=True)
    with INSTALL_LOCK.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def install_env(node: str) -> dict[str, str]:
    """The environment for `npm ci`: node-gyp gets the running node's own headers (<prefix>/include/node)
    when they are installed; without a nodedir it downloads them from nodejs.org, which fails offline."""
    env = dict(os.environ)
    prefix = Path(node).resolve().parent.parent
    if "npm_config_nodedir" not in env and (prefix / "include" / "node" / "node_version.h").is_file():
        env["npm_config_nodedir"] = str(prefix)
    return env


def _package_version(package: str) -> str:
    manifest = APP_DIR / "node_modules" / package / "package.json"
    try:
        return str(json.loads(manifest.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return "not installed"


class NodeDriver(AppDriver):
    impl = "node"

    def ensure_built(self) -> None:
        if self._installed(install_digest()):
            return
        with _install_lock():
            digest = install_digest()
            if self._installed(digest):  # another process installed it while we waited for the lock
                return
            self._install(digest)

    @staticmethod
    def _installed(digest: str) -> bool:
        installed = APP_DIR / "node_modules" / ".package-lock.json"
        return installed.is_file() and base.stamped(INSTALL_STAMP, digest)

    def _install(self, digest: str) -> None:
        node = _tool("node")
        INSTALL_STAMP.unlink(missing_ok=True)
        done = subprocess.run(
            # --foreground-scripts: keep node-gyp's output, so a failed addon build can say why.
            [_tool("npm"), "ci", "--no-audit", "--no-fund", "--foreground-scripts"],
            cwd=APP_DIR,
            env=install_env(node),
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            output = (done.stdout + done.stderr).strip().splitlines()[-40:]
            raise UserError("node-app install failed (npm ci):\n" + "\n".join(output))
        # pg-native is an optional dependency, so npm ci succeeds even when its addon failed to compile.
        # The benchmark needs both drivers, so a missing addon is an error here, with the reason.
        probe = subprocess.run(
            [node, "-e", _PG_NATIVE_PROBE], cwd=APP_DIR, capture_output=True, text=True, timeout=60
        )
        if probe.returncode != 0:
            output = (done.stdout + done.stderr).splitlines()
            gyp_errors = [line for line in output if "gyp ERR!" in line or "error:" in line][:20]
            node_error = next(
                (line for line in probe.stderr.splitlines() if "Error" in line), probe.stderr[-300:]
            )
            raise UserError(
                "pg-native did not build: `require('pg-native')` fails in node-app/.\n"
                "Its libpq addon is compiled by node-gyp during `npm ci` and needs libpq-dev, python3, make "
                "and g++ (./bidbench setup installs them) and the node headers (found under the node prefix, "
                "else downloaded from nodejs.org); then run ./bidbench build node again.\n"
                f"node says: {node_error.strip()}\n"
                "node-gyp says:\n" + "\n".join(gyp_errors or output[-20:])
            )
        base.write_stamp(INSTALL_STAMP, digest)

    def launches(self, spec: InstanceSpec) -> list[ProcessLaunch]:
        if not (APP_DIR / "node_modules" / "pg").is_dir():
            raise UserError("node-app/node_modules is missing; run ./bidbench build node")
        flags = shlex.split(spec.knobs.get("NODE_FLAGS", DEFAULT_NODE_FLAGS))
        return [spec.app_process("node", [_tool("node"), *flags, str(ENTRY)], APP_DIR)]

    def effective_knobs(self, spec: InstanceSpec) -> dict[str, str]:
        return {**knob_defaults.default_knobs(self.impl), **DRIVER_KNOBS, **spec.knobs}

    def test_suites(self) -> list[TestSuite]:
        return [
            TestSuite(
                name="node --test",
                argv=[_tool("node"), *_TEST_ARGS],
                cwd=APP_DIR,
                summary_pattern=r"^node --test: \d+ tests",
            )
        ]

    def runtime_versions(self) -> dict[str, str]:
        node = _tool("node")
        versions = {
            "node": _output([node, "--version"]),
            "v8": _output([node, "-p", "process.versions.v8"]),
            "npm": _output([_tool("npm"), "--version"]),
            "pg": _package_version("pg"),
            "pg_native": _package_version("pg-native"),
            "libpq_addon": _package_version("libpq"),
        }
        pg_config = shutil.which("pg_config")
        if pg_config:
            versions["libpq"] = _output([pg_config, "--version"])
        return versions


ADAPTER = AppAdapter(
    name="node",
    folder=APP_DIR,
    driver_class=NodeDriver,
    knobs={"NODE_WORKERS": "0", "PG_NATIVE": "0"},
    tools=("node", "npm", "build-tools", "libpq-dev"),
)
