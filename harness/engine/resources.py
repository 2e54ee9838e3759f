"""Resource groups: a CPU limit, a CPU set and exact CPU/memory accounting per instance (docs/design.md §4).

Backends, in order of preference: cgroup v2, cgroup v1, a systemd scope, and none (CPU pinning plus
process-tree sampling with psutil). A process joins its group from inside `preexec` (between fork and
exec), so every child it forks later is in the group from birth: nothing escapes the accounting.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import subprocess
import time
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

import psutil

from harness.console import UserError

CGROUP_ROOT = Path("/sys/fs/cgroup")
GROUP_PARENT = "bidbench"
# The kernel's 100 ms CFS period: a 10 ms one throttled bursts the apps could have absorbed (docs/method.md,
# "The period"). BIDBENCH_CFS_PERIOD_US overrides it; a plan may pin its own (Limits.cfs_period_us).
CFS_PERIOD_US = int(os.environ.get("BIDBENCH_CFS_PERIOD_US", "100000"))
MIN_QUOTA_US = 1_000  # the kernel refuses smaller quotas


def cfs_quota(cpus: float, period_us: int | None = None) -> tuple[int, int]:
    """(quota, period) in microseconds; at very small limits the period grows so the quota stays >= 1 ms."""
    period = max(period_us or CFS_PERIOD_US, int(MIN_QUOTA_US / cpus + 0.5))
    return max(MIN_QUOTA_US, int(cpus * period)), period


@dataclass(frozen=True)
class Limits:
    cpus: float | None = None
    """CPU limit in cores (a CFS quota); None = unlimited."""
    cpuset: str | None = None
    """CPU list such as "1" or "0-1"; None = any CPU."""
    cfs_period_us: int | None = None
    """The CFS period of the quota; None = CFS_PERIOD_US."""
    cpu_weight: int | None = None
    """Relative CPU weight against other groups (cgroup v2 cpu.weight 1..10000, default 100). Used by
    accounting tests so that a shared, noisy machine cannot starve the process under test."""
    idle: bool = False
    """The group runs only on CPU time no other group wants (cgroup v2 cpu.idle, else the lowest weight;
    v1 the lowest cpu.shares), for the keep-awake spinners. It sits beside bidbench's parent group, not in
    it: inside, it would take the parent's share from PostgreSQL and every process outside the parent."""


@dataclass(frozen=True)
class ProcessMemory:
    """One process of a group. `role` is "primary" for a process whose parent is outside the group (the
    node cluster primary, the FPM or nginx master, a lone JVM) and "worker" for one forked inside it."""

    pid: int
    name: str
    role: str
    rss_bytes: int
    pss_bytes: int


@dataclass(frozen=True)
class Usage:
    cpu_seconds: float
    rss_bytes: int
    pss_bytes: int
    by_process: tuple[ProcessMemory, ...] = ()
    """Per-process figures where the backend sees processes (empty for remote sources)."""
    cpu_read_at: float | None = None
    """time.monotonic() halfway through reading cpu_seconds, where the group knows it: the memory read
    that follows it can take far longer (PSS of every process)."""


@dataclass(frozen=True)
class Throttling:
    """Cumulative CFS bandwidth counters of a group since it was created."""

    periods: int
    throttled_periods: int
    throttled_s: float


def _cpu_stat_values(text: str) -> dict[str, int]:
    values: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            values[parts[0]] = int(parts[1])
    return values


def parse_cpu_stat_throttling(text: str) -> Throttling | None:
    """The throttling counters of a cpu.stat file, v2 (`throttled_usec`) or v1 (`throttled_time`, ns).

    None when the file has no CFS counters (v2 without the cpu controller has only the usage lines)."""
    values = _cpu_stat_values(text)
    if "nr_periods" not in values or "nr_throttled" not in values:
        return None
    if "throttled_usec" in values:
        throttled_s = values["throttled_usec"] / 1e6
    elif "throttled_time" in values:
        throttled_s = values["throttled_time"] / 1e9
    else:
        return None
    return Throttling(values["nr_periods"], values["nr_throttled"], throttled_s)


def _usage_s(cpu_stat: Path) -> float:
    return _cpu_stat_values(cpu_stat.read_text()).get("usage_usec", 0) / 1e6


def process_memory(pids: list[int]) -> list[ProcessMemory]:
    """RSS and PSS of each process. PSS splits shared pages (FPM children, cluster workers) fairly."""
    members = set(pids)
    out: list[ProcessMemory] = []
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            name = proc.name()
            role = "worker" if proc.ppid() in members else "primary"
            try:
                full = proc.memory_full_info()
                rss, pss = full.rss, getattr(full, "pss", full.rss)
            except psutil.AccessDenied:
                rss = pss = proc.memory_info().rss
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
        out.append(ProcessMemory(pid, name, role, rss, pss))
    return out


class ResourceGroup(ABC):
    backend: str
    exact_cpu = True
    enforces_limit = True
    share_of_another = False
    """True for a share of another group's CPU (one app's PostgreSQL backends): counted there already."""

    def __init__(self, name: str, limits: Limits) -> None:
        self.name = name
        self.limits = limits
        self.cpuset_applied: bool | None = None
        """None: no cpuset asked for; False: asked for but not applied (see cpuset_note)."""
        self.cpuset_note: str | None = None

    def _cpuset_refused(self, why: str) -> None:
        # A refused cpuset must not fail the run: the group works unpinned and the manifest says so.
        self.cpuset_applied = False
        self.cpuset_note = why

    def _apply_cpuset(self, cpus_file: Path, available: set[int]) -> None:
        """Write the limits' cpuset to a cgroup's cpuset.cpus, if it fits the parent's CPUs (`available`)."""
        spec = self.limits.cpuset
        problem = _cpuset_problem(spec, available)
        if problem:
            self._cpuset_refused(problem)
            return
        try:
            cpus_file.write_text(spec)
        except OSError as exc:
            self._cpuset_refused(f"the kernel refused cpuset.cpus={spec}: {exc.strerror or exc}")
            return
        self.cpuset_applied = True

    def preexec(self) -> None:  # noqa: B027 - a systemd scope is joined by its wrapper; some groups start nothing
        """Runs in the child between fork and exec: join the group (and pin, where that is the mechanism)."""

    @abstractmethod
    def pids(self) -> list[int]:
        """Every live process of the group."""

    @abstractmethod
    def cpu_seconds(self) -> float:
        """Cumulative CPU time of everything that ever ran in the group."""

    def usage(self) -> Usage:
        before = time.monotonic()
        cpu = self.cpu_seconds()
        read_at = (before + time.monotonic()) / 2
        procs = process_memory(self.pids())
        rss, pss = sum(p.rss_bytes for p in procs), sum(p.pss_bytes for p in procs)
        return Usage(cpu, rss, pss, tuple(procs), read_at)

    def _cpu_stat(self) -> Path | None:
        return None

    def cpu_throttling(self) -> Throttling | None:
        """Cumulative CFS throttling of the group; None where the backend cannot know or no quota is set
        (without a quota the kernel counts no periods, and zeros would read as "never throttled")."""
        path = self._cpu_stat() if self.limits.cpus else None
        try:
            return parse_cpu_stat_throttling(path.read_text()) if path is not None else None
        except OSError:
            return None

    def lift_cpu_limit(self, lifted: bool) -> bool:
        """Remove the group's CPU quota (True) or put it back (False). Returns whether the backend did; a
        backend that cannot change a running group's quota leaves it as it is."""
        return False

    def close(self) -> None:  # noqa: B027 - most backends have nothing to remove
        """Remove the group. The caller has stopped its processes."""

    def wrap(self, argv: list[str]) -> list[str]:
        return argv  # only the systemd backend wraps

    def adopt(self, pid: int) -> None:  # noqa: B027 - kernel-tracked groups need nothing
        """Track a process started in the group (only process-tree sampling needs to be told)."""

    def spawn(
        self, argv: list[str], cwd: Path, env: dict[str, str], log_path: Path
    ) -> subprocess.Popen[bytes]:
        """Start argv inside the group, in a session of its own, output appended to log_path. The process
        joins the group between fork and exec, so every child it forks is accounted from birth."""
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("ab") as log:
            proc = subprocess.Popen(
                self.wrap(argv),
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=self.preexec,  # noqa: PLW1509 - joining the group must happen before exec
            )
        self.adopt(proc.pid)
        return proc

    def describe(self) -> dict[str, object]:
        return {
            "backend": self.backend,
            "exact_cpu": self.exact_cpu,
            "enforces_limit": self.enforces_limit,
            "cpus": self.limits.cpus,
            "cfs_quota_period_us": list(cfs_quota(self.limits.cpus, self.limits.cfs_period_us))
            if self.limits.cpus
            else None,
            "cpuset": self.limits.cpuset,
            "cpuset_applied": self.cpuset_applied,
            "cpuset_note": self.cpuset_note,
            "memory_mb": None,  # no group has a memory limit; the key stays for the manifests' readers
        }


class CgroupV2Group(ResourceGroup):
    backend = "cgroup-v2"

    def __init__(self, name: str, limits: Limits) -> None:
        super().__init__(name, limits)
        _write(CGROUP_ROOT / "cgroup.subtree_control", "+cpu +cpuset +memory", tolerate=True)
        parent = CGROUP_ROOT if limits.idle else CGROUP_ROOT / GROUP_PARENT
        parent.mkdir(exist_ok=True)
        if not limits.idle:
            _write(parent / "cgroup.subtree_control", "+cpu +cpuset +memory", tolerate=True)
        self.path = parent / name
        self.path.mkdir()
        self.lift_cpu_limit(False)  # sets the quota, where there is one
        if limits.cpuset:
            try:
                enabled = (parent / "cgroup.subtree_control").read_text().split()
            except OSError:
                enabled = []
            if "cpuset" not in enabled:
                self._cpuset_refused("the cpuset controller is not enabled for bidbench groups (cgroup v2)")
            else:
                self._apply_cpuset(
                    self.path / "cpuset.cpus", _read_cpu_list(parent / "cpuset.cpus.effective")
                )
        if limits.cpu_weight:
            for path in (parent, self.path):
                _write(path / "cpu.weight", str(limits.cpu_weight))
        if limits.idle:
            _write(self.path / "cpu.weight", "1")
            _write(self.path / "cpu.idle", "1", tolerate=True)  # kernels before 5.15 have no cpu.idle

    def preexec(self) -> None:
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def pids(self) -> list[int]:
        return _read_pids(self.path / "cgroup.procs")

    def _cpu_stat(self) -> Path | None:
        return self.path / "cpu.stat"

    def lift_cpu_limit(self, lifted: bool) -> bool:
        if not self.limits.cpus:
            return False
        quota, period = cfs_quota(self.limits.cpus, self.limits.cfs_period_us)
        _write(self.path / "cpu.max", f"max {period}" if lifted else f"{quota} {period}")
        return True

    def cpu_seconds(self) -> float:
        return _usage_s(self.path / "cpu.stat")

    def close(self) -> None:
        _rmdir_when_empty(self.path)


class CgroupV1Group(ResourceGroup):
    backend = "cgroup-v1"
    CONTROLLERS = ("cpu", "cpuacct", "cpuset", "memory")

    def __init__(self, name: str, limits: Limits) -> None:
        super().__init__(name, limits)
        self.paths: dict[str, Path] = {}
        for controller in self.CONTROLLERS:
            parent = _v1_mount(controller) if limits.idle else _v1_mount(controller) / GROUP_PARENT
            parent.mkdir(exist_ok=True)
            if controller == "cpuset":
                _inherit_cpuset(parent)
            path = parent / name
            path.mkdir()
            self.paths[controller] = path
        cpuset = self.paths["cpuset"]
        _inherit_cpuset(cpuset)
        if limits.cpuset:
            self._apply_cpuset(cpuset / "cpuset.cpus", _read_cpu_list(cpuset.parent / "cpuset.cpus"))
        if limits.cpus:
            quota, period = cfs_quota(limits.cpus, limits.cfs_period_us)
            _write(self.paths["cpu"] / "cpu.cfs_period_us", str(period))
            _write(self.paths["cpu"] / "cpu.cfs_quota_us", str(quota))
        if limits.cpu_weight:
            # v1 cpu.shares: 1024 is the default weight, as 100 is in v2.
            shares = str(limits.cpu_weight * 1024 // 100)
            for path in (self.paths["cpu"].parent, self.paths["cpu"]):
                _write(path / "cpu.shares", shares)
        if limits.idle:
            _write(self.paths["cpu"] / "cpu.shares", "2")  # the least v1 allows

    def preexec(self) -> None:
        pid = str(os.getpid())
        for path in self.paths.values():
            (path / "cgroup.procs").write_text(pid)

    def pids(self) -> list[int]:
        return _read_pids(self.paths["cpuacct"] / "cgroup.procs")

    def cpu_seconds(self) -> float:
        return int((self.paths["cpuacct"] / "cpuacct.usage").read_text()) / 1e9

    def _cpu_stat(self) -> Path | None:
        return self.paths["cpu"] / "cpu.stat"

    def lift_cpu_limit(self, lifted: bool) -> bool:
        if not self.limits.cpus:
            return False
        quota, _ = cfs_quota(self.limits.cpus, self.limits.cfs_period_us)
        _write(self.paths["cpu"] / "cpu.cfs_quota_us", "-1" if lifted else str(quota))
        return True

    def close(self) -> None:
        for path in self.paths.values():
            _rmdir_when_empty(path)


class SystemdScopeGroup(ResourceGroup):
    """A transient systemd scope. The process is wrapped by `systemd-run --scope`; accounting reads the
    scope's cgroup (v2 layout under the systemd hierarchy)."""

    backend = "systemd"

    def __init__(self, name: str, limits: Limits) -> None:
        super().__init__(name, limits)
        self.unit = f"bidbench-{name}.scope"
        self.user = [] if os.geteuid() == 0 else ["--user"]
        self._cgroup_path: Path | None = None

    def wrap(self, argv: list[str]) -> list[str]:
        props = ["-p", "CPUAccounting=yes", "-p", "MemoryAccounting=yes"]
        if self.limits.cpus:
            _, period = cfs_quota(self.limits.cpus, self.limits.cfs_period_us)
            props += ["-p", f"CPUQuota={int(self.limits.cpus * 100)}%", "-p", f"CPUQuotaPeriodSec={period}us"]
        if self.limits.cpuset:
            props += ["-p", f"AllowedCPUs={self.limits.cpuset}"]
        if self.limits.idle:
            props += ["-p", "CPUWeight=idle"]
        run = ["systemd-run", *self.user, "--quiet", "--collect", "--scope", f"--unit={self.unit}"]
        return [*run, *props, "--", *argv]

    def _cgroup(self) -> Path | None:
        # A scope's cgroup never moves once it exists; asking systemctl every second costs a process.
        if self._cgroup_path is not None:
            return self._cgroup_path
        argv = ["systemctl", *self.user, "show", "-P", "ControlGroup", self.unit]
        out = subprocess.run(argv, capture_output=True, text=True).stdout.strip()
        if out:
            self._cgroup_path = CGROUP_ROOT / out.lstrip("/")
        return self._cgroup_path

    def pids(self) -> list[int]:
        path = self._cgroup()
        return _read_pids(path / "cgroup.procs") if path else []

    def _cpu_stat(self) -> Path | None:
        path = self._cgroup()
        return path / "cpu.stat" if path else None

    def cpu_seconds(self) -> float:
        path = self._cpu_stat()
        return _usage_s(path) if path is not None and path.exists() else 0.0


class ProcessTreeGroup(ResourceGroup):
    """No cgroups: pin with sched_setaffinity, account by sampling the process tree with psutil. Less
    exact (a child that exits between samples is seen once its parent reaps it); the limit is not enforced."""

    backend = "none"
    exact_cpu = False
    enforces_limit = False

    def __init__(self, name: str, limits: Limits) -> None:
        super().__init__(name, limits)
        self.root_pids: list[int] = []
        self._seen: dict[int, tuple[float, float]] = {}
        self._finished_cpu = 0.0
        self._affinity: set[int] | None = None
        if limits.cpuset:
            problem = _cpuset_problem(limits.cpuset, os.sched_getaffinity(0))
            if problem:
                self._cpuset_refused(problem)
            else:
                self._affinity = parse_cpuset(limits.cpuset)
                self.cpuset_applied = True

    def preexec(self) -> None:
        if self._affinity:
            os.sched_setaffinity(0, self._affinity)

    def adopt(self, pid: int) -> None:
        self.root_pids.append(pid)

    def pids(self) -> list[int]:
        pids: list[int] = []
        for pid in self.root_pids:
            with contextlib.suppress(psutil.NoSuchProcess):
                proc = psutil.Process(pid)
                pids.append(pid)
                pids.extend(child.pid for child in proc.children(recursive=True))
        return sorted(set(pids))

    def cpu_seconds(self) -> float:
        live: dict[int, tuple[float, float]] = {}
        for pid in self.pids():
            with contextlib.suppress(psutil.NoSuchProcess, psutil.ZombieProcess):
                times = psutil.Process(pid).cpu_times()
                live[pid] = (times.user + times.system, times.children_user + times.children_system)
        # A root that exited takes its last seen time with it; keep that in the running total.
        for pid, (own, reaped) in self._seen.items():
            if pid not in live and pid in self.root_pids:
                self._finished_cpu += own + reaped
        self._seen = live
        tree = sum(own for own, _ in live.values())
        reaped_by_roots = sum(live[pid][1] for pid in self.root_pids if pid in live)
        return self._finished_cpu + tree + reaped_by_roots


HARNESS_COMPONENT = "harness"


class ReadOnlyGroup(ResourceGroup):
    """A group the harness only reads: nothing is started in it, and it sees no process of its own."""

    enforces_limit = False

    def __init__(self, name: str) -> None:
        super().__init__(name, Limits())

    def pids(self) -> list[int]:
        return []

    def usage(self) -> Usage:
        return Usage(self.cpu_seconds(), 0, 0)


class ThisProcess(ReadOnlyGroup):
    """The harness's own CPU (its sampling, its backend mapping), so a run counts it as accounted, not as
    another tenant's work."""

    backend = "self"

    def __init__(self) -> None:
        super().__init__(HARNESS_COMPONENT)

    def cpu_seconds(self) -> float:
        times = os.times()
        return times.user + times.system


def _write(path: Path, value: str, tolerate: bool = False) -> None:
    try:
        path.write_text(value)
    except OSError:
        if not tolerate:
            raise


def _read_pids(path: Path) -> list[int]:
    try:
        return [int(line) for line in path.read_text().split()]
    except (FileNotFoundError, ValueError):
        return []


def _rmdir_when_empty(path: Path, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while path.exists():
        try:
            path.rmdir()
            return
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.05)


def _v1_mount(controller: str) -> Path:
    for candidate in (CGROUP_ROOT / controller, CGROUP_ROOT / "cpu,cpuacct"):
        if candidate.is_dir() and controller in candidate.name.split(","):
            return candidate
    return CGROUP_ROOT / controller


def _inherit_cpuset(path: Path) -> None:
    """A new v1 cpuset group starts empty; it must have cpus and mems before it accepts tasks."""
    for key in ("cpuset.cpus", "cpuset.mems"):
        if not (path / key).read_text().strip():
            (path / key).write_text((path.parent / key).read_text().strip())


def _read_cpu_list(path: Path) -> set[int]:
    try:
        return parse_cpuset(path.read_text().strip())
    except (OSError, ValueError):
        return set()


def _cpuset_problem(spec: str, available: set[int]) -> str | None:
    """Why `spec` cannot be applied on top of `available` (the parent's CPUs), or None."""
    try:
        wanted = parse_cpuset(spec)
    except ValueError:
        return f"cpuset {spec!r} is not a CPU list such as 1 or 2-3"
    if not wanted:
        return f"cpuset {spec!r} names no CPU"
    missing = wanted - available if available else set()
    if missing:
        return f"cpuset {spec!r}: CPU {format_cpuset(missing)} not available here (have {format_cpuset(available)})"
    return None


def format_cpuset(cpus: set[int]) -> str:
    """The kernel's list form: {0, 1, 2, 5} -> "0-2,5"."""
    parts: list[str] = []
    # Consecutive CPUs are as far from their place in the sorted list as each other.
    for _, pairs in itertools.groupby(enumerate(sorted(cpus)), lambda pair: pair[1] - pair[0]):
        run = [cpu for _, cpu in pairs]
        parts.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
    return ",".join(parts)


def parse_cpuset(spec: str) -> set[int]:
    cpus: set[int] = set()
    for part in spec.split(","):
        if "-" in part:
            lo, hi = part.split("-")
            cpus.update(range(int(lo), int(hi) + 1))
        elif part:
            cpus.add(int(part))
    return cpus


def _try_create(cls: type[ResourceGroup]) -> bool:
    try:
        probe = cls(f"probe-{uuid.uuid4().hex[:8]}", Limits(cpus=0.5))
        probe.close()
        return True
    except (OSError, UserError):
        return False


BACKENDS = {
    "cgroup-v2": (CgroupV2Group, "cgroup v2: CPU limit enforced, exact CPU accounting"),
    "cgroup-v1": (CgroupV1Group, "cgroup v1: CPU limit enforced, exact CPU accounting"),
    "systemd": (SystemdScopeGroup, "systemd scope: CPU limit enforced, exact CPU accounting"),
    "none": (
        ProcessTreeGroup,
        "no cgroups: CPU pinned but NOT limited; CPU sampled from the process tree (less exact)",
    ),
}
"""Every backend, in order of preference, with its class and what it gives."""


def detect_backend() -> str:
    """The best backend that works here, or the one forced by BIDBENCH_RESOURCE_BACKEND."""
    forced = os.environ.get("BIDBENCH_RESOURCE_BACKEND")
    if forced:
        if forced not in BACKENDS:
            raise UserError(f"BIDBENCH_RESOURCE_BACKEND={forced!r} is not one of {', '.join(BACKENDS)}")
        return forced
    if (CGROUP_ROOT / "cgroup.controllers").exists() and _try_create(CgroupV2Group):
        return "cgroup-v2"
    if (CGROUP_ROOT / "cpuacct").is_dir() and _try_create(CgroupV1Group):
        return "cgroup-v1"
    if shutil.which("systemd-run") and Path("/run/systemd/system").is_dir():
        return "systemd"
    return "none"


def new_group(backend: str, name: str, limits: Limits) -> ResourceGroup:
    return BACKENDS[backend][0](f"{name}-{uuid.uuid4().hex[:6]}", limits)


def describe_backend(backend: str) -> str:
    return BACKENDS[backend][1]
