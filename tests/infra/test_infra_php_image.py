"""The PHP image's entrypoint (infra/docker/php/instance.py), run here without Docker: it must render the
instance with the harness's PHP driver from the container's environment, produce configuration that
nginx and PHP-FPM accept, and a supervisor script that bash accepts. Needs PHP-FPM and nginx installed
(`./bidbench setup` installs them); skipped otherwise."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from infra_helpers import DOCKER, ROOT, third_party_modules_loaded_by

from harness.tools import toolchain


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bidbench_php_instance", DOCKER / "php" / "instance.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bidbench_php_instance"] = module
    spec.loader.exec_module(module)
    return module


needs_php = pytest.mark.skipif(
    toolchain.php_fpm_binary() is None or toolchain.nginx_binary() is None or shutil.which("php8.2") is None,
    reason="PHP-FPM 8.2 and nginx are not installed (./bidbench setup)",
)


@pytest.fixture
def run_dir() -> Iterator[Path]:
    # Searchable by everyone: as root, the driver runs nginx and FPM workers as an unprivileged user.
    directory = Path(tempfile.mkdtemp(prefix="bidbench-php-image-", dir="/tmp"))
    directory.chmod(0o755)
    yield directory / "run"
    shutil.rmtree(directory, ignore_errors=True)


def _env(run_dir: Path, **knobs: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": "/tmp",
        "BIDBENCH_ROOT": str(ROOT),
        "BIDBENCH_RUN_DIR": str(run_dir),
        "HOST": "0.0.0.0",
        "PORT": "8080",
        "DATABASE_URL": "postgresql://bidbench:secret@db:5432/bidbench",
        "DB_POOL_SIZE": "10",
        "LOG_LEVEL": "info",
        "SERVER_TIMING": "1",
        "BIDBENCH_PHP_LOG": "/should/not/be/used",
        **knobs,
    }


@needs_php
def test_rendered_instance_is_accepted_by_nginx_php_fpm_and_bash(run_dir: Path) -> None:
    instance = _load()
    script = instance.render(_env(run_dir))
    assert script == run_dir / "supervise.sh"
    text = script.read_text()
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True, check=False).returncode == 0
    assert text.count("signals+=(QUIT)") == 2, "php-fpm and nginx both stop gracefully on SIGQUIT"
    assert "trap stop_all TERM INT" in text
    assert "BIDBENCH_PHP_LOG" not in text, "in a container the app logs to standard error"
    assert "secret" in text and "DATABASE_URL=postgresql://bidbench:secret@db:5432/bidbench" in text

    nginx = toolchain.nginx_binary()
    assert nginx is not None
    done = subprocess.run(
        [nginx, "-t", "-p", f"{run_dir}/", "-c", str(run_dir / "nginx.conf"), "-e", "stderr"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    fpm = toolchain.php_fpm_binary()
    assert fpm is not None
    done = subprocess.run(
        [fpm, "-t", "--fpm-config", str(run_dir / "php-fpm.conf"), "-c", str(run_dir / "php.ini")],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PHP_INI_SCAN_DIR": ""},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "listen 0.0.0.0:8080" in (run_dir / "nginx.conf").read_text()


@needs_php
def test_knobs_from_the_container_environment_reach_the_configuration(run_dir: Path) -> None:
    instance = _load()
    instance.render(_env(run_dir, PHP_FPM_CHILDREN="7", PHP_JIT="1", SERVER_TIMING="0", PORT="9000"))
    fpm_conf = (run_dir / "php-fpm.conf").read_text()
    php_ini = (run_dir / "php.ini").read_text()
    nginx_conf = (run_dir / "nginx.conf").read_text()
    assert "pm.max_children = 7" in fpm_conf
    assert "opcache.jit = tracing" in php_ini
    assert "listen 0.0.0.0:9000" in nginx_conf
    assert "add_header Server-Timing" not in nginx_conf


@needs_php
def test_without_php_fpm_children_the_pool_size_sets_the_children(run_dir: Path) -> None:
    """The image leaves PHP_FPM_CHILDREN unset, so the driver's rule applies: children = DB_POOL_SIZE."""
    instance = _load()
    instance.render(_env(run_dir, DB_POOL_SIZE="6"))
    assert "pm.max_children = 6" in (run_dir / "php-fpm.conf").read_text()


def test_the_entrypoint_needs_only_python_and_rich() -> None:
    """The image installs Debian's python3 and python3-rich, nothing else: the entrypoint (with the
    harness modules it loads) must not need more."""
    entry = DOCKER / "php" / "instance.py"
    loaded = third_party_modules_loaded_by(entry, "bidbench_php_entry")
    assert loaded <= {"rich", "markdown_it", "mdurl", "pygments"}, f"the PHP image lacks {sorted(loaded)}"
    dockerfile = (DOCKER / "php.Dockerfile").read_text()
    assert "python3-rich" in dockerfile
