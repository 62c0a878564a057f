"""What a run is asked to do: the options every way of running cases shares (compare, fuzz,
regress, the pytest plugin, ``--jobs`` workers and Ray actors)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tokparity.backends.base import Backend
from tokparity.run.journal import Journal
from tokparity.run.known import KnownList

DEFAULT_MAX_CHARS = 1_000_000  # a case longer than this is skipped, with a note (--max-chars)


@dataclass
class CompareOptions:
    add_special: bool = False
    parse_special: bool = False
    oracle: str | None = None
    explicit_backends: bool = False  # the user named them: an unavailable one is an error
    progress: Callable[[str], None] | None = None
    known: KnownList | None = None  # reviewed upstream divergences: reported as known, not failures
    max_chars: int | None = DEFAULT_MAX_CHARS  # longer texts are not run (a clear note each); None: no cap
    journal: Journal | None = None  # cases.jsonl: every case written as it is judged; replayed on resume
    # Backends made by the caller, by name, used instead of making them (regress: the stored goldens
    # as the oracle; the pytest plugin: a user's Python callable as the engine).
    ready: dict[str, Backend] = field(default_factory=dict)
    decode: bool = False  # also decode the ids a backend agrees on, and compare with the oracle's text
    jobs: int = 1  # worker processes (tokparity.run.parallel); 1: everything in this process
    timeout: float | None = None  # seconds per case for backends in another process (None: their default)
    diagnose: bool = True  # name each mismatch's root cause by reproducing it (tokparity.diagnose)
    ray: str | None = None  # --ray: "" or "local" starts Ray here, else a cluster's address (tokparity.run.cluster)

    def say(self, message: str) -> None:
        """A progress line (to stderr, unless the run is quiet)."""
        if self.progress:
            self.progress(message)


# What a worker process needs of the options (the rest stays with the parent: known list, journal,
# progress, backends made by the caller).
WORKER_OPTIONS = ("add_special", "parse_special", "oracle", "explicit_backends", "max_chars", "decode", "timeout",
                  "diagnose")
