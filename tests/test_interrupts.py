"""A stopping signal is never lost, even when it lands where Python swallows exceptions."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

from harness import paths

# The child stands in for a run: it forks (as every subprocess start does) and is caught by the signal inside
# an at-fork callback, where Python prints "Exception ignored" and drops the KeyboardInterrupt. It then goes
# on with its work, bounded: a lost signal shows as the work finishing and exit 0.
_RUN_CAUGHT_IN_AN_AT_FORK_CALLBACK = textwrap.dedent(
    """
    import os, sys, time
    from harness.cli.interrupts import stop_on_signals

    stop_on_signals()

    def slow_after_fork() -> None:
        print("in the at-fork callback", flush=True)
        time.sleep(5)

    os.register_at_fork(after_in_parent=slow_after_fork)
    try:
        child = os.fork()
        if child == 0:
            os._exit(0)
        os.waitpid(child, 0)
        time.sleep(10)
        print("the work finished", flush=True)
    except KeyboardInterrupt as exc:
        print(f"interrupted by {exc}", flush=True)
        sys.exit(130)
    """
)


def _run_signalled_in_at_fork_callback(signum: int) -> tuple[int, str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _RUN_CAUGHT_IN_AN_AT_FORK_CALLBACK],
        cwd=paths.ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.strip() == "in the at-fork callback", first
        proc.send_signal(signum)
        rest, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, first + rest


def test_ctrl_c_inside_an_at_fork_callback_still_stops_the_run() -> None:
    returncode, output = _run_signalled_in_at_fork_callback(signal.SIGINT)
    assert returncode == 130, output
    assert f"interrupted by signal {int(signal.SIGINT)}" in output
    assert "the work finished" not in output


def test_sigterm_inside_an_at_fork_callback_still_stops_the_run() -> None:
    returncode, output = _run_signalled_in_at_fork_callback(signal.SIGTERM)
    assert returncode == 130, output
    assert "the work finished" not in output


def test_other_swallowed_exceptions_are_still_reported() -> None:
    script = textwrap.dedent(
        """
        from harness.cli.interrupts import stop_on_signals

        stop_on_signals()

        class Broken:
            def __del__(self) -> None:
                raise ValueError("a broken finalizer")

        Broken()
        print("went on", flush=True)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=paths.ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    assert "went on" in done.stdout
    assert "a broken finalizer" in done.stderr
