"""Align two token id lists and locate where they diverge, in tokens and in input bytes.

    >>> d = align([2, 818, 5279, 529], [2, 669, 270, 5279, 529])
    >>> d.first, d.opcodes[1]
    ((1, 1), ('replace', 1, 2, 1, 3))

``difflib``'s opcodes are enough: differences are local. Long runs whose ends alone differ are
aligned without it. ``autojunk`` is off because a repeated token (a run of spaces) is exactly
what must not be treated as noise.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate, product

from tokparity.vocab.model import Vocab
from tokparity.vocab.token_bytes import token_bytes


@dataclass
class Divergence:
    """Where two id lists (``a`` the oracle's, ``b`` the backend's) differ."""

    opcodes: list[tuple[str, int, int, int, int]]
    first: tuple[int, int] | None = None  # (index in a, index in b) of the first differing token
    last: tuple[int, int] | None = None  # end (exclusive) of the last differing run, in a and b
    # Byte spans of the input that each side's differing tokens cover, first to last divergence.
    a_span: tuple[int, int] | None = None
    b_span: tuple[int, int] | None = None
    hunks: list[tuple[tuple[int, int], tuple[int, int]]] = field(default_factory=list)  # [((i1, i2), (j1, j2))]

    @property
    def equal(self) -> bool:
        return self.first is None


def align(a: Sequence[int], b: Sequence[int]) -> Divergence:
    # The common head and tail are equal by definition; difflib only sees what lies between
    # (most mismatches differ in a few tokens of a long text, and difflib's cost grows with n²).
    n = min(len(a), len(b))
    head = 0
    while head < n and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < n - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    a_mid, b_mid = list(a[head:len(a) - tail]), list(b[head:len(b) - tail])
    if not a_mid or not b_mid or set(a_mid).isdisjoint(b_mid):
        # Nothing in common in between (the usual case: a token or two swapped for others):
        # one opcode, the one difflib would give, without building its index.
        tag = "replace" if a_mid and b_mid else "delete" if a_mid else "insert"
        opcodes = [(tag, head, len(a) - tail, head, len(b) - tail)] if a_mid or b_mid else []
    else:
        found = _substitutions(a_mid, b_mid)
        if found is None and len(a_mid) * len(b_mid) > DIFFLIB_MOST:
            # (else one replace of all between the common head and tail: where the lists first and
            # last differ stays exact, the equal runs inside are not listed)
            found = _ends_changed(a_mid, b_mid) or [("replace", 0, len(a_mid), 0, len(b_mid))]
        steps: Sequence[tuple[str, int, int, int, int]] = \
            found if found is not None else difflib.SequenceMatcher(None, a_mid, b_mid, autojunk=False).get_opcodes()
        opcodes = [(tag, i1 + head, i2 + head, j1 + head, j2 + head) for tag, i1, i2, j1, j2 in steps]
    if head:
        opcodes.insert(0, ("equal", 0, head, 0, head))
    if tail:
        opcodes.append(("equal", len(a) - tail, len(a), len(b) - tail, len(b)))
    hunks = [((i1, i2), (j1, j2)) for tag, i1, i2, j1, j2 in opcodes if tag != "equal"]
    d = Divergence(opcodes=[(str(tag), i1, i2, j1, j2) for tag, i1, i2, j1, j2 in opcodes], hunks=hunks)
    if hunks:
        d.first = (hunks[0][0][0], hunks[0][1][0])
        d.last = (hunks[-1][0][1], hunks[-1][1][1])
    return d


# difflib's cost grows with the product of the two runs' lengths: a 100,000-character case with a
# BOS and an EOS added took 76 s. Past this product, the changed ends are tried (below), else the
# runs are one replace.
DIFFLIB_MOST = 4_000_000
ENDS_CHANGED = 8  # tokens at most that differ at each end of two long runs, for _ends_changed


def _ends_changed(a: list[int], b: list[int]) -> list[tuple[str, int, int, int, int]] | None:
    """The opcodes of two long runs that are equal but for up to ``ENDS_CHANGED`` tokens at their
    start and at their end (a BOS and an EOS added, a first token split), the fewest changed
    first; None otherwise. Else a long pair of runs would cost difflib minutes."""
    ways = sorted(product(range(ENDS_CHANGED + 1), repeat=4), key=lambda way: (sum(way), way))
    for sa, sb, ea, eb in ways:
        ia, ib = len(a) - ea, len(b) - eb  # (where each side's equal middle ends)
        if ia <= sa or ib <= sb or ia - sa != ib - sb or a[sa] != b[sb] or a[ia - 1] != b[ib - 1] \
                or a[sa:ia] != b[sb:ib]:
            continue
        # (the middle is the longest block difflib would find; the ends, a few tokens each, are its own)
        return [*_ends(a, b, 0, sa, 0, sb), ("equal", sa, ia, sb, ib), *_ends(a, b, ia, len(a), ib, len(b))]
    return None


def _ends(a: list[int], b: list[int], i1: int, i2: int, j1: int, j2: int) -> list[tuple[str, int, int, int, int]]:
    """difflib's opcodes of a[i1:i2] against b[j1:j2], at their places."""
    steps = difflib.SequenceMatcher(None, a[i1:i2], b[j1:j2], autojunk=False).get_opcodes()
    return [(tag, x1 + i1, x2 + i1, y1 + j1, y2 + j1) for tag, x1, x2, y1, y2 in steps if (x1, x2, y1, y2) != (0, 0, 0, 0)]


def _substitutions(a: list[int], b: list[int]) -> list[tuple[str, int, int, int, int]] | None:
    """difflib's opcodes for two runs of the same length that differ only by substitutions, each of
    a token the other run never holds (an <unk> written as another id); None otherwise.

    Then a token of one run found in the other is at a place where both hold it, so any common
    block (i, j, k) is a stretch of such places on each side, and (i, i, k) and (j, j, k) are
    common blocks too. difflib takes the longest block, the first in ``a``, then in ``b``: that is
    always one at the same place in both, and so in the stretches on either side of it. Its
    opcodes then pair the runs place by place: the equal stretches, and between them "replace"."""
    if len(a) != len(b):
        return None
    in_a, in_b = set(a), set(b)
    if any(x != y and (x in in_b or y in in_a) for x, y in zip(a, b)):
        return None
    opcodes: list[tuple[str, int, int, int, int]] = []
    start = 0
    for k in range(1, len(a) + 1):
        if k == len(a) or (a[k] == b[k]) != (a[start] == b[start]):
            opcodes.append(("equal" if a[start] == b[start] else "replace", start, k, start, k))
            start = k
    return opcodes


def byte_offsets(vocab: Vocab, ids: Sequence[int]) -> list[int]:
    """Cumulative byte offsets: token ``k`` covers ``[off[k], off[k+1])`` of the decoded bytes."""
    return list(accumulate([len(token_bytes(vocab, i)) for i in ids], initial=0))


def add_byte_spans(d: Divergence, vocab: Vocab, a: Sequence[int], b: Sequence[int]) -> Divergence:
    """Fill ``a_span`` / ``b_span`` from the first to the last differing token of each side.

    Offsets are in the bytes the tokens decode to, which equal the input's bytes except where a
    side adds something the input lacks (a dummy-prefix space) or normalizes it away.
    """
    if d.first is None or d.last is None:  # equal: nothing to locate
        return d
    oa, ob = byte_offsets(vocab, a[:d.last[0]]), byte_offsets(vocab, b[:d.last[1]])  # (no token after the last)
    d.a_span = (oa[d.first[0]], oa[d.last[0]])
    d.b_span = (ob[d.first[1]], ob[d.last[1]])
    return d
