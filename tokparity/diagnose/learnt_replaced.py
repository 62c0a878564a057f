"""Pieces written as one text by a rule on the token's text, learnt from the case: a table that
writes every token whose text holds some characters as one text of its own. llama-rs's converter
wrote each token holding ``s>`` as nothing (meant for ``<s>`` and ``</s>``), and each holding
``<unk>`` as `` ⁇ ``.

A pieces mismatch that no named variant reproduces, where each piece that differs is written as
one same text, is read as such a rule. The texts the rule may look for are the shortest that every
such token's text holds, and no other token of the case whose piece is kept. The key
(``pieces.replaced-where:["s>", ""]``) holds the text looked for and the text written, so the
run's verdict can try it on every case.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from tokparity.reference import RefTokenizer
from tokparity.reference.decode import DecodeSettings

CAUSE = "pieces.replaced-where"
LONGEST = 8  # (characters of the text a rule looks for)
KEYS = 5  # (the texts learnt from one case, the shortest first: the run's verdict weighs them)


def is_replacing(key: str) -> bool:
    return key.startswith(CAUSE + ":")


def parse(key: str) -> tuple[str, bytes]:
    held, written = json.loads(key.partition(":")[2])
    return str(held), str(written).encode("utf-8", "surrogateescape")


def key_of(held: str, written: bytes) -> str:
    return f"{CAUSE}:{json.dumps([held, written.decode('utf-8', 'surrogateescape')], ensure_ascii=True)}"


def said_of(key: str) -> str:
    held, written = parse(key)
    shown = "nothing" if not written else repr(written.decode("utf-8", "replace"))
    return f"each piece of a token whose text holds {held!r} written as {shown}"


def does(key: str) -> str:
    return "writes " + said_of(key)


def _text(ref: RefTokenizer, i: int) -> str:
    tokens = ref.vocab.tokens
    return tokens[i] if 0 <= i < len(tokens) else ""


def run_of(key: str) -> Callable[[RefTokenizer, list[int], int, DecodeSettings], list]:
    """The pieces of a table with the rule ``key`` says: None where no piece changes."""
    held, written = parse(key)

    def run(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
        right = ref.piece_bytes(ids)
        pieces = [written if held in _text(ref, i) else p for i, p in zip(ids, right)]
        return [pieces if pieces != right else None]

    return run


def learnt(ref: RefTokenizer, ids: list[int], got: object) -> list[str]:
    """The keys of the rules that turn the reference's pieces into the engine's ``got``: none where
    the pieces that differ are not all written as one text."""
    right = ref.piece_bytes(ids)
    if not isinstance(got, list) or len(got) != len(right):
        return []
    changed = {(_text(ref, i), g) for i, r, g in zip(ids, right, got) if r != g}
    written = {g for _, g in changed}
    if len(written) != 1 or not all(t for t, _ in changed):
        return []
    replaced = sorted({t for t, _ in changed}, key=len)
    # (a token whose right piece is that text already says nothing of the rule)
    kept = {_text(ref, i) for i, r, g in zip(ids, right, got) if r == g and r not in written}
    shortest = replaced[0]
    found: list[str] = []
    for size in range(1, min(LONGEST, len(shortest)) + 1):
        for start in range(len(shortest) - size + 1):
            held = shortest[start:start + size]
            if held not in found and all(held in t for t in replaced) and not any(held in t for t in kept):
                found.append(held)
        if len(found) >= KEYS:
            break
    keys = [key_of(held, next(iter(written))) for held in found[:KEYS]]
    return [k for k in keys if run_of(k)(ref, ids, 0, DecodeSettings())[0] == got]
