"""A stop (Ctrl-C, SIGTERM, SIGHUP…) is acted on once: a second one soon after the first would cut
short the clean-up that writes the reports and stops the children. tokparity.cli installs
``interrupt`` as the SIGINT handler; every other stopping signal and the journal's held Ctrl-C
(tokparity.run.journal.interrupt) go through ``take_stop``."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from typing import Any

# A second signal this soon after the first is ignored: the first one's clean-up, under way, writes
# the reports and stops the children. Later, one acts again (the first may have been swallowed by a
# py: engine's bare except).
REPEAT_IGNORED_SECONDS = 30.0
_stop_taken = [float("-inf")]  # (the monotonic time of the last stop acted on)


def stop_taken_lately() -> bool:
    """Whether a stop was acted on less than REPEAT_IGNORED_SECONDS ago."""
    return time.monotonic() - _stop_taken[0] < REPEAT_IGNORED_SECONDS


def take_stop() -> None:
    """Acts on a stop (raises KeyboardInterrupt), unless one was acted on lately."""
    if stop_taken_lately():
        return
    _stop_taken[0] = time.monotonic()
    raise KeyboardInterrupt


def forget_stops() -> None:
    """A new run (tokparity.cli.main) acts on its first stop, whatever an earlier run in the process took."""
    _stop_taken[0] = float("-inf")


# A stop that comes inside an import is sent again this much later, this many times at most: an
# import made from C code may print the KeyboardInterrupt as a traceback, or swallow it.
IMPORT_RETRY_SECONDS, IMPORT_RETRIES = 0.05, 40
_retries = [0]


def interrupt(signum: int, frame: Any) -> None:
    """tokparity's SIGINT handler (tokparity.cli installs it): Python's own, once per stop. A stop
    inside an import is acted on once the import is done (or after IMPORT_RETRIES tries)."""
    if _importing(frame) and _retries[0] < IMPORT_RETRIES:
        _retries[0] += 1
        _send_later()
        return
    _retries[0] = 0
    take_stop()


def _importing(frame: Any) -> bool:
    """Whether ``frame`` or one of its callers is the import machinery's."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def _send_later() -> None:
    """SIGINT sent again from another thread, a moment later: one sent from a handler would be
    handled, and lost, there again."""
    later = threading.Timer(IMPORT_RETRY_SECONDS, signal.raise_signal, (signal.SIGINT,))
    later.daemon = True
    later.start()


def unraisable_hook(previous: Callable[[Any], object]) -> Callable[[Any], object]:
    """``sys.unraisablehook`` for a run: a stop raised where Python cannot raise it (a weakref's
    callback, a ``__del__``) is not printed as a traceback and lost. It is sent again, and acted on
    at the next line the run's main thread runs. Any other unraisable error goes to ``previous``."""
    def hook(unraisable: Any) -> object:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            forget_stops()
            _send_later()
            return None
        return previous(unraisable)
    return hook
