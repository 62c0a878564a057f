"""The one data model for what a tokenizer file says: ``Vocab``.

Every loader (GGUF, SentencePiece ``.model``, Hugging Face ``tokenizer.json``) produces a
``Vocab``; every backend and the reference tokenizers read one. Its fields use llama.cpp's
vocabulary of ideas, because a GGUF is where most parity questions end up:

* ``algorithm``: ``spm`` (SentencePiece BPE, llama.cpp's "llama"), ``ugm`` (unigram, "t5"),
  ``bpe`` (byte-level BPE, "gpt2"), ``wpm`` (WordPiece, "bert") or ``rwkv`` (greedy longest match
  over bytes, "rwkv").
* ``tokens`` exactly as stored: byte-level BPE tokens stay in GPT-2's byte-to-unicode spelling
  (``Ġhello``), SentencePiece pieces keep their ``▁``. Bytes that are not valid UTF-8 survive
  as surrogate escapes, so ``token.encode('utf-8', 'surrogateescape')`` gives the stored bytes.
* ``token_types`` with llama.cpp's (and SentencePiece's) numbering, see ``TokenType``.

The fingerprint hashes tokens, types, scores and merges in one canonical encoding, which is
the GGUF array layout itself (a uint64 length before each string, int32 types, float32
scores), so a GGUF can be fingerprinted from its raw bytes without decoding anything.
"""

from __future__ import annotations

import hashlib
import struct
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum

from tokparity.vocab.special_texts import SpecialTextFinder

ALGORITHMS = ("spm", "ugm", "bpe", "wpm", "rwkv")

# Special-token roles, in the order ``inspect`` shows them (GGUF key names are in gguf.py).
SPECIAL_ROLES = ("bos", "eos", "eot", "eom", "unk", "pad", "sep", "cls", "mask",
                 "fim_pre", "fim_suf", "fim_mid", "fim_pad", "fim_rep", "fim_sep")

FLAG_NAMES = (
    "add_bos",
    "add_eos",
    "add_space_prefix",
    "remove_extra_whitespaces",
    "escape_whitespaces",
    "treat_whitespace_as_suffix",
    "byte_fallback",
)


class TokenType(IntEnum):
    """Token types as numbered by llama.cpp's ``llama_token_type`` and SentencePiece's
    ``ModelProto.SentencePiece.Type`` (the two agree; 0 is llama.cpp's "undefined")."""

    UNDEFINED = 0
    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6


_TYPES = [TokenType(t) for t in range(7)]  # by value: type_of runs per token in every diff


def type_name(t: int) -> str:
    """``3`` -> ``"control"``; a value llama.cpp does not define (a file may hold any int32) -> ``"type-99"``."""
    return _TYPES[t].name.lower() if 0 <= t <= 6 else f"type-{t}"


@dataclass
class Flags:
    """Behaviour switches a tokenizer file sets. ``None`` means the file does not say."""

    add_bos: bool | None = None
    add_eos: bool | None = None
    add_space_prefix: bool | None = None
    remove_extra_whitespaces: bool | None = None
    escape_whitespaces: bool | None = None
    treat_whitespace_as_suffix: bool | None = None
    byte_fallback: bool | None = None

    def as_dict(self) -> dict[str, bool | None]:
        return {name: getattr(self, name) for name in FLAG_NAMES}


def _as_text(token: str) -> str:
    """``token`` with each surrogate escape (a byte that is not UTF-8) written ``<0xNN>``."""
    if token.isascii():
        return token
    try:
        token.encode("utf-8")
        return token
    except UnicodeEncodeError:
        return "".join(f"<0x{ord(c) - 0xDC00:02X}>" if 0xDC80 <= ord(c) <= 0xDCFF else
                       f"<U+{ord(c):04X}>" if 0xD800 <= ord(c) <= 0xDFFF else c for c in token)


# ---------------------------------------------------------------------------------------------
# Canonical encoding (also GGUF's array layout)


def encode_strings(strings: Iterable[str]) -> bytes:
    """``["ab", "c"] -> b"\\x02\\0\\0\\0\\0\\0\\0\\0ab\\x01\\0\\0\\0\\0\\0\\0\\0c"``."""
    parts = []
    for s in strings:
        b = s.encode("utf-8", "surrogateescape")
        parts.append(struct.pack("<Q", len(b)))
        parts.append(b)
    return b"".join(parts)


def encode_int32(values: Sequence[int]) -> bytes:
    a = array("i", values)
    if struct.pack("=i", 1) != struct.pack("<i", 1):  # big-endian host
        a.byteswap()
    return a.tobytes()


def encode_float32(values: Sequence[float]) -> bytes:
    a = array("f", values)
    if struct.pack("=i", 1) != struct.pack("<i", 1):
        a.byteswap()
    return a.tobytes()


def merges_as_strings(merges: Iterable[tuple[str, str]]) -> Iterable[str]:
    return (f"{a} {b}" for a, b in merges)


# ---------------------------------------------------------------------------------------------


@dataclass
class Vocab:
    """What one tokenizer file says. See the module docstring for the conventions."""

    algorithm: str
    tokens: list[str]
    token_types: list[int] | None = None
    scores: list[float] | None = None
    special_ids: dict[str, int] = field(default_factory=dict)
    flags: Flags = field(default_factory=Flags)
    pre_tokenizer: str | None = None
    precompiled_charsmap: bytes | None = None
    chat_template: str | None = None
    source: str = ""  # the file it came from
    source_format: str = ""  # gguf | spm-model | hf-json
    # Everything else the file says that a backend or the reference may need: the GGUF's other
    # metadata, or tokenizer.json's normalizer / pre_tokenizer / post_processor / decoder /
    # added_tokens configs, kept as they were.
    extra: dict = field(default_factory=dict)
    # Merges are the largest part of a big BPE file and most uses never touch them, so a
    # loader may hand a callable that produces them on first use.
    _merges: list[tuple[str, str]] | None = field(default=None, repr=False)
    _merges_loader: Callable[[], list[tuple[str, str]]] | None = field(default=None, repr=False)
    merges_count: int = 0
    # Canonical bytes of a section, when the loader already holds them (GGUF raw arrays).
    _raw_sections: dict[str, bytes] = field(default_factory=dict, repr=False)
    _fingerprint: str | None = field(default=None, repr=False)
    _control_texts: list[tuple[int, str]] | None = field(default=None, repr=False)
    _control_ids: frozenset[int] | None = field(default=None, repr=False)  # control_ids() memo
    _control_finder: SpecialTextFinder | None = field(default=None, repr=False)  # control_texts_in() memo
    _special_texts: dict[int, str] | None = field(default=None, repr=False)  # special_texts() memo
    _token_bytes: dict[int, bytes] = field(default_factory=dict, repr=False)  # token_bytes() memo
    _ids_by_text: dict[str, int] | None = field(default=None, repr=False)  # id_of() memo

    # -- derived views -------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return len(self.tokens)

    @property
    def merges(self) -> list[tuple[str, str]]:
        if self._merges is None:
            self._merges = self._merges_loader() if self._merges_loader else []
            self._merges_loader = None
        return self._merges

    def set_merges(self, merges: list[tuple[str, str]] | None = None, *, count: int = 0,
                   loader: Callable[[], list[tuple[str, str]]] | None = None) -> None:
        if merges is not None:
            self._merges, self._merges_loader, self.merges_count = merges, None, len(merges)
        else:
            self._merges, self._merges_loader, self.merges_count = None, loader, count

    def type_of(self, token_id: int) -> TokenType:
        if self.token_types is None:
            return TokenType.NORMAL
        if not 0 <= token_id < len(self.token_types):  # (an engine's id out of the vocabulary is no token of it)
            return TokenType.UNDEFINED
        t = self.token_types[token_id]
        # A file may hold any int32 here; a type llama.cpp does not know is "undefined" there too.
        return _TYPES[t] if 0 <= t <= 6 else TokenType.UNDEFINED

    def type_counts(self) -> dict[str, int]:
        """``{"normal": 31741, "byte": 256, ...}``, most common first."""
        if self.token_types is None:
            return {"normal": self.size}
        counts: dict[str, int] = {}
        for t, n in Counter(self.token_types).most_common():
            counts[type_name(t)] = n
        return counts

    def special_tokens(self) -> dict[str, tuple[int, str | None]]:
        """``{"bos": (1, "<s>"), ...}``; the text is ``None`` for an id outside the vocabulary."""
        out = {}
        for role in SPECIAL_ROLES:
            if role in self.special_ids:
                i = self.special_ids[role]
                out[role] = (i, self.tokens[i] if 0 <= i < self.size else None)
        return out

    def control_texts(self) -> list[tuple[int, str]]:
        """``[(id, text)]`` of control tokens whose text could appear in an input (cached)."""
        if self._control_texts is None:
            self._control_texts = [(i, self.tokens[i]) for i in sorted(self.control_ids()) if len(self.tokens[i]) > 1]
        return self._control_texts

    def control_texts_in(self, text: str) -> list[tuple[int, str]]:
        """The ``control_texts`` that ``text`` holds, in id order. Gemma 3 has 6,000: each is not
        looked for in turn (tokparity.vocab.special_texts)."""
        if self._control_finder is None:
            self._control_finder = SpecialTextFinder(t for _, t in self.control_texts())
        present = set(self._control_finder.present(text))
        return [(i, t) for i, t in self.control_texts() if t in present] if present else []

    def control_ids(self) -> frozenset[int]:
        """The ids of the control tokens (cached): ``type_of(i) == CONTROL`` for a whole id list at once."""
        if self._control_ids is None:
            control = TokenType.CONTROL  # (a local, not an attribute of the enum read once per token)
            self._control_ids = frozenset(i for i, t in enumerate(self.token_types or ()) if t == control)
        return self._control_ids

    def special_texts(self) -> dict[int, str]:
        """``{id: text}`` of the special tokens (``special_ids``) and the control tokens of
        ``control_texts``, in id order (cached): the tokens a decoder writes or leaves out as a
        whole, and whose text an engine may parse whatever is asked."""
        if self._special_texts is None:
            ids = set(self.special_ids.values()) | {i for i, _ in self.control_texts()}
            self._special_texts = {i: self.tokens[i] for i in sorted(ids) if 0 <= i < self.size}
        return self._special_texts

    def id_of(self, text: str) -> int | None:
        """The id of the token spelled ``text`` (the first of duplicates), or None."""
        if self._ids_by_text is None:
            self._ids_by_text = self.token_to_id()
        return self._ids_by_text.get(text)

    def pieces_of(self, ids: Iterable[int]) -> list[str]:
        """Each id's token as the reports and the journal write it: as stored, but text. A byte that
        is not UTF-8 is written ``<0xC3>``, as SentencePiece writes a byte piece: a lone surrogate
        has no UTF-8 to write. An id outside the vocabulary is ``<id N?>``.

        >>> Vocab("rwkv", ["a", b"\\xc3".decode("utf-8", "surrogateescape")]).pieces_of([0, 1, 7])
        ['a', '<0xC3>', '<id 7?>']
        """
        tokens, size = self.tokens, self.size
        return [_as_text(tokens[i]) if 0 <= i < size else f"<id {i}?>" for i in ids]

    def token_to_id(self) -> dict[str, int]:
        """Token text -> id; on duplicates the first id wins, as in llama.cpp's ``token_to_id``."""
        tokens = self.tokens
        return dict(zip(reversed(tokens), range(len(tokens) - 1, -1, -1)))  # filled from the end

    # -- fingerprint and comparison ------------------------------------------------------------

    def _section(self, name: str) -> bytes:
        raw = self._raw_sections.get(name)
        if raw is not None:
            return raw
        if name == "tokens":
            return encode_strings(self.tokens)
        if name == "types":
            return encode_int32(self.token_types) if self.token_types is not None else b""
        if name == "scores":
            return encode_float32(self.scores) if self.scores is not None else b""
        if name == "merges":
            return encode_strings(merges_as_strings(self.merges))
        raise KeyError(name)

    @property
    def fingerprint(self) -> str:
        """16 hex digits over tokens, types, scores and merges.

        Scores that are all zero count as no scores (byte-level BPE files differ in whether
        they store them at all).
        """
        if self._fingerprint is None:
            h = hashlib.sha256(b"tokparity-vocab-v1\0")
            for name in ("tokens", "types", "scores", "merges"):
                data = self._section(name)
                if name == "scores" and not any(data):
                    data = b""
                h.update(name.encode() + struct.pack("<Q", len(data)))
                h.update(data)
            self._fingerprint = h.hexdigest()[:16]
        return self._fingerprint

    def compare(self, other: Vocab, first: int = 5) -> VocabComparison:
        """How two vocabularies differ: ids whose token, type or score differ, and merges."""
        n = min(self.size, other.size)
        token_diffs = [i for i in range(n) if self.tokens[i] != other.tokens[i]]
        type_diffs: list[int] = []
        if self.token_types is not None and other.token_types is not None:
            type_diffs = [i for i in range(n) if self.token_types[i] != other.token_types[i]]
        score_diffs: list[int] = []
        if self.scores is not None and other.scores is not None:
            score_diffs = [i for i in range(n) if self.scores[i] != other.scores[i]]
        merges_equal = self._section("merges") == other._section("merges")
        return VocabComparison(
            same=self.fingerprint == other.fingerprint,
            sizes=(self.size, other.size),
            algorithms=(self.algorithm, other.algorithm),
            token_diffs=len(token_diffs),
            type_diffs=len(type_diffs),
            score_diffs=len(score_diffs),
            merges_counts=(len(self.merges), len(other.merges)),
            merges_equal=merges_equal,
            first_token_diffs=[(i, self.tokens[i], other.tokens[i]) for i in token_diffs[:first]],
            first_type_diffs=[(i, self.tokens[i], self.token_types[i], other.token_types[i])  # type: ignore[index]
                              for i in type_diffs[:first]],
        )


@dataclass
class VocabComparison:
    same: bool
    sizes: tuple[int, int]
    algorithms: tuple[str, str]
    token_diffs: int
    type_diffs: int
    score_diffs: int
    merges_counts: tuple[int, int]
    merges_equal: bool
    first_token_diffs: list[tuple[int, str, str]]
    first_type_diffs: list[tuple[int, str, int, int]]

    def summary(self) -> str:
        if self.same:
            return f"same vocabulary ({self.sizes[0]} tokens)"
        parts = []
        if self.sizes[0] != self.sizes[1]:
            parts.append(f"sizes {self.sizes[0]} vs {self.sizes[1]}")
        if self.token_diffs:
            shown = ", ".join(f"{i}: {a!r} vs {b!r}" for i, a, b in self.first_token_diffs)
            parts.append(f"{self.token_diffs} of {min(self.sizes)} ids hold different tokens (first: {shown})")
        if self.type_diffs:
            shown = ", ".join(f"{i} {t!r}: {type_name(a)} vs {type_name(b)}"
                              for i, t, a, b in self.first_type_diffs)
            parts.append(f"{self.type_diffs} token types differ (first: {shown})")
        if self.score_diffs:
            parts.append(f"{self.score_diffs} scores differ")
        if not self.merges_equal:
            parts.append(f"merges differ ({self.merges_counts[0]} vs {self.merges_counts[1]})")
        if not parts:
            parts.append("scores or types present on one side only")
        return "different vocabulary: " + "; ".join(parts)
