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


def interrupt(signum: int, frame: object) -> None:
    """tokparity's SIGINT handler (tokparity.cli installs it): Python's own, once per stop."""
    take_stop()


def unraisable_hook(previous: Callable[[Any], object]) -> Callable[[Any], object]:
    """``sys.unraisablehook`` for a run: a stop raised where Python cannot raise it (a weakref's
    callback, a ``__del__``) is not printed as a traceback and lost. It is sent again, and acted on
    at the next line the run's main thread runs. Any other unraisable error goes to ``previous``."""
    def hook(unraisable: Any) -> object:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            forget_stops()
            # (sent from another thread once the hook returned: one sent here would be handled, and
            # lost, here again)
            later = threading.Timer(0.05, signal.raise_signal, (signal.SIGINT,))
            later.daemon = True
            later.start()
            return None
        return previous(unraisable)
    return hook
