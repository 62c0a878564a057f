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
    are flushed. Not while another thread runs: its work would be cut."""
    import atexit
    import os
    import threading

    if threading.active_count() > 1:
        return
    atexit._run_exitfuncs()  # (what Python's own exit runs first)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):  # (a reader gone, a stream closed or None)
            pass
    os._exit(code)
