"""The one protocol every backend speaks.

A backend is one tokenizer implementation bound to one model: tokparity's reference, llama.cpp,
SentencePiece, Hugging Face, a user's engine. The diff engine only ever calls these methods,
so adding an implementation means writing one small class and registering its name.

    encode(text, add_special, parse_special) -> list[int]
    encode_many(texts, add_special, parse_special) -> [Answer]
    decode(ids) -> str
    pieces(ids) -> list[str]          the token text of each id, as the vocabulary stores it
    stream(ids, prompt) -> [str]      optional: decoded id by id as a server streams it, after a prompt
                                      of ``prompt`` ids: one delta per id after it ("" while holding back)
    piece_bytes(ids) -> [bytes|None]  optional: the bytes each id stands for alone, special tokens as
                                      their text (None: the id has no bytes)
    chat(conversation) -> ChatAnswer  optional: the prompt's text and ids the model's chat template
                                      makes of a conversation (tokparity.chat)
    version -> str                    library version, recorded in every report
    normalize(text) -> str            optional: the normalizer stage alone
    pre_tokenize(text) -> list[str]   optional: the pre-tokenizer's split

A backend that cannot offer an optional stage or op raises ``NotImplementedError`` (``supports()``
tells without calling; a decoding op it lacks is not tried: its cases count as skipped for it). A failure on one case raises a ``CaseFailure``; the runner records it
with its ``status`` and goes on with the next case:

    BackendCrash    the engine died (a child process killed by a signal, a broken pipe)  -> crash
    BackendTimeout  the engine did not answer within the per-case timeout               -> timeout
    NotCovered      the backend has no answer for this text (golden ids for other texts) -> skipped
Any other exception from an implementation is recorded as ``error`` with its message.

``encode_many`` answers many texts at once, one ``Answer`` each (its ids, or the status of the
``CaseFailure`` it raised, and the seconds it took): the default calls ``encode_with_notes`` in
turn; a backend in another process overrides it to pipeline the requests, so the pipe's round
trip is not paid once per case. ``Answer`` is the one record of a backend's answer that every run
(compare, fuzz, regress, the pytest plugin, worker processes, a Ray cluster) judges.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tokparity.errors import CaseFailure, EngineGone
from tokparity.reference.decode import AS_FILES_SAY, DecodeSettings

if TYPE_CHECKING:
    from tokparity.chat import ChatAnswer
    from tokparity.chat.conversation import Conversation


# What an engine with no switch for special-token parsing declares (tokparity.run.judge).
NO_PARSE_SPECIAL_SWITCH = "parse_special=false"
# What an engine declares that always adds the special tokens the vocabulary asks for (a BOS).
NO_ADD_SPECIAL_SWITCH = "add_special=false"
DECLARABLE = (NO_PARSE_SPECIAL_SWITCH, NO_ADD_SPECIAL_SWITCH)


def declared(value: object, who: str) -> frozenset[str]:
    """What an engine declares it cannot do (a reply's or a py: object's ``unsupported``), checked."""
    if not (isinstance(value, (list, tuple)) and all(v in DECLARABLE for v in value)):
        raise CaseFailure(f"{who}: 'unsupported' must be a list of {', '.join(map(repr, DECLARABLE))}, not "
                          f"{str(value)[:100]}")
    return frozenset(value)


def in_steps(deltas: list[str], step: int) -> list[str]:
    """Deltas sent one per id, as a streamer sends them ``step`` ids at a time: a step's text is what
    its ids added (a streamer that decodes one id at a time and flushes every ``step``)."""
    return ["".join(deltas[k:k + step]) for k in range(0, len(deltas), step)]


@dataclass
class EncodeResult:
    """What one encode call produced, with anything the implementation said about it
    (llama.cpp's warnings such as a doubled BOS end up in ``notes``)."""

    ids: list[int]
    notes: list[str] = field(default_factory=list)


# No tokenizer gives more ids than a text has bytes (byte fallback, byte-level BPE), plus a few
# for a dummy prefix and specials. An answer far beyond that is not compared: aligning it with the
# oracle's ids would cost minutes (a hostile engine answered 2,000,000 ids for "Hello world").
IDS_PER_BYTE, IDS_SLACK = 4, 64
# Every tokenizer's ids are 32-bit (llama.cpp's llama_token, tokenizers' u32): an answer beyond that
# is a failure of the case, not ids to journal (2**64 would be refused by the run's own resume).
ID_BOUND = 2**31


@dataclass(slots=True)
class Answer:
    """One backend's answer on one text, as a run judges it."""

    status: str  # ok | crash | timeout | error | skipped (see the module docstring)
    ids: list[int] = field(default_factory=list)
    detail: str = ""  # what went wrong, for a status other than ok
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    by: str = ""  # which backend gave it, where a chain of them was asked (golden ids, then llama.cpp)

    @classmethod
    def of(cls, result: EncodeResult | CaseFailure, seconds: float, text: str) -> Answer:
        """The answer an ``encode_with_notes`` call gave on ``text`` (or the failure it raised)."""
        if isinstance(result, CaseFailure):
            # What it says is kept, not where it was raised: its traceback holds the frame that caught
            # it, which holds it (and, up the stack, every answer of its batch) in a cycle that only
            # the cyclic collector would free.
            result.__traceback__ = None
            return cls(result.status, detail=result.detail, seconds=seconds)
        # The backend's own list, not a copy (it made it for this answer); anything else, a tuple or
        # a subclass of list, becomes a plain list.
        ids = result.ids if type(result.ids) is list else list(result.ids)
        if (many := too_many_ids(ids, text)) is not None:
            return cls("error", detail=many, seconds=seconds)
        if (wild := outside_every_vocabulary(ids)) is not None:
            return cls("error", detail=wild, seconds=seconds)
        notes = result.notes
        return cls("ok", ids, "", list(notes) if notes else [], seconds)  # (positional: made for every answer)


def too_many_ids(ids: list[int], text: str) -> str | None:
    """Why ``ids`` are too many to be any tokenizer's for ``text``, to say as the case's failure;
    None where they may be (``IDS_PER_BYTE``)."""
    if len(ids) <= IDS_PER_BYTE * len(text) + IDS_SLACK or len(ids) <= IDS_PER_BYTE * _utf8_length(text) + IDS_SLACK:
        return None
    return (f"{len(ids):,} ids for a text of {_utf8_length(text):,} bytes: more than any tokenizer gives (about one "
            "per byte at most); not compared")


def outside_every_vocabulary(ids: list[int]) -> str | None:
    """Why ``ids`` are no vocabulary's (an id beyond 32 bits), to say as the case's failure; None
    where they may be."""
    if not ids or -ID_BOUND <= min(ids) and max(ids) < ID_BOUND:
        return None
    wild = next(i for i in ids if not -ID_BOUND <= i < ID_BOUND)
    return (f"an id of {wild.bit_length()} bits ({'-' if wild < 0 else ''}2**{max(wild.bit_length() - 1, 0)} or "
            "more) is outside any vocabulary (token ids are 32-bit); not compared")


def _utf8_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


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

    def encode_many(self, texts: list[str], add_special: bool = False,
                    parse_special: bool = False) -> list[Answer]:
        """Every text's ``Answer``: its ids, or the status of the ``CaseFailure`` it raised (any
        other exception becomes one with status ``error``), with the seconds it took."""
        out: list[Answer] = []
        clock = time.perf_counter
        for text in texts:
            start = clock()
            try:
                result: EncodeResult | CaseFailure = self.encode_with_notes(text, add_special, parse_special)
            except CaseFailure as e:
                result = e
            except EngineGone:  # (no later case can be answered: the run stops in one line)
                raise
            except Exception as e:  # the implementation's own error on this input
                result = CaseFailure(f"{type(e).__name__}: {e}")
            out.append(Answer.of(result, clock() - start, text))
        return out

    @abstractmethod
    def decode(self, ids: list[int], settings: DecodeSettings = AS_FILES_SAY) -> str:
        """``ids`` back to text, as ``settings`` ask: special tokens as their text, or left out
        (skip_special_tokens, llama.cpp's unparse_special off); tokenization spaces cleaned up
        as the files say, or forced on or off; spaces between special tokens. The run asks
        only what ``decode_switches`` lists; a library whose one behaviour is what is asked
        gives it (SentencePiece always leaves control tokens out; tokenizers never cleans up)."""

    #: The decode settings away from the files' own that the backend can give (DecodeSettings.asked's
    #: names: skip_special, clean_up=on, clean_up=off, spaces_between_specials); a setting it lacks is
    #: not asked of it: its decode and stream are not tried with it.
    decode_switches: frozenset[str] = frozenset()

    #: Ops that load what they need when first asked (transformers for ``chat``). In a child process
    #: the first request of each after a start gets the start's grace (engine_process.py).
    loads_on_first_use: frozenset[str] = frozenset()

    def gives(self, settings: DecodeSettings) -> bool:
        """Whether the backend can decode as ``settings`` ask."""
        return settings.asked() <= self.decode_switches

    @abstractmethod
    def pieces(self, ids: list[int]) -> list[str]: ...

    def stream(self, ids: list[int], prompt: int, settings: DecodeSettings = AS_FILES_SAY, step: int = 1) -> list[str]:
        """``ids`` decoded ``step`` at a time after the first ``prompt`` (the prompt, whose text is not
        output): the text each further step adds, as a server sends it ("" while it holds back the
        start of a character), one string per step after the prompt (the last may have fewer ids);
        ``settings`` as for decode (a stream is asked ``skip_special`` only)."""
        raise NotImplementedError(f"{self.name} does not stream")

    def piece_bytes(self, ids: list[int]) -> list[bytes | None]:
        """The bytes each id stands for alone (a byte token its byte, ``▁`` a space, a special
        token its text); None for an id that has none."""
        raise NotImplementedError(f"{self.name} does not give the bytes of a token")

    def chat(self, conversation: Conversation) -> ChatAnswer:
        """The prompt this backend makes of ``conversation`` with the model's chat template: its
        text and ids (tokparity.chat.ChatAnswer; ``raised`` where the template refuses it)."""
        raise NotImplementedError(f"{self.name} does not apply chat templates")

    #: Settings the engine declares it cannot give (NO_PARSE_SPECIAL_SWITCH: it parses special-token
    #: text whatever is asked; NO_ADD_SPECIAL_SWITCH: it always adds the special tokens the vocabulary
    #: asks for); a case that asks for one is "not applicable" to it, not a mismatch.
    unsupported: frozenset[str] = frozenset()

    #: piece_bytes gives text, not bytes: a token that is part of a character shows as U+FFFD
    #: (a library that decodes a single id to a str), so its bytes are compared as such text.
    lossy_pieces = False

    def normalize(self, text: str) -> str:
        raise NotImplementedError(f"{self.name} does not expose its normalizer")

    def pre_tokenize(self, text: str) -> list[str]:
        raise NotImplementedError(f"{self.name} does not expose its pre-tokenizer")

    def supports(self, stage: str) -> bool:
        """Whether ``normalize`` / ``pre_tokenize`` / ``stream`` / ``piece_bytes`` are offered
        (overridden methods)."""
        return getattr(type(self), stage) is not getattr(Backend, stage)

    def close(self) -> None:
        """Release processes, handles and memory. Safe to call twice."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
