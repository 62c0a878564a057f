"""Characters of the messages' contents written as others, read off a backend's prompt: the value
of ``chat.content-rewritten``, for a rewrite no declared cause names (``'` as ``&#x27;``, a curly
quote as a straight one, a zero-width space left out).

The right prompt and the backend's are aligned (``difflib``). Each place where they part is laid
on one character of the right prompt: a character written as another text, a character left
out, or a text put after a character (or before it: a second reading). A value is one table of
those, a JSON object. It is only a guess: the search renders the conversation with the table
applied to each content, and keeps it only where that gives the backend's prompt exactly.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from difflib import SequenceMatcher

MOST_CHARACTERS = 24  # a table of more characters than this is not a rewrite but another text (Markdown escapes 18)
LONGEST_WRITTEN = 8  # the most characters one character is written as ("&quot;", eight spaces)
LONGEST_PROMPT = 20_000  # (the alignment takes time quadratic in the prompts' length at worst)


def read(right: str, got: str) -> tuple[list[str], int]:
    """The tables that may turn ``right`` into ``got``, the fewest characters first; and the
    characters aligned (the search's budget counts them). A text put in is read as put after the
    character before it, as put before the one after it, and each as most places say. None where
    the prompts part in a way no table of characters gives."""
    if not right or not got or max(len(right), len(got)) > LONGEST_PROMPT:
        return [], 0
    blocks = [b for b in SequenceMatcher(None, right, got, autojunk=False).get_opcodes() if b[0] != "equal"]
    # (each place's readings: one, two for a text put in, none for several characters as one text)
    places = [_laid(tag, right, i1, i2, got[j1:j2]) for tag, i1, i2, j1, j2 in blocks]
    votes = Counter(pair for readings in places for pair in set(p for laid in readings for p in laid))
    hard = [(right[i1:i2], got[j1:j2]) for (_, i1, i2, j1, j2), readings in zip(blocks, places) if not readings]
    values: list[str] = []
    for pick in ("after", "before", "voted"):
        seen: dict[str, Counter[str]] = {}
        for readings in places:
            for a, b in _picked(readings, pick, votes) if readings else ():
                seen.setdefault(a, Counter())[b] += 1
        table = {a: counts.most_common(1)[0][0] for a, counts in seen.items()}
        for source, written in hard:
            laid = _split(source, written, table)
            if laid is None:
                break
            for a, b in laid:
                table.setdefault(a, b)
        else:
            value = _value(table)
            if value is not None and value not in values:
                values.append(value)
    return sorted(values, key=lambda v: len(json.loads(v))), len(right) + len(got)


def _picked(readings: list[list[tuple[str, str]]], pick: str, votes: Counter[tuple[str, str]]) -> list[tuple[str, str]]:
    """A place's reading: the first (a text put in after a character), the last (before one), or
    the one whose pairs most places read."""
    if pick == "voted":
        return max(readings, key=lambda laid: sum(votes[pair] for pair in laid))
    return readings[0] if pick == "after" else readings[-1]


def _laid(tag: str, right: str, i1: int, i2: int, written: str) -> list[list[tuple[str, str]]]:
    """One place where the prompts part, read as characters of ``right`` and what each is written
    as: a text put in after the character before it, or before the one after it (two readings);
    none where several characters are written as one text (``_split``)."""
    source = right[i1:i2]
    if tag == "delete":
        return [[(a, "") for a in source]]
    if tag == "insert":
        return [laid for laid, ok in (([(right[i1 - 1], right[i1 - 1] + written)], i1 > 0),
                                      ([(right[i1], written + right[i1])], i1 < len(right))) if ok]
    if len(source) == 1:
        return [[(source, written)]]
    each, rest = divmod(len(written), len(source))
    if len(set(source)) == 1 and not rest and written == written[:each] * len(source):  # (a run: each alike)
        return [[(source[0], written[:each])]]
    return []


def _split(source: str, written: str, table: dict[str, str]) -> list[tuple[str, str]] | None:
    """Several characters written as one text, split by what the other places say of them. The
    characters the table lacks share what the others leave, in equal parts (a line feed and a tab
    written ``\\n\\t``). None where no split is consistent."""
    unknown = sum(a not in table for a in source)
    each, rest = divmod(len(written) - sum(len(table[a]) for a in source if a in table), unknown or 1)
    if each < 0 or rest or not unknown and each:
        return None
    out: dict[str, str] = {}
    at = 0
    for a in source:
        text = table.get(a) or out.get(a) or written[at:at + each]
        if not written.startswith(text, at) or out.setdefault(a, text) != text:
            return None
        at += len(text)
    return list(out.items())


def _value(table: dict[str, str]) -> str | None:
    table = {a: b for a, b in table.items() if a != b}
    if not table or len(table) > MOST_CHARACTERS or any(len(b) > LONGEST_WRITTEN for b in table.values()):
        return None
    return json.dumps(dict(sorted(table.items())), ensure_ascii=False)


def chosen(rows: list[list[str]]) -> list[str | None]:
    """One table of each row (None where it has none): the one whose pairs (a character, its text)
    the other rows' tables hold most often. Two readings of a text put in may both give a row's
    prompt: ``m`` as ``m\\r`` or a line feed as CR LF, where the content holds one of each."""
    pairs = [[set(json.loads(v).items()) for v in row] for row in rows]
    votes: Counter[tuple[str, str]] = Counter()
    for row in pairs:
        votes.update(set().union(*row))
    return [row[max(range(len(row)), key=lambda k: sum(votes[p] for p in row_pairs[k]))] if row else None
            for row, row_pairs in zip(rows, pairs)]


def joined(rows: Iterable[tuple[str | None, str]]) -> str | None:
    """The tables of several rows as one, each row's with the text of its contents: a character
    as more than half the rows whose contents hold it write it. A row shows only the characters
    its contents hold. A table that reads a row wrongly (``.`` as ``.\\n`` where the template
    trimmed the line feed after it) is outvoted by the rows where that character stays."""
    seen: dict[str, Counter[str]] = {}
    held: Counter[str] = Counter()
    for value, text in rows:
        held.update(set(text))
        for a, b in json.loads(value).items() if value is not None else ():
            seen.setdefault(a, Counter())[b] += 1
    table = {}
    for a, counts in seen.items():
        b, n = counts.most_common(1)[0]
        if 2 * n > max(held[a], n):
            table[a] = b
    return _value(table)


def said(value: str) -> str:
    """A table in words: ``'&' as '&amp;', '\\t' as '    '``."""
    return ", ".join(f"{a!r} as {b!r}" for a, b in json.loads(value).items())
