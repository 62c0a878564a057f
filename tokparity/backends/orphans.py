"""Orphans of the engines: what an engine started that left its process group (``setsid``) and
dropped the engine's mark from its environment is out of reach of the engine's own cleanup
(tokparity.backends.process: its process group, then every process that carries its mark). When its
parent exits, such a process is handed to the nearest subreaper, init otherwise, and lives on.

The ``tokparity`` command (``command()``, not a caller of ``main``) makes itself that subreaper
(Linux ``PR_SET_CHILD_SUBREAPER``) for as long as it runs: every orphan of its engines becomes its
child. A child of its own in another session that is not an engine it still waits for is such an
orphan: ``reap_adopted`` reaps the ones that have exited whenever an engine is stopped (a run that
restarts a forking engine for an hour piles up no zombies). When the command ends, ``stop_adopted``
gives the rest a moment to end by themselves, then stops those still running, SIGTERM, then
SIGKILL after a grace, and reaps them. Only direct children are signalled: a pid not yet reaped
cannot be taken by another process, so no signal can reach a stranger. What a stopped orphan
started becomes the command's child in turn and is stopped in the next round.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
PR_GET_CHILD_SUBREAPER = 37
GRACE_SECONDS = 1.0  # from SIGTERM to SIGKILL
SETTLE_SECONDS = 0.5  # for orphans to end by themselves first: an engine whose owner died sees its pipes close
STOP_SECONDS = 5.0  # for all the rounds together
# The signals that end tokparity, each as Ctrl-C does (tokparity.cli): Ctrl-C, a supervisor's stop,
# a closed terminal (SIGHUP), Ctrl-\ (SIGQUIT), and every other whose default action ends a process
# at once, with no cleanup: SIGUSR1, SIGALRM, SIGXCPU (a CPU limit), SIGPROF, SIGPWR, the real-time ones.
# Left alone: the faults, whose handler would return to the instruction that faulted (SIGSEGV,
# SIGBUS, SIGFPE, SIGILL); those Python ignores itself (SIGPIPE, SIGXFSZ); those that end nothing.
_FAULTS = {signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL}
_NOT_ENDING = {signal.SIGKILL, signal.SIGSTOP, signal.SIGPIPE, signal.SIGXFSZ, signal.SIGCHLD, signal.SIGCONT,
               signal.SIGURG, signal.SIGWINCH, signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU,
               *(getattr(signal, name) for name in ("SIGINFO",) if hasattr(signal, name))}
# (these seven are taken whatever handles them before; the others only where nothing does)
ALWAYS_STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2,
                   signal.SIGALRM)
STOP_SIGNALS = ALWAYS_STOPPING + tuple(sorted(set(signal.valid_signals()) - _FAULTS - _NOT_ENDING - set(ALWAYS_STOPPING)))

_engines: weakref.WeakSet[subprocess.Popen] = weakref.WeakSet()  # what tokparity started and waits for itself
_adopting = False
_kept: frozenset[int] = frozenset()  # the children the process had before it adopted: not orphans


def started(proc: subprocess.Popen) -> None:
    """Note an engine tokparity started: its own to wait for, never taken for an orphan."""
    _engines.add(proc)


def _libc_prctl(option: int, value: int = 0) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    return int(libc.prctl(option, value, 0, 0, 0))


def _subreaper() -> int | None:
    """Whether this process is a subreaper now (1 or 0), or None where it cannot be asked."""
    flag = ctypes.c_int(0)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0) != 0:
            return None
    except (OSError, AttributeError):
        return None
    return flag.value


def _own_proc() -> bool:
    """Whether /proc shows this process's own pid namespace (it can be another's after ``unshare``)."""
    try:
        return os.readlink("/proc/self") == str(os.getpid())
    except OSError:
        return False


def _children() -> dict[int, tuple[str, int]]:
    """pid -> (state, session) of every child of this process (``/proc/PID/stat``, the fields after
    the name in parentheses: state, parent, group, session)."""
    me, found = os.getpid(), dict[int, tuple[str, int]]()
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
            if int(fields[1]) == me:
                found[int(name)] = (fields[0].decode("ascii", "replace"), int(fields[3]))
        except (OSError, IndexError, ValueError):  # gone meanwhile
            continue
    return found


def _adopted() -> dict[int, str]:
    """pid -> state of each orphan this process adopted: a child in another session than its own
    (engines start their own; multiprocessing's helpers stay in this one), neither an engine it
    still waits for nor a child it had before adopting."""
    waited = {proc.pid for proc in list(_engines) if proc.returncode is None}
    session = os.getsid(0)
    return {pid: state for pid, (state, their_session) in _children().items()
            if their_session != session and pid not in waited and pid not in _kept}


def _reap(pid: int) -> bool:
    """Reap ``pid`` if it has exited; whether it is gone."""
    try:
        return os.waitpid(pid, os.WNOHANG)[0] != 0
    except ChildProcessError:
        return True


def reap_adopted() -> None:
    """Reap the adopted orphans that have exited (else zombies until the command ends)."""
    if _adopting:
        for pid, state in _adopted().items():
            if state == "Z":
                _reap(pid)


def _command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b" ".join(f.read().rstrip(b"\0").split(b"\0")).decode("utf-8", "replace") or f"pid {pid}"
    except OSError:
        return f"pid {pid}"


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)  # (a child not yet reaped: the pid is still this process's child)
    except ProcessLookupError:  # reaped by someone else's waitpid(-1) meanwhile
        pass


def _ticks_since_boot() -> int:
    """Now, in the clock ticks since boot that /proc gives a process's start in."""
    try:
        with open("/proc/uptime") as f:
            return int(float(f.read().split()[0]) * os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError):
        return 0


def _started_at(pid: int) -> int:
    """When ``pid`` started, in clock ticks since boot (0 where /proc does not say)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return 0


def stop_adopted() -> list[str]:
    """Stop every adopted orphan still running, and what each started, and reap them: the command
    line of each one stopped."""
    stopped: list[str] = []
    _settle()
    deadline = time.monotonic() + STOP_SECONDS
    # A process born after the stop began was born of it: an heir forked when told to stop, or one
    # that keeps forking. It gets SIGKILL at once, or it would fork again in its grace.
    begun = _ticks_since_boot()
    while time.monotonic() < deadline:
        found = _adopted()
        if not found:
            break
        running = [pid for pid, state in found.items() if state != "Z"]
        born = {pid for pid in running if _started_at(pid) > begun}
        for pid in running:
            stopped.append(_command_line(pid))
            _signal(pid, signal.SIGKILL if pid in born else signal.SIGTERM)
        grace = min(deadline, time.monotonic() + (GRACE_SECONDS if set(running) - born else 0.0))
        left = set(found)
        while left and time.monotonic() < grace:
            left = {pid for pid in left if not _reap(pid)}
            if left:
                time.sleep(0.01)
        for pid in left:
            _signal(pid, signal.SIGKILL)
        while left and time.monotonic() < deadline:
            left = {pid for pid in left if not _reap(pid)}
            if left:
                time.sleep(0.01)
    return stopped


def _settle() -> None:
    """Reap the orphans that end by themselves within ``SETTLE_SECONDS``. The engine of a ``--jobs``
    worker that was killed is one: it ends once it finds its pipes closed. Only those still running
    after that are stopped, and said."""
    until = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < until:
        found = _adopted()
        for pid in [pid for pid, state in found.items() if state == "Z"]:
            _reap(pid)
        if all(state == "Z" for state in found.values()):
            return
        time.sleep(0.01)


@contextmanager
def adopting_orphans() -> Iterator[list[str]]:
    """Be the subreaper of what the engines start while the block runs, then stop and reap the
    orphans (Linux); the list yielded holds, afterwards, the command lines of those stopped. The
    ``STOP_SIGNALS`` are ignored while they are stopped (at most ``STOP_SECONDS``: the command is ending
    anyway); the subreaper flag is set back as it was."""
    global _adopting, _kept
    stopped: list[str] = []
    before = _subreaper() if sys.platform.startswith("linux") and _own_proc() else None
    if before is None or _libc_prctl(PR_SET_CHILD_SUBREAPER, 1) != 0:
        yield stopped
        return
    _kept, _adopting = frozenset(_children()), True
    try:
        yield stopped
    finally:
        handlers = {}
        if threading.current_thread() is threading.main_thread():  # (signals are the main thread's)
            handlers = {signum: signal.signal(signum, signal.SIG_IGN) for signum in STOP_SIGNALS}
        try:
            stopped += stop_adopted()
        finally:
            _adopting, _kept = False, frozenset()
            _libc_prctl(PR_SET_CHILD_SUBREAPER, before)
            for signum, handler in handlers.items():
                signal.signal(signum, handler)
