"""Pieces written as one text by a rule on the token's text, learnt from the case: a table that
writes every token whose text holds some characters as one text of its own. llama-rs's converter
wrote each token holding ``s>`` as nothing (meant for ``<s>`` and ``</s>``), and each holding
``<unk>`` as `` ⁇ ``.

A pieces mismatch that no named variant reproduces is read as such a rule where each piece that
differs is written as one same text. The rule is read first as the roles of the model's own
special tokens (outlines-core leaves the EOS out of its table). Else it looks for a text: the
shortest that every such token holds, and no kept token of the case. The key holds what is looked
for and the text written (``pieces.replaced-where:["s>", ""]``,
``pieces.replaced-where:["eos", "", "roles"]``), so the run's verdict can try it on every case.
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


def parse(key: str) -> tuple[str, bytes, bool]:
    """What the rule looks for (a text, or roles joined by "+"), the text written, and whether it
    looks for roles."""
    held, written, *roles = json.loads(key.partition(":")[2])
    return str(held), str(written).encode("utf-8", "surrogateescape"), bool(roles)


def key_of(held: str, written: bytes, roles: bool = False) -> str:
    parts = [held, written.decode("utf-8", "surrogateescape")] + (["roles"] if roles else [])
    return f"{CAUSE}:{json.dumps(parts, ensure_ascii=True)}"


def said_of(key: str) -> str:
    held, written, roles = parse(key)
    shown = "nothing" if not written else repr(written.decode("utf-8", "replace"))
    if roles:
        return f"the piece of the model's {' and '.join(r.upper() for r in held.split('+'))} written as {shown}"
    return f"each piece of a token whose text holds {held!r} written as {shown}"


def does(key: str) -> str:
    return "writes " + said_of(key)


def _text(ref: RefTokenizer, i: int) -> str:
    tokens = ref.vocab.tokens
    return tokens[i] if 0 <= i < len(tokens) else ""


def _role_ids(ref: RefTokenizer, roles: list[str]) -> set[int]:
    tokens = ref.vocab.special_tokens()
    return {tokens[r][0] for r in roles if r in tokens}


def run_of(key: str) -> Callable[[RefTokenizer, list[int], int, DecodeSettings], list]:
    """The pieces of a table with the rule ``key`` says: None where no piece changes."""
    held, written, roles = parse(key)

    def run(ref: RefTokenizer, ids: list[int], prompt: int, asked: DecodeSettings) -> list:
        right = ref.piece_bytes(ids)
        picked = _role_ids(ref, held.split("+")) if roles else set()
        pieces = [written if (i in picked if roles else held in _text(ref, i)) else p for i, p in zip(ids, right)]
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
    # (the model's own special tokens, by their roles, first: a table that leaves out its EOS)
    ids_changed = {i for i, r, g in zip(ids, right, got) if r != g}
    roles = sorted(r for r, (i, _) in ref.vocab.special_tokens().items() if i in ids_changed)
    by_roles = [key_of("+".join(roles), next(iter(written)), True)] if roles and _role_ids(ref, roles) == ids_changed else []
    replaced = sorted({t for t, _ in changed}, key=lambda t: (len(t), t))  # (in one order, whatever the hash seed)
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
    keys = by_roles + [key_of(held, next(iter(written))) for held in found[:KEYS]]
    return [k for k in keys if run_of(k)(ref, ids, 0, DecodeSettings())[0] == got]
