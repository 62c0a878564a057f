"""A text an engine puts before or after the input (``input.affixed``), learnt from a case: a
byte-order mark kept from a file, the line feed ``echo`` adds, a space or a marker in front.

The engine's ids are spelt back to text. Where that text is the input with a few characters before
it, after it or both, those characters are the affix. The search keeps it only where the
reference, run on the text so framed, gives the engine's ids exactly; the run's verdict then
tries it on every case. An engine that puts U+FEFF before every text is named by it everywhere.

    >>> affix_of("hello", "\\ufeffhello").said()
    'the text read with U+FEFF put before it'
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from tokparity.diagnose.candidate import Candidate
from tokparity.diagnose.variants.text_edit import shown
from tokparity.diagnose.variants.variant import Variant, spelt
from tokparity.vocab import Vocab

PREFIX = "input.affixed:"
LONGEST = 16  # the most characters put around a text: more is another text, not a frame


@dataclass(frozen=True)
class Affix:
    """The text put before the input (``before``) and after it (``after``)."""

    before: str
    after: str

    def __call__(self, text: str) -> str:
        return self.before + text + self.after

    def key(self) -> str:
        return PREFIX + json.dumps([self.before, self.after], ensure_ascii=True)

    def said(self) -> str:
        parts = [f"{_shown(self.before)} put before it"] * bool(self.before) + \
                [f"{_shown(self.after)} put after it"] * bool(self.after)
        return "the text read with " + " and ".join(parts)


def _shown(text: str) -> str:
    return " ".join(map(shown, text)) if len(text) <= 4 else shown(text)


def is_affix(key: str) -> bool:
    return key.startswith(PREFIX)


def parse(key: str) -> Affix:
    before, after = json.loads(key[len(PREFIX):])
    return Affix(before, after)


def said_of(key: str) -> str:
    return parse(key).said()


def affix_of(text: str, spelt: str) -> Affix | None:
    """The affix that frames ``text`` as ``spelt`` (None: none of at most LONGEST characters does).
    An empty text's affix is read as put before it, as most engines' is."""
    if spelt == text or not 0 < len(spelt) - len(text) <= LONGEST:
        return None
    if not text:
        return Affix(spelt, "")
    for at in range(len(spelt) - len(text) + 1):  # (the shortest text before it first)
        if spelt.startswith(text, at):
            return Affix(spelt[:at], spelt[at + len(text):])
    return None


def affix_key(vocab: Vocab, text: str, oracle: Sequence[int], target: Sequence[int]) -> str | None:
    """The key of the affix the engine's ids show on ``text`` (their special tokens left out). What
    the oracle's ids put before the text themselves (a SentencePiece dummy prefix's space) is the
    model's, not the affix: it is taken off both sides first."""
    right, mine = spelt(vocab, oracle), spelt(vocab, target)
    if right is None or mine is None or not right[0].endswith(text):
        return None
    lead = right[0][:len(right[0]) - len(text)]
    if not mine[0].startswith(lead):
        return None
    found = affix_of(text, mine[0][len(lead):])
    return None if found is None else found.key()


def affix_variant(key: str) -> Variant:
    """``input.affixed``: the text framed as the key says before the tokenizer reads it."""
    affix = parse(key)

    def apply(c: Candidate) -> Candidate | None:
        if any(isinstance(m, Affix) for m in c.text_maps):
            return None  # (an engine frames its text once)
        return c.replace(text_maps=c.text_maps + (affix,))

    return Variant(affix.key(), "input.affixed", affix.said(), apply)
