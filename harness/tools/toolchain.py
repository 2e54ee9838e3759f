"""Find or install every tool bidbench needs (`./bidbench setup`), idempotently.

Each tool has a probe (is it here, which version, where) and an installer (apt packages, or a build
into the project-local bin dir for the load driver and Toxiproxy). Commands call `ensure()` with just the tools they need, so
`./bidbench demo` and `./bidbench test` work on a fresh machine without a separate setup step.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from rich.table import Table

from harness import paths
from harness.console import UserError, console

TOXIPROXY_VERSION = "v2.12.0"
TOXIPROXY_PACKAGE = "github.com/Shopify/toxiproxy/v2/cmd/server"
VEGETA_VERSION = "v12.13.0"
VEGETA_PACKAGE = "github.com/tsenart/vegeta/v12"


@dataclass
class Probe:
    found: bool
    version: str = ""
    path: str = ""


@dataclass(frozen=True)
class Tool:
    name: str
    probe: Callable[[], Probe]
    apt_packages: tuple[str, ...] = ()
    build: Callable[[], None] | None = None
    manual_hint: str = ""
    on_demand: bool = False
    """Not part of `./bidbench setup`: only the command that uses it installs it."""


def output_of(argv: list[str], timeout: float = 30) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return (done.stdout + done.stderr).strip()


def _probe_binary(
    name: str,
    version_args: list[str],
    pattern: str,
    minimum: int | None = None,
    find: Callable[[], str | None] | None = None,
) -> Probe:
    """`name` on PATH (or where `find` finds it), and its version from `name version_args`."""
    path = find() if find else shutil.which(name)
    if not path:
        return Probe(False)
    match = re.search(pattern, output_of([path, *version_args]))
    version = match.group(1) if match else "?"
    major = re.search(r"\d+", version)
    return Probe(minimum is None or (major is not None and int(major.group()) >= minimum), version, path)


def _on_path_or_sbin(name: str) -> str | None:
    return shutil.which(name) or (f"/usr/sbin/{name}" if Path(f"/usr/sbin/{name}").exists() else None)


def php_fpm_binary() -> str | None:
    return _on_path_or_sbin("php-fpm8.2") or _on_path_or_sbin("php-fpm")


def _probe_php_fpm() -> Probe:
    probe = _probe_binary("php-fpm", ["-v"], r"PHP (\S+)", find=php_fpm_binary)
    modules = output_of([probe.path, "-m"]).lower() if probe.found else ""
    if probe.found and ("pgsql" not in modules or "opcache" not in modules):
        return Probe(False, probe.version + " (missing pgsql or opcache)", probe.path)
    return probe


def nginx_binary() -> str | None:
    return _on_path_or_sbin("nginx")


def find_pg_bindir(versioned: Path = Path("/usr/lib/postgresql")) -> Path:
    """The newest PostgreSQL >= 15 server binaries: Debian's versioned dirs first, then PATH. A dir whose
    name is not a major version (a packager's own, a link named `current`) is passed over."""
    majors = sorted(
        (int(bindir.parent.name), bindir)
        for bindir in versioned.glob("*/bin")
        if bindir.parent.name.isdigit()
    )
    for major, bindir in reversed(majors):
        if major >= 15 and (bindir / "postgres").exists():
            return bindir
    on_path = shutil.which("pg_ctl")
    if on_path:
        return Path(on_path).resolve().parent
    raise UserError(
        "PostgreSQL 15+ server binaries were not found. Run `./bidbench setup`, or install them yourself "
        "(Debian/Ubuntu: sudo apt-get install postgresql postgresql-contrib)."
    )


def _probe_postgres() -> Probe:
    try:
        bindir = find_pg_bindir()
    except UserError:
        return Probe(False)
    match = re.search(r"\(PostgreSQL\) (\S+)", output_of([str(bindir / "postgres"), "--version"]))
    version = match.group(1) if match else "?"
    sharedir = output_of([str(bindir / "pg_config"), "--sharedir"]) if (bindir / "pg_config").exists() else ""
    candidates = [Path(sharedir)] if sharedir else []
    candidates += list(Path("/usr/share/postgresql").glob(f"{version.split('.')[0]}"))
    if not any((c / "extension" / "pg_stat_statements.control").exists() for c in candidates):
        return Probe(False, version + " (contrib missing)", str(bindir))
    return Probe(True, version, str(bindir))


def _probe_libpq_dev() -> Probe:
    # pg-native's native addon (the `libpq` package) compiles against libpq's headers.
    header = Path("/usr/include/postgresql/libpq-fe.h")
    return Probe(True, "headers", str(header)) if header.exists() else Probe(False)


def _probe_build_tools() -> Probe:
    missing = [tool for tool in ("make", "g++", "python3") if not shutil.which(tool)]
    return Probe(not missing, "make, g++, python3" if not missing else "missing " + ", ".join(missing))


def driver_path() -> Path:
    return paths.BIN / "bidbench-load"


def _driver_stamp() -> Path:
    return driver_path().with_name("bidbench-load.source")


def driver_source_digest() -> str:
    """A digest of the driver's sources: the binary is rebuilt exactly when they change."""
    digest = hashlib.sha256()
    for path in sorted(paths.LOADGEN.rglob("*")):
        if path.is_file() and (path.suffix == ".go" or path.name in ("go.mod", "go.sum")):
            if not (path.name.endswith("_test.go") or "testdata" in path.parts):
                digest.update(str(path.relative_to(paths.LOADGEN)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def driver_version() -> str:
    """The driver's version and the digest of the sources it was built from, for manifests."""
    stamp = _driver_stamp()
    return stamp.read_text().strip() if stamp.exists() else "unbuilt"


def _probe_driver() -> Probe:
    binary = driver_path()
    if not binary.exists():
        return Probe(False)
    version = driver_version()
    return Probe(version.rsplit("+", 1)[-1] == driver_source_digest(), version, str(binary))


def _go(missing: str) -> tuple[str, str]:
    """Go's binary and the module proxy it is set to use; without Go, the user's error `missing`."""
    go = shutil.which("go")
    if not go:
        raise UserError(missing)
    return go, output_of([go, "env", "GOPROXY"]).split(",")[0] or "https://proxy.golang.org"


def _build_driver() -> None:
    """`go build` of loadgen/ into .bidbench/bin/bidbench-load (seconds; the module cache keeps the
    dependencies after the first time)."""
    go, proxy = _go("building the load driver needs Go 1.26+. Install it (apt-get install golang) and retry.")
    paths.BIN.mkdir(parents=True, exist_ok=True)
    console.print(f"building the load driver (loadgen/) into {driver_path()} ...")
    partial = driver_path().with_name(f"bidbench-load.{os.getpid()}.partial")
    env = dict(os.environ, GOPROXY=proxy, GOFLAGS="-mod=readonly", CGO_ENABLED="0")
    done = subprocess.run(
        [go, "build", "-trimpath", "-o", str(partial), "./cmd/bidbench-load"],
        cwd=paths.LOADGEN,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        partial.unlink(missing_ok=True)
        raise UserError(f"`go build` of the load driver failed:\n{done.stderr[-2000:]}")
    os.replace(partial, driver_path())
    version = output_of([str(driver_path()), "version"]).split()[-1]
    _driver_stamp().write_text(f"{version}+{driver_source_digest()}\n")


def toxiproxy_path() -> Path:
    return paths.BIN / "toxiproxy-server"


def _probe_stamped(name: str, version: str) -> Probe:
    # A `go install`ed binary says "version git" (toxiproxy) or nothing useful (vegeta); the build leaves
    # the module version in a stamp file.
    binary = paths.BIN / name
    stamp = binary.with_name(name + ".version")
    if not binary.exists() or not stamp.exists():
        return Probe(False)
    found = stamp.read_text().strip()
    return Probe(found == version, found, str(binary))


def _cached_binary(name: str, version: str) -> Path:
    return paths.USER_CACHE / "bin" / f"{name}-{version}"


def _go_install(package: str, version: str, name: str) -> None:
    """`go install package@version` into .bidbench/bin/name (about 30 s), through a per-user copy of the binary: a clean
    clone on a machine that built it before copies it in a second (linking took tens of seconds even with
    Go's build cache). The stamp file next to dest records the version (_probe_stamped)."""
    dest = paths.BIN / name
    cached = _cached_binary(name, version)
    stamp = dest.with_name(name + ".version")
    paths.BIN.mkdir(parents=True, exist_ok=True)
    if cached.is_file():
        shutil.copy2(cached, dest)
        stamp.write_text(version + "\n")
        if _probe_stamped(name, version).found:
            console.print(f"{name} {version}: copied from {cached}")
            return
        cached.unlink(missing_ok=True)  # a copy that does not answer as `version`: build afresh
    go, proxy = _go(
        f"building {name} needs Go. Install it (https://go.dev/dl/ or apt-get install golang) and retry."
    )
    console.print(f"building {name} {version} with Go into {paths.BIN} (about 30 s, once)...")
    with tempfile.TemporaryDirectory(prefix=f"bidbench-{name}-", dir=paths.BIN) as gobin:
        env = dict(os.environ, GOBIN=gobin, GOPROXY=proxy, GOFLAGS="-mod=mod")
        target = f"{package}@{version}"
        done = subprocess.run([go, "install", target], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise UserError(f"`go install {target}` failed:\n{done.stderr[-2000:]}")
        # The binary is named after the package's last element (toxiproxy's is `server`), not after a
        # major-version suffix (github.com/tsenart/vegeta/v12 builds `vegeta`).
        parts = package.split("/")
        os.replace(Path(gobin) / (parts[-2] if re.fullmatch(r"v\d+", parts[-1]) else parts[-1]), dest)
    stamp.write_text(version + "\n")
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        # Through a temporary name: another checkout may be copying the cached binary at the same time.
        partial = cached.with_name(f"{cached.name}.{os.getpid()}.partial")
        shutil.copy2(dest, partial)
        os.replace(partial, cached)
    except OSError as exc:  # the cache only saves time; a read-only home must not fail the build
        console.print(f"[yellow]could not cache {name} in {cached.parent}: {exc}[/]")


TOOLS: dict[str, Tool] = {
    tool.name: tool
    for tool in (
        Tool(
            "java",
            partial(_probe_binary, "java", ["-version"], r'version "([^"]+)"', 17),
            ("openjdk-17-jdk-headless",),
        ),
        Tool("maven", partial(_probe_binary, "mvn", ["-v"], r"Apache Maven ([0-9.]+)"), ("maven",)),
        Tool(
            "node",
            partial(_probe_binary, "node", ["--version"], r"v(\S+)", 20),
            manual_hint="install Node.js 20+ from https://nodejs.org or NodeSource",
        ),
        Tool(
            "npm",
            partial(_probe_binary, "npm", ["--version"], r"(\S+)"),
            manual_hint="npm comes with Node.js 20+",
        ),
        Tool("build-tools", _probe_build_tools, ("make", "g++", "python3")),
        Tool("libpq-dev", _probe_libpq_dev, ("libpq-dev",)),
        Tool("php", partial(_probe_binary, "php", ["-v"], r"PHP (\S+)", 8), ("php8.2-cli",)),
        Tool("php-fpm", _probe_php_fpm, ("php8.2-fpm", "php8.2-pgsql", "php8.2-opcache", "php8.2-mbstring")),
        Tool("phpunit", partial(_probe_binary, "phpunit", ["--version"], r"PHPUnit (\S+)"), ("phpunit",)),
        Tool(
            "nginx",
            partial(_probe_binary, "nginx", ["-v"], r"nginx/(\S+)", find=nginx_binary),
            ("nginx-light",),
        ),
        Tool("postgres", _probe_postgres, ("postgresql-15", "postgresql-contrib")),
        Tool("go", partial(_probe_binary, "go", ["version"], r"go version go(\S+)"), ("golang",)),
        Tool("driver", _probe_driver, build=_build_driver),
        Tool(
            "toxiproxy",
            partial(_probe_stamped, "toxiproxy-server", TOXIPROXY_VERSION),
            build=partial(_go_install, TOXIPROXY_PACKAGE, TOXIPROXY_VERSION, "toxiproxy-server"),
        ),
        Tool("chromium", partial(_probe_binary, "chromium", ["--version"], r"Chromium (\S+)"), ("chromium",)),
        # `./bidbench overhead`'s generators, installed when it asks for them; setup leaves them out.
        Tool("wrk", partial(_probe_binary, "wrk", ["--version"], r"wrk (\S+)"), ("wrk",), on_demand=True),
        Tool(
            "vegeta",
            partial(_probe_stamped, "vegeta", VEGETA_VERSION),
            build=partial(_go_install, VEGETA_PACKAGE, VEGETA_VERSION, "vegeta"),
            on_demand=True,
        ),
    )
}

# What each kind of work needs; commands ask for a group, setup checks them all. Each implementation is a
# group too, of the tools its adapter lists (AppAdapter.tools): harness/apps registers it here, since the
# apps sit above the toolchain and this module imports nothing of theirs.
SHARED_NEEDS: dict[str, tuple[str, ...]] = {
    "db": ("postgres",),
    "load": ("go", "driver"),
    "faults": ("go", "toxiproxy"),
    "report": ("chromium",),
}
_APP_NEEDS: dict[str, tuple[str, ...]] = {}


def register_app_tools(name: str, tools: tuple[str, ...]) -> None:
    """An implementation's group: the tools its adapter lists (harness/apps/__init__.py register)."""
    _APP_NEEDS[name] = tuple(tools)


def unregister_app_tools(name: str) -> None:
    _APP_NEEDS.pop(name, None)


def needs_by_group() -> dict[str, tuple[str, ...]]:
    """Built when asked for: the implementations' groups are registered by harness/apps."""
    return {"db": SHARED_NEEDS["db"], **_APP_NEEDS, **SHARED_NEEDS}


def _can_apt() -> bool:
    return os.geteuid() == 0 and shutil.which("apt-get") is not None


_apt_updated = False


def _apt_install(packages: Iterable[str]) -> None:
    global _apt_updated
    packages = sorted(set(packages))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    if not _apt_updated:
        console.print("apt-get update ...")
        subprocess.run(["apt-get", "update", "-qq"], env=env, check=False, capture_output=True)
        _apt_updated = True
    console.print(f"apt-get install {' '.join(packages)} ...")
    done = subprocess.run(
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise UserError(f"apt-get install failed:\n{done.stderr[-2000:]}")


@dataclass
class SetupRow:
    tool: str
    probe: Probe
    action: str


def ensure(names: Iterable[str], quiet: bool = True) -> list[SetupRow]:
    """Make sure the named tools (or groups of needs_by_group) are present, installing what is missing."""
    wanted: list[str] = []
    groups = needs_by_group()
    for name in names:
        if not _APP_NEEDS and name not in groups:
            # "java" is a tool and the java app's group: before harness/apps registered the groups, a name
            # could quietly mean the tool alone.
            raise RuntimeError(
                f"toolchain.ensure({name!r}): no implementation has registered its tools yet; import harness.apps "
                "first (it registers each implementation's group when imported)"
            )
        wanted += [tool for tool in groups.get(name, (name,)) if tool not in wanted]
    probes = {name: TOOLS[name].probe() for name in wanted}
    rows = {
        name: SetupRow(name, probe, "found" if probe.found else "missing") for name, probe in probes.items()
    }
    missing = [TOOLS[name] for name, probe in probes.items() if not probe.found]

    apt_needed = [pkg for tool in missing for pkg in tool.apt_packages]
    if apt_needed:
        if not _can_apt():
            hints = "\n".join(f"  {t.name}: {t.manual_hint}" for t in missing if not t.apt_packages)
            raise UserError(
                "some tools are missing and bidbench cannot install them (it needs root and apt-get). Run:\n"
                f"  sudo apt-get update && sudo apt-get install -y {' '.join(sorted(set(apt_needed)))}\n"
                + (hints + "\n" if hints else "")
                + "then run the command again."
            )
        _apt_install(apt_needed)
    for tool in missing:
        if tool.build is not None:
            if not TOOLS["go"].probe().found and _can_apt():
                _apt_install(TOOLS["go"].apt_packages)
            tool.build()
        if tool.apt_packages or tool.build:
            probe = tool.probe()
            rows[tool.name] = SetupRow(tool.name, probe, "installed" if probe.found else "FAILED")
            if not probe.found:
                raise UserError(
                    f"{tool.name} is still missing after installing it: {probe.version or 'not found'}"
                )
        else:
            raise UserError(f"{tool.name} is missing: {tool.manual_hint}")
    if not quiet:
        print_table(list(rows.values()))
    return list(rows.values())


def print_table(rows: list[SetupRow]) -> None:
    table = Table("tool", "version", "path", "action", title="bidbench toolchain")
    for row in rows:
        style = {"installed": "green", "found": "", "FAILED": "red"}.get(row.action, "yellow")
        table.add_row(
            row.tool, row.probe.version, row.probe.path, f"[{style}]{row.action}[/]" if style else row.action
        )
    console.print(table)


def all_tool_names() -> list[str]:
    return [name for name, tool in TOOLS.items() if not tool.on_demand]


def ensure_path(*names: str) -> Path:
    """ensure(names), then where the last one is (its probe's path): the binary a command runs."""
    return Path(ensure(names)[-1].probe.path)
