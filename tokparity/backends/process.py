"""A program tokparity starts and must stop: its process group and the processes marked as its,
whether it has exited, and how its exit and its lines are said in a report."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time

from tokparity.backends import orphans
from tokparity.textview import without_surrogates


def kill_group(proc: subprocess.Popen) -> None:
    """Kill the program and everything it started (its process group, made by ``start_new_session``),
    even when the program itself has already exited: a child it forked may still be running. Until
    the program is reaped here, its pid, and so the group's id, cannot be taken by another process
    (``exited`` looks without reaping), so the signal cannot hit anyone else's group."""
    if proc.returncode is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


ENGINE_MARK = "TOKPARITY_ENGINE_MARK"


def kill_marked(mark: str) -> None:
    """Kill every process whose environment carries this engine's mark: what the program started
    and moved out of its process group (a daemon's ``setsid``), which ``killpg`` misses. Children
    inherit the environment, so only a program that also clears it escapes. Linux (``/proc``)."""
    needle = f"{ENGINE_MARK}={mark}".encode()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    for name in entries:
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                marked = needle in f.read().split(b"\0")
            if marked:
                os.kill(int(name), signal.SIGKILL)
        except OSError:  # gone meanwhile, or not ours to read
            continue


def kill_engine(proc: subprocess.Popen, mark: str) -> None:
    kill_group(proc)
    kill_marked(mark)
    orphans.reap_adopted()  # (what the engine left is the command's child, once it is the subreaper)


def exited(proc: subprocess.Popen) -> bool:
    """Whether the program has exited, without reaping it (see ``kill_group``)."""
    if proc.returncode is not None:
        return True
    if not hasattr(os, "waitid"):  # (not on macOS: there, reaping it is the only way to know)
        return proc.poll() is not None
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def wait_for_exit(proc: subprocess.Popen, seconds: float) -> bool:
    """Up to ``seconds`` for the program to exit (not reaped); whether it did."""
    end = time.monotonic() + seconds
    while not exited(proc):
        if time.monotonic() >= end:
            return False
        time.sleep(0.01)
    return True


def pidfd(pid: int) -> int | None:
    """A descriptor that ``poll`` reports readable when the process exits (Linux 5.3+), or None."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


# The start of a reply that names its request: read where the rest of the line is no JSON
_REPLY_ID = re.compile(rb'\s*\{\s*"id"\s*:\s*(\d{1,18})\s*[,}]')
_decode = json.JSONDecoder().decode


def read_reply(line: bytes, rid: int) -> object:
    """What a line an engine wrote holds: its JSON value. Where the line starts as the reply to
    request ``rid`` but no JSON reader here takes it (nested too deeply, cut short), an error reply
    for ``rid``, said at once rather than waited on to the timeout; else None."""
    try:  # (a byte-order mark first, as .NET writes UTF-8, is no character of the reply)
        return _decode(line.decode("utf-8", "replace").removeprefix("\ufeff"))
    except (ValueError, RecursionError) as e:
        named = _REPLY_ID.match(line)
        if named is None or int(named.group(1)) != rid:
            return None
        why = "nested too deeply" if isinstance(e, RecursionError) else "not JSON"
        return {"id": rid, "error": f"its reply cannot be read ({why}): {shown_line(line)}"}


def max_crashes() -> int:
    """TOKPARITY_MAX_CRASHES, or 100: the crashes after which an engine is not started again (0:
    never given up); one line where it is no whole number (checked as a run starts)."""
    from tokparity.errors import TokparityError

    setting = os.environ.get("TOKPARITY_MAX_CRASHES", "100")
    if not setting.strip().isdigit():
        raise TokparityError(f"TOKPARITY_MAX_CRASHES={setting!r}: not a whole number of crashes (0: never give "
                             "up); set it to one, or unset it")
    return int(setting)


def shown_line(raw: bytes, limit: int = 200) -> str:
    """A line an engine wrote, for a report: cut at ``limit`` characters, its bytes that are not
    UTF-8 and its control characters escaped (``\\xff``, ``\\x1b``): it cannot add a line or a
    colour to what tokparity prints."""
    text = raw.decode("utf-8", "backslashreplace")
    cut = text[:limit]
    shown = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in cut)
    return shown + ("…" if len(text) > limit else "")


def scrubbed(value):
    """``value`` (a reply decoded from JSON) with each lone surrogate (``"\\udc80"``, which JSON
    can spell but UTF-8 cannot) written out as the escape it came as: it would stop the journal
    and the reports from being written."""
    if isinstance(value, str):
        return without_surrogates(value)
    if isinstance(value, list):
        return [scrubbed(v) for v in value]
    if isinstance(value, dict):
        return {scrubbed(k): scrubbed(v) for k, v in value.items()}
    return value


def describe_exit(returncode: int | None) -> str:
    """``-11 -> "killed by SIGSEGV"``, ``1 -> "exited with status 1"``."""
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exited with status {returncode}"
