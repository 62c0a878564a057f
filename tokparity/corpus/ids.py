"""The id sequences a run decodes beside its corpora's texts (``-c ids``): made from a model's
vocabulary where decoders go wrong. Byte tokens that split a character, at the prompt's end too,
lone continuation bytes, special tokens between words, whitespace pieces, random ids, the longest
tokens, the added ones that are not special, and a character's first byte alone before a word. The same
vocabulary and seed give the same sequences, so a diagnosis can read them again.

Last come the whole vocabulary's ids in blocks, asked of the pieces op only. A table of every id's
bytes may be wrong on one token that no text holds.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import compress, count, islice

from tokparity.memo import PerObject
from tokparity.vocab import Vocab
from tokparity.vocab.model import TokenType

ID_CORPUS = "ids"  # the corpus name of the id sequences (id_cases)
LONGEST = 4  # the longest tokens of the vocabulary, each decoded between two words
STREAM_PROMPT = 1  # the prompt of a corpus text's ids, streamed: a server streams after a prompt
VOCABULARY_BLOCK = 1024  # the ids of one case of the whole vocabulary (pieces only)


@dataclass(frozen=True)
class IdCase:
    """A sequence of ids to decode, not a text: ``prompt`` of them are the stream's prompt.
    ``pieces_only``: a block of the whole vocabulary, asked only for each id's bytes (a decode of
    consecutive ids is no input a model gives)."""

    id: str
    ids: tuple[int, ...]
    prompt: int
    about: str
    tags: dict = field(default_factory=dict, compare=False, hash=False)
    pieces_only: bool = False

    def asked(self, op: str) -> bool:
        """Whether ``op`` is asked of this sequence."""
        return op == "pieces" or not self.pieces_only


_MADE: PerObject[tuple[IdCase, ...]] = PerObject(size=4)


def id_cases(vocab: Vocab, seed: int = 0) -> list[IdCase]:
    """Id sequences where decoders go wrong, made from ``vocab`` (the same ones for the same vocabulary
    and seed). They are made once per vocabulary: the judge and the diagnosis both read them, and
    making them reads every token."""
    return list(_MADE.get(vocab, seed, lambda: tuple(_made(vocab, seed))))


def _made(vocab: Vocab, seed: int) -> list[IdCase]:
    from tokparity.vocab.token_bytes import every_token_bytes

    def byte_id(b: int) -> int | None:
        return byte_ids.get(b)

    types = vocab.token_types or [TokenType.NORMAL] * vocab.size
    byte_ids: dict[int, int] = {}
    words: list[int] = []
    spaces: list[int] = []
    spelt = every_token_bytes(vocab)
    n = min(len(types), len(spelt))
    sizes = [-1 if data is None else len(data) for data in spelt[:n]]  # (-1: a token it cannot spell as bytes)
    # The longest ordinary and added tokens, and the first added ones, are read in one pass of C code.
    longest = [(size, i) for size, i in heapq.nlargest(
        LONGEST, compress(zip(sizes, count()), map({TokenType.NORMAL, TokenType.USER_DEFINED}.__contains__, types)))
        if size >= 0]
    added = list(islice((i for i in compress(count(), map(TokenType.USER_DEFINED.__eq__, types[:n]))
                         if sizes[i] >= 0), 4))  # added tokens that are not special

    def read(i: int) -> None:
        """Token ``i`` kept as a byte token, a whitespace piece or a word, where it is one."""
        t, data = types[i], spelt[i]
        if data is None or t in (TokenType.CONTROL, TokenType.UNUSED, TokenType.UNDEFINED):
            return
        if len(data) == 1 and (t == TokenType.BYTE or data[0] >= 0x80 or data[0] not in byte_ids):
            byte_ids.setdefault(data[0], i) if t != TokenType.BYTE else byte_ids.__setitem__(data[0], i)
        elif data.strip() == b"" and data and len(spaces) < 8:
            spaces.append(i)
        elif t == TokenType.NORMAL and data.isascii() and data.strip().isalpha() and len(words) < 64:
            words.append(i)

    # Every token in order until the list of words is full (the first few thousand); past that,
    # only a token of one byte or of whitespace can be read, so only those are.
    first = 0
    while first < n and len(words) < 64:
        read(first)
        first += 1
    rest: list[bytes] = [b"" if data is None else data for data in spelt[first:n]]
    for i in sorted({*compress(count(first), map((1).__eq__, sizes[first:])),
                     *compress(count(first), map(bytes.isspace, rest))}):
        read(i)
    specials = sorted({i for i in vocab.special_ids.values() if 0 <= i < vocab.size})[:4]
    cases: list[IdCase] = []

    def add(about: str, ids: list[int | None], prompt: int) -> None:
        if ids and all(i is not None for i in ids):
            cases.append(IdCase(f"ids-{len(cases) + 1}", tuple(i for i in ids if i is not None), prompt, about,
                                {"ids": about.split(":")[0]}))

    w = (words + [0, 0, 0])[:3] if words else []
    for ch in ("é", "私", "🤗"):
        parts = [byte_id(b) for b in ch.encode("utf-8")]
        add(f"split-character: {ch!r} as byte tokens between words", [*w[:1], *parts, *w[1:2]], 1)
        add(f"prompt-ends-inside: the prompt ends inside {ch!r}", [*w[:1], *parts, *w[1:2]], 2)
        add(f"unfinished-end: the ids end inside {ch!r}", [*w[:1], *parts[:-1]], 1)
    add("lone-continuation: a continuation byte alone between words", [*w[:1], byte_id(0x80), *w[1:2]], 1)
    add("invalid-byte: 0xFF between words", [*w[:1], byte_id(0xFF), *w[1:2]], 1)
    # (a decoder that reads a run of byte tokens at once may replace the good character with the bad byte)
    add("bad-byte-before-character: a lone continuation byte, then '𐍈' as byte tokens",
        [*w[:1], byte_id(0xA7), *(byte_id(b) for b in "𐍈".encode()), *w[1:2]], 1)
    for s in specials:
        add(f"special-between: special token {vocab.tokens[s]!r} between words", [*w[:1], s, *w[1:3]], 1)
    if spaces:
        add("whitespace-pieces: whitespace tokens between words", [*w[:1], *spaces[:4], *w[1:2]], 1)
    rng = random.Random(f"{seed}:{vocab.size}")
    for _ in range(8):
        add("random: random ids of the vocabulary", [rng.randrange(vocab.size) for _ in range(12)], 1)
    # (after the random ones, so that the cases made before keep their names)
    for size, i in sorted(longest, reverse=True):
        add(f"long-token: {vocab.tokens[i]!r} ({size} bytes) between words", [*w[:1], i, *w[1:2]], 1)
    for i in added:
        add(f"added-between: added token {vocab.tokens[i]!r} between words", [*w[:1], i, *w[1:2]], 1)
    # (a hand-written UTF-8 decoder may take the word's first bytes as the rest of the broken character)
    add("broken-lead: the first byte of '私' alone, then a word", [*w[:1], byte_id("私".encode()[0]), *w[1:2]], 1)
    for first in range(0, vocab.size, VOCABULARY_BLOCK):
        last = min(first + VOCABULARY_BLOCK, vocab.size) - 1
        cases.append(IdCase(f"ids-{len(cases) + 1}", tuple(range(first, last + 1)), 0,
                            f"vocabulary: ids {first} to {last}, each id's bytes", {"ids": "vocabulary"},
                            pieces_only=True))
    return cases


def numbered_id_cases(vocab: Vocab, first: int, ops: tuple[str, ...]) -> Iterator[tuple[int, IdCase]]:
    """The id sequences some of ``ops`` ask, numbered from ``first`` (a sequence none asks still
    takes its number: the numbers stay those of the run that asks every op)."""
    for k, case in enumerate(id_cases(vocab)):
        if any(case.asked(op) for op in ops):
            yield first + k, case
