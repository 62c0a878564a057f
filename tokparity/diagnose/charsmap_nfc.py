"""NFC as a table of code point sequences, matched longest first: what ``normalizer.nfc:charsmap``
puts in place of a model's NFC step.

SentencePiece normalizes with a precompiled charsmap: a trie of code point sequences, each
mapped to its normal form, matched longest first. Its builder makes such a table for NFKC
(``Builder::BuildNFKCMap``): each code point whose normal form differs, then every canonical
decomposition written with any code point of the same decomposition, each mapped to its
composed form. openvino-tokenizers builds the same kind of table for a tokenizer.json's NFC step
(``NormalizeUnicode``; docs/findings.md, the fifth survey's O1). A table is not the Unicode
algorithm. Marks in another order than the canonical one are never reordered, and a precomposed
letter is never composed with a mark that follows it:

    >>> import unicodedata
    >>> table_nfc("e\\u0301"), table_nfc("\\u212b")
    ('é', 'Å')
    >>> table_nfc("a\\u0316\\u0301") == "a\\u0316\\u0301", unicodedata.normalize("NFC", "a\\u0316\\u0301")
    (True, 'á̖')
    >>> table_nfc("ê\\u0323") == "ê\\u0323", unicodedata.normalize("NFC", "ê\\u0323")
    (True, 'ệ')

The table here is made from Python's ``unicodedata``, as the builder makes it from ICU's.
"""

from __future__ import annotations

import sys
import unicodedata
from functools import cache
from itertools import product

__all__ = ["table_nfc"]


@cache
def _table() -> tuple[dict[str, str], int]:
    """The table and its longest key."""
    table: dict[str, str] = {}
    originals: dict[str, set[str]] = {}  # a one-code-point decomposition -> the code points that have it
    decomposed: set[str] = set()
    for cp in range(1, sys.maxunicode + 1):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
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
        for spelled in product(*(sorted(originals.get(ch, {ch})) for ch in nfd)):
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
