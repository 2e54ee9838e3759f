"""A small, offline stand-in for `kustomize build --load-restrictor LoadRestrictionsNone`.

It implements exactly the subset that infra/k8s/ uses, and refuses anything else loudly, so that a
kustomization that grows beyond it fails the tests instead of being rendered wrongly:

- `resources`: files (multi-document YAML) and directories holding a kustomization
- `namespace`
- `configMapGenerator` with `files` (`key=path` or `path`) and `literals`, behavior `create`, and
  `options.disableNameSuffixHash`; the name suffix is kustomize's own content hash
- `patches`: strategic-merge patches (lists of named objects merged by `name`, other lists replaced;
  target taken from the patch) and JSON 6902 patches (`add`, `remove`, `replace`) with a `target`
- name references: renamed (hashed) ConfigMaps and Secrets are rewritten in pod templates (volumes,
  `envFrom`, `env[].valueFrom`), as kustomize does

When kubectl is installed, tests/infra compares this renderer with `kubectl kustomize`.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

Resource = dict[str, Any]

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
SUPPORTED_FIELDS = {"apiVersion", "kind", "namespace", "resources", "configMapGenerator", "patches"}
CLUSTER_SCOPED_KINDS = {
    "Namespace",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "PersistentVolume",
    "StorageClass",
    "PriorityClass",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
}
POD_TEMPLATE_PATHS: dict[str, tuple[str, ...]] = {
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "Pod": ("spec",),
}


class KustomizeError(Exception):
    """The kustomization uses something this renderer does not implement, or is invalid."""


@dataclass
class Rendered:
    resources: list[Resource]
    # (kind, original name) -> current name, for generated objects whose name got a hash suffix.
    renames: dict[tuple[str, str], str] = field(default_factory=dict)


def _load_yaml_documents(path: Path) -> list[Resource]:
    with path.open(encoding="utf-8") as handle:
        docs = [doc for doc in yaml.safe_load_all(handle) if doc is not None]
    for doc in docs:
        if not isinstance(doc, dict) or "kind" not in doc or "metadata" not in doc:
            raise KustomizeError(f"{path}: every document must be a Kubernetes object")
    return docs


def _kustomization_file(directory: Path) -> Path:
    for name in KUSTOMIZATION_FILES:
        candidate = directory / name
        if candidate.is_file():
            return candidate
    raise KustomizeError(f"{directory}: no kustomization file")


# ---- ConfigMap generation and kustomize's hash suffix ------------------------------------------------


def _go_json(value: Any) -> str:
    """json.Marshal of Go: sorted keys, no spaces, HTML characters and U+2028/U+2029 escaped."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, escaped)
    return text


def configmap_hash(data: dict[str, str]) -> str:
    """The 10-character suffix kustomize appends to a generated ConfigMap's name (api/hasher).

    kustomize means to hash kind, name and data, but it looks the name up as one field literally called
    "metadata/name", finds nothing and hashes "" instead; this reproduces what it really does.
    """
    encoded = _go_json({"kind": "ConfigMap", "name": "", "data": data})
    digest = hashlib.sha256(encoded.encode("utf-8")).hexdigest()[:10]
    return digest.translate(str.maketrans({"0": "g", "1": "h", "3": "k", "a": "m", "e": "t"}))


def _generate_configmap(base_dir: Path, spec: dict[str, Any]) -> tuple[Resource, bool]:
    unknown = set(spec) - {"name", "files", "literals", "options", "behavior"}
    if unknown:
        raise KustomizeError(f"configMapGenerator: unsupported fields {sorted(unknown)}")
    if spec.get("behavior", "create") != "create":
        raise KustomizeError("configMapGenerator: only behavior 'create' is supported")
    options = spec.get("options") or {}
    if set(options) - {"disableNameSuffixHash"}:
        raise KustomizeError(f"configMapGenerator options: unsupported {sorted(set(options))}")
    data: dict[str, str] = {}
    for entry in spec.get("files") or []:
        key, sep, rel = str(entry).partition("=")
        if not sep:
            rel, key = key, Path(key).name
        file_path = (base_dir / rel).resolve()
        if not file_path.is_file():
            raise KustomizeError(f"configMapGenerator {spec['name']}: no file {file_path}")
        if key in data:
            raise KustomizeError(f"configMapGenerator {spec['name']}: duplicate key {key}")
        data[key] = file_path.read_text(encoding="utf-8")
    for literal in spec.get("literals") or []:
        key, sep, value = str(literal).partition("=")
        if not sep:
            raise KustomizeError(f"configMapGenerator {spec['name']}: literal without '=': {literal}")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        if key in data:
            raise KustomizeError(f"configMapGenerator {spec['name']}: duplicate key {key}")
        data[key] = value
    configmap: Resource = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": spec["name"]},
        "data": dict(sorted(data.items())),
    }
    return configmap, not options.get("disableNameSuffixHash", False)


# ---- patches -----------------------------------------------------------------------------------------


def _group_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def _matches(resource: Resource, target: dict[str, Any]) -> bool:
    unknown = set(target) - {"group", "version", "kind", "name", "namespace"}
    if unknown:
        raise KustomizeError(f"patch target: unsupported selectors {sorted(unknown)}")
    group, version = _group_version(resource["apiVersion"])
    checks = {
        "group": group,
        "version": version,
        "kind": resource["kind"],
        "name": resource["metadata"]["name"],
        "namespace": resource["metadata"].get("namespace"),
    }
    return all(checks[key] == wanted for key, wanted in target.items())


def strategic_merge(base: Any, patch: Any) -> Any:
    """The strategic-merge subset: maps merge, null deletes, lists of named maps merge by name."""
    if isinstance(base, dict) and isinstance(patch, dict):
        if any(str(key).startswith("$") for key in patch):
            raise KustomizeError(f"strategic-merge directives are not supported: {sorted(patch)}")
        merged = dict(base)
        for key, value in patch.items():
            if value is None:
                merged.pop(key, None)
            elif key in merged:
                merged[key] = strategic_merge(merged[key], value)
            else:
                merged[key] = copy.deepcopy(value)
        return merged
    if isinstance(base, list) and isinstance(patch, list):
        named = all(isinstance(item, dict) and "name" in item for item in [*base, *patch])
        if not named:
            return copy.deepcopy(patch)
        result = [copy.deepcopy(item) for item in base]
        index = {item["name"]: i for i, item in enumerate(result)}
        for item in patch:
            if item["name"] in index:
                result[index[item["name"]]] = strategic_merge(result[index[item["name"]]], item)
            else:
                result.append(copy.deepcopy(item))
        return result
    return copy.deepcopy(patch)


def _pointer(path: str) -> list[str]:
    if not path.startswith("/"):
        raise KustomizeError(f"JSON pointer must start with '/': {path}")
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def json6902(document: Any, operations: list[dict[str, Any]]) -> Any:
    document = copy.deepcopy(document)
    for op in operations:
        kind = op.get("op")
        if kind not in {"add", "remove", "replace"}:
            raise KustomizeError(f"JSON 6902 op not supported: {kind}")
        parts = _pointer(op["path"])
        parent = document
        for part in parts[:-1]:
            parent = parent[int(part)] if isinstance(parent, list) else parent[part]
        last = parts[-1]
        if isinstance(parent, list):
            position = len(parent) if last == "-" else int(last)
            if kind == "add":
                parent.insert(position, copy.deepcopy(op["value"]))
            elif kind == "remove":
                del parent[position]
            else:
                if position >= len(parent):
                    raise KustomizeError(f"replace: no element at {op['path']}")
                parent[position] = copy.deepcopy(op["value"])
        else:
            if kind in {"remove", "replace"} and last not in parent:
                raise KustomizeError(f"{kind}: no member at {op['path']}")
            if kind == "remove":
                del parent[last]
            else:
                parent[last] = copy.deepcopy(op["value"])
    return document


def _apply_patch(resources: list[Resource], base_dir: Path, spec: dict[str, Any]) -> None:
    unknown = set(spec) - {"path", "patch", "target"}
    if unknown:
        raise KustomizeError(f"patches: unsupported fields {sorted(unknown)}")
    if "path" in spec:
        text = (base_dir / spec["path"]).read_text(encoding="utf-8")
    elif "patch" in spec:
        text = spec["patch"]
    else:
        raise KustomizeError("patches: an entry needs 'path' or 'patch'")
    body = yaml.safe_load(text)
    target = spec.get("target")
    if isinstance(body, list):
        if target is None:
            raise KustomizeError("a JSON 6902 patch needs a target")
        hits = [i for i, resource in enumerate(resources) if _matches(resource, target)]
        if not hits:
            raise KustomizeError(f"patch target matches nothing: {target}")
        for i in hits:
            resources[i] = json6902(resources[i], body)
        return
    if not isinstance(body, dict):
        raise KustomizeError("a patch must be a strategic-merge object or a JSON 6902 list")
    if target is None:
        group, version = _group_version(body["apiVersion"])
        target = {"group": group, "version": version, "kind": body["kind"], "name": body["metadata"]["name"]}
    hits = [i for i, resource in enumerate(resources) if _matches(resource, target)]
    if not hits:
        raise KustomizeError(f"patch target matches nothing: {target}")
    for i in hits:
        identity = {"apiVersion": resources[i]["apiVersion"], "kind": resources[i]["kind"]}
        name = resources[i]["metadata"]["name"]
        patched = strategic_merge(resources[i], body)
        patched.update(identity)
        patched["metadata"]["name"] = name
        resources[i] = patched


# ---- name references ---------------------------------------------------------------------------------


def _pod_spec(resource: Resource) -> dict[str, Any] | None:
    path = POD_TEMPLATE_PATHS.get(resource["kind"])
    node: Any = resource
    for key in path or ():
        node = node.get(key) if isinstance(node, dict) else None
    return node if path and isinstance(node, dict) else None


def _rename(ref: dict[str, Any], key: str, kind: str, renames: dict[tuple[str, str], str]) -> None:
    if isinstance(ref, dict) and key in ref and (kind, ref[key]) in renames:
        ref[key] = renames[(kind, ref[key])]


def _fix_name_references(resource: Resource, renames: dict[tuple[str, str], str]) -> None:
    spec = _pod_spec(resource)
    if spec is None:
        return
    for volume in spec.get("volumes") or []:
        _rename(volume.get("configMap"), "name", "ConfigMap", renames)
        _rename(volume.get("secret"), "secretName", "Secret", renames)
        for source in (volume.get("projected") or {}).get("sources") or []:
            _rename(source.get("configMap"), "name", "ConfigMap", renames)
            _rename(source.get("secret"), "name", "Secret", renames)
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        for env_from in container.get("envFrom") or []:
            _rename(env_from.get("configMapRef"), "name", "ConfigMap", renames)
            _rename(env_from.get("secretRef"), "name", "Secret", renames)
        for env in container.get("env") or []:
            value_from = env.get("valueFrom") or {}
            _rename(value_from.get("configMapKeyRef"), "name", "ConfigMap", renames)
            _rename(value_from.get("secretKeyRef"), "name", "Secret", renames)


# ---- the build ---------------------------------------------------------------------------------------


def _build(directory: Path) -> Rendered:
    kustomization_path = _kustomization_file(directory)
    kustomization = yaml.safe_load(kustomization_path.read_text(encoding="utf-8")) or {}
    unknown = set(kustomization) - SUPPORTED_FIELDS
    if unknown:
        raise KustomizeError(
            f"{kustomization_path}: fields not supported by this renderer: {sorted(unknown)}"
        )

    resources: list[Resource] = []
    renames: dict[tuple[str, str], str] = {}
    for entry in kustomization.get("resources") or []:
        path = (directory / entry).resolve()
        if path.is_dir():
            sub = _build(path)
            resources.extend(sub.resources)
            renames.update(sub.renames)
        elif path.is_file():
            resources.extend(_load_yaml_documents(path))
        else:
            raise KustomizeError(f"{kustomization_path}: resource not found: {entry}")

    for spec in kustomization.get("configMapGenerator") or []:
        configmap, hashed = _generate_configmap(directory, spec)
        if hashed:
            original = configmap["metadata"]["name"]
            configmap["metadata"]["name"] = f"{original}-{configmap_hash(configmap['data'])}"
            renames[("ConfigMap", original)] = configmap["metadata"]["name"]
        resources.append(configmap)

    for spec in kustomization.get("patches") or []:
        _apply_patch(resources, directory, spec)

    namespace = kustomization.get("namespace")
    if namespace:
        for resource in resources:
            if resource["kind"] not in CLUSTER_SCOPED_KINDS:
                resource["metadata"]["namespace"] = namespace

    for resource in resources:
        _fix_name_references(resource, renames)

    seen: set[tuple[str, str, str]] = set()
    for resource in resources:
        key = (resource["kind"], resource["metadata"].get("namespace", ""), resource["metadata"]["name"])
        if key in seen:
            raise KustomizeError(f"{kustomization_path}: duplicate resource {key}")
        seen.add(key)
    return Rendered(resources, renames)


def render(directory: Path) -> list[Resource]:
    """The objects `kustomize build --load-restrictor LoadRestrictionsNone DIRECTORY` would print."""
    return _build(directory.resolve()).resources
