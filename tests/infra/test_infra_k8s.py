"""The Kubernetes manifests of infra/k8s/, rendered by kustomize itself and validated by kubeconform (strict)
against the Kubernetes JSON schemas shipped by the kubernetes-validate package, offline (tests/infra/tools.py
builds both tools with Go). Then what the manifests must say: references resolve, Services select their
pods, Guaranteed CPU, and the load as an Indexed Job of bidbench-load shards."""

from __future__ import annotations

import http.server
import json
import os
import re
import stat
import subprocess
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import tools
from infra_helpers import (
    ALL_OVERLAYS,
    IMPLS,
    LOADGEN_IMAGE,
    OVERLAYS,
    ROOT,
    Resource,
    cpu_cores,
    find,
    memory_bytes,
    parse_dockerfile,
    pod_spec,
    rendered,
    rendered_yaml,
)

# The oldest and the newest Kubernetes minor the manifests are checked against (Indexed Jobs with
# pod hostnames are GA since 1.24; kubectl 1.27 or newer applies them, infra/README.md).
K8S_VERSIONS = ("1.28.0", "1.37.0")
NAMESPACE = "bidbench"
WORKLOADS = ("Deployment", "StatefulSet", "Job")


def _key(resource: Resource) -> tuple[str, str, str]:
    return (resource["kind"], resource["metadata"].get("namespace", ""), resource["metadata"]["name"])


# ---- schema validation: kubeconform --------------------------------------------------------------


def kubeconform(manifests: str, version: str) -> dict[str, Any]:
    """kubeconform -strict over a YAML stream; its JSON report (every resource, valid ones too)."""
    schemas = tools.standalone_schemas(K8S_VERSIONS)
    done = subprocess.run(
        [
            str(tools.kubeconform()),
            "-strict",
            "-summary",
            "-verbose",
            "-output", "json",
            "-kubernetes-version", version,
            "-schema-location", f"{schemas}/{tools.SCHEMA_TEMPLATE}",
            "-",
        ],
        input=manifests,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )  # fmt: skip
    assert done.stdout, f"kubeconform printed nothing (exit {done.returncode}):\n{done.stderr}"
    report: dict[str, Any] = json.loads(done.stdout)
    report["exit"] = done.returncode
    return report


@pytest.mark.parametrize("version", K8S_VERSIONS)
@pytest.mark.parametrize("overlay", ALL_OVERLAYS)
def test_every_object_validates_against_the_kubernetes_schema(overlay: str, version: str) -> None:
    report = kubeconform(rendered_yaml(overlay), version)
    problems = [
        f"{r['kind']}/{r['name']}: {r['status']} {r.get('msg', '')}"
        for r in report["resources"]
        if r["status"] != "statusValid"
    ]
    assert not problems, f"{overlay} on Kubernetes {version}:\n" + "\n".join(problems)
    # Every object was looked up and checked: none skipped for a missing schema.
    assert report["summary"] == {"valid": len(rendered(overlay)), "invalid": 0, "errors": 0, "skipped": 0}
    assert report["exit"] == 0


def test_the_validator_rejects_an_unknown_field_and_a_wrong_type() -> None:
    """Negative controls: strict validation catches a typo in a core and in a batch object, so the test
    above is not vacuous."""
    text = rendered_yaml("java")
    for good, bad in (
        ("subdomain: bidbench-load-java", "subdomian: bidbench-load-java"),
        ("completions: 2", 'completions: "2"'),
        ("readinessProbe:", "readynessProbe:"),
    ):
        assert good in text
        report = kubeconform(text.replace(good, bad, 1), K8S_VERSIONS[-1])
        assert report["summary"]["invalid"] == 1 and report["exit"] != 0, f"accepted {bad!r}"


def test_the_schemas_are_the_packages_own() -> None:
    """The standalone files kubeconform reads hold the kind's schema from kubernetes-validate unchanged,
    with the definitions it reaches: compare one kind with the package's file."""
    import importlib.resources

    version = K8S_VERSIONS[-1]
    ours = json.loads(
        (
            tools.standalone_schemas(K8S_VERSIONS) / f"v{version}-standalone-strict" / "job-batch-v1.json"
        ).read_text()
    )
    package = importlib.resources.files("kubernetes_validate") / "kubernetes-json-schema"
    theirs = json.loads((package / f"v{version}-local-strict" / "job-batch-v1.json").read_text())
    definitions = json.loads((package / f"v{version}-local-strict" / "_definitions.json").read_text())[
        "$defs"
    ]
    assert ours["properties"]["spec"]["$ref"] == "#/$defs/io.k8s.api.batch.v1.JobSpec"
    assert theirs["properties"]["spec"]["$ref"] == "/api/_definitions.json#/$defs/io.k8s.api.batch.v1.JobSpec"
    assert ours["additionalProperties"] is False
    spec = definitions["io.k8s.api.batch.v1.JobSpec"]
    assert json.dumps(ours["$defs"]["io.k8s.api.batch.v1.JobSpec"]) == json.dumps(spec).replace(
        "/api/_definitions.json#", "#"
    )


# ---- the rendering itself ------------------------------------------------------------------------


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


def _env(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def _load_job(resources: list[Resource]) -> Resource:
    (job,) = [j for j in find(resources, "Job") if j["metadata"]["name"].startswith("bidbench-load-")]
    return job


@pytest.mark.parametrize("overlay", ALL_OVERLAYS)
def test_every_reference_resolves(overlay: str) -> None:
    resources = rendered(overlay)
    configmaps, secrets = _configmaps(resources), _secrets(resources)
    for workload in [r for kind in WORKLOADS for r in find(resources, kind)]:
        spec = pod_spec(workload)
        claims = workload["spec"].get("volumeClaimTemplates", [])
        volumes = {v["name"] for v in [*spec.get("volumes", []), *(c["metadata"] for c in claims)]}
        for volume in spec.get("volumes", []):
            if "configMap" in volume:
                assert volume["configMap"]["name"] in configmaps, volume
        for container in _containers(spec):
            for mount in container.get("volumeMounts", []):
                assert mount["name"] in volumes, mount
            for source in container.get("envFrom", []):
                assert source["configMapRef"]["name"] in configmaps, source
            for env in container.get("env", []):
                ref = env.get("valueFrom", {})
                if "secretKeyRef" in ref:
                    assert ref["secretKeyRef"]["key"] in secrets[ref["secretKeyRef"]["name"]], env
                if "configMapKeyRef" in ref:
                    assert ref["configMapKeyRef"]["key"] in configmaps[ref["configMapKeyRef"]["name"]], env
    for statefulset in find(resources, "StatefulSet"):
        assert find(resources, "Service", statefulset["spec"]["serviceName"])


@pytest.mark.parametrize("overlay", ALL_OVERLAYS)
def test_services_select_their_pods_and_ports(overlay: str) -> None:
    resources = rendered(overlay)
    for service in find(resources, "Service"):
        selector = service["spec"]["selector"]
        name = service["metadata"]["name"]
        if "batch.kubernetes.io/job-name" in selector:
            # The load Job's headless Service: the Job controller labels its pods with the Job's name, and
            # the pods' DNS names (<job>-<index>.<subdomain>) need subdomain = this Service.
            (job,) = find(resources, "Job", selector["batch.kubernetes.io/job-name"])
            assert pod_spec(job)["subdomain"] == name
            assert service["spec"]["clusterIP"] == "None"
            assert service["spec"]["publishNotReadyAddresses"] is True, "the gate runs before readiness"
            continue
        pods = [
            r for kind in ("Deployment", "StatefulSet") for r in find(resources, kind)
            if selector.items() <= r["spec"]["template"]["metadata"]["labels"].items()
        ]  # fmt: skip
        assert len(pods) == 1, f"Service {name} selects {len(pods)} workloads"
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
    env = _env(app)
    assert env["HOST"] == "0.0.0.0" and env["PORT"] == "8080"
    assert urlsplit(env["DATABASE_URL"].replace("$(", "").replace(")", "")).hostname == "postgres"
    assert spec["securityContext"]["runAsNonRoot"] is True


@pytest.mark.parametrize("overlay", ALL_OVERLAYS)
def test_the_load_shards_have_cpu_of_their_own(overlay: str) -> None:
    spec = pod_spec(_load_job(rendered(overlay)))
    for container in _containers(spec):
        _requests_equal_limits(container, f"load/{container['name']}")
        assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert spec["securityContext"]["runAsNonRoot"] is True
    terms = spec["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    values = terms[0]["podAffinityTerm"]["labelSelector"]["matchExpressions"][0]["values"]
    assert {"app", "database"} <= set(values)
    (load,) = spec["containers"]
    assert load["image"] == LOADGEN_IMAGE
    assert load["args"] == ["run"]


@pytest.mark.parametrize("overlay", ALL_OVERLAYS)
def test_the_load_is_an_indexed_job_with_one_shard_per_pod(overlay: str) -> None:
    job = _load_job(rendered(overlay))
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed", "the shard index comes from JOB_COMPLETION_INDEX"
    assert spec["completions"] == spec["parallelism"], "every shard runs at the same time"
    assert spec["backoffLimit"] == 0, "a retried shard would measure another window"
    pod = pod_spec(job)
    assert pod["restartPolicy"] == "Never"
    (load,) = pod["containers"]
    (gate,) = pod["initContainers"]
    env = _env(load)
    assert env["BB_SHARDS"] == str(spec["completions"])
    assert _env(gate)["BB_SHARDS"] == env["BB_SHARDS"], "the gate waits for every shard"
    assert "BB_SHARD_INDEX" not in env, "Kubernetes sets JOB_COMPLETION_INDEX per pod"
    assert "BB_SUMMARY" not in env, "each shard prints its summary to its log (./bidbench collect reads it)"


@pytest.mark.parametrize("overlay", ALL_OVERLAYS)
def test_the_load_targets_the_overlays_service(overlay: str) -> None:
    resources = rendered(overlay)
    pod = pod_spec(_load_job(resources))
    (load,) = pod["containers"]
    (gate,) = pod["initContainers"]
    env = _env(load)
    for target in env["BB_TARGETS"].split(","):
        url = urlsplit(target)
        (service,) = find(resources, "Service", url.hostname)
        assert url.port in {p["port"] for p in service["spec"]["ports"]}
    assert _env(gate)["BB_TARGETS"] == env["BB_TARGETS"], "the gate waits for the target the shards load"
    job_name = next(e for e in gate["env"] if e["name"] == "JOB_NAME")
    assert job_name["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.labels['batch.kubernetes.io/job-name']"
    assert gate["command"] == ["bash", "/gate/load-gate.sh"]
    (mount,) = gate["volumeMounts"]
    assert mount["mountPath"] == "/gate"
    (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    gate_script = _configmaps(resources)[volume["configMap"]["name"]]["load-gate.sh"]
    assert gate_script == (ROOT / "infra/k8s/base/load-gate.sh").read_text(encoding="utf-8")


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
    (load,) = pod_spec(_load_job(resources))["containers"]
    assert {"configMapRef": {"name": "bidbench-data"}} in load["envFrom"], (
        "the load must use the same scale and seed as the seed job"
    )


def test_the_scaled_overlay_scales_instances_shards_and_rate_together() -> None:
    resources = rendered("java-x4")
    (deployment,) = find(resources, "Deployment", "java")
    job = _load_job(resources)
    assert deployment["spec"]["replicas"] == 4
    assert job["spec"]["completions"] == job["spec"]["parallelism"] == 4
    (load,) = pod_spec(job)["containers"]
    env = _env(load)
    (base_load,) = pod_spec(_load_job(rendered("java")))["containers"]
    base_env = _env(base_load)
    assert env["BB_SHARDS"] == "4"
    assert int(env["BB_RATE"]) == 4 * int(base_env["BB_RATE"]), "BB_RATE is the total over all shards"
    changed = {"BB_RATE", "BB_SHARDS"}
    assert {k: v for k, v in env.items() if k not in changed} == {
        k: v for k, v in base_env.items() if k not in changed
    }


def test_every_overlay_is_tested() -> None:
    on_disk = {p.name for p in OVERLAYS.iterdir() if (p / "kustomization.yaml").is_file()}
    assert on_disk == set(ALL_OVERLAYS)


def test_readme_documents_the_render_run_and_collect_commands() -> None:
    readme = (ROOT / "infra" / "README.md").read_text(encoding="utf-8")
    assert "--load-restrictor LoadRestrictionsNone" in readme
    assert "-l job-name=bidbench-load-java" in readme
    assert "./bidbench collect" in readme
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


# ---- the start gate, run for real ----------------------------------------------------------------


class _Ready(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the http.server interface
        self.send_response(200 if self.path == "/ready" else 404)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base signature
        pass


def test_the_start_gate_waits_for_every_shard_then_starts_on_a_common_second(tmp_path: Path) -> None:
    """infra/k8s/base/load-gate.sh with bash, against a loopback /ready and a getent that resolves a
    shard's name only once its marker file exists (standing in for the Job's headless Service)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Ready)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    shim = tmp_path / "bin"
    shim.mkdir()
    getent = shim / "getent"
    getent.write_text(f'#!/bin/sh\n[ -e "{tmp_path}/$2" ] && echo "127.0.0.1 $2"\n', encoding="utf-8")
    getent.chmod(getent.stat().st_mode | stat.S_IXUSR)
    env = {
        "PATH": f"{shim}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "BB_TARGETS": f"http://127.0.0.1:{server.server_port},http://ignored:1",
        "BB_SHARDS": "2",
        "JOB_NAME": "bidbench-load-java",
    }
    (tmp_path / "bidbench-load-java-0.bidbench-load-java").touch()
    try:
        gate = subprocess.Popen(
            ["bash", str(ROOT / "infra/k8s/base/load-gate.sh")],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        time.sleep(3)
        assert gate.poll() is None, "the gate went on while shard 1 had no pod"
        (tmp_path / "bidbench-load-java-1.bidbench-load-java").touch()
        output, _ = gate.communicate(timeout=30)
        ended = time.time()
    finally:
        server.shutdown()
    assert gate.returncode == 0, output
    assert "waiting for shard 1 of 2" in output
    started = re.search(r"starting at (\d\d):(\d\d):(\d\d)Z", output)
    assert started and int(started.group(3)) % 10 == 0, output
    assert 0 <= ended % 10 < 2, f"the gate returned {ended % 10:.1f} s after a 10 s boundary"


def test_the_rendered_gate_configmap_is_the_one_script() -> None:
    gates = [
        c
        for c in find(rendered("java"), "ConfigMap")
        if c["metadata"]["name"].startswith("bidbench-load-gate-")
    ]
    assert len(gates) == 1, "one hashed ConfigMap: a change of the script changes its name"
    assert gates[0]["data"] == {
        "load-gate.sh": (ROOT / "infra/k8s/base/load-gate.sh").read_text(encoding="utf-8")
    }
