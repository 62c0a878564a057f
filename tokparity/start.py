"""The ``tokparity`` command's entry point (and ``python -m tokparity``'s). Ctrl-C while Python
loads the command is one line and exit 130, not a traceback of the import it cut."""

from __future__ import annotations

import sys


def command() -> int:
    try:
        from tokparity.cli import command as run
    except KeyboardInterrupt:
        print("tokparity: interrupted", file=sys.stderr)
        return 130
    code = run()
    _leave(code)
    return code  # (where another thread still runs: Python's own exit waits for it)


def _leave(code: int) -> None:
    """End the process now, without the interpreter's teardown. The teardown frees a run's objects
    one by one; it took half a second of the default run (docs/benchmarks.md). The exit handlers
    still run (Ray's, temporary folders', the engines' process groups), and the standard streams
    are flushed. Not while another thread that Python's exit would wait for runs: its work would be
    cut. Not under a profiler, a tracer or coverage: they write what they saw after the run. Not
    where a stream cannot be flushed: Python's own exit says so."""
    import atexit
    import os
    import threading

    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        return
    if sys.getprofile() is not None or sys.gettrace() is not None or _monitored():
        return
    atexit._run_exitfuncs()  # (what Python's own exit runs first)
    for stream in (sys.stdout, sys.stderr):
        if stream is None:
            continue
        try:
            stream.flush()
        except (OSError, ValueError):  # (a reader gone, a full disk, a stream closed: Python's exit says so)
            return
    os._exit(code)


def _monitored() -> bool:
    """Whether a tool watches this process through sys.monitoring (Python 3.12: a profiler, coverage)."""
    monitoring = getattr(sys, "monitoring", None)
    return monitoring is not None and any(monitoring.get_tool(tool) is not None for tool in range(6))
