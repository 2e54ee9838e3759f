"""A raw HTTP/1.1 client over plain sockets.

http.client and requests normalize what the suite must be able to get wrong on purpose: invalid UTF-8
bodies, chunked request bodies that pass the size limit, a declared Content-Length with no body behind
it, HEAD, arbitrary methods, raw unencoded request targets. This client writes exactly the bytes it is
given and parses the response strictly enough to check the wire rules (Content-Length vs chunked, the
header list as sent).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

DEFAULT_TIMEOUT_S = 10.0
JSON_HEADERS = (("Content-Type", "application/json"),)
_INLINE_BODY_MAX = 8192  # larger bodies are written by a sender thread, so an early 413 can be read


class TransportError(Exception):
    """The server did not answer with a parseable HTTP response (reset, timeout, garbage)."""


class ClosedWithoutAnswer(TransportError):
    """The server closed (or reset) the connection before sending a single byte of a response."""


@dataclass(frozen=True)
class RawRequest:
    method: str
    target: str
    """The raw request target (path and query), written as UTF-8 bytes without any encoding."""
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    chunk_size: int | None = None
    """Send the body with Transfer-Encoding: chunked, in chunks of this many bytes."""
    declared_length: int | None = None
    """Send `Content-Length: N` and no body at all (the 413-before-reading check)."""
    raw: bytes | None = None
    """The whole request, byte for byte (request line, headers, body): nothing is added, not even Host.
    For the syntax the other fields cannot express (no version, two Host headers, a NUL in a header)."""
    half_close: bool = False
    """Shut down the sending side once the request is written (a client that will send nothing more, e.g.
    after a body shorter than its Content-Length), then read the answer, if any."""
    pieces: int = 1
    """Write the request in this many parts, with a short pause between them, so the server reads its
    head in parts as it does from a slow or busy client."""

    def has_header(self, name: str) -> bool:
        return any(k.lower() == name.lower() for k, _ in self.headers)

    def describe(self) -> str:
        if self.raw is not None:
            return f"raw {self.raw[:120]!r}" + ("..." if len(self.raw) > 120 else "")
        extra = ""
        if self.chunk_size:
            extra = f" (chunked, {len(self.body)} bytes)"
        elif self.declared_length is not None:
            extra = f" (declared Content-Length {self.declared_length}, no body sent)"
        elif self.body:
            preview = self.body[:120]
            try:
                text = preview.decode("utf-8")
            except UnicodeDecodeError:
                text = "hex:" + preview.hex()
            extra = f" body[{len(self.body)}]={text!r}" + ("..." if len(self.body) > 120 else "")
        return f"{self.method} {self.target}{extra}"


@dataclass
class RawResponse:
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes | None
    """None when the response has no body by definition (HEAD, 1xx, 204, 304)."""
    chunked: bool = False
    closed: bool = False
    """The server asked to close the connection, or closed it."""

    def header(self, name: str) -> str | None:
        return next(iter(self.header_all(name)), None)

    def header_all(self, name: str) -> list[str]:
        return [value for key, value in self.headers if key.lower() == name.lower()]


def encode_request(req: RawRequest, host_header: str, keep_alive: bool) -> tuple[bytes, bytes]:
    """The head and the body bytes, exactly as they go on the wire."""
    if req.raw is not None:
        return req.raw, b""
    lines = [f"{req.method} {req.target} HTTP/1.1", f"Host: {host_header}"]
    lines += [f"{key}: {value}" for key, value in req.headers]
    if not req.has_header("Connection"):
        lines.append("Connection: keep-alive" if keep_alive else "Connection: close")
    body = req.body
    if req.declared_length is not None:
        lines.append(f"Content-Length: {req.declared_length}")
        body = b""
    elif req.chunk_size:
        lines.append("Transfer-Encoding: chunked")
        chunks = [req.body[i : i + req.chunk_size] for i in range(0, len(req.body), req.chunk_size)]
        body = b"".join(f"{len(c):x}\r\n".encode() + c + b"\r\n" for c in chunks) + b"0\r\n\r\n"
    elif (body or req.method in ("POST", "PUT")) and not req.has_header("Content-Length"):
        lines.append(f"Content-Length: {len(body)}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8")
    return head, body


class _Reader:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = bytearray()
        self.eof = False
        self.received = 0

    def _fill(self) -> bool:
        if self.eof:
            return False
        try:
            data = self.sock.recv(65536)
        except ConnectionResetError:
            if self.buf:
                self.eof = True
                return False
            raise
        if not data:
            self.eof = True
            return False
        self.buf += data
        self.received += len(data)
        return True

    def read_line(self, limit: int = 65536) -> bytes:
        while True:
            idx = self.buf.find(b"\r\n")
            if idx >= 0:
                line = bytes(self.buf[:idx])
                del self.buf[: idx + 2]
                return line
            if len(self.buf) > limit:
                raise TransportError("header line too long")
            if not self._fill():
                raise TransportError("connection closed before a complete response line")

    def read_exact(self, n: int) -> bytes:
        while len(self.buf) < n:
            if not self._fill():
                raise TransportError(f"connection closed after {len(self.buf)} of {n} body bytes")
        data = bytes(self.buf[:n])
        del self.buf[:n]
        return data

    def read_to_eof(self) -> bytes:
        while self._fill():
            pass
        return self.read_exact(len(self.buf))


def _read_response(reader: _Reader, method: str) -> RawResponse:
    while True:
        try:
            status_line = reader.read_line()
        except (TransportError, ConnectionResetError) as exc:
            if reader.received == 0:
                raise ClosedWithoutAnswer(
                    "connection closed before a complete response line (no answer at all)"
                ) from exc
            raise
        parts = status_line.decode("latin-1").split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise TransportError(f"bad status line {status_line[:80]!r}")
        status = int(parts[1])
        reason = parts[2] if len(parts) > 2 else ""
        headers: list[tuple[str, str]] = []
        while True:
            line = reader.read_line()
            if not line:
                break
            key, sep, value = line.decode("latin-1").partition(":")
            if not sep:
                raise TransportError(f"bad header line {line[:80]!r}")
            headers.append((key.strip(), value.strip()))
        if not 100 <= status < 200:  # a 1xx is interim: the real response follows
            break
    response = RawResponse(status=status, reason=reason, headers=headers, body=None)
    response.closed = "close" in (response.header("Connection") or "").lower()
    if method == "HEAD" or status in (204, 304):
        return response
    transfer = (response.header("Transfer-Encoding") or "").lower()
    length = response.header("Content-Length")
    if "chunked" in transfer:
        response.chunked = True
        body = bytearray()
        while True:
            size = int(reader.read_line().split(b";", 1)[0].strip(), 16)
            if size == 0:
                while reader.read_line():
                    pass
                break
            body += reader.read_exact(size)
            reader.read_exact(2)
        response.body = bytes(body)
    elif length is not None:
        response.body = reader.read_exact(int(length))
    else:
        response.body = reader.read_to_eof()
        response.closed = True
    return response


class Connection:
    """One keep-alive connection to a loopback server; reconnects when the server closed it."""

    def __init__(self, base_url: str, timeout_s: float = DEFAULT_TIMEOUT_S, retry: bool = True) -> None:
        parts = urlsplit(base_url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        if self.host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError(f"the conformance suite only talks to loopback, not {self.host}")
        self.timeout_s = timeout_s
        self.retry = retry
        """Retry once on a new connection when a reused one turns out closed. Off when the test is
        whether the server kept the connection open."""
        self.sock: socket.socket | None = None
        self.reader: _Reader | None = None

    def _connect(self) -> None:
        self.close()
        sock = socket.create_connection((self.host, self.port), timeout=self.timeout_s)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = sock
        self.reader = _Reader(sock)

    def close(self) -> None:
        if self.sock is not None:
            with contextlib.suppress(OSError):
                self.sock.close()
        self.sock = None
        self.reader = None

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, req: RawRequest, keep_alive: bool = True) -> RawResponse:
        reused = self.sock is not None
        try:
            return self._request_once(req, keep_alive)
        except (TransportError, ConnectionResetError, BrokenPipeError) as exc:
            # A reused keep-alive connection the server had already closed: retry once on a new one,
            # but only if nothing of a response arrived (the request was then never processed).
            if not (reused and self.retry) or (
                isinstance(exc, TransportError) and "before a complete response line" not in str(exc)
            ):
                raise
            self.close()
            return self._request_once(req, keep_alive)

    def _request_once(self, req: RawRequest, keep_alive: bool) -> RawResponse:
        if self.sock is None:
            self._connect()
        assert self.sock is not None and self.reader is not None
        sock = self.sock
        head, body = encode_request(req, f"{self.host}:{self.port}", keep_alive)
        sender: threading.Thread | None = None
        try:
            if req.pieces > 1:
                _send_in_pieces(sock, head + body, req.pieces)
            elif len(body) <= _INLINE_BODY_MAX:
                sock.sendall(head + body)
            else:
                sock.sendall(head)
                sender = threading.Thread(target=_send_quietly, args=(sock, body), daemon=True)
                sender.start()
            if req.half_close and sender is None:
                sock.shutdown(socket.SHUT_WR)
            response = _read_response(self.reader, req.method)
        except TimeoutError as exc:
            self.close()
            raise TransportError(f"no complete response within {self.timeout_s:.0f} s") from exc
        except (TransportError, OSError):
            self.close()
            raise
        if sender is not None and sender.is_alive():
            # The server answered before taking the whole body (an early 413): this connection is done.
            self.close()
            sender.join(timeout=2)
        elif response.closed or not keep_alive:
            self.close()
        return response


_PIECE_PAUSE_S = 0.02


def _send_in_pieces(sock: socket.socket, data: bytes, pieces: int) -> None:
    step = max(1, -(-len(data) // pieces))
    for start in range(0, len(data), step):
        if start:
            time.sleep(_PIECE_PAUSE_S)
        sock.sendall(data[start : start + step])


def _send_quietly(sock: socket.socket, data: bytes) -> None:
    view = memoryview(data)
    with contextlib.suppress(OSError):  # the server stopped reading (413) or closed: its answer tells why
        while view:
            sent = sock.send(view[:16384])
            view = view[sent:]


def send(base_url: str, req: RawRequest, timeout_s: float = DEFAULT_TIMEOUT_S) -> RawResponse:
    """One request on a fresh connection that is closed afterwards."""
    with Connection(base_url, timeout_s) as conn:
        return conn.request(req, keep_alive=False)
