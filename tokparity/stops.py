"""A stop (Ctrl-C, SIGTERM, SIGHUP…) is acted on once: a second one soon after the first would cut
short the clean-up that writes the reports and stops the children. tokparity.cli installs
``interrupt`` as the SIGINT handler; every other stopping signal and the journal's held Ctrl-C
(tokparity.run.journal.interrupt) go through ``take_stop``."""

from __future__ import annotations

import time

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
