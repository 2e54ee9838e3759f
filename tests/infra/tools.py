"""The real tools the offline infra tests run: kustomize (renders the overlays) and kubeconform (validates
what it renders against the Kubernetes JSON schemas), built with Go into .bidbench/bin/ and kept per user,
plus the schema layout kubeconform reads, made from the schemas the kubernetes-validate package ships.

A tool that cannot be had is an error that says what to do, never a skipped test.
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import paths
from harness.tools.toolchain import _cached_binary

# sigs.k8s.io/kustomize/kustomize/v5 v5.8.3 needs kustomize/api v0.21.3, which needs Go 1.27; v5.8.2 takes
# api v0.21.2 and builds with the Go 1.26 of these machines.
KUSTOMIZE = ("kustomize", "sigs.k8s.io/kustomize/kustomize/v5", "v5.8.2")
KUBECONFORM = ("kubeconform", "github.com/yannh/kubeconform/cmd/kubeconform", "v0.8.0")
# Generous for two shared cores with a cold module cache; a warm build takes seconds.
BUILD_TIMEOUT_S = 900


class ToolError(RuntimeError):
    """A tool could not be built or found; the message says what to do."""


@dataclass(frozen=True)
class GoTool:
    name: str
    package: str
    version: str

    @property
    def path(self) -> Path:
        return paths.BIN / self.name

    @property
    def stamp(self) -> Path:
        # Binaries built by `go install pkg@version` do not all report their module version (kubeconform
        # says "development"): the build records it next to the binary.
        return paths.BIN / f"{self.name}.version"

    def present(self) -> bool:
        return (
            self.path.is_file()
            and os.access(self.path, os.X_OK)
            and self.stamp.is_file()
            and self.stamp.read_text(encoding="utf-8").strip() == self.version
        )


@contextmanager
def _locked(name: str) -> Iterator[None]:
    """One build per tool at a time: pytest-xdist workers or two test runs may ask together."""
    paths.BIN.mkdir(parents=True, exist_ok=True)
    with (paths.BIN / f".{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _go_proxy(go: str) -> str:
    done = subprocess.run([go, "env", "GOPROXY"], capture_output=True, text=True, timeout=60, check=False)
    return done.stdout.strip().split(",")[0] or "https://proxy.golang.org"


def ensure(tool: GoTool) -> Path:
    """The tool's binary in .bidbench/bin/, copied from the per-user cache of harness/tools/toolchain.py
    (~/.cache/bidbench/bin/NAME-VERSION) or built with `go install` into both."""
    with _locked(tool.name):
        if tool.present():
            return tool.path
        cached = _cached_binary(tool.name, tool.version)
        if cached.is_file():
            shutil.copy2(cached, tool.path)
            tool.stamp.write_text(tool.version + "\n", encoding="utf-8")
            return tool.path
        go = shutil.which("go")
        if go is None:
            raise ToolError(
                f"the infra tests need {tool.name} {tool.version}, built with Go, and Go is not installed: "
                "run `./bidbench setup` (it installs Go) or `apt-get install golang`, then run the tests again."
            )
        target = f"{tool.package}@{tool.version}"
        with tempfile.TemporaryDirectory(prefix=f"bidbench-{tool.name}-", dir=paths.BIN) as gobin:
            env = dict(os.environ, GOBIN=gobin, GOPROXY=_go_proxy(go), GOFLAGS="-mod=mod")
            try:
                done = subprocess.run(
                    [go, "install", target],
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=BUILD_TIMEOUT_S,
                    check=False,
                )
            except subprocess.TimeoutExpired as exc:
                raise ToolError(
                    f"`go install {target}` took more than {BUILD_TIMEOUT_S} s; run it by hand "
                    f"(GOBIN={paths.BIN}) to see where it hangs, then run the tests again."
                ) from exc
            if done.returncode != 0:
                raise ToolError(
                    f"`go install {target}` failed (the Go module proxy must be reachable):\n{done.stderr[-2000:]}"
                )
            # `go install` names the binary after the package path, without a major-version suffix.
            built = [p for p in Path(gobin).iterdir() if p.is_file()]
            if len(built) != 1:
                raise ToolError(f"`go install {target}` left {built}, expected one binary")
            os.replace(built[0], tool.path)
        tool.stamp.write_text(tool.version + "\n", encoding="utf-8")
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            partial = cached.with_name(f"{cached.name}.{os.getpid()}.partial")
            shutil.copy2(tool.path, partial)
            os.replace(partial, cached)
        except OSError:
            pass  # the cache only saves time next time
        return tool.path


@functools.cache
def kustomize() -> Path:
    return ensure(GoTool(*KUSTOMIZE))


@functools.cache
def kubeconform() -> Path:
    return ensure(GoTool(*KUBECONFORM))


# ---- Kubernetes JSON schemas for kubeconform, offline ------------------------------------------------

# kubeconform reads one self-contained file per kind, at SCHEMA_TEMPLATE under the schema root (the layout
# of yannh/kubernetes-json-schema, which it would download). kubernetes-validate ships the same schemas
# split in two: one file per kind under v<version>-local-strict/, named exactly as kubeconform names
# them (deployment-apps-v1.json, service-v1.json), whose $refs point into a shared _definitions.json at
# https://kubernetes.io/api/_definitions.json, a URL kubeconform would fetch. So each kind's file is
# written once more with the definitions it reaches embedded under $defs: the same schema, standalone.
SCHEMA_TEMPLATE = "{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json"
_SHARED_REF = "/api/_definitions.json#/$defs/"
_LOCAL_REF = "#/$defs/"


def _package_schemas() -> tuple[Path, str]:
    import importlib.metadata

    import kubernetes_validate

    root = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    return root, importlib.metadata.version("kubernetes-validate")


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _standalone(kind_schema: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    text = json.dumps(kind_schema).replace(f'"{_SHARED_REF}', f'"{_LOCAL_REF}')
    schema: dict[str, Any] = json.loads(text)
    schema.pop("$id", None)
    reached: dict[str, Any] = {}
    todo = [r[len(_LOCAL_REF) :] for r in _refs(schema) if r.startswith(_LOCAL_REF)]
    while todo:
        name = todo.pop()
        if name in reached:
            continue
        reached[name] = definitions[name]
        todo.extend(r[len(_LOCAL_REF) :] for r in _refs(reached[name]) if r.startswith(_LOCAL_REF))
    schema["$defs"] = reached
    return schema


def standalone_schemas(versions: tuple[str, ...]) -> Path:
    """The schema root for kubeconform's -schema-location (with SCHEMA_TEMPLATE), for these Kubernetes
    versions (e.g. "1.28.0"), strict only. Made once per kubernetes-validate version, under .bidbench/cache/."""
    source, package_version = _package_schemas()
    root = paths.CACHE / "kubeconform-schemas" / f"kubernetes-validate-{package_version}"
    with _locked("kubeconform-schemas"):
        for version in versions:
            target = root / f"v{version}-standalone-strict"
            if (target / ".complete").is_file():
                continue
            local = source / f"v{version}-local-strict"
            if not local.is_dir():
                raise ToolError(
                    f"kubernetes-validate {package_version} has no schemas for Kubernetes {version} "
                    f"({local}); pick a version it ships or update it in requirements.lock and pyproject.toml."
                )
            definitions = json.loads((local / "_definitions.json").read_text(encoding="utf-8"))["$defs"]
            root.mkdir(parents=True, exist_ok=True)
            partial = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=root))
            for path in local.glob("*.json"):
                if path.name == "_definitions.json" or not re.fullmatch(
                    r"[a-z0-9]+(-[a-z0-9.]+)*\.json", path.name
                ):
                    continue
                kind_schema = json.loads(path.read_text(encoding="utf-8"))
                if "x-kubernetes-group-version-kind" not in kind_schema:
                    continue  # a type embedded in others, not a kind kubeconform looks up
                (partial / path.name).write_text(
                    json.dumps(_standalone(kind_schema, definitions)), encoding="utf-8"
                )
            (partial / ".complete").write_text(package_version + "\n", encoding="utf-8")
            shutil.rmtree(target, ignore_errors=True)
            os.replace(partial, target)
    return root
