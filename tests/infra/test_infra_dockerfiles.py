"""The Dockerfiles of infra/docker/, checked without a Docker engine: pinned bases, a non-root user, a
health check on the readiness endpoint, multi-stage app builds, and a build context that holds every
file the Dockerfile copies."""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import inspect
import re

import pytest
from infra_helpers import (
    ALL_DOCKERFILES,
    APP_IMAGES,
    DOCKER,
    ROOT,
    copy_sources,
    dockerignore_allows,
    env_values,
    parse_dockerfile,
    third_party_modules_loaded_by,
)

# A tag that names an exact release: three version numbers (17.0.15_6 and 3.9.9-eclipse-temurin-17 count).
# PostgreSQL (15.10) and Debian (12.11 point releases) number their releases with two.
EXACT_VERSION = re.compile(r"\d+\.\d+\.\d+")
TWO_PART_RELEASES = {"postgres": re.compile(r"\d+\.\d+(-\w+)?"), "debian": re.compile(r"\d+\.\d+(-slim)?")}
ROOT_USERS = {"root", "0", "0:0", "root:root"}


@pytest.mark.parametrize("dockerfile", ALL_DOCKERFILES)
def test_every_base_image_is_pinned_to_an_exact_version(dockerfile: str) -> None:
    _, stages = parse_dockerfile(DOCKER / dockerfile)
    assert stages, f"{dockerfile}: no FROM"
    names = {stage.name for stage in stages if stage.name}
    for stage in stages:
        if stage.base in names:
            continue  # a previous stage of the same file
        image, _, digest = stage.base.partition("@")
        repository, _, tag = image.rpartition(":") if ":" in image.split("/")[-1] else (image, "", "")
        assert tag, f"{dockerfile}: FROM {stage.base} has no tag"
        assert tag != "latest" and "latest" not in tag, f"{dockerfile}: FROM {stage.base} floats"
        two_part = TWO_PART_RELEASES.get(repository)
        exact = EXACT_VERSION.search(tag) or (two_part is not None and two_part.fullmatch(tag))
        assert exact, f"{dockerfile}: FROM {stage.base}: the tag is not an exact version"
        assert "$" not in stage.base, f"{dockerfile}: FROM {stage.base}: a build argument can unpin it"
        assert not digest or re.fullmatch(r"sha256:[0-9a-f]{64}", digest), f"{dockerfile}: bad digest"
        assert repository


@pytest.mark.parametrize("dockerfile", ALL_DOCKERFILES)
def test_the_final_stage_runs_as_a_non_root_user(dockerfile: str) -> None:
    _, stages = parse_dockerfile(DOCKER / dockerfile)
    users = stages[-1].all("USER")
    assert users, f"{dockerfile}: the final stage sets no USER, so it runs as root"
    assert users[-1].args.strip() not in ROOT_USERS, f"{dockerfile}: USER {users[-1].args}"


@pytest.mark.parametrize("dockerfile", ALL_DOCKERFILES)
def test_the_build_context_holds_every_copied_file(dockerfile: str) -> None:
    """Each Dockerfile has its own <name>.dockerignore (context = repository root): what it COPYs must be
    kept by it, and must exist in the repository (apps still being written are skipped)."""
    ignore = DOCKER / f"{dockerfile}.dockerignore"
    assert ignore.is_file(), (
        f"{dockerfile}: no {ignore.name}: the whole repository (.bidbench/ too) would be sent"
    )
    _, stages = parse_dockerfile(DOCKER / dockerfile)
    missing_app = [d for d in ("java-app", "node-app", "php-app") if not (ROOT / d).is_dir()]
    for stage in stages:
        for source in copy_sources(stage):
            assert dockerignore_allows(ignore, source), (
                f"{dockerfile}: COPY {source} is excluded by {ignore.name}"
            )
            if any(source.startswith(d) for d in missing_app):
                continue
            assert (ROOT / source).exists(), f"{dockerfile}: COPY {source}: no such path in the repository"
    assert not dockerignore_allows(ignore, ".bidbench/venv/bin/python"), (
        "local state must stay out of the context"
    )
    assert not dockerignore_allows(ignore, ".git/HEAD")


@pytest.mark.parametrize("impl", sorted(APP_IMAGES))
def test_app_images_are_multi_stage_and_check_readiness(impl: str) -> None:
    _, stages = parse_dockerfile(DOCKER / APP_IMAGES[impl])
    assert len(stages) >= 2, f"{impl}: build and runtime must be separate stages"
    final = stages[-1]
    checks = final.all("HEALTHCHECK")
    assert len(checks) == 1, f"{impl}: the runtime stage needs exactly one HEALTHCHECK"
    assert "/ready" in checks[0].args, f"{impl}: the health check must ask GET /ready"
    interval = re.search(r"--interval=(\d+)s", checks[0].args)
    # The check runs inside the instance's own CPU limit: keep it rare (startup uses --start-interval).
    assert interval and int(interval.group(1)) >= 10, f"{impl}: health check interval below 10 s"
    env = env_values(final)
    assert env.get("HOST") == "0.0.0.0", f"{impl}: a container must bind all interfaces"
    assert env.get("PORT") == "8080"
    assert any(i.args.strip() == "8080" for i in final.all("EXPOSE"))
    assert final.all("CMD") or final.all("ENTRYPOINT")


def test_postgres_image_uses_the_one_settings_file_with_container_overrides_only() -> None:
    _, stages = parse_dockerfile(DOCKER / "postgres.Dockerfile")
    final = stages[-1]
    assert final.base.startswith("postgres:15."), "PostgreSQL 15, as the embedded database"
    assert any(
        i.args.split() == ["infra/postgres/postgresql.conf", "/etc/postgresql/postgresql.conf"]
        for i in final.all("COPY")
    ), "the image must carry infra/postgres/postgresql.conf as is"
    (cmd,) = final.all("CMD")
    argv = ast.literal_eval(cmd.args)
    assert argv[0] == "postgres"
    overrides = [argv[i + 1] for i in range(len(argv) - 1) if argv[i] == "-c"]
    assert overrides[0] == "config_file=/etc/postgresql/postgresql.conf"
    assert "listen_addresses=*" in overrides
    names = sorted(o.split("=", 1)[0] for o in overrides[1:])
    assert names == ["listen_addresses", "unix_socket_directories"], (
        f"only container overrides allowed: {names}"
    )
    (check,) = final.all("HEALTHCHECK")
    assert "pg_isready" in check.args and "127.0.0.1" in check.args, "healthy only once it listens on TCP"
    assert not [i for i in final.all("RUN") if "postgresql.conf" in i.args], (
        "the settings file is never edited"
    )


def test_postgres_image_version_matches_the_kubernetes_statefulset() -> None:
    from infra_helpers import find, rendered

    _, stages = parse_dockerfile(DOCKER / "postgres.Dockerfile")
    (statefulset,) = find(rendered("java"), "StatefulSet", "postgres")
    (container,) = statefulset["spec"]["template"]["spec"]["containers"]
    assert container["image"] == stages[-1].base


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _with_dependencies(names: set[str]) -> set[str]:
    """The distributions pip installs for `names`: them and everything they require (markers ignored)."""
    seen: set[str] = set()
    todo = [_canonical(n) for n in names]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requirements = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for requirement in requirements:
            if "extra ==" not in requirement:
                todo.append(_canonical(re.split(r"[ ;<>=!~\[(]", requirement, maxsplit=1)[0]))
    return seen


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ValueError:  # in sys.modules without a spec: made at run time
        return False


def test_seed_image_installs_what_the_seed_entrypoint_loads() -> None:
    """The seed image installs a few packages (versions from requirements.lock as constraints), not the
    whole lock. Its entrypoint is loaded here in a fresh interpreter: every third-party module it pulls
    in (through the harness's seeding modules) must come from those packages or their dependencies."""
    _, stages = parse_dockerfile(DOCKER / "seed.Dockerfile")
    final = stages[-1]
    (install,) = [i for i in final.all("RUN") if "pip install" in i.args]
    assert "--constraint requirements.lock" in install.args, "versions must come from requirements.lock"
    packages = {w for w in install.args.split("pip install", 1)[1].split() if not w.startswith("-")}
    packages.discard("requirements.lock")
    lock = (ROOT / "requirements.lock").read_text(encoding="utf-8").lower()
    for package in packages:
        assert f"\n{package.lower()}==" in f"\n{lock}", f"{package} is not pinned in requirements.lock"

    entry = DOCKER / "seed" / "seed.py"
    loaded = third_party_modules_loaded_by(entry, "bidbench_seed_entry")
    distributions = importlib.metadata.packages_distributions()
    allowed = _with_dependencies(packages)
    for module in sorted(loaded):
        if module not in distributions and not _importable(module):
            continue  # a pseudo-module made at run time (cython_runtime), not something pip installs
        owners = {_canonical(d) for d in distributions.get(module, [module])}
        assert owners & allowed, (
            f"the seed entrypoint loads {module} ({owners}), which the image does not install"
        )

    assert [i.args for i in final.all("ENTRYPOINT")] == ['["python", "/usr/local/bin/bidbench-seed"]']
    assert any(
        i.args.split() == ["infra/docker/seed/seed.py", "/usr/local/bin/bidbench-seed"]
        for i in final.all("COPY")
    )
    (cmd,) = final.all("CMD")
    assert ast.literal_eval(cmd.args)[:2] == ["db", "seed"]
    assert dockerignore_allows(DOCKER / "seed.Dockerfile.dockerignore", "contract/schema.sql")


def test_seed_entrypoint_takes_the_clis_arguments() -> None:
    spec = importlib.util.spec_from_file_location("bidbench_seed_args", DOCKER / "seed" / "seed.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    args = module.parse(["db", "seed", "--scale", "3", "--seed", "7", "--no-indexes"])
    assert (args.scale, args.seed, args.no_indexes) == (3, 7, True)
    assert module.parse([]).scale == 1 and module.parse([]).seed == 42
    from harness.cli.main import db_seed

    defaults = inspect.signature(db_seed).parameters
    assert (defaults["scale"].default, defaults["seed"].default) == (1, 42), "the CLI's defaults changed"


def test_the_load_image_builds_the_driver_statically_and_runs_it() -> None:
    _, stages = parse_dockerfile(DOCKER / "loadgen.Dockerfile")
    assert len(stages) == 2, "a Go build stage and a small runtime stage"
    build, final = stages
    assert build.base.startswith("golang:") and build.name
    (go_build,) = [i for i in build.all("RUN") if "go build" in i.args]
    assert "CGO_ENABLED=0" in go_build.args, "a static binary: the runtime stage has no toolchain"
    assert go_build.args.rstrip().endswith("./cmd/bidbench-load")
    assert (ROOT / "loadgen" / "cmd" / "bidbench-load").is_dir()
    (copy,) = final.all("COPY")
    assert copy.args.split() == [f"--from={build.name}", "/out/bidbench-load", "/bidbench-load"]
    assert [i.args for i in final.all("ENTRYPOINT")] == ['["/bidbench-load"]']
    assert [i.args for i in final.all("CMD")] == ['["run"]']
    ignore = DOCKER / "loadgen.Dockerfile.dockerignore"
    for kept in ("loadgen/go.mod", "loadgen/go.sum", "loadgen/cmd/bidbench-load/main.go"):
        assert dockerignore_allows(ignore, kept), kept
    assert not dockerignore_allows(ignore, "loadgen/cmd/bidbench-load/main_test.go"), "tests stay out"
