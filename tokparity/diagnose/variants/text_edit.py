"""The text an engine reads, edited in a way no named cause gives: some characters read as others
or dropped, and runs of a character read as one.

The edit is learnt from one case. Both sides' ids are spelt back to text, and the characters where
they part say what the engine changed (``edit_of``). It is kept only where the reference, run on the
text so edited, gives the engine's ids exactly. The run's verdict then tries the union of the
edits that two cases showed on every case, the agreements included: an engine that reads a tab as a
space somewhere reads it so everywhere.

Only characters that are not letters, digits or marks are learnt. Those have causes of their own
(a normalizer, lower-casing), and a cut text would otherwise read as every character dropped. An
edit only at the text's end is not learnt (a cut: ``ids.truncated``, ``input.cut``), nor one that
is NFKC's own mappings (a normalizer).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from tokparity.diagnose.candidate import Candidate
from tokparity.diagnose.variants.variant import Variant
from tokparity.diff.evidence import decoded_bytes
from tokparity.vocab import Vocab

PREFIX = "input.edit:"
MOST_CHARACTERS = 8  # an edit of more characters than this is not one rule but a different text


@dataclass(frozen=True)
class TextEdit:
    """Characters read as others (``as_``: each to one character, or to none) and then runs of
    the characters ``runs`` read as one."""

    as_: tuple[tuple[str, str], ...] = ()
    runs: str = ""

    def __call__(self, text: str) -> str:
        text = text.translate({ord(a): b for a, b in self.as_})
        for ch in self.runs:
            text = re.sub(re.escape(ch) + "{2,}", ch, text)
        return text

    def key(self) -> str:
        return PREFIX + json.dumps([[list(p) for p in self.as_], self.runs], ensure_ascii=True)

    def joined(self, other: TextEdit) -> TextEdit | None:
        """Both edits as one (None: they read a character two ways)."""
        mine = dict(self.as_)
        for a, b in other.as_:
            if mine.setdefault(a, b) != b:
                return None
        return TextEdit(tuple(sorted(mine.items())), "".join(sorted(set(self.runs + other.runs))))

    def said(self) -> str:
        parts = [f"{_name(a)} as {_name(b)}" if b else f"{_name(a)} dropped" for a, b in self.as_]
        parts += [f"runs of {_name(ch)} as one" for ch in self.runs]
        return "the text read with " + ", ".join(parts)


def _name(ch: str) -> str:
    return repr(ch) if ch.isprintable() and not ch.isspace() or ch == " " else f"U+{ord(ch):04X}"


def parse(key: str) -> TextEdit:
    pairs, runs = json.loads(key[len(PREFIX):])
    return TextEdit(tuple((a, b) for a, b in pairs), runs)


def _learnable(ch: str) -> bool:
    return unicodedata.category(ch)[0] not in "LNM"


def _spelt(vocab: Vocab, ids: Sequence[int]) -> str | None:
    try:
        return decoded_bytes(vocab, ids).decode("utf-8")
    except (UnicodeDecodeError, IndexError, KeyError, ValueError):
        return None


def edit_of(vocab: Vocab, oracle: Sequence[int], target: Sequence[int]) -> TextEdit | None:
    """The edit that turns the text the oracle's ids spell into the text the engine's spell, where
    one rule of the kinds above does (None: the texts are the same, or no such rule does)."""
    a, b = _spelt(vocab, oracle), _spelt(vocab, target)
    if a is None or b is None or a == b:
        return None
    as_: dict[str, str] = {}
    runs: set[str] = set()

    def read(x: str, y: str) -> bool:
        return _learnable(x) and (not y or _learnable(y)) and as_.setdefault(x, y) == y

    inside = False  # (an edit only at the text's end is a cut, whatever it looks like: "!!" read as "!")
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        gone, put = a[i1:i2], b[j1:j2]
        if tag == "equal":
            continue
        inside |= i2 < len(a)
        if tag == "insert":
            return None
        if tag == "replace" and len(gone) == len(put):
            if not all(read(x, y) for x, y in zip(gone, put)):
                return None
        elif tag == "replace" and len(put) == 1 and (put in gone or len(set(gone)) == 1):
            # (a run read as one character: "\t\t" as " ", " \t " as " "; not ", " as "!")
            if not all(x == put or read(x, put) for x in gone):
                return None
            runs.add(put)
        elif tag == "delete":
            for k, x in enumerate(gone, start=i1):
                if not _learnable(x):
                    return None
                if a[k - 1:k] == x or a[k + 1:k + 2] == x:  # (one of a run: the run read as one)
                    runs.add(x)
                elif not read(x, ""):
                    return None
        else:
            return None
    if not inside or as_ and all(y and unicodedata.normalize("NFKC", x) == y for x, y in as_.items()):
        return None  # (a cut at the end; NFKC's own mappings, a normalizer's cause, not an edit's)
    edit = TextEdit(tuple(sorted(as_.items())), "".join(sorted(runs)))
    return edit if 0 < len(edit.as_) + len(edit.runs) <= MOST_CHARACTERS else None


def edit_variant(key: str) -> Variant:
    """``input.edit``: the text edited as the key says before the tokenizer reads it."""
    edit = parse(key)

    def apply(c: Candidate) -> Candidate | None:
        # (another edit of the same engine's: one edit of both, applied once, so a tab read as a
        # space and runs of spaces read as one give what the engine gives for "\t ")
        others = [m for m in c.text_maps if isinstance(m, TextEdit)]
        joined: TextEdit | None = edit
        for other in others:
            joined = joined.joined(other) if joined is not None else None
        if joined is None:
            return None
        kept = tuple(m for m in c.text_maps if not isinstance(m, TextEdit))
        return c.replace(text_maps=kept + (joined,))

    def affects(c: Candidate, text: str) -> bool:
        return any(a in text for a, _ in edit.as_) or any(ch * 2 in text for ch in edit.runs)

    return Variant(key, "input.edit", edit.said(), apply, affects)
