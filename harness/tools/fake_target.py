"""A fake HTTP/1.1 target on 127.0.0.1 with a known answer time, for checking what a load generator reports.

Every request (any method, any path) gets `200 {"ok":true}` after --delay-ms, timed from when its bytes
arrived, on kept-alive connections. With --stall-at-s, the first request that arrives that many seconds
after the first one freezes the server for --stall-ms, as a stop-the-world GC pause would: no answer
leaves until it ends, neither those in flight nor those of requests that arrive meanwhile.

`./bidbench overhead --accuracy` runs it in its own process (so its CPU is not the measuring process's):

    python -m harness.tools.fake_target --port 18081 --delay-ms 5
    python -m harness.tools.fake_target --port 18081 --delay-ms 1 --stall-at-s 3 --stall-ms 1000

It exits by itself after --max-s seconds (default 600) so a forgotten one cannot linger.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import socket
import socketserver
import threading
import time

RESPONSE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n"
    b"Server-Timing: db;dur=0.000, app;dur=0.000\r\n\r\n"
    b'{"ok":true}'
)
PR_SET_TIMERSLACK = 29


def precise_timers() -> None:
    """The kernel's default 50 µs timer slack would add to every delay; 1 ns keeps 5 ms at 5 ms."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0)


class Stall:
    """Holds every answer back for `stall_s`, once: from the first request that arrives `at_s` or more
    after the first request of all."""

    def __init__(self, at_s: float | None, stall_s: float) -> None:
        self.at_s = at_s
        self.stall_s = stall_s
        self.first: float | None = None
        self.until = 0.0
        self.lock = threading.Lock()

    def hold_until(self, arrived: float) -> float:
        """The earliest time an answer may leave, given when its request arrived."""
        with self.lock:
            if self.first is None:
                self.first = arrived
            if self.at_s is not None and self.until == 0.0 and arrived - self.first >= self.at_s:
                self.until = arrived + self.stall_s
            return self.until


def sleep_until(deadline: float) -> None:
    # time.sleep is clock_nanosleep here: with the timer slack at 1 ns it wakes within tens of µs, where
    # an event loop's epoll timeout is rounded up to the next whole millisecond (+0.5 ms on average).
    while (left := deadline - time.perf_counter()) > 0:
        time.sleep(left)


class Answering(socketserver.BaseRequestHandler):
    """One thread per kept-alive connection: read a request head, wait, answer, until the peer closes."""

    server: FakeServer

    def handle(self) -> None:
        sock = self.request
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        buffer = b""
        while time.perf_counter() < self.server.end:
            try:
                data = sock.recv(65536)
            except OSError:
                return
            if not data:
                return
            arrived = time.perf_counter()
            buffer += data
            # The generators under test send bodiless requests (GET); a body would need Content-Length.
            while b"\r\n\r\n" in buffer:
                _, buffer = buffer.split(b"\r\n\r\n", 1)
                held = self.server.stall.hold_until(arrived)
                sleep_until(max(arrived + self.server.delay_s, held))
                try:
                    sock.sendall(RESPONSE)
                except OSError:
                    return


class FakeServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024

    def __init__(self, port: int, delay_s: float, stall: Stall, max_s: float) -> None:
        self.delay_s = delay_s
        self.stall = stall
        self.end = time.perf_counter() + max_s
        super().__init__(("127.0.0.1", port), Answering)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--delay-ms", type=float, default=0.0, help="answer this long after arrival")
    parser.add_argument("--stall-at-s", type=float, default=None, help="freeze once, this long in")
    parser.add_argument("--stall-ms", type=float, default=1000.0, help="how long the freeze lasts")
    parser.add_argument("--max-s", type=float, default=600.0, help="exit after this long regardless")
    args = parser.parse_args(argv)
    precise_timers()
    stall = Stall(args.stall_at_s, args.stall_ms / 1000)
    server = FakeServer(args.port, args.delay_ms / 1000, stall, args.max_s)
    # Bounded in time: a fake left behind by a killed parent still goes away.
    threading.Timer(args.max_s, server.shutdown).start()
    with contextlib.suppress(KeyboardInterrupt), server:
        server.serve_forever(poll_interval=0.5)


if __name__ == "__main__":
    main()
