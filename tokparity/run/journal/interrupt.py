"""Ctrl-C while a batch is counted and journaled: held until the batch is whole, so a journal
never holds half a batch and the counts never include a case the journal lacks. A stop is taken
once (tokparity.stops)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

from tokparity.stops import interrupt, stop_taken_lately, take_stop


def _base(handler: object) -> bool:
    """Whether ``handler`` is Python's SIGINT handler or tokparity's, which nothing else replaced."""
    return handler is signal.default_int_handler or handler is interrupt


class _Holding:
    """Ctrl-C inside the block takes effect at its end: a case is counted in the reports and
    written to the journal, or neither (the reports of an interrupted run match its journal).
    Within ``deferring_ctrl_c()`` (a whole run) entering and leaving is two attribute writes;
    elsewhere the SIGINT handler is swapped for the block."""

    def __init__(self) -> None:
        self.installed = False  # deferring_ctrl_c's handler is in place
        self.holding = False
        self.pending = False
        self._swapped = False
        self.base: object = signal.default_int_handler  # (the handler put back)

    def __enter__(self) -> None:
        if self.installed:
            self.holding = True
        elif threading.current_thread() is threading.main_thread() and _base(found := signal.getsignal(signal.SIGINT)):
            self._swapped, self.pending, self.base = True, False, found
            signal.signal(signal.SIGINT, self._defer)

    def __exit__(self, *exc: object) -> None:
        if self.installed:
            self.holding = False
        elif self._swapped:
            self._swapped = False
            signal.signal(signal.SIGINT, self.base)  # type: ignore[arg-type]
        else:
            return
        if self.pending:
            self.pending = False
            take_stop()

    def _defer(self, signum: int, frame: object) -> None:
        if self.installed and not self.holding:
            take_stop()
        elif not stop_taken_lately():
            self.pending = True


_HOLDING = _Holding()


def holding_ctrl_c() -> _Holding:
    return _HOLDING


@contextlib.contextmanager
def deferring_ctrl_c() -> Iterator[None]:
    """For a whole run: one SIGINT handler that acts as Python's own except inside
    ``holding_ctrl_c()`` blocks, which then cost nothing to enter (one per case)."""
    if (_HOLDING.installed or threading.current_thread() is not threading.main_thread()
            or not _base(found := signal.getsignal(signal.SIGINT))):
        yield
        return
    _HOLDING.installed, _HOLDING.holding, _HOLDING.pending = True, False, False
    signal.signal(signal.SIGINT, _HOLDING._defer)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, found)  # type: ignore[arg-type]
        _HOLDING.installed = False
