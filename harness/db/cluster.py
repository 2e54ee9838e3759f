"""The embedded PostgreSQL: a private cluster in a git-ignored project directory, on 127.0.0.1.

`initdb` once, then `pg_ctl start/stop`. All server settings come from infra/postgres/postgresql.conf
(versioned); only the port is machine-specific and lives in a generated include file. When bidbench runs
as root, the server runs as an unprivileged system user, because PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from harness import paths
from harness.console import UserError

SUPERUSER = "bidbench"
PASSWORD = "bidbench"
SERVER_OS_USER = "bidbench"
PREFERRED_PORT = 55432


def find_pg_bindir() -> Path:
    """The newest PostgreSQL >= 15 server binaries: Debian's versioned dirs first, then PATH."""
    candidates = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
        reverse=True,
    )
    for bindir in candidates:
        if (bindir / "postgres").exists() and int(bindir.parent.name) >= 15:
            return bindir
    on_path = shutil.which("pg_ctl")
    if on_path:
        return Path(on_path).resolve().parent
    raise UserError(
        "PostgreSQL 15+ server binaries were not found. Run `./bidbench setup`, or install them yourself "
        "(Debian/Ubuntu: sudo apt-get install postgresql postgresql-contrib)."
    )


def free_port(preferred: int | None = None) -> int:
    for port in ([preferred] if preferred else []) + [0]:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(sock.getsockname()[1])
    raise UserError("no free TCP port on 127.0.0.1")


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # As PostgreSQL itself binds: a port whose old connections sit in TIME_WAIT (a server just stopped)
        # is free, so a restarted server keeps the port its clients know. A listening port stays taken.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


@dataclass
class UpReport:
    started: bool
    messages: list[str] = field(default_factory=list)


class EmbeddedCluster:
    """A private PostgreSQL cluster owned by this checkout."""

    def __init__(self, base_dir: Path | None = None) -> None:
        self.base_dir = base_dir or self._default_base_dir()
        self.data_dir = self.base_dir / "data"
        self.log_file = self.base_dir / "server.log"
        self.state_file = self.base_dir / "state.json"
        self.bindir = find_pg_bindir()

    # ---- identity and paths -------------------------------------------------------------------

    @staticmethod
    def _running_as_root() -> bool:
        return os.geteuid() == 0

    @classmethod
    def _default_base_dir(cls) -> Path:
        # The unprivileged server user cannot reach a data dir below e.g. /root (mode 700).
        return paths.world_reachable_state() / "pg"

    def _server_user(self) -> pwd.struct_passwd | None:
        if not self._running_as_root():
            return None
        try:
            return pwd.getpwnam(SERVER_OS_USER)
        except KeyError:
            useradd = shutil.which("useradd") or "/usr/sbin/useradd"
            subprocess.run(
                [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SERVER_OS_USER],
                check=True,
                capture_output=True,
            )
            return pwd.getpwnam(SERVER_OS_USER)

    def _run_as_server_user(self, argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        user = self._server_user()
        extra: dict[str, object] = {}
        if user is not None:
            extra = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["LC_ALL"] = "C"
        return subprocess.run(argv, text=True, capture_output=True, env=env, **extra, **kwargs)  # type: ignore[call-overload]

    def _chown_to_server_user(self, path: Path) -> None:
        user = self._server_user()
        if user is None:
            return
        for current, _dirs, files in os.walk(path):
            os.chown(current, user.pw_uid, user.pw_gid)
            for name in files:
                os.chown(os.path.join(current, name), user.pw_uid, user.pw_gid)

    # ---- state --------------------------------------------------------------------------------

    @property
    def port(self) -> int | None:
        if not self.state_file.exists():
            return None
        return int(json.loads(self.state_file.read_text())["port"])

    def _save_port(self, port: int) -> None:
        self.state_file.write_text(json.dumps({"port": port, "data_dir": str(self.data_dir)}) + "\n")
        runtime_conf = self.data_dir / "bidbench-runtime.conf"
        runtime_conf.write_text(f"# generated by ./bidbench db up; do not edit\nport = {port}\n")
        self._chown_to_server_user(runtime_conf)

    def url(self, dbname: str = "postgres") -> str:
        if self.port is None:
            raise UserError("the embedded database has not been created yet. Run `./bidbench db up`.")
        return f"postgresql://{SUPERUSER}:{PASSWORD}@127.0.0.1:{self.port}/{dbname}"

    def initialized(self) -> bool:
        return (self.data_dir / "PG_VERSION").exists()

    def server_pid(self) -> int | None:
        """The postmaster's pid if it is really running (a pid file alone proves nothing)."""
        pid_file = self.data_dir / "postmaster.pid"
        if not pid_file.exists():
            return None
        try:
            pid = int(pid_file.read_text().splitlines()[0])
            proc = psutil.Process(pid)
            alive = proc.status() != psutil.STATUS_ZOMBIE
            if alive and ("postgres" in proc.name() or "postmaster" in proc.name()):
                return pid
        except (ValueError, IndexError, psutil.NoSuchProcess, psutil.AccessDenied):
            pass
        return None

    def is_running(self) -> bool:
        return self.server_pid() is not None

    # ---- lifecycle ----------------------------------------------------------------------------

    def _initdb(self) -> None:
        self.base_dir.mkdir(parents=True, exist_ok=True)
        if self._server_user() is not None:
            os.chmod(self.base_dir, 0o755)
        pwfile = self.base_dir / "pwfile"
        pwfile.write_text(PASSWORD + "\n")
        self._chown_to_server_user(self.base_dir)
        result = self._run_as_server_user(
            [
                str(self.bindir / "initdb"),
                "-D",
                str(self.data_dir),
                "-U",
                SUPERUSER,
                f"--pwfile={pwfile}",
                "--auth-host=scram-sha-256",
                "--auth-local=scram-sha-256",
                "--encoding=UTF8",
                "--locale=C",
            ]
        )
        pwfile.unlink(missing_ok=True)
        if result.returncode != 0:
            raise UserError(f"initdb failed:\n{result.stdout}\n{result.stderr}")
        with (self.data_dir / "postgresql.conf").open("a") as conf:
            conf.write(
                "\n# bidbench: the versioned settings, then the machine-specific port\n"
                "include_if_exists 'bidbench.conf'\ninclude_if_exists 'bidbench-runtime.conf'\n"
            )

    def _install_settings(self) -> None:
        """Copy the versioned settings file in on every start, so edits to it take effect."""
        target = self.data_dir / "bidbench.conf"
        shutil.copyfile(paths.POSTGRES_CONF, target)
        self._chown_to_server_user(target)

    def up(self) -> UpReport:
        report = UpReport(started=False)
        if not self.initialized():
            report.messages.append(f"created a new cluster in {self.data_dir}")
            self._initdb()
        if self.is_running():
            report.messages.append(f"already running on 127.0.0.1:{self.port} (pid {self.server_pid()})")
            return report

        stale = self.data_dir / "postmaster.pid"
        if stale.exists():
            stale_pid = stale.read_text().splitlines()[0] if stale.read_text() else "?"
            stale.unlink()
            report.messages.append(
                f"found a stale pid file (pid {stale_pid} is not a running postgres): the server had been "
                "killed or crashed; removed it. PostgreSQL replays its write-ahead log on start (crash "
                "recovery), so committed data is kept."
            )
        port = self.port
        if port is None or not port_is_free(port):
            new_port = free_port(PREFERRED_PORT)
            if port is not None:
                report.messages.append(f"port {port} is taken by another program; moved to {new_port}")
            port = new_port
        self._save_port(port)
        self._install_settings()
        result = self._run_as_server_user(
            [
                str(self.bindir / "pg_ctl"),
                "-D",
                str(self.data_dir),
                "-l",
                str(self.log_file),
                "-w",
                "-t",
                "60",
                "start",
            ]
        )
        if result.returncode != 0:
            tail = self.log_file.read_text()[-3000:] if self.log_file.exists() else ""
            raise UserError(
                f"PostgreSQL did not start (pg_ctl exit {result.returncode}).\n{result.stderr}\n"
                f"Last lines of {self.log_file}:\n{tail}\n"
                "If the data directory is damaged beyond repair, remove it with `./bidbench db destroy` "
                "and run `./bidbench db up` again."
            )
        report.started = True
        report.messages.append(f"started on 127.0.0.1:{port} (pid {self.server_pid()})")
        return report

    def down(self) -> bool:
        if not self.is_running():
            return False
        result = self._run_as_server_user(
            [str(self.bindir / "pg_ctl"), "-D", str(self.data_dir), "-m", "fast", "-w", "-t", "60", "stop"]
        )
        if result.returncode != 0:
            raise UserError(f"pg_ctl stop failed: {result.stderr}")
        return True

    def destroy(self) -> None:
        if self.is_running():
            self.down()
        shutil.rmtree(self.base_dir, ignore_errors=True)

    def wait_ready(self, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                sock.settimeout(0.5)
                if self.port and sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.1)
        raise UserError(
            f"PostgreSQL did not accept connections within {timeout_s:.0f} s; see {self.log_file}"
        )
