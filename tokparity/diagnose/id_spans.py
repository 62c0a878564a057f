"""Two tokenizations of one text compared by position: each id's byte span, the ranges where
they differ, and how far one is from the other (the search ranks its sets by that)."""

from __future__ import annotations

from collections import Counter


def spans(vocab, ids: list[int]) -> list[tuple[int, int, int]] | None:
    """Each token as (start byte, end byte, id) of the bytes the ids stand for."""
    from tokparity.vocab.token_bytes import token_bytes
    out, pos = [], 0
    try:
        for i in ids:
            end = pos + len(token_bytes(vocab, i))
            out.append((pos, end, i))
            pos = end
    except Exception:
        return None
    return out


def changed(a: list[tuple[int, int, int]], b: list[tuple[int, int, int]]) -> list[tuple[int, int]]:
    """The byte ranges where two tokenizations of the same bytes differ, merged."""
    spans = sorted((s, e) for s, e, _ in set(a) ^ set(b))
    merged: list[tuple[int, int]] = []
    for s, e in spans:
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(e, merged[-1][1]))
        else:
            merged.append((s, e))
    return merged


def touches(r: tuple[int, int], ranges: list[tuple[int, int]]) -> bool:
    return any(r[0] <= e and s <= r[1] for s, e in ranges)


def distance(out: list[int] | None, target: list[int]) -> tuple[int, int]:
    """How far ``out`` is from ``target``: the ids one has more of than the other (wherever
    they are), then the length of what lies between their common head and tail."""
    if out is None:
        return (1 << 30, 1 << 30)
    extra = Counter(out)
    extra.subtract(target)
    return (sum(abs(n) for n in extra.values()), max(len(out), len(target)) - closeness(out, target))


def closeness(out: list[int] | None, target: list[int]) -> int:
    """How much of ``target`` ``out`` already has right: the common head and tail."""
    if out is None:
        return -1
    head = 0
    for x, y in zip(out, target):
        if x != y:
            break
        head += 1
    tail = 0
    for x, y in zip(reversed(out[head:]), reversed(target[head:])):
        if x != y:
            break
        tail += 1
    return head + tail - abs(len(out) - len(target))
