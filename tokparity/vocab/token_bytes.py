"""The bytes of input text each token stands for, per algorithm.

The diff engine needs to say which bytes of the input a run of differing tokens covers. A token's
stored text is not those bytes: SentencePiece pieces spell a space as ``▁`` and bytes as
``<0x0A>``; byte-level BPE tokens spell every byte through GPT-2's byte-to-unicode table
(``Ġ`` is the space, ``Ċ`` the newline); WordPiece continuations start with ``##``; control
tokens stand for no input at all.

    >>> from tokparity.vocab.model import TokenType as T, Vocab
    >>> spm = Vocab("spm", ["<s>", "▁Hello", "<0x0A>"], token_types=[T.CONTROL, T.NORMAL, T.BYTE])
    >>> [token_bytes(spm, i) for i in range(3)]
    [b'', b' Hello', b'\\n']
    >>> [token_bytes(Vocab("bpe", ["ĠHello", "Ċ"]), i) for i in range(2)], token_bytes(Vocab("wpm", ["##lo"]), 0)
    ([b' Hello', b'\\n'], b'lo')
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from functools import lru_cache
from itertools import accumulate

from tokparity.memo import PerObject
from tokparity.vocab.model import TokenType, Vocab
from tokparity.vocab.rwkv_vocab import unescape_llama_rwkv

SPACE_MARK = "\u2581"  # ▁, SentencePiece's escaped space


@lru_cache(maxsize=1)
def byte_to_unicode() -> list[str]:
    """GPT-2's printable spelling of each byte: printable Latin-1 bytes stand for themselves,
    the 68 others take U+0100 onwards in byte order (so ' ' is 'Ġ' and '\\n' is 'Ċ')."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = [""] * 256
    for b in printable:
        table[b] = chr(b)
    n = 0
    for b in range(256):
        if not table[b]:
            table[b] = chr(256 + n)
            n += 1
    return table


@lru_cache(maxsize=1)
def gpt2_unicode_to_byte() -> dict[str, int]:
    """The inverse of ``byte_to_unicode`` (GPT-2's ``bytes_to_unicode``): character -> byte."""
    return {c: b for b, c in enumerate(byte_to_unicode())}



# fairseq's and icefall's byte-level BPE (their byte_utils.py): each byte written as one printable
# character, 0x00-0x1F as U+0100-U+011F, 0x20-0x7E as themselves, 0x7F-0xFF as the 129 characters
# from U+0120 that NFKC leaves alone. Its decoder reads U+2047 (⁇, the unknown piece's surface) as a space.
_PRINTABLE_BYTES = [*range(0x100, 0x120), *range(0x20, 0x7F),
                    *(c for c in range(0x120, 0x1A7) if c not in (0x132, 0x133, 0x13F, 0x140, 0x149, 0x17F))]
PRINTABLE_BYTE_CHARS = tuple(chr(c) for c in _PRINTABLE_BYTES)  # byte -> its character
PRINTABLE_TO_BYTE = {**{ch: b for b, ch in enumerate(PRINTABLE_BYTE_CHARS)}, "\u2047": 0x20}
_ASCII_SPACES = re.compile("[ \t\n\v\f\r]+")


def printable_bytes(text: str) -> str:
    """``text`` as fairseq's byte-level BPE spells it: each run of ASCII whitespace one space, then
    each UTF-8 byte its table's character (``byte_encode``).

        >>> printable_bytes("a\t\tü")
        'a ũŢ'
    """
    return "".join(PRINTABLE_BYTE_CHARS[b] for b in _ASCII_SPACES.sub(" ", text).encode())


_PRINTABLE = frozenset(PRINTABLE_BYTE_CHARS)
_SPELT_IN_TABLE: PerObject[bool] = PerObject(size=4)


def spelt_in_byte_table(vocab: Vocab) -> bool:
    """Whether every piece reads as fairseq's byte-level BPE writes bytes, its leading ``▁`` aside
    and ``<…>`` pieces skipped. simple-sentencepiece then takes the model for a byte-level BPE
    (``DetectByteBpe``); an all-ASCII vocabulary passes.

        >>> spelt_in_byte_table(Vocab("spm", ["<unk>", "▁", "▁ab", "c"])), spelt_in_byte_table(Vocab("spm", ["▁é"]))
        (True, False)
    """
    def check() -> bool:
        pieces = [t.lstrip(SPACE_MARK) for t in vocab.tokens if not (t.startswith("<") and t.endswith(">"))]
        return bool(vocab.tokens) and all(_PRINTABLE.issuperset(t) for t in pieces)
    return _SPELT_IN_TABLE.get(vocab, "spelt", check)

def token_bytes(vocab: Vocab, token_id: int) -> bytes:
    """The input bytes one token stands for (``b""`` for control tokens and unknown ids)."""
    found = vocab._token_bytes.get(token_id)
    if found is None:
        found = vocab._token_bytes[token_id] = _token_bytes(vocab, token_id)
    return found


def every_token_bytes(vocab: Vocab) -> list[bytes | None]:
    """``token_bytes`` of every id, in one pass, kept in the same memo (None: a token the vocabulary
    cannot spell as bytes). A run's id corpus reads every token of each vocabulary."""
    cache = vocab._token_bytes
    if len(cache) >= vocab.size and all(i in cache for i in range(vocab.size)):
        return [cache[i] for i in range(vocab.size)]
    out = _spelt_all(vocab)
    if None in out:
        cache.update((i, found) for i, found in enumerate(out) if found is not None)
    else:
        cache.update(enumerate(out))  # type: ignore[arg-type]
    return out


def _spelt_all(vocab: Vocab) -> list[bytes | None]:
    """Every token's ``_spelt``. The normal tokens, nearly all of a vocabulary, are spelt in bulk:
    one call per vocabulary, not one per token (Gemma 3 has 262,144)."""
    tokens = vocab.tokens
    if vocab.algorithm == "rwkv":
        return [_spelt_or_none(vocab, i) for i in range(vocab.size)]
    out = _spelt_normal(vocab)
    types = vocab.token_types or ()
    for i in [i for i, t in enumerate(types) if t != TokenType.NORMAL and i < len(tokens)]:
        out[i] = _spelt_or_none(vocab, i)
    return out


def _spelt_or_none(vocab: Vocab, i: int, ttype: TokenType | None = None) -> bytes | None:
    try:
        return _spelt(vocab, vocab.tokens[i], vocab.type_of(i) if ttype is None else ttype)
    except Exception:  # (a token the vocabulary cannot spell as bytes, a lone surrogate: none)
        return None


def _spelt_normal(vocab: Vocab) -> list[bytes | None]:
    """``_spelt`` of each token as if it were a normal one."""
    algorithm, tokens = vocab.algorithm, vocab.tokens
    try:
        if algorithm == "bpe":
            alphabet, to_latin1 = _gpt2_alphabet()
            # One character of GPT-2's alphabet is one byte: the joined tokens are read at once, then
            # cut at each token's end. A token with another character ('<|eot_id|>', Gemma 4's
            # pieces) is spelt again alone.
            joined = "".join(tokens)
            spelt = joined.translate(to_latin1).encode("latin-1", "replace")
            ends = list(accumulate(map(len, tokens)))
            out: list[bytes | None] = [spelt[start:end] for start, end in zip([0, *ends], ends)]
            for i in sorted({bisect_right(ends, m.start()) for m in _not_gpt2_alphabet().finditer(joined)}):
                out[i] = tokens[i].replace(SPACE_MARK, " ").encode("utf-8", "surrogateescape")
            return out
        if algorithm == "wpm":
            return [t[2:].encode() if t.startswith("##") else t.encode("utf-8", "surrogateescape") for t in tokens]
        return [t.replace(SPACE_MARK, " ").encode("utf-8", "surrogateescape") for t in tokens]
    except Exception:  # (a token that cannot be spelt: each on its own, that one None)
        return [_spelt_or_none(vocab, i, TokenType.NORMAL) for i in range(len(tokens))]


@lru_cache(maxsize=1)
def _not_gpt2_alphabet() -> re.Pattern[str]:
    """A character that is not of GPT-2's byte alphabet."""
    return re.compile("[^" + "".join(re.escape(c) for c in sorted(_gpt2_alphabet()[0])) + "]")


@lru_cache(maxsize=1)
def _gpt2_alphabet() -> tuple[frozenset[str], dict[int, int]]:
    """GPT-2's byte alphabet, and the map of each of its characters to the Latin-1 one of its byte."""
    table = gpt2_unicode_to_byte()
    return frozenset(table), {ord(c): b for c, b in table.items()}


def ids_bytes(vocab: Vocab, ids: Iterable[int]) -> list[bytes]:
    """``token_bytes`` of each id, as one call (a mismatch's shape reads every id of both sides)."""
    cache = vocab._token_bytes
    return [found if (found := cache.get(i)) is not None else token_bytes(vocab, i) for i in ids]


def _token_bytes(vocab: Vocab, token_id: int) -> bytes:
    if not 0 <= token_id < vocab.size:
        return b""
    return _spelt(vocab, vocab.tokens[token_id], vocab.type_of(token_id))


def _spelt(vocab: Vocab, text: str, ttype: TokenType) -> bytes:
    """The bytes one token of ``vocab``, spelt ``text`` and of type ``ttype``, stands for."""
    if vocab.algorithm == "rwkv":
        # Every token stands for its bytes, whatever its type: llama.cpp's RWKV trie holds them all
        # ("<s>" in the input becomes id 0). A GGUF spells them with escapes, the rwkv package's file does not.
        raw = text.encode("utf-8", "surrogateescape")
        return unescape_llama_rwkv(raw) if vocab.source_format == "gguf" else raw
    if ttype in (TokenType.CONTROL, TokenType.UNKNOWN, TokenType.UNUSED):
        return b""
    if ttype == TokenType.BYTE and len(text) == 6 and text.startswith("<0x") and text.endswith(">"):
        return bytes([int(text[3:5], 16)])
    if ttype == TokenType.USER_DEFINED:
        return text.encode("utf-8", "surrogateescape")
    if vocab.algorithm == "bpe":
        alphabet, to_latin1 = _gpt2_alphabet()
        if alphabet.issuperset(text):  # (each character one byte of GPT-2's alphabet)
            return text.translate(to_latin1).encode("latin-1")
        # not a byte-level token (e.g. gemma4's SentencePiece-style pieces)
        return text.replace(SPACE_MARK, " ").encode("utf-8", "surrogateescape")
    if vocab.algorithm == "wpm":
        return text[2:].encode() if text.startswith("##") else text.encode("utf-8", "surrogateescape")
    return text.replace(SPACE_MARK, " ").encode("utf-8", "surrogateescape")
