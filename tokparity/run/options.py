"""What a run is asked to do: the options every way of running cases shares (compare, fuzz,
regress, the pytest plugin, ``--jobs`` workers and Ray actors)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from tokparity.backends.base import Backend
from tokparity.chat import StoredPrompts
from tokparity.reference.decode import AS_FILES_SAY, DecodeSettings
from tokparity.run.journal import Journal
from tokparity.run.known import KnownList
from tokparity.textview import single_line

# The built-in default: a handful of zoo models, one per algorithm family, on every corpus.
DEFAULT_MODELS = ("llama-spm", "llama-bpe", "botchan-unigram", "nomic-bert-moe", "bert-bge")
DEFAULT_CORPORA = ("all",)
DEFAULT_MAX_CHARS = 1_000_000  # a case longer than this is skipped, with a note (--max-chars)


@dataclass
class Services:
    """What a run uses in this process, apart from what it is asked: the known list (whose hits are
    counted here), the journal, where progress lines go, and backends made by the caller (regress:
    the stored goldens as the oracle; the pytest plugin: a user's Python callable as the engine).
    A ``--jobs`` worker or a Ray actor has its own (progress to the driver, nothing else)."""

    known: KnownList | None = None  # reviewed upstream divergences: reported as known, not failures
    journal: Journal | None = None  # cases.jsonl: every case written as it is judged; replayed on resume
    progress: Callable[[str], None] | None = None
    ready: dict[str, Backend] = field(default_factory=dict)
    prompts: StoredPrompts | None = None  # regress --ops chat: the goldens' prompts, judged by in place of the reference's

    ticker: Callable[[str], None] | None = None  # "llama-spm: 500 cases": a count that the next one replaces

    def say(self, message: str) -> None:
        """A progress line (to stderr, unless the run is quiet)."""
        if self.progress:
            self.progress(message)

    def tick(self, message: str) -> None:
        """A count of the cases done so far, which the next line replaces (on a terminal only)."""
        if self.ticker:
            self.ticker(message)


@dataclass(frozen=True)
class CompareOptions:
    """What a run is asked: the same values in the driver, its workers and its actors (frozen; a
    run asked something else is given another). ``services`` are this process's own."""

    add_special: bool = False
    parse_special: bool = False
    oracle: str | None = None
    explicit_backends: bool = False  # the user named them: an unavailable one is an error
    max_chars: int | None = DEFAULT_MAX_CHARS  # longer texts are not run (a clear note each); None: no cap
    ops: tuple[str, ...] = ("encode",)  # what each backend is asked (tokparity.run.ops): encode, decode, stream, pieces, or chat
    # how decode (and stream: skip_special only) turn ids into text: the files' own unless asked
    decoding: DecodeSettings = AS_FILES_SAY
    stream_step: int = 1  # a stream is fed this many ids at a time after its prompt
    jobs: int = 1  # worker processes (tokparity.run.parallel); 1: everything in this process
    timeout: float | None = None  # seconds per case for backends in another process (None: their default)
    # where cmd: and py: engines start: a resumed run's own folder (None: the current one)
    engine_folder: str | None = None
    diagnose: bool = True  # name each mismatch's root cause by reproducing it (tokparity.diagnose)
    checks: bool = False  # --check: also what each model's files hold (tokparity.checks), after the cases
    ray: str | None = None  # --ray: "" or "local" starts Ray here, else a cluster's address (tokparity.run.cluster)
    # --try-release: other releases of the libraries (hf@0.21.4), tried as a mismatch's cause on the
    # models their backend runs on (library.release: an engine that embeds another release)
    releases: tuple[str, ...] = ()
    services: Services = field(default_factory=Services, compare=False, repr=False)

    @property
    def chat(self) -> bool:
        """Whether the run turns conversations into prompts (``--ops chat``, which runs alone)."""
        return self.ops == ("chat",)

    @property
    def decoding_ops(self) -> tuple[str, ...]:
        """The ops that turn the oracle's ids back into text (decode, stream, pieces) this run asks."""
        return tuple(op for op in self.ops if op not in ("encode", "chat"))

    def say(self, message: str) -> None:
        self.services.say(message)

    def for_worker(self) -> CompareOptions:
        """What a ``--jobs`` worker or a Ray actor is sent: the options without this process's
        services (a worker judges its cases in itself: one job, no Ray of its own)."""
        return replace(self, jobs=1, ray=None, services=Services())


def progress_to_stderr(message: str) -> None:
    """The usual ``say``: a progress line on stderr (over a count ``tick_on_terminal`` left)."""
    clear = "\r\x1b[K" if sys.stderr.isatty() else ""
    print(clear + single_line(message), file=sys.stderr, flush=True)  # (case ids and engine errors: one line each)


def tick_on_terminal(message: str) -> None:
    """The usual ``tick``: on a terminal, a count written over the last one; elsewhere (a CI log, a
    file) nothing, so that a log holds each model's one line, not one every 500 cases."""
    if sys.stderr.isatty():
        print("\r\x1b[K" + single_line(message), end="", file=sys.stderr, flush=True)
