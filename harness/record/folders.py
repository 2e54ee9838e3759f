"""Result folders (docs/design.md §9): one new folder per run, never overwritten, plus an append-only index.

The layout is documented in results/README.md. Writers here are the only code that creates files
under results/, so the format has one owner.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import platform
import secrets
import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import psutil

from harness import paths

INDEX_NAME = "index.jsonl"


def finite(data: Any) -> Any:
    """NaN and infinity are not JSON: an unknown figure is written as null."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {key: finite(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [finite(value) for value in data]
    return data


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


STAMP = "%Y%m%dT%H%M%SZ"
"""How a run id (and a stamped output) begins: the UTC time it was made."""


def run_started(run_id: str) -> datetime | None:
    """When a run began, read from its id; None for an id that does not begin with a time."""
    try:
        return datetime.strptime(run_id[: len("20260101T000000Z")], STAMP).replace(tzinfo=timezone.utc)
    except ValueError:
        return None


@dataclass(frozen=True)
class RunFolder:
    path: Path

    @property
    def run_id(self) -> str:
        return self.path.name

    @property
    def logs(self) -> Path:
        return self.path / "logs"

    def write_json(self, name: str, data: Any) -> Path:
        target = self.path / name
        tmp = target.with_suffix(target.suffix + ".tmp")
        tmp.write_text(json.dumps(finite(data), indent=2, sort_keys=False, allow_nan=False) + "\n")
        tmp.replace(target)
        return target

    def read_json(self, name: str) -> Any:
        return json.loads((self.path / name).read_text())

    def has(self, name: str) -> bool:
        return (self.path / name).exists()


def new_run_folder(impl: str, regime: str, results_dir: Path | None = None) -> RunFolder:
    base = results_dir or paths.RESULTS
    base.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime(STAMP)
    while True:
        folder = base / f"{stamp}-{impl}-{regime}-{secrets.token_hex(3)}"
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        (folder / "logs").mkdir()
        return RunFolder(folder)


def new_stamped(kind: str, suffix: str = "", results_dir: Path | None = None) -> Path:
    """results/<kind>/<UTC time><suffix> (-2, -3, ... when that time is taken): the output of a command that
    is not a run (overhead, slow-clients). Without a suffix it is a folder, made here."""
    base = (results_dir or paths.RESULTS) / kind
    base.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime(STAMP)
    path = base / f"{stamp}{suffix}"
    taken = 1
    while path.exists():
        taken += 1
        path = base / f"{stamp}-{taken}{suffix}"
    if not suffix:
        path.mkdir()
    return path


def append_index(entry: dict[str, Any], results_dir: Path | None = None) -> None:
    base = results_dir or paths.RESULTS
    base.mkdir(parents=True, exist_ok=True)
    with (base / INDEX_NAME).open("a") as index:
        fcntl.flock(index, fcntl.LOCK_EX)
        index.write(json.dumps(entry, sort_keys=True) + "\n")
        index.flush()
        os.fsync(index.fileno())
        fcntl.flock(index, fcntl.LOCK_UN)


def read_index_json(results_dir: Path | None = None) -> list[dict[str, Any]]:
    """The index lines as written, of whatever version: read them through harness/record/index_line.py."""
    path = (results_dir or paths.RESULTS) / INDEX_NAME
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def git_state(root: Path | None = None) -> dict[str, Any]:
    """The checkout's commit, and whether tracked files differ from it. The replication report and its
    evidence are left out: `replicate` rewrites both after every claim, and the claims after the first were
    marked dirty."""
    top = root or paths.ROOT

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(top), *args], capture_output=True, text=True)
        return done.stdout.strip()

    commit = git("rev-parse", "HEAD")
    generated = [
        f":(exclude){p.relative_to(paths.ROOT).as_posix()}"
        for p in (paths.REPLICATION_REPORT, paths.REPLICATION_EVIDENCE)
    ]
    dirty = bool(git("status", "--porcelain", "--untracked-files=no", "--", ".", *generated))
    return {"commit": commit or "unknown", "dirty": dirty}


def host_info() -> dict[str, Any]:
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        cpuinfo = []
    models = (line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name"))
    cpu_model = next(models, "unknown")
    return {
        "hostname": platform.node(),
        "cpu_model": cpu_model,
        "cores": psutil.cpu_count(logical=True),
        "physical_cores": psutil.cpu_count(logical=False),
        "memory_bytes": psutil.virtual_memory().total,
        "kernel": platform.release(),
        "os": platform.platform(),
        "python": platform.python_version(),
    }
