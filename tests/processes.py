"""The processes a test started, directly or through a tokparity it ran: every process a test
starts inherits the mark tests/conftest.py puts in the test process's environment. So a test that
looks for processes left behind finds its own, not those of the test process beside it (pytest -n)."""

from __future__ import annotations

import os
from pathlib import Path

MARK = "TOKPARITY_TEST_PROCESS"


def ours(word: str) -> list[str]:
    """The command lines of the running processes whose command line holds ``word`` and whose
    environment holds this test process's mark (the test process itself aside)."""
    mark = f"{MARK}={os.getpid()}".encode()
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        if environ.parent.name == str(os.getpid()):
            continue
        try:
            command = (environ.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (environ.parent / "stat").read_text().rsplit(")", 1)[1].split()[0]
            if word in command and state != "Z" and mark in environ.read_bytes().split(b"\0"):
                found.append(command)
        except (OSError, IndexError):
            continue
    return found
