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
import unicodedata
from collections import Counter
from collections.abc import Iterable
from difflib import SequenceMatcher
from itertools import accumulate
from os.path import commonprefix

from tokparity.chat.message_edits import parts_joined

MOST_CHARACTERS = 24  # a table of more characters than this is not a rewrite but another text (Markdown escapes 18)
LONGEST_WRITTEN = 8  # the most characters one character is written as ("&quot;", eight spaces)
LONGEST_PROMPT = 100_000
LONGEST_PART = 2_000  # (characters of two lines, or two runs of lines, aligned at once)


def texts(messages: list[dict], roles: str = "") -> list[str]:
    """The text of each content of the messages of ``roles`` ("": of all)."""
    return [c if isinstance(c := m.get("content"), str) else parts_joined(c, "") if isinstance(c, list) else ""
            for m in messages if not roles or m.get("role") in roles.split()]


def read(right: str, got: str, contents: list[str]) -> tuple[list[str], int]:
    """The tables that may turn ``right`` into ``got``, the fewest characters first; and the
    characters aligned (the search's budget counts them). A text put in is read as put after the
    character before it, as put before the one after it, and each as most places say. Where no
    table of characters fits, a table of words (``_words``). None where the prompts part in a way
    no table gives."""
    blocks = aligned(right, got) if right and got and max(len(right), len(got)) <= LONGEST_PROMPT else None
    if not blocks or not _in_contents(blocks, right, contents):
        return [], 0
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
            value = _value(_shown(table, contents))
            if value is not None and value not in values:
                values.append(value)
    # (no table of characters: words written as others, `{{user}}` as `You`)
    values = values or _words(blocks, right, got, contents)
    return sorted(values, key=lambda v: len(json.loads(v))), len(right) + len(got)


def _words(blocks: list[tuple[str, int, int, int, int]], right: str, got: str, contents: list[str]) -> list[str]:
    """A table of words written as others (``{{user}}`` as ``You``), for ``read`` where no table of
    characters turns ``right`` into ``got``: each place where the prompts part is widened to the
    words around it, less what both sides share at its ends. None where a word is read two ways,
    or no place holds more than one character."""
    words: list[list[int]] = []  # (the words each place lies in, each side: places in one word merged)
    for _, i1, i2, j1, j2 in blocks:
        i1, j1 = _word_start(right, i1), _word_start(got, j1)
        i2, j2 = _word_end(right, i2), _word_end(got, j2)
        if words and i1 <= words[-1][1]:
            words[-1][1:4:2] = [max(words[-1][1], i2), max(words[-1][3], j2)]
        else:
            words.append([i1, i2, j1, j2])
    table: dict[str, str] = {}
    for i1, i2, j1, j2 in words:
        source, written = right[i1:i2], got[j1:j2]
        head = len(commonprefix([source, written]))
        tail = len(commonprefix([source[head:][::-1], written[head:][::-1]]))
        if len(source) - head - tail > 0:  # (what both share at the ends is no part of the word rewritten)
            source, written = source[head:len(source) - tail], written[head:len(written) - tail]
        if not source or table.setdefault(source, written) != written:
            return []
    if all(len(a) == 1 for a in table):
        return []
    value = _value(_shown(table, contents))
    return [value] if value is not None else []


def _word_start(text: str, at: int) -> int:
    while at > 0 and not text[at - 1].isspace():
        at -= 1
    return at


def _word_end(text: str, at: int) -> int:
    while at < len(text) and not text[at].isspace():
        at += 1
    return at


def aligned(right: str, got: str) -> list[tuple[str, int, int, int, int]] | None:
    """Where two prompts part, as difflib's opcodes in characters. The lines are aligned first, then
    the characters of each pair of lines that differ, less what they share at both ends. An
    alignment of characters costs the square of their number: None where a part to align is
    longer than ``LONGEST_PART`` (a long repetitive text took minutes)."""
    a, b = right.splitlines(keepends=True), got.splitlines(keepends=True)
    starts_a, starts_b = _starts(a), _starts(b)
    out: list[tuple[str, int, int, int, int]] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        # (as many lines each side: line by line; else the runs of lines whole)
        spans = [(k, k + 1, j1 + n, j1 + n + 1) for n, k in enumerate(range(i1, i2))] if i2 - i1 == j2 - j1 \
            else [(i1, i2, j1, j2)]
        for k1, k2, l1, l2 in spans:
            x, y = "".join(a[k1:k2]), "".join(b[l1:l2])
            head = len(commonprefix([x, y]))
            tail = len(commonprefix([x[head:][::-1], y[head:][::-1]]))
            x, y = x[head:len(x) - tail], y[head:len(y) - tail]
            if len(x) + len(y) > LONGEST_PART:
                return None
            at, bt = starts_a[k1] + head, starts_b[l1] + head
            out += [(op, at + p1, at + p2, bt + q1, bt + q2)
                    for op, p1, p2, q1, q2 in SequenceMatcher(None, x, y, autojunk=False).get_opcodes() if op != "equal"]
    return out


def _in_contents(blocks: list[tuple[str, int, int, int, int]], right: str, contents: list[str]) -> bool:
    """Whether each place where the prompts part lies in a content of the right prompt, its ends
    included: a difference in the tools' JSON or a header is no content's rewrite."""
    spans, at = [], 0
    for text in contents:
        found = right.find(text.strip(), at) if text.strip() else -1
        if found >= 0:
            spans.append((found, found + len(text.strip())))
            at = found + len(text.strip())
    return all(any(start <= i1 and i2 <= end for start, end in spans) for _, i1, i2, _, _ in blocks)


def _starts(lines: list[str]) -> list[int]:
    """Where each line starts, and the text's end."""
    return [0, *accumulate(len(line) for line in lines)]


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
        after = [[(right[i1 - 1], right[i1 - 1] + written)]] if i1 > 0 else []
        return after + ([[(right[i1], written + right[i1])]] if i1 < len(right) else [])
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
        text = table[a] if a in table else out[a] if a in out else written[at:at + each]
        if not written.startswith(text, at) or out.setdefault(a, text) != text:
            return None
        at += len(text)
    return list(out.items())


def _shown(table: dict[str, str], contents: list[str]) -> dict[str, str]:
    """The pairs the contents show: a character they hold. A letter or digit left out is no
    rewrite: a text cut or dropped reads so."""
    held = {ch for text in contents for ch in text}
    # (a word: held where a content holds it)
    return {a: b for a, b in table.items() if (a in held if len(a) == 1 else any(a in text for text in contents))
            and (b or len(a) > 1 or not unicodedata.category(a).startswith(("L", "N")))}


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
        if value is None:  # (a row with no table of its own says nothing for or against one)
            continue
        held.update(set(text))
        for a, b in json.loads(value).items():
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
