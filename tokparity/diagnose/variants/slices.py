"""The text encoded in slices: cut at fixed places, each slice encoded alone, the ids joined.

A data pipeline cuts a long text into a number of slices of equal length, or into slices of a
fixed number of characters, and tokenizes each alone. A word cut in two gives pieces the whole
text never has. The variants are made for a case whose backend ids have a token boundary at every
cut (``slicings``): one for the slice length the cuts show, and one for each number of slices that
gives that length. The run's verdict then tries each on every case. An engine with one rule is named
by it everywhere.

    >>> Slicing.of_key("parts/3").of("abcdefg"), Slicing.of_key("chars/3").of("abcdefg")
    (['abc', 'def', 'g'], ['abc', 'def', 'g'])
    >>> Slicing.of_key("parts/4").of("abcde"), Slicing.of_key("parts/4").sentence()
    (['ab', 'cd', 'e', ''], 'the text cut into 4 slices of equal length, each encoded alone')
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import accumulate

from tokparity.diagnose.candidate import Candidate
from tokparity.diagnose.variants.variant import Variant
from tokparity.vocab import Vocab
from tokparity.vocab.token_bytes import token_bytes

HEAD = "input.sliced"
MOST_PARTS = 64  # the most slices tried for a text cut into equal parts
MOST_KEYS = 12  # of one case
_KEY = re.compile(r"(parts|chars)/([1-9][0-9]{0,6})", re.ASCII)


@dataclass(frozen=True)
class Slicing:
    """How an engine cuts a text before it encodes each part alone: into ``size`` slices of equal
    length (``unit`` "parts"), or every ``size`` characters ("chars")."""

    unit: str
    size: int

    @classmethod
    def of_key(cls, spec: str) -> Slicing:
        """The slicing a variant key spells after ``input.sliced:``: "parts/20" or "chars/512"."""
        found = _KEY.fullmatch(spec)
        if found is None:
            raise ValueError(f"no such slicing: {spec!r}")
        return cls(found.group(1), int(found.group(2)))

    def key(self) -> str:
        return f"{self.unit}/{self.size}"

    def of(self, text: str) -> list[str]:
        """The slices, in order. Cut into equal parts, each is ``ceil(len / parts)`` characters
        long, and the last ones may be empty, as ``text[i * n:(i + 1) * n] for i in range(parts)``
        gives them."""
        if self.unit == "chars":
            return [text[k:k + self.size] for k in range(0, len(text), self.size)]
        length = (len(text) - 1) // self.size + 1 if text else 0
        return [text[k * length:(k + 1) * length] for k in range(self.size)] if text else []

    def sentence(self) -> str:
        if self.unit == "chars":
            return f"the text cut every {self.size} characters, each slice encoded alone"
        return f"the text cut into {self.size} slices of equal length, each encoded alone"


def sliced_variant(spec: str) -> Variant:
    """``input.sliced``: the text cut as ``spec`` spells (``Slicing.of_key``), each slice encoded alone."""
    slicing = Slicing.of_key(spec)

    def apply(c: Candidate) -> Candidate | None:
        return c.replace(slicing=slicing) if c.slicing is None else None

    return Variant(f"{HEAD}:{slicing.key()}", HEAD, slicing.sentence(), apply)


def slicings(vocab: Vocab, text: str, target: list[int], oracle: list[int]) -> list[str]:
    """The variant keys of the slicings whose every cut is a token boundary of the backend's ids
    and not of the oracle's somewhere: the shortest such slice length, then each number of equal
    slices that gives it (at most ``MOST_PARTS``)."""
    n = len(text)
    if n < 2 or not target:
        return []
    widths = (len(ch.encode("utf-8", "surrogatepass")) for ch in text)
    at_char = {offset: k for k, offset in enumerate(accumulate(widths, initial=0))}  # byte offset -> character

    def cuts(ids: list[int]) -> set[int]:
        ends = accumulate(len(token_bytes(vocab, i)) for i in ids)
        return {at_char[e] for e in ends if e in at_char}

    backend, ours = cuts(target), cuts(oracle)
    for length in range(1, n):
        places = range(length, n, length)
        if all(k in backend for k in places) and any(k not in ours for k in places):
            break
    else:
        return []
    parts = [k for k in range(2, MOST_PARTS + 1) if (n - 1) // k + 1 == length]
    return ([f"{HEAD}:chars/{length}"] + [f"{HEAD}:parts/{k}" for k in parts])[:MOST_KEYS]
