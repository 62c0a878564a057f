"""The text an engine encodes in slices, each on its own, with the slices' ids joined (``input.sliced``).

Data pipelines cut long texts to tokenize them in parallel or in batches, and line readers encode
each line apart. Where a slice ends inside a word, the word's tokens are not the model's. The law
of the cuts is learnt from a case: slices of a fixed number of characters, a fixed number of equal
slices, or one slice per line. A case proposes each law its engine's token boundaries allow
(``slicing_keys``); the search keeps the laws that give its ids exactly, and the run's verdict tries
each on every case. An engine that cuts at 20 characters is named by that law everywhere, and its
shorter texts keep agreeing. A law fits many other bugs on one case (a missing merge adds a cut
too; a text of columns may be cut every five characters by chance). So a case keeps a law as an
alternative only, for the run's verdict, until the law has reproduced SETTLED cases of its engine.
A case tries a law only where nothing else gives its ids, not even a merge left out
(``rules.LAST_RESORT``).

    >>> Slicing.of_key("parts/4").of("abcdefghij"), Slicing.of_key("chars/4").sentence()
    (['abc', 'def', 'ghi', 'j'], 'the text encoded in slices of 4 characters, each on its own')

A law is learnt only where the engine's ids spell the text its slices make (its special tokens
aside): the text itself, or less a character a byte cut split, or less its blank lines. So no law is
learnt on a model whose reference puts a space before the text (a SentencePiece dummy prefix), nor
from an engine that gives each slice its own. Slices of one character are no law: they are what an
engine that merges nothing gives, and a slice is at least MIN_WIDTH characters.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tokparity.diagnose.candidate import Candidate
from tokparity.diagnose.variants.variant import Variant, spelt
from tokparity.vocab import TokenType, Vocab

PREFIX = "input.sliced:"
# The numbers of equal slices tried: those a pipeline picks (a batch, a number of workers)
PARTS = (2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 50, 64, 100)
WIDTHS_PROPOSED = 3  # the narrowest widths a case proposes (a width's multiples fit too)
MIN_WIDTH = 2  # the narrowest slice a case proposes
SETTLED = 3  # the cases a law reproduces before a case names it (the search keeps it aside till then)
_LINE_ENDS = re.compile(r"(?<=\n)")
_KEY = re.compile(r"(chars|parts|byte-parts)/([1-9][0-9]{0,6})|(lines|nonblank-lines)", re.ASCII)


@dataclass(frozen=True)
class Slicing:
    """How an engine cuts a text before it encodes each slice. ``unit``: "chars" (slices of ``n``
    characters), "parts" (``n`` equal slices by characters, the last shorter), "byte-parts" (``n``
    slices of the same number of UTF-8 bytes, the last longer, each read as UTF-8 with the bytes
    of a character cut in two dropped), "lines" (each line, its line feed kept) or
    "nonblank-lines" (the same, a line of whitespace only left out). With ``each``, every slice
    gets the special tokens the request asks for."""

    unit: str
    n: int = 0
    each: bool = False

    @classmethod
    def of_key(cls, spec: str) -> Slicing:
        """The law a key spells after ``input.sliced:``: "chars/20", "parts/20+each", "lines"."""
        body, each = (spec[:-5], True) if spec.endswith("+each") else (spec, False)
        found = _KEY.fullmatch(body)
        if found is None:
            raise ValueError(f"no such slicing: {spec!r}")
        unit, n, lines = found.groups()
        return cls(unit, int(n), each) if unit else cls(lines, 0, each)

    def key(self) -> str:
        return PREFIX + (f"{self.unit}/{self.n}" if self.n else self.unit) + ("+each" if self.each else "")

    def width(self, text: str) -> int:
        """The characters of each slice of ``text`` (0 for lines and bytes)."""
        if self.unit == "parts":  # (the pipelines met round up: (length - 1) // parts + 1)
            return (len(text) - 1) // self.n + 1 if text else 0
        return self.n if self.unit == "chars" else 0

    def of(self, text: str) -> list[str]:
        """The slices of ``text``, in order. Equal slices are always ``n``, the last ones empty if
        the text is short."""
        if self.unit in ("lines", "nonblank-lines"):  # (a line reader's lines: each ends at a line feed)
            lines = [line for line in _LINE_ENDS.split(text) if line]
            return [line for line in lines if line.strip()] if self.unit == "nonblank-lines" else lines
        if self.unit == "byte-parts":  # (the pipelines met round down: the last slice takes the rest)
            data = text.encode("utf-8", "surrogatepass")
            size = len(data) // self.n
            ends = [k * size for k in range(self.n)] + [len(data)]
            return [data[a:b].decode("utf-8", "ignore") for a, b in zip(ends, ends[1:])]
        width = self.width(text)
        if width == 0:
            return [""] * self.n if self.unit == "parts" else [text]
        count = self.n if self.unit == "parts" else -(-len(text) // width)
        return [text[k * width:(k + 1) * width] for k in range(count)]

    def sentence(self) -> str:
        each = ", and with its own special tokens" if self.each else ""
        if self.unit in ("lines", "nonblank-lines"):
            blank = ", a blank line left out" if self.unit == "nonblank-lines" else ""
            return f"the text encoded line by line, each line on its own{blank}{each}"
        if self.unit == "byte-parts":
            return (f"the text cut into {self.n} slices of equal length in bytes, each read as UTF-8 without the "
                    f"character cut in two and encoded on its own{each}")
        if self.unit == "parts":
            return f"the text cut into {self.n} slices of equal length in characters, each encoded on its own{each}"
        return f"the text encoded in slices of {self.n} characters, each on its own{each}"


def is_slicing(key: str) -> bool:
    return key.startswith(PREFIX)


def said_of(key: str) -> str:
    return Slicing.of_key(key[len(PREFIX):]).sentence()


def _cuts(pieces: list[str]) -> set[int]:
    """Where the slices end, in their text joined (not at its ends)."""
    ends, at = set(), 0
    for piece in pieces[:-1]:
        at += len(piece)
        ends.add(at)
    return ends - {0, sum(map(len, pieces))}


def sliced_variant(spec: str) -> Variant:
    """``input.sliced``: the text cut as ``spec`` says (``Slicing.of_key``), each slice encoded alone."""
    slicing = Slicing.of_key(spec)

    def apply(c: Candidate) -> Candidate | None:
        # (an engine cuts its text one way: not also at special-token text, nor by another release's)
        if c.slicing is not None or c.segment_at is not None or c.other_release is not None:
            return None
        return c.replace(slicing=slicing)

    def affects(c: Candidate, text: str) -> bool:
        pieces = slicing.of(text)
        return slicing.each or "".join(pieces) != text or bool(_cuts(pieces))

    return Variant(slicing.key(), "input.sliced", slicing.sentence(), apply, affects)


def _specials(vocab: Vocab, ids: Sequence[int]) -> int:
    return sum(1 for i in ids if 0 <= i < vocab.size and vocab.type_of(i) == TokenType.CONTROL)


def slicing_keys(vocab: Vocab, text: str, oracle: list[int], target: list[int]) -> list[str]:
    """The keys of each law of slices that fits this case: its slices, joined, are the text the
    engine's ids spell; each cut is where one of those ids ends; and, where the slices keep the
    whole text, one cut at least is where none of the oracle's ids ends."""
    mine, right = spelt(vocab, target), spelt(vocab, oracle)
    if mine is None or right is None or right[0] != text or mine == right:
        return []
    engine_text, ends = mine

    def fits(law: Slicing) -> bool:
        pieces = law.of(text)
        cuts = _cuts(pieces)
        if "".join(pieces) != engine_text or not cuts <= ends:
            return False
        return engine_text != text or bool(cuts - right[1])

    widths: list[int] = []
    if engine_text == text:  # (the narrowest widths whose every cut is an end: a width's multiples fit too)
        for n in range(MIN_WIDTH, len(text)):
            cuts = range(n, len(text), n)
            if all(m in ends for m in cuts) and any(m not in right[1] for m in cuts):
                widths.append(n)
                if len(widths) == WIDTHS_PROPOSED:
                    break
    laws = [Slicing("chars", n) for n in widths]
    laws += [law for law in (Slicing("parts", k) for k in PARTS) if law.width(text) in widths]
    laws += [law for law in (*(Slicing("byte-parts", k) for k in PARTS), Slicing("lines"), Slicing("nonblank-lines"))
             if fits(law)]
    each = _specials(vocab, target) > _specials(vocab, oracle)  # (a BOS for each slice)
    return list(dict.fromkeys(Slicing(law.unit, law.n, each).key() for law in laws))
