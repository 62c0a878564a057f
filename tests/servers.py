"""A real server a test starts and asks over HTTP: started on a loopback port, waited for until one
endpoint answers, killed with the test (and with the test process, if that dies first)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tokparity.backends.server_http import ServerClient


@contextmanager
def serving(command: list[str], port: int, probe: str, log: Path, seconds: float = 120.0) -> Iterator[subprocess.Popen]:
    """``command`` running, once ``GET probe`` on ``port`` answers 200; its output in ``log``. It
    gives the server's process (a test may kill it mid-run)."""
    from tokparity.backends.llama_server import _die_with_parent
    with open(log, "wb") as out:
        server = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                  start_new_session=True, preexec_fn=_die_with_parent)
    try:
        client, deadline = ServerClient("127.0.0.1", port, 5.0), time.monotonic() + seconds
        while True:
            assert server.poll() is None, log.read_text("utf-8", "replace")[-2000:]
            try:
                if client.request("GET", probe)[0] == 200:
                    break
            except Exception:
                assert time.monotonic() < deadline, f"{command[:3]} did not answer in {seconds:.0f} s"
                time.sleep(0.2)
        client.close()
        yield server
    finally:
        server.kill()
        server.wait()
