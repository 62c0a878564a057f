"""The text an engine reads, edited in a way no named cause gives: some characters read as others
or dropped, and runs of a character read as one.

The edit is learnt from one case. Both sides' ids are spelt back to text, and the characters where
they part say what the engine changed (``edit_of``). It is kept only where the reference, run on the
text so edited, gives the engine's ids exactly. The run's verdict then tries the union of the
edits that two cases showed on every case, the agreements included: an engine that reads a tab as a
space somewhere reads it so everywhere.

Only characters that are not letters, digits or marks are learnt. A run's verdict may narrow an
edit to the classes of the character after it (``TextEdit.narrowed``): "$" escaped before a digit. Those have causes of their own
(a normalizer, lower-casing), and a cut text would otherwise read as every character dropped.
Nor is U+FFFD, which stands for bytes that are not UTF-8. A
text cut short is not learnt, the engine's a start of the right one (``ids.truncated``,
``input.cut``), nor an edit that is NFKC's own mappings (a normalizer).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import combinations

from tokparity.diagnose.candidate import Candidate
from tokparity.diagnose.variants.variant import Variant
from tokparity.diff.evidence import decoded_bytes
from tokparity.vocab import Vocab

PREFIX = "input.edit:"
MOST_CHARACTERS = 8  # an edit of more characters than this is not one rule but a different text
MOST_WRITTEN = 4  # the most characters one character is written as (a tab as four spaces)


# The classes of the character after one an edit writes otherwise (``TextEdit.before``): an
# escaper that writes "$" as "\\$" before a digit only. "end": no character after it.
CLASSES = {"L": "a letter", "N": "a digit", "Z": "a space", "P": "punctuation", "S": "a symbol",
           "C": "a control character", "M": "a mark", "end": "the end"}


def class_of(text: str, i: int) -> str:
    """The class of ``text[i]``, "end" past the end; a whitespace control (a newline) is a space."""
    if i >= len(text):
        return "end"
    return "Z" if text[i].isspace() else unicodedata.category(text[i])[0]


@dataclass(frozen=True)
class TextEdit:
    """Characters read as others (``as_``: each to up to MOST_WRITTEN characters, or to none), only
    before a character of the classes ``before`` where it names any, and then runs of the
    characters ``runs`` read as one."""

    as_: tuple[tuple[str, str], ...] = ()
    runs: str = ""
    before: tuple[str, ...] = ()

    def __call__(self, text: str) -> str:
        if self.before:
            table = dict(self.as_)
            text = "".join(table.get(ch, ch) if ch in table and class_of(text, i + 1) in self.before else ch
                           for i, ch in enumerate(text))
        else:
            text = text.translate({ord(a): b for a, b in self.as_})
        for ch in self.runs:  # (the replacement escaped: re.sub reads "\\" in it as a template)
            text = re.sub(re.escape(ch) + "{2,}", ch.replace("\\", "\\\\"), text)
        return text

    def key(self, prefix: str = PREFIX) -> str:
        parts: list = [[list(p) for p in self.as_], self.runs] + ([list(self.before)] if self.before else [])
        return prefix + json.dumps(parts, ensure_ascii=True)

    def joined(self, other: TextEdit) -> TextEdit | None:
        """Both edits as one (None: they read a character two ways, or write their tables before
        other classes of character)."""
        mine = dict(self.as_)
        for a, b in other.as_:
            if mine.setdefault(a, b) != b:
                return None
        # (one set of classes holds for the whole table: two tables of the same characters join theirs,
        # and one written everywhere is written everywhere; other tables join only where theirs agree)
        if set(self.as_) == set(other.as_):
            before = tuple(sorted(set(self.before) | set(other.before))) if self.before and other.before else ()
        elif self.before != other.before:
            return None
        else:
            before = self.before
        # (runs of a character a table written everywhere writes otherwise are gone before runs are read)
        runs = {ch for ch in self.runs + other.runs if before or ch not in mine or any(ch in b for b in mine.values())}
        return TextEdit(tuple(sorted(mine.items())), "".join(sorted(runs)), before)

    def said(self, lead: str = "the text read with") -> str:
        parts = [f"{shown(a)} as {shown(b)}" if b else f"{shown(a)} dropped" for a, b in self.as_]
        if self.before and parts:
            parts[-1] += (", each" if len(parts) > 1 else "") + " only before " + " or ".join(CLASSES[c] for c in self.before)
        parts += [f"runs of {shown(ch)} as one" for ch in self.runs]
        return f"{lead} " + ", ".join(parts)

    def narrowed(self, texts: Iterable[tuple[str, str]]) -> TextEdit | None:
        """The edit written only before the classes of character it is written before in each pair
        (the right text, the engine's); None where no such edit gives every pair, or one does
        before every class."""
        if not self.as_ or self.before:
            return None
        table = dict(self.as_)
        classes: set[str] = set()
        pairs = list(texts)
        for a, b in pairs:
            present = sorted({class_of(a, i + 1) for i, ch in enumerate(a) if ch in table})
            # (the fewest classes that give the engine's text: each class's characters all written
            # otherwise, or none of them)
            fits = (set(k) for n in range(len(present) + 1) for k in combinations(present, n)
                    if TextEdit(self.as_, self.runs, tuple(k) or ("none",))(a) == b)
            found = next(fits, None)
            if found is None:
                return None
            classes |= found
        narrowed = TextEdit(self.as_, self.runs, tuple(sorted(classes)))
        if not classes or classes >= set(CLASSES) or any(narrowed(a) != b for a, b in pairs):
            return None  # (one pair's classes may write another pair's character it keeps)
        return narrowed


def all_joined(edits: Iterable[TextEdit]) -> TextEdit | None:
    """Every edit as one (None: none given, or two read a character two ways)."""
    joined: TextEdit | None = None
    for k, edit in enumerate(edits):
        if k == 0:
            joined = edit
        elif joined is None or (joined := joined.joined(edit)) is None:
            return None
    return joined


def shown(ch: str) -> str:
    if len(ch) > 1:  # (a character written as several: a tab as four spaces)
        return repr(ch)
    return repr(ch) if ch.isprintable() and not ch.isspace() or ch == " " else f"U+{ord(ch):04X}"


# What each learnt edit's words begin with: the engine's input edited, or its decoded output
# (tokparity.diagnose.learnt_edits)
LEADS = {"input.edit": "the text read with", "decode.edit": "the decoded text written with",
         "stream.edit": "the streamed text written with", "pieces.edit": "each piece written with"}


def is_edit(key: str) -> bool:
    """Whether ``key`` is a learnt edit's (``input.edit:…``, ``decode.edit:…``)."""
    return key.partition(":")[0] in LEADS and ":" in key


def parse(key: str) -> TextEdit:
    pairs, runs, *before = json.loads(key.partition(":")[2])
    return TextEdit(tuple((a, b) for a, b in pairs), runs, tuple(before[0]) if before else ())


def said_of(key: str) -> str:
    """A learnt edit's key in words: ``the text read with U+0009 as ' '``."""
    return parse(key).said(LEADS[key.partition(":")[0]])


# How a control character may be escaped: JSON's and Python's \u and \x, C's short escapes, caret
# notation and a byte token's <0x0A>. An escape may hold letters and digits; no other written text may.
SHORT_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0", "\a": "\\a", "\b": "\\b", "\f": "\\f",
                 "\v": "\\v"}
ESCAPED = re.compile(r"\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}|\\[ntr0abfv]|\^[@-_]|<0x[0-9a-fA-F]{2}>")


def escapes(ch: str) -> set[str]:
    r"""The ways ``ch`` is written escaped, where it is a control or format character (none else).

    >>> sorted(escapes("\n"))
    ['<0x0A>', '<0x0a>', '\\n', '\\u000A', '\\u000a', '\\x0A', '\\x0a', '^J']
    """
    if unicodedata.category(ch)[0] != "C" or ch == "\ufffd":
        return set()
    cp = ord(ch)
    found = {f"\\u{cp:04x}", f"\\u{cp:04X}"} | ({SHORT_ESCAPES[ch]} if ch in SHORT_ESCAPES else set())
    if cp < 256:
        found |= {f"\\x{cp:02x}", f"\\x{cp:02X}", f"<0x{cp:02x}>", f"<0x{cp:02X}>"}
    return found | ({"^" + chr(cp + 64)} if cp < 32 else set())


def _learnable(ch: str) -> bool:
    # (U+FFFD stands for bytes that are not UTF-8: what an engine makes of them is a cause of bytes,
    # decoder state or a stream's timing, never an edit of characters)
    return ch != "\ufffd" and unicodedata.category(ch)[0] not in "LNM"


def _spelt(vocab: Vocab, ids: Sequence[int]) -> str | None:
    try:
        return decoded_bytes(vocab, ids).decode("utf-8")
    except (UnicodeDecodeError, IndexError, KeyError, ValueError):
        return None


def edit_of(vocab: Vocab, oracle: Sequence[int], target: Sequence[int]) -> TextEdit | None:
    """The edit that turns the text the oracle's ids spell into the text the engine's spell, where
    one rule of the kinds above does (None: the texts are the same, or no such rule does)."""
    a, b = _spelt(vocab, oracle), _spelt(vocab, target)
    return None if a is None or b is None else between(a, b)


def between(a: str, b: str, cuts: bool = False) -> TextEdit | None:
    """The edit of the kinds above that turns ``a`` into ``b`` (None: none does, or they are the same).
    ``cuts``: ``b`` may be a start of ``a`` too, where an edit already learnt asks whether the
    characters it lost were dropped."""
    if a == b or a.startswith(b) and not cuts:  # (the engine's text a start of the right one is a cut)
        return None
    # (the letters, digits and marks stay, in order; an escape the right text lacks has its own)
    if _kept(a) != _kept(ESCAPED.sub(lambda m: "" if m.group() not in a else m.group(), b)):
        return None
    # (block by block where difflib is quick enough: it grows faster than the texts' square; else,
    # or where the blocks misread, each character written one way, the fewest changed)
    readings = ((_by_blocks,) if len(a) <= BLOCKS_UP_TO else ()) + (_by_characters,)
    for read in readings:
        found = read(a, b)
        if found is None:
            continue
        edit = TextEdit(tuple(sorted((x, y) for x, y in found[0].items() if x != y)), found[1])
        if edit(a) == b:
            break
    else:
        return None
    if edit.as_ and all(y and unicodedata.normalize("NFKC", x) == y for x, y in edit.as_):
        return None  # (NFKC's own mappings: a normalizer's cause, not an edit's)
    return edit if 0 < len(edit.as_) + len(edit.runs) <= MOST_CHARACTERS else None


def _by_blocks(a: str, b: str) -> tuple[dict[str, str], str] | None:
    """The edit read block by block where ``a`` and ``b`` part (difflib): the characters each
    character is written as, and those whose runs are read as one. None where the blocks, so
    aligned, do not read as one edit."""
    as_: dict[str, str] = {}
    runs: set[str] = set()

    def read(x: str, y: str) -> bool:
        return (x == y or _learnable(x) and (all(map(_learnable, y)) or y in escapes(x))) and as_.setdefault(x, y) == y

    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        gone, put = a[i1:i2], b[j1:j2]
        if tag == "equal":
            continue
        if tag == "insert":
            return None
        if tag == "replace" and len(gone) == len(put):
            before = dict(as_)
            if all(read(x, y) for x, y in zip(gone, put)):
                continue
            as_ = before  # (not one for one: another reading below)
        if tag == "replace" and len(put) == 1 and (put in gone or len(set(gone)) == 1):
            # (a run read as one character: "\t\t" as " ", " \t " as " "; not ", " as "!")
            if not all(x == put or read(x, put) for x in gone):
                return None
            runs.add(put)
        elif tag == "replace":  # (characters written as several, or as none: a tab as four spaces)
            solved = _solve(gone, put, as_)
            if solved is None:
                return None
            as_ = solved
        else:  # delete
            for k, x in enumerate(gone, start=i1):
                if not _learnable(x):
                    return None
                if a[k - 1:k] == x or a[k + 1:k + 2] == x:  # (one of a run: the run read as one)
                    runs.add(x)
                elif not read(x, ""):
                    return None
    return as_, "".join(sorted(runs))


def _kept(text: str) -> list[str]:
    return [c for c in text if not _learnable(c)]


BLOCKS_UP_TO = 600  # the longest text read block by block (difflib took 0.5 s on 945 characters)
SOLVING = 500  # the most choices tried to read a whole text as one edit (each a level of recursion)


def _by_characters(a: str, b: str) -> tuple[dict[str, str], str] | None:
    solved = _solve(a, b, {})
    return None if solved is None else (solved, "")


def _solve(gone: str, put: str, known: dict[str, str]) -> dict[str, str] | None:
    """``known`` grown so that ``gone``, each character written as it says, gives ``put``. A new
    character is written as itself, but for one at most. That one is no letter, digit or mark, and
    is written as up to MOST_WRITTEN others or none. A control character escaped counts for none. Two new characters at one place are no rule:
    ``", "`` read as ``"!"`` is not learnt. None: no way does, or none within SOLVING choices."""
    tries = 0

    def grown(i: int, j: int, written: dict[str, str], changes: int) -> dict[str, str] | None:
        nonlocal tries
        taken: list[str] = []  # (the characters this call read as themselves: taken back if it fails)

        def failed() -> dict[str, str] | None:
            for c in taken:
                del written[c]
            return None

        while i < len(gone):  # (the characters with no choice: read already, or only as themselves)
            x = gone[i]
            if x not in written:
                if _learnable(x) and changes > 0:
                    break
                written[x] = x
                taken.append(x)
            if not put.startswith(written[x], j):
                return failed()
            i, j = i + 1, j + len(written[x])
        if i == len(gone):
            return written if j == len(put) else failed()
        x = gone[i]
        ways = ([x] if put.startswith(x, j) else []) + [
            put[j:j + n] for n in range(min(MOST_WRITTEN, len(put) - j) + 1)
            if put[j:j + n] != x and all(map(_learnable, put[j:j + n]))] + sorted(
            e for e in escapes(x) if put.startswith(e, j))
        for y in ways:
            tries += 1
            if tries > SOLVING:
                return failed()
            written[x] = y  # (tried, then taken back: no copy of what is read so far)
            found = grown(i + 1, j + len(y), written, changes - (y != x and y not in escapes(x)))
            if found is not None:
                return found
            del written[x]
        return failed()

    try:
        found = grown(0, 0, dict(known), 1)
    except RecursionError:  # (a text of many characters with a choice each: read as no edit)
        return None
    return None if found is None else dict(found)


def edit_variant(key: str) -> Variant:
    """``input.edit``: the text edited as the key says before the tokenizer reads it."""
    edit = parse(key)

    def apply(c: Candidate) -> Candidate | None:
        # (another edit of the same engine's: one edit of both, applied once, so a tab read as a
        # space and runs of spaces read as one give what the engine gives for "\t ")
        joined = all_joined([edit, *(m for m in c.text_maps if isinstance(m, TextEdit))])
        if joined is None:
            return None
        kept = tuple(m for m in c.text_maps if not isinstance(m, TextEdit))
        return c.replace(text_maps=kept + (joined,))

    def affects(c: Candidate, text: str) -> bool:
        return any(a in text for a, _ in edit.as_) or any(ch * 2 in text for ch in edit.runs)

    return Variant(key, "input.edit", edit.said(), apply, affects)
