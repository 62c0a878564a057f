"""NFC as a table of code point sequences, matched longest first: what ``normalizer.nfc:charsmap``
puts in place of a model's NFC step.

SentencePiece normalizes with a precompiled charsmap: a trie of code point sequences, each
mapped to its normal form, matched longest first. Its builder makes such a table from the
Unicode data. A code point whose normal form differs is one key. Every canonical decomposition
is another, mapped to its composed form; each of its code points may be spelled by any code point
that decomposes to it alone. openvino-tokenizers builds such a table for a tokenizer.json's NFC
step (``NormalizeUnicode``; docs/findings.md, the fifth survey's O1). A table is not the Unicode
algorithm. It composes only whole decompositions written in canonical order:

    >>> import unicodedata
    >>> table_nfc("e\u0301"), table_nfc("\u212b")
    ('é', 'Å')

Marks out of canonical order are never reordered. A base is never composed with a mark that
follows another mark. A precomposed letter is never composed with a mark after it:

    >>> points = lambda s: " ".join(f"{ord(c):04X}" for c in s)
    >>> for t in ("a\\u0301\\u0323", "a\\u0316\\u0301", "\\u01a1\\u0300"):
    ...     print(points(t), "->", points(table_nfc(t)), "| NFC:", points(unicodedata.normalize("NFC", t)))
    0061 0301 0323 -> 00E1 0323 | NFC: 1EA1 0301
    0061 0316 0301 -> 0061 0316 0301 | NFC: 00E1 0316
    01A1 0300 -> 01A1 0300 | NFC: 1EDD

The table is made from Python's ``unicodedata``, as the builder makes it from ICU's, on the code
points Unicode 9.0 assigned: the reference's NFC is Unicode 9.0's (``hf_unicode.normalize``), so
the variant changes how NFC is run, not which Unicode it reads.
"""

from __future__ import annotations

import unicodedata
from functools import cache
from itertools import product

from tokparity.reference.hf_unicode import NORMALIZATION_ASSIGNED

__all__ = ["table_nfc"]


@cache
def _table() -> tuple[dict[str, str], int]:
    """The table and its longest key."""
    table: dict[str, str] = {}
    originals: dict[str, set[str]] = {}  # a one-code-point decomposition -> the other code points that have it
    decomposed: set[str] = set()
    assigned = zip(NORMALIZATION_ASSIGNED.firsts, NORMALIZATION_ASSIGNED.lasts)
    for ch in (chr(cp) for first, last in assigned for cp in range(max(first, 1), last + 1)):
        if unicodedata.is_normalized("NFD", ch):
            continue  # (a code point that is its own decomposition is no key, and spells only itself)
        composed = unicodedata.normalize("NFC", ch)
        if composed != ch:
            table[ch] = composed
        nfd = unicodedata.normalize("NFD", ch)
        if len(nfd) == 1:
            originals.setdefault(nfd, set()).add(ch)
        else:
            decomposed.add(nfd)
    for nfd in decomposed:
        composed = unicodedata.normalize("NFC", nfd)
        if composed == nfd:
            continue
        for spelled in product(*(sorted(originals.get(ch, set()) | {ch}) for ch in nfd)):
            key = "".join(spelled)
            if key != composed:
                table[key] = composed
    return table, max(map(len, table))


def table_nfc(text: str) -> str:
    """``text`` normalized by the table: at each position the longest key that starts there is
    replaced by its form; a code point no key starts is kept."""
    table, longest = _table()
    out: list[str] = []
    at = 0
    while at < len(text):
        for size in range(min(longest, len(text) - at), 0, -1):
            found = table.get(text[at:at + size])
            if found is not None:
                out.append(found)
                at += size
                break
        else:
            out.append(text[at])
            at += 1
    return "".join(out)
