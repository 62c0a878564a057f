"""The one protocol every backend speaks.

A backend is one tokenizer implementation bound to one model: tokparity's reference, llama.cpp,
SentencePiece, Hugging Face, a user's engine. The diff engine only ever calls these methods,
so adding an implementation means writing one small class and registering its name.

    encode(text, add_special, parse_special) -> list[int]
    decode(ids) -> str
    pieces(ids) -> list[str]          the token text of each id, as the vocabulary stores it
    version -> str                    library version, recorded in every report
    normalize(text) -> str            optional: the normalizer stage alone
    pre_tokenize(text) -> list[str]   optional: the pre-tokenizer's split

A backend that cannot offer an optional stage raises ``NotImplementedError`` (``supports()``
tells without calling). A failure on one case raises a ``CaseFailure``; the runner records it
with its ``status`` and goes on with the next case:

    BackendCrash    the engine died (a child process killed by a signal, a broken pipe)  -> crash
    BackendTimeout  the engine did not answer within the per-case timeout               -> timeout
    NotCovered      the backend has no answer for this text (golden ids for other texts) -> skipped
Any other exception from an implementation is recorded as ``error`` with its message.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field


class CaseFailure(Exception):
    """One case could not be answered; ``status`` names how (see the module docstring)."""

    status = "error"

    def __init__(self, detail: str = ""):
        super().__init__(detail)
        self.detail = detail


class BackendCrash(CaseFailure):
    status = "crash"


class BackendTimeout(CaseFailure):
    status = "timeout"


class NotCovered(CaseFailure):
    status = "skipped"


@dataclass
class EncodeResult:
    """What one encode call produced, with anything the implementation said about it
    (llama.cpp's warnings such as a doubled BOS end up in ``notes``)."""

    ids: list[int]
    notes: list[str] = field(default_factory=list)


class Backend(ABC):
    """One tokenizer implementation bound to one model."""

    #: registry name, e.g. "llama.cpp"
    name: str = ""

    @property
    @abstractmethod
    def version(self) -> str: ...

    @abstractmethod
    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]: ...

    def encode_with_notes(self, text: str, add_special: bool = False, parse_special: bool = False) -> EncodeResult:
        """``encode`` plus anything the implementation reported for this one call."""
        return EncodeResult(self.encode(text, add_special, parse_special))

    @abstractmethod
    def decode(self, ids: list[int]) -> str: ...

    @abstractmethod
    def pieces(self, ids: list[int]) -> list[str]: ...

    def normalize(self, text: str) -> str:
        raise NotImplementedError(f"{self.name} does not expose its normalizer")

    def pre_tokenize(self, text: str) -> list[str]:
        raise NotImplementedError(f"{self.name} does not expose its pre-tokenizer")

    def supports(self, stage: str) -> bool:
        """Whether ``normalize`` / ``pre_tokenize`` are offered (overridden methods)."""
        return getattr(type(self), stage) is not getattr(Backend, stage)

    def close(self) -> None:
        """Release processes, handles and memory. Safe to call twice."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
