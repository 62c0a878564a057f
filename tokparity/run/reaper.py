"""The reaper of a Ray that tokparity starts here: it ends that Ray's processes once the run ends,
even when the run is killed with SIGKILL.

A SIGKILL gives tokparity no moment to stop the Ray it started. Ray's store and raylet die with
the run, but its dashboard and runtime-environment agents live on. So a small process waits
beside the run on a pipe that only the run holds open. Meanwhile it notes every process below
the run. A run that ends well writes ``closed`` before it closes the pipe. A pipe that ends
without it (a crash, a SIGKILL) means the run died. The reaper then stops every process it noted,
every process that carries the run's mark in its environment, and their children.

Both are needed. The mark is set before Ray starts, so each of Ray's processes inherits it; but
Ray's agents write their new names over the start of their environment, mark included. And once
the raylet dies, nothing links its agents to the run but the reaper's notes.
The reaper runs in a session of its own, so a Ctrl-C at the terminal does not end it first.

Linux only (it reads ``/proc``); elsewhere no reaper is started.
"""

from __future__ import annotations

import os
import secrets
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, NamedTuple

GRACE_SECONDS = 3.0  # after SIGTERM, before SIGKILL
STOP_SECONDS = 20.0  # the longest the reaper keeps looking for processes to stop
WATCH_SECONDS = 0.5  # how often the reaper looks at the processes below the run
MARK = "TOKPARITY_RAY_RUN"  # in the environment of every process of a Ray we start
REAPS = "TOKPARITY_REAPS"  # in the reaper's: the mark it looks for
CLOSED = b"closed"  # what the run writes on the pipe before it closes it; a run that dies writes nothing


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
                python_argv("-m", "tokparity.run.reaper", str(os.getpid())), stdin=read, stdout=subprocess.DEVNULL,
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
            try:
                self._pipe.write(CLOSED)  # (the run lives on: the reaper must spare its children)
                self._pipe.close()
            except OSError:
                pass
        if self._process is not None:
            try:
                self._process.wait(timeout=STOP_SECONDS + 5)  # (it stops what Ray left, if anything)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()


class Process(NamedTuple):
    """A process: a pid's number is reused, its start time with it is not."""

    pid: int
    started: str


def processes() -> dict[int, tuple[Process, int]]:
    """The live processes, with their parents' pids. Not zombies: they are gone but for their
    parent's wait."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if fields[0] != "Z":
            found[int(entry)] = Process(int(entry), fields[19]), int(fields[1])
    return found


def _with_children(pids: set[int], table: dict[int, tuple[Process, int]]) -> set[int]:
    found = set(pids)
    while True:
        children = {pid for pid, (_, parent) in table.items() if parent in found} - found
        if not children:
            return found
        found |= children


def _carries(pid: int, mark: str) -> bool:
    try:
        return f"{MARK}={mark}".encode() in Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False  # gone meanwhile, or not ours to read


def to_stop(mark: str, spared: int | None, seen: set[Process]) -> set[int]:
    """The processes to stop: those that carry ``mark``, those ``seen`` below the run while it
    lived, and their children. Never this one, nor ``spared`` and its own children: a run that
    lives on ends its children itself."""
    table = processes()
    found = {pid for pid in table if mark and _carries(pid, mark)} | {p.pid for p in seen if p.pid in table
                                                                      and table[p.pid][0] == p}
    kept = _with_children({spared}, table) if spared is not None else set()
    return (_with_children(found, table) - kept) - {os.getpid()}


def stop(mark: str, spared: int | None, seen: set[Process]) -> None:
    """SIGTERM each process to stop once, then SIGKILL it after the grace. The search repeats until
    none is left: a process may start while its parent is being stopped."""
    terminated: dict[int, float] = {}
    deadline = time.monotonic() + STOP_SECONDS
    while (found := to_stop(mark, spared, seen)) and time.monotonic() < deadline:
        now = time.monotonic()
        for pid in found:
            late = pid in terminated and now - terminated[pid] > GRACE_SECONDS
            try:
                if pid not in terminated or late:
                    os.kill(pid, signal.SIGKILL if late else signal.SIGTERM)
            except OSError:
                pass
            terminated.setdefault(pid, now)
        time.sleep(0.1)


def watch(run: int) -> tuple[bytes, set[Process]]:
    """What the run wrote on the pipe, read until it closes; the processes seen below the run
    meanwhile. The mark alone is not enough: Ray's agents write their new name over the start of
    their environment, and once the raylet dies nothing links them to the run."""
    said, seen = b"", set[Process]()
    while True:
        if select.select([sys.stdin], [], [], WATCH_SECONDS)[0]:
            chunk = os.read(sys.stdin.fileno(), 64)
            if not chunk:
                return said, seen
            said += chunk
        table = processes()
        seen |= {table[pid][0] for pid in _with_children({run}, table) - {run, os.getpid()}}


def main() -> None:
    mark, run = os.environ.get(REAPS, ""), int(sys.argv[1])
    for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, signal.SIG_IGN)  # the run's terminal going away must not end the reaper first
    if os.getppid() != run:  # the run died before the reaper started: only its mark is left to go by
        stop(mark, None, set())
        return
    said, seen = watch(run)
    if said == CLOSED:
        stop(mark, run, set())
    else:  # the run died: nothing is spared (its children may still hang from it for a moment)
        stop(mark, None, seen)


if __name__ == "__main__":
    main()
