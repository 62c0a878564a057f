"""A backend made on a thread of its own while the others are made on the main one.

llama.cpp loads a vocabulary in C, without Python's lock, and it is the slowest backend to load
(docs/benchmarks.md). Made beside the others, it loads on the second core. Only a backend whose
spec says so is made this way (``BackendSpec.loads_in_c``), and only one per model.

The thread never says anything: what it made, or the error it raised, is taken where the run
would have made the backend itself (``take``), so the run's messages keep their order. A backend
made but never taken (the run stopped before) is closed, not left loaded. A stop can leave
Python's import lock held by the main thread; the lock is given back while the load is awaited.
"""

from __future__ import annotations

import _imp
import threading
from collections.abc import Callable

from tokparity.backends.base import Backend


class MadeBeside(threading.Thread):
    """``make()`` run on a thread of its own, started at once."""

    def __init__(self, make: Callable[[], Backend], name: str):
        # (a daemon: a run stopped while llama.cpp loads exits without waiting for the load)
        super().__init__(name=f"tokparity-load-{name}", daemon=True)
        self._make = make
        self._backend: Backend | None = None
        self._error: BaseException | None = None
        self._lock = threading.Lock()
        self._taken = self._dropped = False
        self.start()

    def run(self) -> None:
        try:
            backend = self._make()
        except BaseException as e:  # (raised again by take, on the main thread)
            self._error = e
            return
        with self._lock:
            self._backend = backend
            close = self._dropped
        if close:
            backend.close()

    def take(self) -> Backend:
        """The backend, once made; the error its making raised, raised here."""
        self._await()
        self._taken = True
        error, self._error = self._error, None  # (not kept: its traceback holds the run's frames)
        if error is not None:
            raise error
        assert self._backend is not None
        return self._backend

    def drop(self) -> None:
        """The run will not take it (it stopped before): the load is waited for, as a load on the
        main thread would have been, and what it made is closed. A process that exits while
        llama.cpp loads could run llama.cpp's log callback into a Python that is shutting down."""
        if self._taken:
            return
        with self._lock:
            self._dropped = True
            backend, self._backend = self._backend, None
        if backend is not None:
            backend.close()
        self._await()

    def _await(self) -> None:
        """The thread's end. ``take`` and ``drop`` run outside any import: an import lock this
        thread holds while the load is still under way was left held by a stop
        (``_give_back_import_lock``). A load that ends at once never touches the lock."""
        self.join(0.5)
        while self.is_alive():
            _give_back_import_lock()
            self.join(0.5)


def _give_back_import_lock() -> None:
    """Python's import lock, where this thread holds it with no import under way: given back.
    A stop raised inside importlib, between taking the lock and the ``try`` that gives it back,
    leaves the lock held. The thread's own imports then wait for it forever (a Ctrl-C as the
    command started hung it)."""
    while True:
        try:
            _imp.release_lock()
        except RuntimeError:  # (this thread holds it no more, or never did)
            return
