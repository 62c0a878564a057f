"""The reaper of a Ray that tokparity starts here: it ends that Ray's processes once the run ends,
even when the run is killed with SIGKILL.

Ray's own processes (its store, its raylet, its dashboard and runtime-environment agents) are not
tokparity's children, and a SIGKILL gives tokparity no moment to stop them. So a small process
waits beside the run on a pipe that only the run holds open. The pipe's end (an exit, a crash, a
SIGKILL) wakes it: it stops every process that carries the run's mark in its environment, and
their children. The mark is set before Ray starts, so each of Ray's processes inherits it; a
command line would not do (Ray renames its agents, and they outlive their parent). The reaper
runs in a session of its own, so a Ctrl-C at the terminal does not end it first.

Linux only (it reads ``/proc``); elsewhere no reaper is started.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

GRACE_SECONDS = 3.0  # after SIGTERM, before SIGKILL
MARK = "TOKPARITY_RAY_RUN"  # in the environment of every process of a Ray we start
REAPS = "TOKPARITY_REAPS"  # in the reaper's: the mark it looks for


def marked() -> str:
    """A fresh mark, put in this process's environment for the Ray about to start."""
    os.environ[MARK] = secrets.token_hex(8)
    return os.environ[MARK]


class Reaper:
    """The reaper of the processes marked ``mark`` (see the module), started at once. ``close``
    once that Ray is stopped: the reaper finds nothing left of it and ends. Where there is no
    ``/proc`` nothing is started."""

    def __init__(self, mark: str):
        self._pipe: IO[bytes] | None = None
        self._process: subprocess.Popen | None = None
        if not Path("/proc/self/environ").exists():
            return
        from tokparity.backends.isolated import child_env
        from tokparity.child_python import python_argv

        read, write = os.pipe()  # (not inherited by the processes Ray starts: only the reaper holds the read end)
        try:
            self._process = subprocess.Popen(
                python_argv("-m", "tokparity.run.reaper"), stdin=read, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, start_new_session=True,
                env={**{k: v for k, v in child_env().items() if k != MARK}, REAPS: mark})
        except OSError:
            os.close(write)
            return
        finally:
            os.close(read)
        self._pipe = os.fdopen(write, "wb")

    def close(self) -> None:
        if self._pipe is not None:
            self._pipe.close()
        if self._process is not None:
            try:
                self._process.wait(timeout=2 * GRACE_SECONDS + 5)  # (it stops what Ray left, if anything)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()


def processes_of(mark: str, spared: int) -> set[int]:
    """The processes whose environment holds ``mark``, and their children. Never this one, nor
    ``spared`` and its own children: the run, while it lives, ends its children itself."""
    parent_of: dict[int, int] = {}
    found: set[int] = set()
    needle = f"{MARK}={mark}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            parent_of[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            if needle in Path(f"/proc/{entry}/environ").read_bytes():
                found.add(int(entry))
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile, or not ours to read
    return (_with_children(found, parent_of) - _with_children({spared}, parent_of)) - {os.getpid()}


def _with_children(pids: set[int], parent_of: dict[int, int]) -> set[int]:
    found = set(pids)
    while True:
        children = {pid for pid, parent in parent_of.items() if parent in found} - found
        if not children:
            return found
        found |= children


def stop(mark: str, spared: int) -> None:
    for sig, grace in ((signal.SIGTERM, GRACE_SECONDS), (signal.SIGKILL, GRACE_SECONDS)):
        for pid in processes_of(mark, spared):
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + grace
        while processes_of(mark, spared) and time.monotonic() < deadline:
            time.sleep(0.1)


def main() -> None:
    mark, run = os.environ.get(REAPS, ""), os.getppid()
    for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, signal.SIG_IGN)  # the run's terminal going away must not end the reaper first
    sys.stdin.buffer.read()  # until the run closes the pipe, or ends
    if mark:
        stop(mark, run)


if __name__ == "__main__":
    main()
