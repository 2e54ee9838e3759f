"""The live heap of a running JVM, read with `jcmd` (issue #28: memory after a full GC).

A heap figure taken after `GC.run` is the live set, free of however much garbage the last young
collections left behind, so it compares across collectors and JDKs. `jcmd` is taken from the JDK the
instance runs on (its JAVA_HOME knob), because an attach from another JDK release may be refused.
"""

from __future__ import annotations

import contextlib
import re
import struct
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil

from harness.apps.java import java_binary
from harness.console import UserError

UNITS = {"K": 1 / 1024, "M": 1.0, "G": 1024.0}
# G1 (17: "garbage-first heap   total 262144K, used 7073K [..."; 21+: "total reserved .., committed ..,
# used ..."), Serial ("def new generation" / "tenured generation", 25: "DefNew" / "Tenured") and Parallel
# ("PSYoungGen" / "ParOldGen") print one line per heap or generation with "total" and "used"; their
# sub-spaces ("eden space ...% used") and Metaspace have no "total", so summing these lines is the heap.
_TOTAL_USED = re.compile(r"^\s*(?P<name>[A-Za-z][\w -]*?)\s+total\b.*?\bused (?P<n>\d+)(?P<u>[KMG])\b")
_ZGC = re.compile(r"^\s*ZHeap\s+used (?P<n>\d+)(?P<u>[KMG])\b")
_SHENANDOAH = re.compile(r"\b(?P<n>\d+)(?P<u>[KMG]) used\b")


@dataclass(frozen=True)
class HeapReading:
    used_mb: float | None
    """Used heap after a full GC, in MiB; None when it could not be read (see `reason`)."""
    reason: str | None = None
    jcmd: str | None = None
    gc_s: float | None = None
    """Wall time `jcmd GC.run` took (the full collection plus the attach)."""

    def to_manifest(self) -> dict[str, object]:
        return {
            "heap_after_full_gc_mb": self.used_mb,
            "reason": self.reason,
            "jcmd": self.jcmd,
            "gc_s": self.gc_s,
        }


def parse_heap_info_used_mb(text: str) -> float | None:
    """Used heap in MiB from `jcmd <pid> GC.heap_info` output, or None for an unknown layout."""
    total: float | None = None
    shenandoah = False
    for line in text.splitlines():
        if line.strip().startswith(("Metaspace", "class space")):
            continue
        if "Shenandoah Heap" in line:
            shenandoah = True
            continue
        match = _TOTAL_USED.match(line) or _ZGC.match(line)
        if match is None and shenandoah:
            match = _SHENANDOAH.search(line)
            shenandoah = False
        if match:
            total = (total or 0.0) + int(match["n"]) * UNITS[match["u"]]
    return total


def jcmd_for(pid: int, java_home: str | None = None) -> str | None:
    """`jcmd` next to JAVA_HOME's java if given, else next to the process's executable, else the default's."""
    candidates: list[Path] = []
    if java_home:
        candidates.append(Path(java_home) / "bin" / "jcmd")
    exe = _executable(pid)
    if exe:
        candidates.append(Path(exe).resolve().parent / "jcmd")
    with contextlib.suppress(UserError):
        candidates.append(Path(java_binary()).resolve().parent / "jcmd")
    return next((str(candidate) for candidate in candidates if candidate.is_file()), None)


def _executable(pid: int) -> str:
    try:
        return psutil.Process(pid).exe()
    except (psutil.Error, OSError):
        return ""


def _jcmd(jcmd: str, pid: int, command: str, timeout_s: float) -> tuple[str | None, str | None]:
    """(stdout, None) on success, (None, why) otherwise."""
    try:
        done = subprocess.run(
            [jcmd, str(pid), command], capture_output=True, text=True, timeout=max(1.0, timeout_s)
        )
    except subprocess.TimeoutExpired:
        return None, f"jcmd {command} did not answer within {timeout_s:.0f} s"
    except OSError as exc:
        return None, f"jcmd {command} could not run: {exc}"
    # jcmd exits 0 on some attach failures too; the JVM's own reply then is missing.
    out = done.stdout
    if done.returncode != 0 or "Exception" in out or "Could not" in out:
        lines = [line.strip() for line in (out + done.stderr).splitlines() if line.strip()]
        # The exception line says why ("No such process", "Unable to open socket file"); the stack
        # frames after it do not.
        cause = next((line for line in lines if "Exception" in line), lines[-1] if lines else "no output")
        return None, f"jcmd {command} failed (exit {done.returncode}): {cause[:200]}"
    return out, None


def read_heap_after_full_gc(pid: int, timeout_s: float = 20, java_home: str | None = None) -> HeapReading:
    """Run a full GC in the JVM `pid`, then read its used heap. Never raises for a missing or failing
    jcmd or a dead process: the reading then has used_mb None and a reason."""
    if not psutil.pid_exists(pid):
        return HeapReading(None, f"no process {pid}")
    # jcmd attaches by sending SIGQUIT, which kills a process that is not a JVM: never aim it elsewhere.
    exe = _executable(pid)
    if Path(exe).name != "java":
        return HeapReading(None, f"process {pid} is not a JVM ({exe or 'executable unknown'})")
    jcmd = jcmd_for(pid, java_home)
    if jcmd is None:
        return HeapReading(None, "no jcmd next to the instance's JDK or on the default JDK")
    deadline = time.monotonic() + timeout_s
    started = time.monotonic()
    _, why = _jcmd(jcmd, pid, "GC.run", timeout_s)
    gc_s = time.monotonic() - started
    if why:
        return HeapReading(None, why, jcmd, None)
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return HeapReading(None, f"no time left for GC.heap_info within {timeout_s:.0f} s", jcmd, gc_s)
    out, why = _jcmd(jcmd, pid, "GC.heap_info", remaining)
    if out is None:
        return HeapReading(None, why, jcmd, gc_s)
    used = parse_heap_info_used_mb(out)
    if used is None:
        first = next((line.strip() for line in out.splitlines()[1:] if line.strip()), "")
        return HeapReading(None, f"unrecognised GC.heap_info layout: {first[:80]!r}", jcmd, gc_s)
    return HeapReading(used, None, jcmd, gc_s)


# The JVM's performance counters (HotSpot's hsperfdata, the shared file jstat reads): a prologue, then
# entries of (length, name offset, vector length, type, flags, units, variability, data offset).
_PERF_MAGIC = 0xCAFEC0C0
_PROLOGUE = struct.Struct("iiqii")  # used, overflow, mod time stamp, entry offset, entry count (at byte 8)
_ENTRY = struct.Struct("iiicccci")
_COMPILE_TICKS = "java.ci.totalTime"
_TICKS_PER_S = "sun.os.hrt.frequency"


def perf_counters(data: bytes, wanted: Sequence[str]) -> dict[str, int]:
    """The named long counters of an hsperfdata file's bytes (those present among `wanted`)."""
    if len(data) < 32 or struct.unpack(">I", data[:4])[0] != _PERF_MAGIC:
        return {}
    order = "<" if data[4] == 1 else ">"
    _, _, _, offset, count = struct.Struct(order + _PROLOGUE.format).unpack_from(data, 8)
    entry = struct.Struct(order + _ENTRY.format)
    found: dict[str, int] = {}
    for _ in range(count):
        if offset + entry.size > len(data):
            break
        length, name_at, _, kind, _, _, _, data_at = entry.unpack_from(data, offset)
        if length <= 0:
            break
        name_end = data.find(b"\0", offset + name_at)
        name = data[offset + name_at : name_end].decode("ascii", "replace")
        if kind == b"J" and name in wanted:
            found[name] = struct.unpack_from(order + "q", data, offset + data_at)[0]
        offset += length
    return found


def jit_compile_seconds(pid: int) -> float | None:
    """Seconds the JVM `pid` has spent compiling (its `java.ci.totalTime`, as `jstat -compiler` prints it),
    read from its hsperfdata file without attaching; None when the JVM publishes none (-XX:-UsePerfData) or
    `pid` is no JVM."""
    try:
        user = psutil.Process(pid).username()
        # HotSpot writes it under /tmp on Linux whatever TMPDIR or java.io.tmpdir say.
        data = (Path("/tmp") / f"hsperfdata_{user}" / str(pid)).read_bytes()
    except (psutil.Error, OSError):
        return None
    counters = perf_counters(data, (_COMPILE_TICKS, _TICKS_PER_S))
    if _COMPILE_TICKS not in counters or not counters.get(_TICKS_PER_S):
        return None
    return counters[_COMPILE_TICKS] / counters[_TICKS_PER_S]
