"""Every exception of tokparity, in one module.

A ``TokparityError`` is bad input or a missing dependency, never a bug in tokparity: the CLI
prints its message as one line and exits with status 2. Messages name the file, key or
argument and say what to do, e.g.
``ggml-vocab-x.gguf: truncated at byte 1024 (array tokenizer.ggml.tokens wants 262144 strings); re-download the file``.
Each subclass says which input was bad.

A ``CaseFailure`` is one case a backend could not answer (a crash, a timeout, an error, a skip):
it is recorded for that case, and the run goes on.

The others are signals between two parts of tokparity: a template that refused a conversation, a
regex past its time limit, a journal line to be placed, an engine that could not start, a
JavaScript object's inherited member found by an engine's lookup. Only two private signals live
elsewhere: ``backends/engine_process.py``'s ``_Died`` and ``_Hung``, raised and caught inside that module.
"""

from __future__ import annotations

from collections.abc import Iterable

from tokparity.textview import without_surrogates

# -- bad input: one line, exit status 2 ---------------------------------------------------------------


class TokparityError(Exception):
    """Bad input, bad usage or a missing optional dependency (exit status 2)."""


class BadModelFile(TokparityError):
    """A tokenizer file that cannot be read: truncated, wrong magic, missing key, unknown type."""

    def __init__(self, path: object, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


class MissingDependency(TokparityError):
    """An optional library is not installed."""

    def __init__(self, what: str, package: str, extra: str | None = None):
        hint = f"pip install 'tokparity[{extra}]'" if extra else f"pip install {package}"
        super().__init__(f"{what} needs the '{package}' package, which is not installed ({hint})")


class BackendUnavailable(MissingDependency):
    """A known backend whose library is not installed (or does not import)."""

    def __init__(self, name: str, message: str):
        TokparityError.__init__(self, message)
        self.backend = name


class UsageError(TokparityError):
    """An argument argparse refuses: one line like every other bad input, not its usage block."""


class UnknownBackend(TokparityError):
    """A backend name that is none of the built-in ones, ``cmd:``, ``py:`` or a release."""

    def __init__(self, name: str, known: Iterable[str]):
        super().__init__(f"unknown backend {name!r}; known: {', '.join(known)}")


class UnknownGenerator(TokparityError):
    """A fuzz generator name that is none of the known ones."""

    def __init__(self, name: str, known: Iterable[str]):
        super().__init__(f"unknown generator {name!r}; known: {', '.join(known)}")


class BadCorpus(TokparityError):
    """A corpus file or line that cannot be read."""


class BadConversation(TokparityError):
    """A conversation of a chat corpus that is not one."""


class CharsMapError(TokparityError):
    """A precompiled_charsmap that cannot be read."""


class FetchError(TokparityError):
    """A zoo file that cannot be fetched or does not match its pin."""


class ReleaseError(TokparityError):
    """A release that cannot be had: unknown, not reachable, or not installable."""


class BadGoldens(TokparityError):
    """A goldens file that is damaged, edited by hand, or names what it may not."""


class BadJournal(TokparityError):
    """A journal that cannot be resumed: damaged, another command's, or of changed inputs."""


class NotARun(TokparityError):
    """A folder ``explain`` cannot read as a run's reports."""


class RayError(TokparityError):
    """A Ray cluster that cannot be used."""


class InvalidUtf8(TokparityError):
    """The decoded bytes are not valid UTF-8 (the ids split a character)."""

    def __init__(self, data: bytes, error: UnicodeDecodeError):
        self.data = data
        super().__init__(f"decoded bytes are not valid UTF-8 at byte {error.start} "
                         f"({data[max(0, error.start - 4):error.start + 4]!r}); the ids end or start inside a character")


class EngineGone(TokparityError):
    """A backend that can answer no case any more: every later one would fail the same way. The run
    stops in one line and keeps the cases judged so far; a per-case crash would say it once a case."""


class EngineDidNotStart(EngineGone):
    """An engine that never answered anything: it died or hung at every start (a wrong command, a
    missing file)."""


class ServerGone(EngineGone):
    """A server you run (``http:``) that answered, then refused the connection: it has stopped."""


# -- one case a backend could not answer: recorded, the run goes on -----------------------------------


class CaseFailure(Exception):
    """One case could not be answered; ``status`` names how (tokparity.backends.base)."""

    status = "error"

    def __init__(self, detail: str = ""):
        detail = without_surrogates(detail)
        super().__init__(detail)
        self.detail = detail


class BackendCrash(CaseFailure):
    status = "crash"


class BackendTimeout(CaseFailure):
    status = "timeout"


class NotCovered(CaseFailure):
    status = "skipped"


# -- signals between two parts of tokparity -----------------------------------------------------------


class StartFailed(Exception):
    """The program could not be brought up (died or hung while starting, or said why it could not)."""


class TemplateRaised(Exception):
    """The template refused the conversation (``raise_exception``, an undefined name, a type error):
    an answer, not a failure of the renderer."""


class RegexTimeout(TimeoutError):
    """A tokenizer.json regex ran past the text's time limit (catastrophic backtracking)."""


class Damaged(ValueError):
    """A journal line that is JSON but not what tokparity wrote: what is wrong, for the caller to
    place (``DIR/cases.jsonl:LINE: …``)."""


class EngineFailure(Exception):
    """How the engine a diagnosis variant stands for fails on a text: the reference with that
    variant fails so too, and a crash of the backend on the same text is reproduced. ``mark``: a
    text the engine's own message must hold for its failure to be this one ("": any message)."""

    mark = ""


class SpecialTextRefused(EngineFailure):
    """The engine refuses a text that holds a special token's text, with special-token parsing off."""

    def __init__(self, special: str):
        super().__init__(f"the text holds the special token's text {special!r}, and the engine refuses it")
        self.mark = special  # (a refusal names what it refuses: tiktoken's does)


class InheritedMember(EngineFailure):
    """The engine's lookup of ``piece`` in its ``table`` ("vocabulary": the tokens are its own keys;
    "cache": made by ``{}``) found the member every JavaScript object inherits."""

    def __init__(self, piece: str, table: str):
        where = (f"the piece {piece!r} is no token, so the vocabulary's plain object" if table == "vocabulary" else
                 f"a cache made by {{}} holds no key {piece!r} of its own before it is filled, so it")
        super().__init__(f"{where} finds Object.prototype.{piece} under that name")
        self.piece = piece
