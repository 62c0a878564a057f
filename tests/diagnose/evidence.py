"""Every sentence a report says of a case, checked against the ids it describes.

A row's ``evidence`` (why the rules gave its class) and ``cause_evidence`` (why its cause) are
claims about the two id lists: who has which token how often, who writes ``<unk>`` where the other
drops the text, which variants of the reference give the backend's ids exactly. ``contradictions``
reads each claim it knows back out of the sentence and tests it on the row's ids (and, for a
reproduction, by running the reference with the row's variants again). The mutation suite calls
it on every row it checks (``mutation.check_evidence``): no sentence may contradict its case.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tokparity.diagnose.search import Diagnoser
from tokparity.records import Mismatch
from tokparity.vocab.model import TokenType, Vocab
from tokparity.vocab.token_bytes import token_bytes

SIDES = ("oracle", "backend")


def _ids_of(m: Mismatch, side: str) -> list[int]:
    return list(m.oracle_ids if side == "oracle" else m.backend_ids)


def _unknowns(vocab: Vocab, ids: list[int]) -> int:
    return sum(1 for i in ids if 0 <= i < vocab.size and vocab.type_of(i) == TokenType.UNKNOWN)


def contradictions(m: Mismatch, vocab: Vocab, reproduce: Callable[[tuple[str, ...]], list[int] | None]) -> list[str]:
    """What in ``m``'s evidence and cause evidence its ids (or the reference, ``reproduce``: the
    reference's ids with some variants applied) say is false; empty when every claim holds."""
    out = []
    said = f"{m.evidence} || {m.cause_evidence}"
    a, b = list(m.oracle_ids), list(m.backend_ids)
    if a == b and m.stage != "decode":
        out.append("a mismatch whose two id lists are equal")
    for cid, times_a, times_b in re.findall(r"oracle has id (\d+) (\d+)×, backend (\d+)×", said):
        if (a.count(int(cid)), b.count(int(cid))) != (int(times_a), int(times_b)):
            out.append(f"says id {cid} is {times_a}× / {times_b}×, the ids have {a.count(int(cid))}× / "
                       f"{b.count(int(cid))}×")
    for side in re.findall(r"the (oracle|backend) writes <unk>", said):
        if not _unknowns(vocab, _ids_of(m, side)):
            out.append(f"says the {side} writes <unk>, its ids have none")
    for dropper in re.findall(r"the (oracle|backend) drops characters", said):
        writer = SIDES[1 - SIDES.index(dropper)]
        if _unknowns(vocab, _ids_of(m, writer)) <= _unknowns(vocab, _ids_of(m, dropper)):
            out.append(f"says the {dropper} drops what the {writer} writes as <unk>, but the {writer} has no more "
                       f"<unk> than the {dropper}")
    for side, cid in re.findall(r"the (oracle|backend) emits control token (\d+)", said):
        other = SIDES[1 - SIDES.index(side)]
        if _ids_of(m, side).count(int(cid)) <= _ids_of(m, other).count(int(cid)):
            out.append(f"says the {side} emits control token {cid}, it has it no more often than the {other}")
    if "ids differ only at the ends by special ids" in said and _inner(vocab, a) != _inner(vocab, b):
        out.append("says the ids differ only at the ends, they differ inside")
    if "the two sides' ids spell different texts" in said and _spelled(vocab, a) == _spelled(vocab, b):
        out.append("says the two sides' ids spell different texts, they spell the same")
    reproduced = "reproduces the backend's ids exactly" in said or "reproduces these ids exactly" in said
    if reproduced and not m.variants:
        out.append("says some variants reproduce the backend's ids, and names none")
    elif reproduced and reproduce(tuple(m.variants)) != b:
        out.append(f"says {', '.join(m.variants)} reproduce the backend's ids, the reference with them gives "
                   f"{reproduce(tuple(m.variants))}")
    return out


def _inner(vocab: Vocab, ids: list[int]) -> list[int]:
    """``ids`` without the special ids at either end."""
    special = set(vocab.special_ids.values())
    is_special = (lambda i: i in special or 0 <= i < vocab.size and vocab.type_of(i) == TokenType.CONTROL)
    while ids and is_special(ids[0]):
        ids = ids[1:]
    while ids and is_special(ids[-1]):
        ids = ids[:-1]
    return ids


def _spelled(vocab: Vocab, ids: list[int]) -> bytes:
    return b"".join(token_bytes(vocab, i) for i in ids)


def reproducer(diagnoser: Diagnoser, text: str) -> Callable[[tuple[str, ...]], list[int] | None]:
    return lambda keys: diagnoser.encode(keys, text)
