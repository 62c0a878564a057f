"""JSON over HTTP to a tokenizer server: one kept-alive connection, errors as a case's failure.

A refused or dropped connection is a crash, a slow answer a timeout, a body that is not JSON an
error: each fails the case it was asked for, and the run goes on. A server you run that refuses the
connection after it has answered has stopped: the run stops in one line (``ServerGone``).
"""

from __future__ import annotations

import http.client
import json
import socket

from tokparity.errors import BackendCrash, BackendTimeout, CaseFailure, ServerGone, TokparityError

LOOPBACK = "127.0.0.1"
CASE_SECONDS = 60.0


class ServerClient:
    """JSON over one kept-alive HTTP connection to a server at ``host:port``."""

    def __init__(self, host: str, port: int, timeout: float = CASE_SECONDS, yours: bool = False):
        self.host, self.port, self.timeout = host, port, timeout
        self.yours = yours  # (a server the user runs: tokparity cannot start it again)
        self._conn: http.client.HTTPConnection | None = None
        self._answered = False

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def post(self, path: str, body: dict) -> tuple[int, object]:
        """The status and JSON body of ``POST path``. A refused or dropped connection is a crash, a
        slow answer a timeout, a body that is not JSON an error: each of this case only."""
        return self.request("POST", path, _body(body))

    def first_answer(self, path: str, server: str, start: str) -> tuple[int, object]:
        """``GET path`` of a server you run, asked before any case. Where none answers, the client
        is closed and one line says how to start it (``start``: the command)."""
        try:
            return self.request("GET", path)
        except CaseFailure as e:
            self.close()
            raise TokparityError(f"{self.url}: no {server} answers there ({e.detail}); start it first ({start})") from None

    def request(self, method: str, path: str, data: bytes | None = None) -> tuple[int, object]:
        status, raw = self._exchange(method, path, data)
        return status, self._json(path, status, raw)

    def events(self, path: str, body: dict) -> tuple[int, list[object]]:
        """The status and events of ``POST path`` answered as server-sent events (``data: {…}``
        lines, read to the end). An answer of one JSON body (an error) is that one event."""
        status, raw = self._exchange("POST", path, _body(body))
        lines = raw.split(b"\n")
        if not any(line.startswith(b"data:") for line in lines):  # (a stream's ``:`` pings are skipped too)
            return status, [self._json(path, status, raw)] if raw.strip() else []
        data = (line[5:].strip() for line in lines if line.startswith(b"data:"))
        return status, [self._json(path, status, line) for line in data if line and line != b"[DONE]"]

    def _exchange(self, method: str, path: str, data: bytes | None) -> tuple[int, bytes]:
        for attempt in (0, 1):  # (a kept-alive connection the server closed meanwhile: once more, anew)
            kept, answered = self._conn is not None, False
            conn = self._conn or http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            self._conn = conn
            try:
                conn.request(method, path, data, {"Content-Type": "application/json"})
                response = conn.getresponse()
                answered = self._answered = True
                return response.status, response.read()
            except TimeoutError:
                self.close()
                raise BackendTimeout(f"{self.url}{path}: no answer within {self.timeout:.0f} s") from None
            except (ConnectionError, http.client.HTTPException, OSError) as e:
                self.close()
                if isinstance(e, ConnectionRefusedError) and self.yours and self._answered:
                    raise ServerGone(f"{self.url}: the server stopped: it answered before, and now refuses the "
                                     "connection; start it again, then continue the run with --resume") from None
                # (sent again only where a kept-alive connection was closed before any answer)
                if attempt or not kept or answered or isinstance(e, ConnectionRefusedError):
                    raise BackendCrash(f"{self.url}{path}: {type(e).__name__}: {e}") from None
        raise AssertionError("unreachable")

    def _json(self, path: str, status: int, raw: bytes) -> object:
        try:
            return json.loads(raw)
        except ValueError:
            raise CaseFailure(f"{self.url}{path}: HTTP {status}, a body that is not JSON: {raw[:120]!r}") from None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _body(body: dict) -> bytes:
    return json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")


def said(reply: object) -> str:
    """What a server's error body says, on one line."""
    if isinstance(reply, dict) and isinstance(reply.get("error"), dict):
        reply = reply["error"].get("message", reply["error"])
    return " ".join(str(reply).split())[:300]


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def parse_address(url: str, protocol: str) -> tuple[str, int]:
    """``PORT`` or ``HOST:PORT`` (``http:PROTOCOL@…``'s part after the ``@``): loopback unless a host
    is named."""
    host, _, port = url.rpartition(":")
    try:
        number = int(port)
    except ValueError:
        number = -1
    if not 0 < number < 65536:
        raise TokparityError(f"http:{protocol}@{url}: give a port, or HOST:PORT (http:{protocol}@8080)")
    return host.strip("[]") or LOOPBACK, number
