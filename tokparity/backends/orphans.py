"""Orphans of the engines: what an engine started that left its process group (``setsid``) and
dropped the engine's mark from its environment is out of reach of the engine's own cleanup
(tokparity.backends.cmd: its process group, then every process that carries its mark). When its
parent exits, such a process is handed to the nearest subreaper, init otherwise, and lives on.

The ``tokparity`` command makes itself that subreaper (Linux ``PR_SET_CHILD_SUBREAPER``): every
orphan of its engines becomes its child, and ``kill_adopted`` kills each child of its own still
running in another session (with what that one started) when the command ends, after every
backend is closed. Only the command does it: a program that uses tokparity as a library keeps
its children its own.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
REAP_SECONDS = 5.0


def adopt_orphans() -> bool:
    """Make this process the subreaper of what it starts; whether it is (Linux only)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process (``/proc/PID/stat``: the field after the name in parentheses)."""
    found: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            found[int(name)] = int(fields[1])
        except (OSError, IndexError, ValueError):  # gone meanwhile
            continue
    return found


def kill_adopted() -> int:
    """Kill every child of this process still running in another session than its own, and what
    each started; reap them. The number of processes killed."""
    me, parents = os.getpid(), _parents()
    try:
        session = os.getsid(0)
        adopted = [pid for pid, parent in parents.items() if parent == me and os.getsid(pid) != session]
    except OSError:
        return 0
    doomed, stack = [], list(adopted)
    while stack:
        pid = stack.pop()
        doomed.append(pid)
        stack.extend(child for child, parent in parents.items() if parent == pid)
    for pid in doomed:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    deadline = time.monotonic() + REAP_SECONDS
    for pid in adopted:  # (ours to reap now: else zombies until the command exits)
        while time.monotonic() < deadline:
            try:
                if os.waitpid(pid, os.WNOHANG)[0]:
                    break
            except ChildProcessError:
                break
            time.sleep(0.01)
    return len(doomed)
