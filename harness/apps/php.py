"""The PHP driver: one instance is an nginx + PHP-FPM pair (docs/design.md §4), both foreground processes.

Nothing to compile: ensure_built() checks PHP, PHP-FPM (pdo_pgsql, OPcache, mbstring) and nginx and lints
php-app/ once per change; launches() renders php-app/conf/'s templates into the run directory.
PHP has no in-process pool: every FPM child keeps one persistent connection, so when only DB_POOL_SIZE is
given, PHP_FPM_CHILDREN follows it and "pool size N" means N connections in every language.
"""

from __future__ import annotations

import functools
import grp
import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from harness import paths
from harness.apps import base
from harness.apps import knobs as knob_defaults
from harness.apps.base import AppAdapter, AppDriver, InstanceSpec, ProcessLaunch, TestSuite
from harness.console import UserError
from harness.tools import toolchain

APP_DIR = paths.app_dir("php")
CONF_DIR = APP_DIR / "conf"
LINT_STAMP = paths.CACHE / "php-app.lint.sha256"
# The app through nginx: the PHP suite's second runner in `./bidbench test`.
INTEGRATION_TEST_PATH = "tests/apps/test_php_instance.py"
INTEGRATION_TEST = paths.ROOT / INTEGRATION_TEST_PATH

APT_HINT = (
    "sudo apt-get install php8.2-cli php8.2-fpm php8.2-pgsql php8.2-opcache php8.2-mbstring nginx-light"
)

# The contract's body limit (contract/README.md, rule 1), enforced by nginx and again by the app.
BODY_LIMIT_BYTES = 65536

# Knobs only this driver reads, on top of harness.apps.knobs, with their defaults.
DRIVER_KNOBS: dict[str, str] = {"NGINX_WORKER_PROCESSES": "1", **base.UNFAIR_KNOBS}

# Fixed instance settings, recorded in the manifest with the knobs (docs/design.md §3.3: nothing tuned silently).
NGINX_KEEPALIVE_TIMEOUT = "65s"
NGINX_KEEPALIVE_REQUESTS = "1000000"
# Why this many: see conf/nginx.conf.tmpl (the load driver's 5000 connections plus FPM's backlog of 4096).
NGINX_WORKER_CONNECTIONS = "10240"
FPM_MAX_REQUESTS = "0"
JIT_MODE = "tracing"
JIT_BUFFER_SIZE = "64M"

# The unprivileged account of nginx workers and FPM children when the harness runs as root.
WORKER_USER = "nobody"

TEMPLATES = ("nginx.conf.tmpl", "fastcgi.conf.tmpl", "php-fpm.conf.tmpl", "php.ini.tmpl")


def _installed(found: str | None, what: str) -> str:
    return base.on_path(found, f"{what} is not installed; run ./bidbench setup (or: {APT_HINT})")


def php_binary() -> str:
    return _installed(shutil.which("php8.2") or shutil.which("php"), "PHP 8.2 CLI")


def fpm_binary() -> str:
    return _installed(toolchain.php_fpm_binary(), "PHP-FPM")


def nginx_binary() -> str:
    return _installed(toolchain.nginx_binary(), "nginx")


def _output(argv: list[str], env: dict[str, str] | None = None) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"could not run {' '.join(argv)}: {exc}") from exc
    return done.stdout + done.stderr


@functools.lru_cache(maxsize=1)
def nginx_build() -> tuple[str, str]:
    """nginx's version and its `nginx -V` configure arguments."""
    text = _output([nginx_binary(), "-V"])
    match = re.search(r"nginx/(\d+(?:\.\d+)*)", text)
    return (match.group(1) if match else "0", text)


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


def _render(template: str, values: dict[str, str]) -> str:
    text = (CONF_DIR / template).read_text()
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    left = re.search(r"\{\{\w+\}\}", text)
    if left:
        raise UserError(f"php-app/conf/{template}: no value for {left.group(0)}")
    return text


def lint_inputs() -> list[Path]:
    return sorted(p for p in APP_DIR.rglob("*.php") if p.is_file())


def staged_app_dir() -> Path:
    """A copy of php-app in a world-reachable place, refreshed when the sources change."""
    target = paths.world_reachable_state() / "php-app"
    files = sorted(
        p for p in APP_DIR.rglob("*") if p.is_file() and "tests" not in p.relative_to(APP_DIR).parts
    )
    digest = base.digest_files(files, APP_DIR)
    stamp = target / ".bidbench-stamp"
    if not (stamp.is_file() and stamp.read_text() == digest):
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(APP_DIR, target, ignore=shutil.ignore_patterns("tests"))
        for directory in [target, *(d for d in target.rglob("*") if d.is_dir())]:
            directory.chmod(0o755)
        stamp.write_text(digest)
    return target


def _unsearchable(user: str, targets: list[Path]) -> Path | None:
    """As root, the workers run as `user`: the first directory on the way to a target they cannot walk."""
    account = pwd.getpwnam(user)
    for target in targets:
        for directory in [*reversed(target.resolve().parents), *([target] if target.is_dir() else [])]:
            if not directory.exists():
                continue
            mode = directory.stat()
            if not (
                mode.st_mode & 0o001
                or (mode.st_uid == account.pw_uid and mode.st_mode & 0o100)
                or (mode.st_gid == account.pw_gid and mode.st_mode & 0o010)
            ):
                return directory
    return None


def _knob(knobs: dict[str, str], name: str, default: str, allowed: re.Pattern[str]) -> str:
    value = knobs.get(name) or default
    if not allowed.fullmatch(value):
        raise UserError(f"{name}={value!r} is not valid for the PHP app (expected {allowed.pattern})")
    return value


class PhpDriver(AppDriver):
    impl = "php"

    # ---- build ----------------------------------------------------------------------------------------

    def ensure_built(self) -> None:
        php, fpm, _ = php_binary(), fpm_binary(), nginx_binary()
        files = lint_inputs() + [CONF_DIR / t for t in TEMPLATES]
        digest = base.digest_files(files, APP_DIR)
        if base.stamped(LINT_STAMP, digest):
            return
        self._check_extensions(fpm)
        linted = [
            subprocess.run([php, "-l", str(path)], capture_output=True, text=True) for path in lint_inputs()
        ]
        failures = [(done.stdout + done.stderr).strip() for done in linted if done.returncode != 0]
        if failures:
            raise UserError("php-app does not lint (php -l):\n" + "\n".join(failures))
        base.write_stamp(LINT_STAMP, digest)

    @staticmethod
    def _check_extensions(fpm: str) -> None:
        """PHP-FPM must load exactly the extensions conf/php.ini.tmpl asks for, with no conf.d help."""
        probe = paths.CACHE / "php-extension-probe.ini"
        probe.parent.mkdir(parents=True, exist_ok=True)
        probe.write_text(
            "zend_extension = opcache\nextension = pdo\nextension = pdo_pgsql\nextension = mbstring\n"
        )
        text = _output([fpm, "-c", str(probe), "-m"], env={**os.environ, "PHP_INI_SCAN_DIR": ""})
        modules = {line.strip().lower() for line in text.splitlines()}
        missing = [m for m in ("pdo_pgsql", "zend opcache", "mbstring") if m not in modules]
        if missing or "warning" in text.lower():
            raise UserError(
                f"PHP-FPM ({fpm}) cannot load {', '.join(missing) or 'its extensions'}.\n{text.strip()}\n"
                f"Install them: {APT_HINT}"
            )

    # ---- instances ------------------------------------------------------------------------------------

    def settings(self, spec: InstanceSpec) -> dict[str, str]:
        """The effective values this instance runs with (the knobs with defaults filled in)."""
        knobs = spec.knobs
        digits, switch = re.compile(r"[1-9][0-9]{0,3}"), re.compile(r"[01]")
        pool = _knob(knobs, "DB_POOL_SIZE", knob_defaults.APP_KNOBS["DB_POOL_SIZE"], digits)
        # One connection per child: without an explicit child count, the pool size is the child count.
        children = _knob(knobs, "PHP_FPM_CHILDREN", pool, digits)
        return {
            "DB_POOL_SIZE": pool,
            "PHP_FPM_CHILDREN": children,
            "PHP_JIT": _knob(knobs, "PHP_JIT", "0", switch),
            "LOG_LEVEL": _knob(knobs, "LOG_LEVEL", "info", re.compile(r"error|warn|info|debug")),
            "SERVER_TIMING": _knob(knobs, "SERVER_TIMING", "1", switch),
            **{name: _knob(knobs, name, off, switch) for name, off in base.UNFAIR_KNOBS.items()},
            "NGINX_WORKER_PROCESSES": _knob(knobs, "NGINX_WORKER_PROCESSES", "1", digits),
        }

    def launches(self, spec: InstanceSpec) -> list[ProcessLaunch]:
        php, fpm, nginx = php_binary(), fpm_binary(), nginx_binary()
        run_dir = spec.run_dir.resolve()
        values = self.settings(spec)
        worker = self._worker_account() if os.geteuid() == 0 else None
        app_dir = APP_DIR
        if worker is not None:
            if _unsearchable(worker[0], [APP_DIR / "public" / "index.php"]) is not None:
                # Root inside a checkout `nobody` cannot enter: serve a staged copy from a reachable place.
                app_dir = staged_app_dir()
            blocked = _unsearchable(worker[0], [app_dir / "public" / "index.php", run_dir])
            if blocked is not None:
                raise UserError(
                    f"{blocked} is not searchable by {worker[0]!r}, which runs nginx workers and PHP-FPM "
                    f"children when bidbench runs as root; chmod o+x {blocked}, or run unprivileged"
                )

        temp = run_dir / "nginx-tmp"
        temp.mkdir(parents=True, exist_ok=True)
        app_log = run_dir / "app.log"
        app_log.touch()
        nginx_version, nginx_configure = nginx_build()
        optional_temp = "".join(
            f"    {module}_temp_path {run_dir}/nginx-tmp/{module};\n"
            for module in ("scgi", "uwsgi")
            if f"--without-http_{module}_module" not in nginx_configure
        )
        jit = values["PHP_JIT"] == "1"
        host = spec.host
        listen = f"[{host}]:{spec.port}" if ":" in host else f"{host}:{spec.port}"
        error_headers = (
            '            add_header Server-Timing "db;dur=0.000, app;dur=0.000" always;'
            if values["SERVER_TIMING"] == "1"
            else "            # SERVER_TIMING=0: no Server-Timing header"
        )
        common = {"run_dir": str(run_dir), "app_dir": str(app_dir)}
        files = {
            "php.ini": _render(
                "php.ini.tmpl",
                {
                    **common,
                    # Preloading as root must name the account that runs it.
                    "preload_user": f"opcache.preload_user = {worker[0]}" if worker else "",
                    "jit": JIT_MODE if jit else "off",
                    "jit_buffer_size": JIT_BUFFER_SIZE if jit else "0",
                },
            ),
            "php-fpm.conf": _render(
                "php-fpm.conf.tmpl",
                {
                    **common,
                    "user_directives": f"user = {worker[0]}\ngroup = {worker[1]}" if worker else "",
                    "listen_owner_directives": (
                        f"listen.owner = {worker[0]}\nlisten.group = {worker[1]}\nlisten.mode = 0660"
                        if worker
                        else "listen.mode = 0600"
                    ),
                    "children": values["PHP_FPM_CHILDREN"],
                },
            ),
            "nginx.conf": _render(
                "nginx.conf.tmpl",
                {
                    **common,
                    "worker_processes": values["NGINX_WORKER_PROCESSES"],
                    "user_directive": f"user {worker[0]} {worker[1]};" if worker else "",
                    "optional_temp_paths": optional_temp,
                    "keepalive_timeout": NGINX_KEEPALIVE_TIMEOUT,
                    "keepalive_requests": NGINX_KEEPALIVE_REQUESTS,
                    "worker_connections": NGINX_WORKER_CONNECTIONS,
                    "body_limit": str(BODY_LIMIT_BYTES),
                    "listen": listen,
                    "error_headers": error_headers,
                },
            ),
            "fastcgi.conf": _render("fastcgi.conf.tmpl", common),
            # What the nginx and FPM configuration says, for the start-up line (bin/fpm-exec.php).
            "instance.json": json.dumps(self._instance_fields(values, nginx_version)),
        }
        for name, text in files.items():
            (run_dir / name).write_text(text)
        if worker is not None:
            # Children write the app log; nginx workers use the temporary paths; nginx's master (root)
            # chowns its temporary directories itself, FPM's master (root) chowns the socket.
            uid, gid = pwd.getpwnam(worker[0]).pw_uid, grp.getgrnam(worker[1]).gr_gid
            for path in (run_dir, temp, app_log):
                os.chown(path, uid, gid)

        env = {
            **spec.app_env(),
            **values,
            # Only php.ini's extensions, none from the distribution's conf.d.
            "PHP_INI_SCAN_DIR": "",
            "BIDBENCH_PHP_LOG": str(app_log),
        }
        ini = str(run_dir / "php.ini")
        # bin/fpm-exec.php prints the start-up line, then becomes PHP-FPM with the arguments after its own.
        fpm_exec = [php, "-c", ini, str(app_dir / "bin" / "fpm-exec.php"), str(run_dir / "instance.json")]
        fpm_argv = [*fpm_exec, fpm, "--nodaemonize", "--fpm-config", str(run_dir / "php-fpm.conf"), "-c", ini]
        nginx_argv = [nginx, "-p", f"{run_dir}/", "-c", str(run_dir / "nginx.conf")]
        if version_tuple(nginx_version) >= (1, 19, 5):
            # -e: nginx opens its compiled-in error log before reading the configuration.
            nginx_argv += ["-e", "stderr"]
        return [
            ProcessLaunch(name, argv, env, cwd, run_dir / f"{name}.log", stop_signal=signal.SIGQUIT)
            for name, argv, cwd in (("php-fpm", fpm_argv, app_dir), ("nginx", nginx_argv, run_dir))
        ]

    @staticmethod
    def _instance_fields(values: dict[str, str], nginx_version: str) -> dict[str, object]:
        return {
            "nginx_version": nginx_version,
            "nginx_worker_processes": int(values["NGINX_WORKER_PROCESSES"]),
            "nginx_keepalive_timeout": NGINX_KEEPALIVE_TIMEOUT,
            "nginx_keepalive_requests": int(NGINX_KEEPALIVE_REQUESTS),
            "nginx_worker_connections": int(NGINX_WORKER_CONNECTIONS),
            "nginx_client_max_body_size": BODY_LIMIT_BYTES,
            "php_fpm_pm": "static",
            "php_fpm_max_children": int(values["PHP_FPM_CHILDREN"]),
            "php_fpm_max_requests": int(FPM_MAX_REQUESTS),
            "php_fpm_listen": "unix socket",
        }

    @staticmethod
    def _worker_account() -> tuple[str, str]:
        try:
            account = pwd.getpwnam(WORKER_USER)
        except KeyError as exc:
            raise UserError(
                f"as root, bidbench needs the unprivileged user {WORKER_USER!r} for nginx and PHP-FPM workers"
            ) from exc
        return account.pw_name, grp.getgrgid(account.pw_gid).gr_name

    def effective_knobs(self, spec: InstanceSpec) -> dict[str, str]:
        values = {**knob_defaults.default_knobs(self.impl), **DRIVER_KNOBS, **spec.knobs}
        values.update(self.settings(spec))
        jit = values["PHP_JIT"] == "1"
        values.update(
            {
                "db_connections_per_instance": values["PHP_FPM_CHILDREN"],
                "php_fpm.pm": "static",
                "php_fpm.pm.max_children": values["PHP_FPM_CHILDREN"],
                "php_fpm.pm.max_requests": FPM_MAX_REQUESTS,
                "php_fpm.listen": "unix socket",
                "nginx.worker_processes": values["NGINX_WORKER_PROCESSES"],
                "nginx.keepalive_timeout": NGINX_KEEPALIVE_TIMEOUT,
                "nginx.keepalive_requests": NGINX_KEEPALIVE_REQUESTS,
                "nginx.worker_connections": NGINX_WORKER_CONNECTIONS,
                "nginx.client_max_body_size": str(BODY_LIMIT_BYTES),
                "opcache.enable": "1",
                "opcache.validate_timestamps": "0",
                "opcache.preload": "1",
                "opcache.jit": JIT_MODE if jit else "off",
                "opcache.jit_buffer_size": JIT_BUFFER_SIZE if jit else "0",
            }
        )
        return values

    # ---- tests and versions ---------------------------------------------------------------------------

    def test_suites(self) -> list[TestSuite]:
        phpunit = shutil.which("phpunit")
        if phpunit is None:
            raise UserError("PHPUnit is not installed; run ./bidbench setup (or: apt-get install phpunit)")
        return [
            TestSuite(
                name="PHPUnit (unit)",
                argv=[phpunit, "--configuration", str(APP_DIR / "phpunit.xml")],
                cwd=APP_DIR,
                summary_pattern=r"^(OK \(|Tests: |FAILURES|ERRORS)",
            ),
            TestSuite(
                name="through nginx (pytest)",
                argv=[sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(INTEGRATION_TEST)],
                cwd=paths.ROOT,
                summary_pattern=r"(passed|failed|error)",
            ),
        ]

    def runtime_versions(self) -> dict[str, str]:
        versions: dict[str, str] = {}
        for key, argv, pattern in (
            ("php", [php_binary(), "-v"], r"PHP (\S+)"),
            ("php_fpm", [fpm_binary(), "-v"], r"PHP (\S+)"),
            ("nginx", [nginx_binary(), "-v"], r"nginx/(\S+)"),
        ):
            try:
                match = re.search(pattern, _output(argv))
            except UserError as exc:
                versions[key] = f"unknown ({exc})"
                continue
            versions[key] = match.group(1) if match else "?"
        return versions


def pool_size_as_children(given: Mapping[str, str]) -> dict[str, str]:
    """PHP's "pool" is one persistent connection per FPM child: a pool size means that many children."""
    if "DB_POOL_SIZE" in given and "PHP_FPM_CHILDREN" not in given:
        return {"PHP_FPM_CHILDREN": given["DB_POOL_SIZE"]}
    return {}


ADAPTER = AppAdapter(
    name="php",
    folder=APP_DIR,
    driver_class=PhpDriver,
    knobs={"PHP_FPM_CHILDREN": "10", "PHP_JIT": "0"},
    tools=("php", "php-fpm", "phpunit", "nginx"),
    pytest_files_in_own_suite=(INTEGRATION_TEST_PATH,),
    knobs_implied_by=pool_size_as_children,
)
