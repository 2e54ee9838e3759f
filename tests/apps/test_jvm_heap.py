"""The heap after a full GC, read with jcmd: the GC.heap_info parser on captured output of OpenJDK 17 and
Temurin 25, the failure paths, and one real java-app instance (bounded: start-up, two jcmd calls, stop)."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from app_helpers import instance_spec

from harness.apps import jvm
from harness.apps.java import JAR, JavaDriver
from harness.apps.jvm import (
    jit_compile_seconds,
    parse_heap_info_used_mb,
    perf_counters,
    read_heap_after_full_gc,
)
from harness.console import UserError
from harness.db.cluster import free_port

# Captured with `jcmd <pid> GC.heap_info` against java-app after `GC.run` (the pid line included).
G1_17 = """24565:
 garbage-first heap   total 262144K, used 7073K [0x00000000f0000000, 0x0000000100000000)
  region size 1024K, 0 young (0K), 0 survivors (0K)
 Metaspace       used 15642K, committed 15936K, reserved 1114112K
  class space    used 1930K, committed 2048K, reserved 1048576K
"""
G1_25 = """25079:
garbage-first heap   total reserved 262144K, committed 262144K, used 7116K [0x00000000f0000000, 0x0000000100000000)
 region size 1024K, 0 young (0K), 0 survivors (0K)
"""
SERIAL_17 = """25180:
 def new generation   total 39296K, used 0K [0x00000000f8000000, 0x00000000faaa0000, 0x00000000faaa0000)
  eden space 34944K,   0% used [0x00000000f8000000, 0x00000000f8000000, 0x00000000fa220000)
  from space 4352K,   0% used [0x00000000fa660000, 0x00000000fa660000, 0x00000000faaa0000)
  to   space 4352K,   0% used [0x00000000fa220000, 0x00000000fa220000, 0x00000000fa660000)
 tenured generation   total 87424K, used 6688K [0x00000000faaa0000, 0x0000000100000000, 0x0000000100000000)
   the space 87424K,   7% used [0x00000000faaa0000, 0x00000000fb128008, 0x00000000fb128200, 0x0000000100000000)
 Metaspace       used 15580K, committed 15872K, reserved 1114112K
  class space    used 1915K, committed 2048K, reserved 1048576K
"""
PARALLEL_17 = """25276:
 PSYoungGen      total 38400K, used 1024K [0x00000000fd580000, 0x0000000100000000, 0x0000000100000000)
  eden space 33280K, 3% used [0x00000000fd580000,0x00000000fd580000,0x00000000ff600000)
  from space 5120K, 0% used [0x00000000ffb00000,0x00000000ffb00000,0x0000000100000000)
  to   space 5120K, 0% used [0x00000000ff600000,0x00000000ff600000,0x00000000ffb00000)
 ParOldGen       total 87552K, used 6640K [0x00000000f8000000, 0x00000000fd580000, 0x00000000fd580000)
  object space 87552K, 7% used [0x00000000f8000000,0x00000000f867c2c8,0x00000000fd580000)
 Metaspace       used 15591K, committed 15872K, reserved 1114112K
  class space    used 1919K, committed 2048K, reserved 1048576K
"""
SERIAL_25 = """25373:
DefNew     total 39296K, used 0K [0x00000000f8000000, 0x00000000faaa0000, 0x00000000faaa0000)
 eden space 34944K,   0% used [0x00000000f8000000, 0x00000000f8000000, 0x00000000fa220000)
Tenured    total 87424K, used 7102K [0x00000000faaa0000, 0x0000000100000000, 0x0000000100000000)
 the  space 87424K,   8% used [0x00000000faaa0000, 0x00000000fb18f8d0, 0x0000000100000000)
"""


@pytest.mark.parametrize(
    ("text", "mib"),
    [
        (G1_17, 7073 / 1024),
        (G1_25, 7116 / 1024),
        (SERIAL_17, 6688 / 1024),
        (PARALLEL_17, (1024 + 6640) / 1024),
        (SERIAL_25, 7102 / 1024),
        (" ZHeap           used 12M, capacity 256M, max capacity 256M\n Metaspace       used 15000K\n", 12.0),
        ("1:\nShenandoah Heap\n 262144K max, 262144K soft max, 262144K committed, 9216K used\n", 9.0),
    ],
)
def test_heap_info_parser(text: str, mib: float) -> None:
    assert parse_heap_info_used_mb(text) == pytest.approx(mib)


def test_heap_info_parser_ignores_metaspace_and_unknown_text() -> None:
    assert (
        parse_heap_info_used_mb(" Metaspace       used 15642K, committed 15936K, reserved 1114112K\n") is None
    )
    assert parse_heap_info_used_mb("12345:\nsomething else entirely\n") is None


def test_a_process_that_is_not_a_jvm_gives_none_and_a_reason() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(20)"])
    try:
        reading = read_heap_after_full_gc(proc.pid, timeout_s=15)
        # jcmd's attach is a SIGQUIT, which would have killed this process: it must not be tried.
        assert reading.used_mb is None and "not a JVM" in (reading.reason or "")
        assert reading.jcmd is None and proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_no_jcmd_anywhere_gives_none(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def no_java(java_home: str | None = None) -> str:
        raise UserError("no java")

    monkeypatch.setattr(jvm, "java_binary", no_java)
    # A JDK without jcmd (a JRE): the process claims to be its java.
    (tmp_path / "bin").mkdir()
    monkeypatch.setattr(jvm, "_executable", lambda pid: str(tmp_path / "bin" / "java"))
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(20)"])
    try:
        reading = read_heap_after_full_gc(proc.pid, java_home=str(tmp_path))
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()
    assert reading.used_mb is None and "no jcmd" in (reading.reason or "")
    assert read_heap_after_full_gc(proc.pid).reason == f"no process {proc.pid}"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("mvn") is None, reason="needs Maven")
def test_heap_after_full_gc_of_a_real_idle_instance(tmp_path: Path, database_url: str) -> None:
    from harness.engine.instances import running_instance

    driver = JavaDriver()
    driver.ensure_built()
    assert JAR.is_file()
    spec = instance_spec("java", tmp_path, port=free_port(), database_url=database_url, DB_POOL_SIZE="2")
    with running_instance(driver, spec) as instance:
        reading = read_heap_after_full_gc(instance.processes[0].pid, timeout_s=30)
        compiled = jit_compile_seconds(instance.processes[0].pid)
    print(f"idle java-app, heap after full GC: {reading}")
    assert reading.reason is None, reading.reason
    assert reading.jcmd and Path(reading.jcmd).name == "jcmd"
    # The default flags fix the heap at 256 MiB; an idle app's live set is a few MiB.
    assert reading.used_mb is not None and 0.5 < reading.used_mb < 256
    assert reading.to_manifest()["heap_after_full_gc_mb"] == reading.used_mb
    # A started JVM has compiled its start-up path; its counters are read without attaching.
    assert compiled is not None and compiled > 0


def hsperfdata(counters: dict[str, int], order: str) -> bytes:
    """An hsperfdata file as HotSpot lays it out: prologue, then one entry per long counter."""
    entries = b""
    for name, value in counters.items():
        name_bytes = name.encode() + b"\0"
        name_at = 20
        data_at = name_at + len(name_bytes) + (-(name_at + len(name_bytes)) % 8)
        length = data_at + 8
        head = struct.pack(order + "iiicccci", length, name_at, 0, b"J", b"\0", b"\3", b"\3", data_at)
        entries += head + name_bytes.ljust(data_at - name_at, b"\0") + struct.pack(order + "q", value)
    prologue = struct.pack(">I", 0xCAFEC0C0) + bytes([1 if order == "<" else 0, 2, 0, 1])
    prologue += struct.pack(order + "iiqii", 32 + len(entries), 0, 0, 32, len(counters))
    return prologue + entries


@pytest.mark.parametrize("order", ["<", ">"])
def test_perf_counters_reads_named_longs_in_either_byte_order(order: str) -> None:
    data = hsperfdata({"sun.os.hrt.frequency": 10**9, "java.ci.totalTime": 2_500_000_000, "x.y": 7}, order)
    found = perf_counters(data, ("java.ci.totalTime", "sun.os.hrt.frequency"))
    assert found == {"java.ci.totalTime": 2_500_000_000, "sun.os.hrt.frequency": 10**9}


def test_perf_counters_refuse_a_file_that_is_not_hsperfdata() -> None:
    assert perf_counters(b"\0" * 64, ("java.ci.totalTime",)) == {}


def test_a_process_without_perf_data_has_no_compile_time() -> None:
    assert jit_compile_seconds(os.getpid()) is None
