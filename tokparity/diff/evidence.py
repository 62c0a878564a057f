"""How the classifier reads ids and spells them in its evidence: a token's piece, a list of ids,
the bytes ids decode to, a span of the input with its code points, the segments between the
tokens both sides share."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from tokparity.diff.align import Divergence
from tokparity.vocab.model import TokenType, Vocab
from tokparity.vocab.token_bytes import gpt2_unicode_to_byte, token_bytes

_WS_BYTES = b" \t\n\r\x0b\x0c"


@dataclass
class Segment:
    """A stretch where the two sides differ, bounded by tokens both share (``before`` / ``after``:
    their ids, ``None`` at the ends of the text). The tokens on both sides of one segment stand
    for the same characters of the input, whatever they are."""

    a: list[int]
    b: list[int]
    a_start: int  # index in a of the segment's first token
    b_start: int
    before: int | None = None
    after: int | None = None



def piece_of(vocab: Vocab, i: int) -> str:
    return repr(vocab.tokens[i]) if 0 <= i < vocab.size else f"<id {i} out of range>"


def ids_shown(vocab: Vocab, ids: Sequence[int], limit: int = 8) -> str:
    shown = ", ".join(f"{i} {piece_of(vocab, i)}" for i in ids[:limit])
    return f"[{shown}{', …' if len(ids) > limit else ''}]"


def decoded_bytes(vocab: Vocab, ids: Sequence[int]) -> bytes:
    return b"".join(token_bytes(vocab, i) for i in ids)


def types_of(vocab: Vocab, ids: Sequence[int]) -> list[TokenType]:
    out = []
    for i in ids:
        try:
            out.append(vocab.type_of(i) if 0 <= i < vocab.size else TokenType.UNDEFINED)
        except ValueError:
            out.append(TokenType.UNDEFINED)
    return out


def without_ends(ids: Sequence[int], ends: set[int]) -> list[int]:
    ids = list(ids)
    while ids and ids[0] in ends:
        ids.pop(0)
    while ids and ids[-1] in ends:
        ids.pop()
    return ids


def ignores_merges(vocab: Vocab) -> bool:
    model = vocab.extra.get("model") or {}
    return bool(model.get("ignore_merges")) or vocab.pre_tokenizer in ("llama-bpe", "llama3", "llama-v3")


def inside_word(text: str, piece: str) -> bool:
    """Whether ``piece`` occurs in ``text`` with a letter or digit right before and after it."""
    start = text.find(piece)
    while start >= 0:
        end = start + len(piece)
        if start > 0 and end < len(text) and text[start - 1].isalnum() and text[end].isalnum():
            return True
        start = text.find(piece, start + 1)
    return False


def around_span(data: bytes, span: tuple[int, int], context: int = 8) -> str:
    """``span`` and about ``context`` bytes each side, cut at whole characters: a cut inside one
    would show a U+FFFD that neither text holds.

    >>> around_span("\u2000\u2001\u2002\u2003\u2004".encode(), (3, 6), context=4)
    '\u2000\u2001\u2002\u2003'
    """
    start, end = max(0, span[0] - context), min(len(data), span[1] + context)
    for _ in range(3):  # (a character has at most 3 continuation bytes; bytes not UTF-8 may have more)
        if 0 < start < len(data) and 0x80 <= data[start] < 0xC0:
            start -= 1
        if end < len(data) and 0x80 <= data[end] < 0xC0:
            end += 1
    return data[start:end].decode("utf-8", "replace")


def spelled_span(data: bytes, span: tuple[int, int]) -> str:
    """The text around ``span`` and the code points of the span itself: two forms that look alike
    (``'café'`` with U+00E9, or with U+0065 U+0301) are told apart only by them."""
    part = data[span[0]:span[1]].decode("utf-8", "replace")
    return f"{around_span(data, span)!r} ({' '.join(f'U+{ord(ch):04X}' for ch in part[:12])}{' …' if len(part) > 12 else ''})"


def first_difference(x: bytes, y: bytes) -> int:
    for k, (p, q) in enumerate(zip(x, y)):
        if p != q:
            return k
    return min(len(x), len(y))


def only_whitespace_differs(vocab: Vocab, hunk_a: list[int], hunk_b: list[int]) -> bool:
    """True when every token boundary that one side has and the other lacks touches whitespace,
    inside a run of at least two whitespace characters: ('▁' + '▁world' against '▁▁' + 'world',
    '▁▁▁' + '▁y' against '▁▁▁▁' + 'y'). A boundary moved inside a word is not this."""
    def boundaries(ids: list[int]) -> set[int]:
        out, pos = set(), 0
        for i in ids[:-1]:
            pos += len(token_bytes(vocab, i))
            out.add(pos)
        return out

    data = b"".join(token_bytes(vocab, i) for i in hunk_a)
    if not re.search(rb"\s\s", data):
        return False
    moved = boundaries(hunk_a) ^ boundaries(hunk_b)
    return bool(moved) and all((0 < p <= len(data) and data[p - 1] in _WS_BYTES) or (p < len(data) and data[p] in _WS_BYTES)
                               for p in moved)


def pre_token_spans(pre_tokens: list[str], decoded: bytes) -> list[tuple[int, int]] | None:
    """The byte span of each pre-token in ``decoded``, or ``None`` when the pre-tokens are not a
    split of exactly these bytes. Byte-level BPE pre-tokenizers hand their pieces in GPT-2's
    alphabet ('Ġ' for a space): those are read back to bytes first."""
    table = gpt2_unicode_to_byte()
    readings = [[p.encode("utf-8", "surrogatepass") for p in pre_tokens]]
    if all(ch in table for p in pre_tokens for ch in p):
        readings.append([bytes(table[ch] for ch in p) for p in pre_tokens])
    for pieces in readings:
        if b"".join(pieces) == decoded:
            spans, pos = [], 0
            for p in pieces:
                spans.append((pos, pos + len(p)))
                pos += len(p)
            return spans
    return None


def segments_between(vocab: Vocab, a: Sequence[int], b: Sequence[int], d: Divergence) -> list[Segment]:
    """The stretches between the tokens both sides share. An <unk> matched with an <unk> is not
    shared: it stands for characters that may differ, and a run of them must stay whole."""
    anchors = [(-1, -1)]
    for tag, i1, i2, j1, j2 in d.opcodes:
        if tag == "equal":
            anchors += [(i1 + k, j1 + k) for k in range(i2 - i1) if types_of(vocab, [a[i1 + k]])[0] != TokenType.UNKNOWN]
    anchors.append((len(a), len(b)))
    out = []
    for (pi, pj), (ni, nj) in zip(anchors, anchors[1:]):
        seg_a, seg_b = list(a[pi + 1:ni]), list(b[pj + 1:nj])
        if seg_a != seg_b:
            out.append(Segment(seg_a, seg_b, pi + 1, pj + 1, a[pi] if pi >= 0 else None, a[ni] if ni < len(a) else None))
    return out


def between_shared(vocab: Vocab, seg: Segment) -> str:
    before = f"after {piece_of(vocab, seg.before)}" if seg.before is not None else "at the start"
    after = f"before {piece_of(vocab, seg.after)}" if seg.after is not None else "at the end"
    return f"{before}, {after}"


def shown_text(text: str, width: int = 24) -> str:
    """``repr(text)`` with combining marks escaped as well (a lone U+0301 would show as nothing),
    cut after ``width`` characters."""
    shown = "".join(f"\\u{ord(ch):04x}" if unicodedata.category(ch).startswith("M") else repr(ch)[1:-1]
                    for ch in text[:width])
    return f"'{shown}'" + ("…" if len(text) > width else "")


def quoted(texts: list[str], limit: int = 3) -> str:
    return " and ".join(shown_text(t) for t in texts[:limit]) + (" and more" if len(texts) > limit else "")


def nfkc_changes(text: str) -> list[tuple[str, str]]:
    """The characters of ``text`` NFKC rewrites, with what it makes of them (the whole text when
    only a sequence changes, e.g. a letter and a combining mark)."""
    changes = [(ch, unicodedata.normalize("NFKC", ch)) for ch in dict.fromkeys(text)]
    changes = [(ch, to) for ch, to in changes if ch != to]
    if not changes and unicodedata.normalize("NFKC", text) != text:
        changes = [(text, unicodedata.normalize("NFKC", text))]
    return changes
