"""How a run keeps Python's cyclic collector out of its way: paused while a model loads, and
relaxed for the run's length (see each function for why)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Loading a model makes millions of objects at once (vocabularies, merge tables, the
    libraries' own); Python's cyclic collector, triggered by every 700 new ones, scans the
    growing heap again and again while they are made, and then at every full collection of
    the run (about 1 s of the default run's 10). So: no collection while loading, and what was
    loaded is moved out of the collector's sight (``gc.freeze``) while the model runs;
    ``ModelRun.close`` hands it back (``gc.unfreeze``). Reference counting frees it as soon
    as a model is closed either way, but for the references ``reference_of`` keeps for a next
    run on the same model (two at most)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
        gc.freeze()


@contextmanager
def collector_relaxed() -> Iterator[None]:
    """A run makes a few short-lived containers per case and per mismatch (answers, id lists,
    records), almost none of them in cycles, and keeps the records until its models are counted:
    a young-generation collection every 700 new containers (Python's default) then scans the
    same survivors again and again. Every ``YOUNG_COLLECTION`` containers instead, for the run's
    length; reference counting frees what is not cyclic either way."""
    thresholds = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


YOUNG_COLLECTION = 50_000
