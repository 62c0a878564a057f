"""A WordPiece engine's own character table, learnt from the case: some characters read as a
space, dropped, a word of their own, or kept in their word as they are.

BERT's basic tokenizer asks Unicode's categories what each character is: whitespace, a control
character, punctuation, a CJK ideograph, a mark that accent stripping drops. Ports in C, C++ and
JavaScript often write these tests as lists of code-point ranges instead. A list that misses « or
adds a full-width letter reads those characters otherwise, and only those.

No catalogue entry can name each such list. So the table is learnt from one case
(``table_of``): each character of the text is read another way, one at a time, and a reading is
kept where it brings the reference's ids closer to the engine's. The table is kept only where the
reference, reading the text so, gives the engine's ids exactly. The run's verdict then joins the
tables of every case and tries the whole table on every case, the agreements included.
"""

from __future__ import annotations

import json
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from difflib import SequenceMatcher

from tokparity.diagnose.candidate import Candidate, fork
from tokparity.diagnose.variants.variant import Variant
from tokparity.reference import wpm
from tokparity.reference.llama import LlamaWpm

CAUSE = "pretokenizer.char-table"
PREFIX = CAUSE + ":"
BESIDE = 3  # the sets a backend showed most, beside which a table is learnt too
LONGEST = 600  # the longest text a table is learnt from: each reading tried is one more encoding of it
MOST_CHARACTERS = 24  # the distinct characters of one text whose readings are tried
ROUNDS = 4  # a text's characters are tried this many times over: one reading may need another first
TRIED = ("as-is", "alone", "dropped", "space")  # the readings, in the order they are tried
LISTED = 12  # the characters of one reading listed in words (the key holds them all)
SAID = {"space": "as a space", "dropped": "dropped", "alone": "as punctuation (a word of its own)",
        "as-is": "kept in its word as it is"}

Table = tuple[tuple[str, str], ...]  # (character, how it is read), sorted


def is_table(key: str) -> bool:
    return key.startswith(PREFIX)


def key_of(table: Table) -> str:
    return PREFIX + json.dumps([list(p) for p in table], ensure_ascii=True)


def parse(key: str) -> Table:
    return tuple((a, b) for a, b in json.loads(key[len(PREFIX):]))


def joined(tables: Iterable[Table]) -> Table:
    """Every table as one. A character two tables read two ways is read as most of them read it
    (the first among equals): a case may show a reading that only looks like the list's."""
    votes: dict[str, Counter[str]] = {}
    for table in tables:
        for ch, how in table:
            votes.setdefault(ch, Counter())[how] += 1
    return tuple(sorted((ch, counts.most_common(1)[0][0]) for ch, counts in votes.items()))


def joined_key(keys: Iterable[str]) -> str:
    """The key of every table ``keys`` names, joined as ``joined`` does."""
    return key_of(joined(map(parse, keys)))


def _name(ch: str) -> str:
    return repr(ch) if ch.isprintable() and not ch.isspace() else f"U+{ord(ch):04X}"


def said(table: Table) -> str:
    """``reads its characters by a table of its own: '«' kept in its word as it is, U+00AD dropped``."""
    by_how: dict[str, list[str]] = {}
    for ch, how in table:
        by_how.setdefault(how, []).append(_name(ch))
    parts = [f"{' '.join(chars[:LISTED])}{f' and {len(chars) - LISTED} more' if len(chars) > LISTED else ''} {SAID[how]}"
             for how, chars in by_how.items()]
    return "reads characters by a table of its own: " + "; ".join(parts)


def said_of(key: str) -> str:
    return said(parse(key))


def _ways(ch: str, p: LlamaWpm) -> list[str]:
    """The readings to try for ``ch``: each but the reference's own. A letter or a digit is never
    read as a space or dropped: a text cut short would otherwise read as every letter dropped."""
    own = wpm.read_as(ch, p.lowercase, p.strip_accents)
    ways = [how for how in TRIED if how != own]
    if ch.isalnum():
        ways = [how for how in ways if how in ("alone", "as-is")]
    return ways


def learnt_beside(base: Candidate, text: str, target: Sequence[int], shown: Counter[tuple[str, ...]],
                  encode: Callable[[tuple[str, ...], str], list[int] | None]) -> tuple[str, ...] | None:
    """A table learnt from this case, alone or beside one of the sets the backend ``shown`` most
    (an engine whose table is one bug of several), with that set; None where none is learnt.
    ``encode(keys, text)`` runs the reference with the variants ``keys``."""
    if not isinstance(base.pipeline, LlamaWpm):
        return None
    for beside in [(), *(k for k, _ in shown.most_common(BESIDE) if not any(map(is_table, k)))]:
        def run(key: str, t: str, beside: tuple[str, ...] = beside) -> list[int] | None:
            return encode(beside + ((key,) if key else ()), t)

        table = table_of(base, text, target, run)
        if table:
            return (*beside, key_of(table))
    return None


def table_of(base: Candidate, text: str, target: Sequence[int], encode: Callable[[str, str], list[int] | None]
             ) -> Table | None:
    """The table that makes the reference give ``target`` on ``text``, or None. ``encode(key,
    text)`` runs the reference with a table's key ("": the reference itself). Each character's other readings are tried in
    turn; one is kept where the ids come closer to ``target`` (a longer matching run of ids)."""
    p = base.pipeline
    if not isinstance(p, LlamaWpm) or len(text) > LONGEST:
        return None
    chars = [ch for ch in dict.fromkeys(text) if not (ch.isascii() and (ch.isalnum() or ch == " "))][:MOST_CHARACTERS]
    # (characters the reference reads alike, of one Unicode category: a list that misses CJK
    # ideographs misses them all, and one of them read otherwise alone may bring no id closer)
    groups: dict[tuple[str, str], list[str]] = {}
    for ch in chars:
        groups.setdefault((wpm.read_as(ch, p.lowercase, p.strip_accents), unicodedata.category(ch)), []).append(ch)
    moves = [group for group in groups.values() if len(group) > 1] + [[ch] for ch in chars]
    table: dict[str, str] = {}
    best = _closeness(encode("", text), target)
    for _ in range(ROUNDS):
        moved = False
        for move in moves:
            # (each reading weighed, the closest kept; among equals the first in TRIED: a
            # hand-written list more often misses a character than adds one)
            found = None
            for how in _ways(move[0], p):
                if all(table.get(ch) == how for ch in move):
                    continue
                trial = tuple(sorted({**table, **dict.fromkeys(move, how)}.items()))
                score = _closeness(encode(key_of(trial), text), target)
                if score > best:
                    found, best = dict(trial), score
            if found is not None:
                table, moved = found, True
            if best == 1.0:
                return _smallest(tuple(sorted(table.items())), text, target, encode)
        if not moved:
            return None
    return None


def _closeness(ids: list[int] | None, target: Sequence[int]) -> float:
    if ids is None:
        return -1.0
    return 1.0 if list(ids) == list(target) else SequenceMatcher(None, ids, list(target), autojunk=False).ratio()


def _smallest(table: Table, text: str, target: Sequence[int], encode: Callable[[str, str], list[int] | None]) -> Table:
    """The table less each reading the case does not need (one tried early may have been undone by a later one)."""
    for entry in table:
        fewer = tuple(e for e in table if e != entry)
        if fewer and encode(key_of(fewer), text) == list(target):
            table = fewer
    return table


BERT = "library.bert"


def _bert(c: Candidate) -> Candidate | None:
    p = c.pipeline
    return c.replace(pipeline=fork(p, bert=True)) if isinstance(p, LlamaWpm) else None


def variants() -> list[Variant]:
    """``library.bert``: the text read as BERT's own tokenizer reads it (``wpm.bert_reading``), where
    llama.cpp's WordPiece departs. A faithful port of transformers' BertTokenizer has no bug there:
    the evidence says so, and a table learnt on top of it is that engine's own."""
    return [Variant(BERT, BERT, "the text read as BERT's own tokenizer reads it (transformers' BertTokenizer), "
                    "where llama.cpp's WordPiece reads some characters otherwise", _bert,
                    lambda c, text: any(wpm.bert_reading(ch, c.pipeline.lowercase, c.pipeline.strip_accents)
                                        for ch in set(text)) if isinstance(c.pipeline, LlamaWpm) else False)]


def table_variant(key: str) -> Variant:
    """``pretokenizer.char-table``: the WordPiece pre-tokenizer reads the key's characters as it says."""
    table = parse(key)

    def apply(c: Candidate) -> Candidate | None:
        p = c.pipeline
        if not isinstance(p, LlamaWpm):
            return None
        return c.replace(pipeline=fork(p, classes={**p.classes, **dict(table)}))

    def affects(c: Candidate, text: str) -> bool:
        return any(ch in text for ch, _ in table)

    return Variant(key, CAUSE, said(table), apply, affects)
