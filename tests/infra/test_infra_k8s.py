"""The Kubernetes manifests of infra/k8s/, rendered offline (tests/infra/kustomize_lite.py, checked against
`kubectl kustomize` where kubectl is installed) and validated against the Kubernetes JSON schemas shipped
by the kubernetes-validate package. The k6-operator TestRun is not a core type: it is validated against
the fields of its CRD that bidbench relies on (k6.io/v1alpha1, k6-operator v1.6.0)."""

from __future__ import annotations

import copy
import json
import subprocess
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import kubernetes_validate
import pytest
import referencing
import yaml
from infra_helpers import (
    ALL_OVERLAYS,
    IMPLS,
    OVERLAYS,
    ROOT,
    cpu_cores,
    find,
    kubectl,
    memory_bytes,
    parse_dockerfile,
    pod_spec,
    rendered,
)
from kustomize_lite import Resource

# The oldest and the newest Kubernetes minor the manifests are checked against.
K8S_VERSIONS = ("1.28.0", "1.37.0")
NAMESPACE = "bidbench"
WORKLOADS = ("Deployment", "StatefulSet", "Job")


def _key(resource: Resource) -> tuple[str, str, str]:
    return (resource["kind"], resource["metadata"].get("namespace", ""), resource["metadata"]["name"])


# ---- schema validation ---------------------------------------------------------------------------


@pytest.mark.parametrize("version", K8S_VERSIONS)
@pytest.mark.parametrize("overlay", ALL_OVERLAYS)
def test_every_core_object_validates_against_the_kubernetes_schema(overlay: str, version: str) -> None:
    checked = 0
    for resource in rendered(overlay):
        if resource["kind"] == "TestRun":
            continue
        try:
            kubernetes_validate.validate(resource, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            path = ".".join(str(p) for p in exc.path)
            pytest.fail(
                f"{overlay}: {resource['kind']}/{resource['metadata']['name']} at {path}: {exc.message}"
            )
        checked += 1
    assert checked >= 8


def test_the_validator_rejects_an_unknown_field() -> None:
    """Negative control: strict validation catches a typo, so the test above is not vacuous."""
    (deployment,) = find(rendered("java"), "Deployment", "java")
    broken = copy.deepcopy(deployment)
    broken["spec"]["template"]["spec"]["containers"][0]["resource"] = {"limits": {"cpu": "1"}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSIONS[-1], strict=True)


def _definitions_registry() -> referencing.Registry[Any]:
    import importlib.resources

    version = K8S_VERSIONS[-1]
    root = (
        importlib.resources.files("kubernetes_validate")
        / "kubernetes-json-schema"
        / f"v{version}-local-strict"
    )
    definitions = json.loads((root / "_definitions.json").read_text(encoding="utf-8"))
    resource = referencing.Resource.from_contents(definitions)
    return resource @ referencing.Registry()


def _def(name: str) -> dict[str, str]:
    return {"$ref": f"/api/_definitions.json#/$defs/io.k8s.api.core.v1.{name}"}


# From config/crd/bases/k6.io_testruns.yaml of k6-operator v1.6.0: every property the CRD knows (unknown
# ones would be pruned silently by the API server, so a typo must fail here), with the types of the
# ones bidbench sets. The core types embedded by the CRD are checked with the Kubernetes definitions.
_TESTRUN_SPEC_FIELDS = [
    "args", "arguments", "cleanup", "initializer", "parallelism", "paused", "ports", "quiet", "runner",
    "script", "scuttle", "separate", "starter", "testRunId", "token",
]  # fmt: skip
_POD_FIELDS = [
    "affinity", "automountServiceAccountToken", "containerSecurityContext", "disabled", "env", "envFrom",
    "image", "imagePullPolicy", "imagePullSecrets", "initContainers", "livenessProbe", "metadata",
    "nodeSelector", "priorityClassName", "readinessProbe", "resources", "schedulerName", "securityContext",
    "serviceAccountName", "tolerations", "topologySpreadConstraints", "volumeMounts", "volumes",
]  # fmt: skip
_POD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        **{name: {} for name in _POD_FIELDS},
        "image": {"type": "string", "pattern": r"^[^:@]+(:[^:@]+)?(@sha256:[0-9a-f]{64})?$"},
        "metadata": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
            },
        },
        "env": {"type": "array", "items": _def("EnvVar")},
        "envFrom": {"type": "array", "items": _def("EnvFromSource")},
        "resources": _def("ResourceRequirements"),
        "affinity": _def("Affinity"),
        "securityContext": _def("PodSecurityContext"),
        "containerSecurityContext": _def("SecurityContext"),
        "initContainers": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "image"],
                "properties": {
                    "name": {"type": "string"},
                    "image": {"type": "string"},
                    "command": {"type": "array", "items": {"type": "string"}},
                    "args": {"type": "array", "items": {"type": "string"}},
                    "workingDir": {"type": "string"},
                    "env": {"type": "array", "items": _def("EnvVar")},
                    "envFrom": {"type": "array", "items": _def("EnvFromSource")},
                    "resources": _def("ResourceRequirements"),
                    "volumeMounts": {"type": "array", "items": _def("VolumeMount")},
                    "restartPolicy": {"type": "string"},
                },
            },
        },
    },
}
TESTRUN_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://kubernetes.io/api/k6.io-v1alpha1-testrun.json",
    "type": "object",
    "additionalProperties": False,
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "k6.io/v1alpha1"},
        "kind": {"const": "TestRun"},
        "metadata": {"$ref": "/api/_definitions.json#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
        "spec": {
            "type": "object",
            "additionalProperties": False,
            "required": ["parallelism", "script"],
            "properties": {
                **{name: {} for name in _TESTRUN_SPEC_FIELDS},
                "parallelism": {"type": "integer", "minimum": 1, "maximum": 2147483647},
                "separate": {"type": "boolean"},
                "arguments": {"type": "string"},
                "quiet": {"type": "string", "enum": ["true", "false"]},
                "paused": {"type": "string", "enum": ["true", "false"]},
                "cleanup": {"enum": ["post"]},
                "script": {
                    "type": "object",
                    "additionalProperties": False,
                    "minProperties": 1,
                    "maxProperties": 1,
                    "properties": {
                        "configMap": {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["name", "file"],
                            "properties": {"name": {"type": "string"}, "file": {"type": "string"}},
                        },
                        "volumeClaim": {"type": "object"},
                        "localFile": {"type": "string"},
                    },
                },
                "runner": _POD_SCHEMA,
                "initializer": _POD_SCHEMA,
                "starter": _POD_SCHEMA,
            },
        },
    },
}


def _testrun_validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(TESTRUN_SCHEMA, registry=_definitions_registry())


@pytest.mark.parametrize("overlay", ALL_OVERLAYS)
def test_the_testrun_matches_the_k6_operator_crd(overlay: str) -> None:
    (testrun,) = find(rendered(overlay), "TestRun")
    errors = sorted(_testrun_validator().iter_errors(testrun), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{'.'.join(map(str, e.path))}: {e.message}" for e in errors)


def test_the_testrun_schema_rejects_a_typo() -> None:
    (testrun,) = find(rendered("java"), "TestRun")
    for mutate in (
        lambda t: t["spec"].__setitem__("paralellism", 2),
        lambda t: t["spec"]["runner"].__setitem__("envfrom", []),
        lambda t: t["spec"]["script"]["configMap"].pop("file"),
        lambda t: t["spec"]["runner"]["env"].append({"name": "X", "valu": "1"}),
        lambda t: t["spec"].__setitem__("parallelism", "2"),
    ):
        broken = copy.deepcopy(testrun)
        mutate(broken)
        assert list(_testrun_validator().iter_errors(broken)), "a broken TestRun passed"


# ---- the rendering itself ------------------------------------------------------------------------


@pytest.mark.skipif(kubectl() is None, reason="kubectl is not installed")
@pytest.mark.parametrize("overlay", ALL_OVERLAYS)
def test_the_python_renderer_agrees_with_kubectl_kustomize(overlay: str) -> None:
    done = subprocess.run(
        [str(kubectl()), "kustomize", "--load-restrictor", "LoadRestrictionsNone", str(OVERLAYS / overlay)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    theirs = {_key(r): r for r in yaml.safe_load_all(done.stdout) if r}
    ours = {_key(r): r for r in rendered(overlay)}
    assert sorted(ours) == sorted(theirs)
    for key, resource in ours.items():
        assert resource == theirs[key], f"{overlay}: {key} differs from kubectl kustomize"


@pytest.mark.parametrize("overlay", ALL_OVERLAYS)
def test_everything_lives_in_the_bidbench_namespace(overlay: str) -> None:
    resources = rendered(overlay)
    assert find(resources, "Namespace", NAMESPACE)
    for resource in resources:
        if resource["kind"] != "Namespace":
            assert resource["metadata"].get("namespace") == NAMESPACE, _key(resource)


def _configmaps(resources: list[Resource]) -> dict[str, dict[str, str]]:
    return {r["metadata"]["name"]: r.get("data", {}) for r in find(resources, "ConfigMap")}


def _secrets(resources: list[Resource]) -> dict[str, dict[str, str]]:
    return {
        r["metadata"]["name"]: {**r.get("data", {}), **r.get("stringData", {})}
        for r in find(resources, "Secret")
    }


def _containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [*spec.get("initContainers", []), *spec.get("containers", [])]


@pytest.mark.parametrize("overlay", ALL_OVERLAYS)
def test_every_reference_resolves(overlay: str) -> None:
    resources = rendered(overlay)
    configmaps, secrets = _configmaps(resources), _secrets(resources)
    specs = [pod_spec(r) for kind in WORKLOADS for r in find(resources, kind)]
    (testrun,) = find(resources, "TestRun")
    runner = testrun["spec"]["runner"]
    for spec in [*specs, {"containers": [runner], "initContainers": runner.get("initContainers", [])}]:
        for volume in spec.get("volumes", []):
            if "configMap" in volume:
                assert volume["configMap"]["name"] in configmaps, volume
        for container in _containers(spec):
            for source in container.get("envFrom", []):
                assert source["configMapRef"]["name"] in configmaps, source
            for env in container.get("env", []):
                ref = env.get("valueFrom", {})
                if "secretKeyRef" in ref:
                    assert ref["secretKeyRef"]["key"] in secrets[ref["secretKeyRef"]["name"]], env
                if "configMapKeyRef" in ref:
                    assert ref["configMapKeyRef"]["key"] in configmaps[ref["configMapKeyRef"]["name"]], env
    script = testrun["spec"]["script"]["configMap"]
    assert script["file"] in configmaps[script["name"]], "the TestRun's script is not in its ConfigMap"
    for statefulset in find(resources, "StatefulSet"):
        assert find(resources, "Service", statefulset["spec"]["serviceName"])


@pytest.mark.parametrize("overlay", ALL_OVERLAYS)
def test_services_select_their_pods_and_ports(overlay: str) -> None:
    resources = rendered(overlay)
    for service in find(resources, "Service"):
        selector = service["spec"]["selector"]
        pods = [
            r for kind in ("Deployment", "StatefulSet") for r in find(resources, kind)
            if selector.items() <= r["spec"]["template"]["metadata"]["labels"].items()
        ]  # fmt: skip
        assert len(pods) == 1, f"Service {service['metadata']['name']} selects {len(pods)} workloads"
        ports = {p["name"] for c in pod_spec(pods[0])["containers"] for p in c.get("ports", [])}
        for port in service["spec"]["ports"]:
            assert port["targetPort"] in ports
        assert (
            pods[0]["spec"]["selector"]["matchLabels"].items()
            <= pods[0]["spec"]["template"]["metadata"]["labels"].items()
        )


# ---- what the manifests must say -------------------------------------------------------------------


def _requests_equal_limits(container: dict[str, Any], where: str) -> None:
    resources = container.get("resources", {})
    requests, limits = resources.get("requests", {}), resources.get("limits", {})
    assert {"cpu", "memory"} <= limits.keys(), f"{where}: no CPU/memory limit"
    assert cpu_cores(requests.get("cpu", "0")) == cpu_cores(limits["cpu"]), f"{where}: CPU request != limit"
    assert memory_bytes(requests.get("memory", "0")) == memory_bytes(limits["memory"]), f"{where}: memory"


@pytest.mark.parametrize("impl", IMPLS)
def test_app_deployment_has_guaranteed_cpu_and_a_readiness_probe(impl: str) -> None:
    resources = rendered(impl)
    (deployment,) = find(resources, "Deployment", impl)
    spec = pod_spec(deployment)
    for container in _containers(spec):
        _requests_equal_limits(container, f"{impl}/{container['name']}")
    (app,) = spec["containers"]
    assert app["image"].startswith(f"bidbench/{impl}:")
    probe = app["readinessProbe"]["httpGet"]
    assert probe["path"] == "/ready"
    assert probe["port"] in {p["name"] for p in app["ports"]} | {p["containerPort"] for p in app["ports"]}
    assert app["livenessProbe"]["httpGet"]["path"] == "/health", "liveness must not depend on the database"
    env = {e["name"]: e.get("value") for e in app["env"]}
    assert env["HOST"] == "0.0.0.0" and env["PORT"] == "8080"
    assert urlsplit(env["DATABASE_URL"].replace("$(", "").replace(")", "")).hostname == "postgres"
    assert spec["securityContext"]["runAsNonRoot"] is True


@pytest.mark.parametrize("overlay", ALL_OVERLAYS)
def test_the_k6_runners_have_cpu_of_their_own(overlay: str) -> None:
    (testrun,) = find(rendered(overlay), "TestRun")
    runner = testrun["spec"]["runner"]
    _requests_equal_limits(runner, "k6 runner")
    assert runner["securityContext"]["runAsNonRoot"] is True
    anti = runner["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    values = anti[0]["podAffinityTerm"]["labelSelector"]["matchExpressions"][0]["values"]
    assert {"app", "database"} <= set(values)


def test_postgres_uses_the_one_settings_file_with_the_image_overrides() -> None:
    resources = rendered("java")
    (statefulset,) = find(resources, "StatefulSet", "postgres")
    spec = pod_spec(statefulset)
    (container,) = spec["containers"]
    _requests_equal_limits(container, "postgres")
    config_volume = next(v for v in spec["volumes"] if v["name"] == "config")
    configmap = _configmaps(resources)[config_volume["configMap"]["name"]]
    assert configmap == {
        "postgresql.conf": (ROOT / "infra/postgres/postgresql.conf").read_text(encoding="utf-8")
    }
    mount = next(m for m in container["volumeMounts"] if m["name"] == "config")
    args = container["args"]
    assert args[:3] == ["postgres", "-c", f"config_file={mount['mountPath']}/postgresql.conf"]
    _, stages = parse_dockerfile(ROOT / "infra/docker/postgres.Dockerfile")
    (cmd,) = stages[-1].all("CMD")
    image_args = json.loads(cmd.args)
    assert args[3:] == image_args[3:], "the same overrides as the Compose image, and only those"
    assert any(m["mountPath"] == "/dev/shm" for m in container["volumeMounts"])


def test_seed_job_runs_the_harness_generator_with_the_shared_scale_and_seed() -> None:
    resources = rendered("java")
    (job,) = find(resources, "Job", "bidbench-seed")
    (container,) = pod_spec(job)["containers"]
    assert container["image"].startswith("bidbench/seed:")
    assert container["args"] == ["db", "seed", "--scale", "$(BB_SCALE)", "--seed", "$(BB_SEED)"]
    assert {"configMapRef": {"name": "bidbench-data"}} in container["envFrom"]
    data = _configmaps(resources)["bidbench-data"]
    assert set(data) == {"BB_SCALE", "BB_SEED"}
    env_names = [e["name"] for e in container["env"]]
    assert "BIDBENCH_DATABASE_URL" in env_names
    (testrun,) = find(resources, "TestRun")
    assert {"configMapRef": {"name": "bidbench-data"}} in testrun["spec"]["runner"]["envFrom"], (
        "k6 must use the same scale and seed as the seed job"
    )


def test_the_k6_scripts_configmap_carries_every_script_of_loadgen_k6() -> None:
    scripts = _configmaps(rendered("java"))["bidbench-k6-scripts"]
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in sorted((ROOT / "loadgen-k6").glob("*.js"))}
    assert scripts == on_disk, "infra/k8s/base/kustomization.yaml must list every loadgen-k6/*.js"
    nested = [p for p in (ROOT / "loadgen-k6").rglob("*.js") if p.parent != ROOT / "loadgen-k6"]
    assert not nested, f"a ConfigMap is flat: nested k6 modules need another mount ({nested})"


@pytest.mark.parametrize("overlay", ALL_OVERLAYS)
def test_the_testrun_targets_the_overlays_service(overlay: str) -> None:
    resources = rendered(overlay)
    (testrun,) = find(resources, "TestRun")
    env = {e["name"]: e.get("value") for e in testrun["spec"]["runner"]["env"]}
    assert "BB_SUMMARY" not in env, "each runner prints its summary to its log (merge_summaries.py reads it)"
    for target in env["BB_TARGETS"].split(","):
        url = urlsplit(target)
        (service,) = find(resources, "Service", url.hostname)
        assert url.port in {p["port"] for p in service["spec"]["ports"]}
    wait = testrun["spec"]["runner"]["initContainers"][0]["command"][-1]
    assert f"/dev/tcp/{urlsplit(env['BB_TARGETS']).hostname}/{urlsplit(env['BB_TARGETS']).port}" in wait
    assert "GET /ready" in wait


def test_the_scaled_overlay_scales_instances_runners_and_rate_together() -> None:
    resources = rendered("java-x4")
    (deployment,) = find(resources, "Deployment", "java")
    (testrun,) = find(resources, "TestRun")
    assert deployment["spec"]["replicas"] == 4
    assert testrun["spec"]["parallelism"] == 4
    env = {e["name"]: e.get("value") for e in testrun["spec"]["runner"]["env"]}
    base_env = {
        e["name"]: e.get("value") for e in find(rendered("java"), "TestRun")[0]["spec"]["runner"]["env"]
    }
    assert int(env["BB_RATE"]) == 4 * int(base_env["BB_RATE"]), "the JSON patch must hit BB_RATE"
    assert {k: v for k, v in env.items() if k != "BB_RATE"} == {
        k: v for k, v in base_env.items() if k != "BB_RATE"
    }


def test_every_overlay_is_tested() -> None:
    on_disk = {p.name for p in OVERLAYS.iterdir() if (p / "kustomization.yaml").is_file()}
    assert on_disk == set(ALL_OVERLAYS)


def test_readme_documents_the_render_command() -> None:
    readme = (ROOT / "infra" / "README.md").read_text(encoding="utf-8")
    assert "--load-restrictor LoadRestrictionsNone" in readme
    assert "merge_summaries.py" in readme
    assert "CloudNativePG" in readme


def test_images_of_the_manifests_are_pinned() -> None:
    for overlay in ALL_OVERLAYS:
        for resource in rendered(overlay):
            text = json.dumps(resource)
            for image in [v for k, v in _walk(resource) if k == "image"]:
                assert ":" in image.rsplit("/", 1)[-1] and not image.endswith(":latest"), (
                    f"{overlay}: {image}"
                )
            assert ":latest" not in text


def _walk(node: Any) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            found.append((key, value))
            found.extend(_walk(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_walk(item))
    return found
