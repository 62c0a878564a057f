"""One mismatch as the classifier's rules read it (``Context``), what it computes once for them
(the alignment, the decoded bytes, the segments where the sides differ, the runs of <unk>), and
the record a rule returns (``Classification``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tokparity.diff.align import Divergence, add_byte_spans, align
from tokparity.diff.evidence import (
    Segment,
    between_shared,
    decoded_bytes,
    ids_shown,
    piece_of,
    quoted,
    segments_between,
    types_of,
)
from tokparity.diff.unk_runs import unk_runs_of
from tokparity.vocab.model import TokenType, Vocab
from tokparity.vocab.token_bytes import token_bytes


class computed_once:  # noqa: N801 (a decorator, named as functools.cached_property is)
    """``functools.cached_property`` without its lock: the value is computed on first access and
    kept in the instance's ``__dict__``, where it hides this descriptor from then on. (Python 3.11's
    ``cached_property`` takes a lock on every first access; a mismatch reads about four of them, and
    a run classifies every mismatch it finds.)"""

    def __init__(self, compute: Callable) -> None:
        self.compute, self.name, self.__doc__ = compute, compute.__name__, compute.__doc__

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.compute(instance)
        return value


@dataclass
class Classification:
    cls: str
    evidence: str
    divergence: Divergence | None = None


@dataclass
class Stages:
    """What one side's pipeline stages made of the input, where the backend exposes them."""

    normalized: str | None = None
    pre_tokens: list[str] | None = None


@dataclass
class Context:
    """One mismatch as the rules read it. What several rules need (the alignment, the decoded
    bytes, the differing tokens) is computed once, on first use."""

    text: str
    a: Sequence[int]
    b: Sequence[int]
    vocab: Vocab
    a_stages: Stages | None = None
    b_stages: Stages | None = None
    b_pieces: Sequence[str] | None = None
    status: str = "ok"
    detail: str = ""
    _runs: dict[str, dict[int, bytes] | None] = field(default_factory=dict, repr=False)

    def found(self, cls: str, evidence: str) -> Classification:
        return Classification(cls, evidence, self.divergence)

    @computed_once
    def divergence(self) -> Divergence:
        return add_byte_spans(align(self.a, self.b), self.vocab, self.a, self.b)

    @computed_once
    def hunk_a(self) -> list[int]:
        """The oracle's tokens from the first to the last differing one."""
        d = self.divergence
        return list(self.a[d.first[0]:d.last[0]]) if d.first and d.last else []

    @computed_once
    def hunk_b(self) -> list[int]:
        d = self.divergence
        return list(self.b[d.first[1]:d.last[1]]) if d.first and d.last else []

    @computed_once
    def types_a(self) -> list[TokenType]:
        return types_of(self.vocab, self.hunk_a)

    @computed_once
    def types_b(self) -> list[TokenType]:
        return types_of(self.vocab, self.hunk_b)

    @computed_once
    def dec_a(self) -> bytes:
        """The input bytes the oracle's tokens stand for (nothing for an <unk> or a control token)."""
        return decoded_bytes(self.vocab, self.a)

    @computed_once
    def dec_b(self) -> bytes:
        return decoded_bytes(self.vocab, self.b)

    @computed_once
    def same_text(self) -> bool:
        return self.dec_a == self.dec_b

    @computed_once
    def end_ids(self) -> set[int]:
        return {self.vocab.special_ids[r] for r in ("bos", "eos", "cls", "sep", "eot") if r in self.vocab.special_ids}

    @computed_once
    def span_text(self) -> str:
        """The differing stretch as the oracle's tokens spell it."""
        span = self.divergence.a_span or (0, 0)
        return self.dec_a[span[0]:span[1]].decode("utf-8", "replace")

    @computed_once
    def stretches(self) -> list[tuple[tuple[int, int], tuple[int, int]]]:
        """The differing runs joined until both sides spell the same bytes (difflib may cut
        '00' + '0' against '0' + '00' into an insert and a delete); empty when they never do."""
        out, current = [], None
        for (i1, i2), (j1, j2) in self.divergence.hunks:
            current = ((i1, i2), (j1, j2)) if current is None else ((current[0][0], i2), (current[1][0], j2))
            (x1, x2), (y1, y2) = current
            if decoded_bytes(self.vocab, self.a[x1:x2]) == decoded_bytes(self.vocab, self.b[y1:y2]):
                out.append(current)
                current = None
        return out if current is None else []

    @computed_once
    def segments(self) -> list[Segment]:
        return segments_between(self.vocab, self.a, self.b, self.divergence)

    @computed_once
    def unk_stretches(self) -> list[UnkStretch]:
        return unk_stretches_of(self)

    def unk_runs(self, side: str, segment: Segment) -> list[bytes] | None:
        """What each run of <unk> in ``segment`` on ``side`` ("oracle" or "backend") stands for in
        the input, or ``None`` when that side's pieces do not spell the input (a normalizer
        rewrote it), so that it cannot be read off."""
        runs = self._side_runs(side)
        if runs is None:
            return None
        ids, start = (segment.a, segment.a_start) if side == "oracle" else (segment.b, segment.b_start)
        return [surface for first, surface in runs.items() if start <= first < start + len(ids)]

    def segment_input(self, side: str, segment: Segment) -> bytes | None:
        """The input bytes ``segment`` covers, as ``side`` spells them: its pieces, and for each
        run of <unk> what the run stands for (``None`` when that cannot be read off)."""
        runs = self._side_runs(side)
        if runs is None:
            return None
        ids, start = (segment.a, segment.a_start) if side == "oracle" else (segment.b, segment.b_start)
        return b"".join(runs.get(start + k, b"") if types_of(self.vocab, [i])[0] == TokenType.UNKNOWN
                        else token_bytes(self.vocab, i) for k, i in enumerate(ids))

    def _side_runs(self, side: str) -> dict[int, bytes] | None:
        if side not in self._runs:
            self._runs[side] = unk_runs_of(self.text, self.vocab, self.a if side == "oracle" else self.b)
        return self._runs[side]

    def ids(self, ids: Sequence[int], limit: int = 8) -> str:
        return ids_shown(self.vocab, ids, limit)

    def piece(self, i: int) -> str:
        return piece_of(self.vocab, i)


Rule = Callable[[Context], "Classification | None"]


def only_unks(vocab: Vocab, ids: list[int]) -> bool:
    return bool(ids) and all(t == TokenType.UNKNOWN for t in types_of(vocab, ids))


@dataclass
class UnkStretch:
    """A segment where one side has <unk> and the other has something else, read off the input."""

    segment: Segment
    side: str  # the side with the <unk>: "oracle" or "backend"
    other: str
    runs: list[bytes]  # what each run of <unk> stands for
    covered: bytes  # the input the segment covers, as the <unk> side spells it
    theirs: list[int]  # the other side's tokens there

    def where(self, c: Context) -> str:
        texts = [run.decode("utf-8", "replace") for run in self.runs]
        return (f"the {self.side} writes <unk> for {quoted(texts)} where the {self.other} has "
                f"{c.ids(self.theirs) if self.theirs else 'nothing'} ({between_shared(c.vocab, self.segment)})")


def unk_stretches_of(c: Context) -> list[UnkStretch]:
    """Each segment where one side's <unk> stand against other pieces or nothing (or against
    <unk> only, when that side has pieces there too), with what the <unk> stand for when that
    side's pieces spell the input."""
    out = []
    for seg in c.segments:
        for side, mine, theirs in (("oracle", seg.a, seg.b), ("backend", seg.b, seg.a)):
            if TokenType.UNKNOWN not in types_of(c.vocab, mine) or (only_unks(c.vocab, theirs)
                                                                  and only_unks(c.vocab, mine)):
                continue
            runs = c.unk_runs(side, seg)
            if runs:
                out.append(UnkStretch(seg, side, "backend" if side == "oracle" else "oracle", runs,
                                       c.segment_input(side, seg) or b"", theirs))
    return out
