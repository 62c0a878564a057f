"""Name the bug class of one mismatch, with the evidence that decided it.

Each mismatch gets exactly one class of the catalogue (``docs/catalogue/classes.md``): the
*symptom*, what the ids show. (The *cause*, what reproduces them, is ``tokparity.diagnose``'s; a
report never lets the class contradict it, see ``tokparity.diagnose.info.consistent_class``.)

The class comes from ``RULES``, a table of small named rules run from the most specific symptom
to the most general: each reads one ``Context`` (the texts, both id lists, the vocabulary, the
alignment and what the stages made of the input) and returns a ``Classification`` or ``None``;
the first that returns one wins. ``unclassified`` is the honest default, because a wrong name
sends a user down the wrong road, and every evidence sentence must be true of the row it names.

The inputs are the two id lists (``a`` the oracle's, ``b`` the backend's), the input text and
the vocabulary both sides share; optionally what each side's normalizer and pre-tokenizer made
of the text, when the backends expose those stages.

    >>> from tokparity.vocab.model import TokenType as T, Vocab
    >>> vocab = Vocab("spm", ["<unk>", "<s>", "▁Hello", "Hello", "▁world"], special_ids={"bos": 1},
    ...               token_types=[T.UNKNOWN, T.CONTROL, T.NORMAL, T.NORMAL, T.NORMAL])
    >>> found = classify("Hello world", [2, 4], [3, 4], vocab)    # the backend lacks the dummy prefix
    >>> found.cls
    'space-prefix'
    >>> found.evidence  # doctest: +ELLIPSIS
    "the oracle starts with one more space: oracle [2 '▁Hello', 4 '▁world'] vs backend [3 'Hello', 4 '▁world']; ..."
    >>> classify("Hello world", [1, 2, 4], [2, 4], vocab).cls
    'bos-eos'
"""

from __future__ import annotations

import re
import unicodedata
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tokparity.diff import unicode_tables
from tokparity.diff.align import Divergence, add_byte_spans, align, byte_offsets
from tokparity.errors import TokparityError
from tokparity.vocab.model import TokenType, Vocab
from tokparity.vocab.token_bytes import gpt2_unicode_to_byte, token_bytes

CLASSES = (
    "merge-order", "space-prefix", "space-after-special", "whitespace-runs", "byte-fallback", "unk-merge",
    "normalization", "whitespace-collapse", "pre-tokenizer", "unicode-categories", "ignore-merges",
    "special-parsing", "special-strip", "bos-eos", "user-defined", "added-token-priority", "decode-roundtrip",
    "decode-cleanup", "stream-prompt", "stream-replacement", "stream-cleanup", "stream-repeat", "stream-text", "stream-held",
    "piece-bytes", "chat-raises", "chat-bos", "chat-text", "chat-ids", "chat-special-split",  # (chat: tokparity.diff.chat)
    "vocab-mismatch", "special-ids", "viterbi-tie", "crash", "timeout", "unclassified",
)

_WS = re.compile(rb"\s+")
_WS_BYTES = b" \t\n\r\x0b\x0c"
_MARK = "\u2581".encode()  # ▁, SentencePiece's escaped space, as a character of the input
# Code points whose category split tables disagree on (line/paragraph separators, format
# characters, unassigned and private-use code points): the kinds split tables most often disagree on.
_ODD_CATEGORIES = {"Zl", "Zp", "Cf", "Cn", "Co", "Cs"}


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
        return _types(self.vocab, self.hunk_a)

    @computed_once
    def types_b(self) -> list[TokenType]:
        return _types(self.vocab, self.hunk_b)

    @computed_once
    def dec_a(self) -> bytes:
        """The input bytes the oracle's tokens stand for (nothing for an <unk> or a control token)."""
        return _decoded(self.vocab, self.a)

    @computed_once
    def dec_b(self) -> bytes:
        return _decoded(self.vocab, self.b)

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
            if _decoded(self.vocab, self.a[x1:x2]) == _decoded(self.vocab, self.b[y1:y2]):
                out.append(current)
                current = None
        return out if current is None else []

    @computed_once
    def segments(self) -> list[Segment]:
        return _segments(self.vocab, self.a, self.b, self.divergence)

    @computed_once
    def unk_stretches(self) -> list[_UnkStretch]:
        return _unk_stretches(self)

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
        return b"".join(runs.get(start + k, b"") if _types(self.vocab, [i])[0] == TokenType.UNKNOWN
                        else token_bytes(self.vocab, i) for k, i in enumerate(ids))

    def _side_runs(self, side: str) -> dict[int, bytes] | None:
        if side not in self._runs:
            self._runs[side] = _unk_runs(self.text, self.vocab, self.a if side == "oracle" else self.b)
        return self._runs[side]

    def ids(self, ids: Sequence[int], limit: int = 8) -> str:
        return _ids(self.vocab, ids, limit)

    def piece(self, i: int) -> str:
        return _piece(self.vocab, i)


Rule = Callable[[Context], "Classification | None"]


# --- the run failed, or did not differ ---------------------------------------------------------------------


def backend_failed(c: Context) -> Classification | None:
    """crash / timeout: the backend gave no ids to judge."""
    if c.status not in ("crash", "timeout"):
        return None
    return Classification(c.status, c.detail or f"the backend {'died' if c.status == 'crash' else 'hung'} on this input")


def ids_equal(c: Context) -> Classification | None:
    """unclassified: the ids are equal, so there is nothing to name (a guard: a run classifies
    only ids that differ)."""
    return c.found("unclassified", "the ids are equal") if c.divergence.equal else None


# --- not the same vocabulary, or specials -------------------------------------------------------------------


def foreign_vocabulary(c: Context) -> Classification | None:
    """vocab-mismatch: the backend's own pieces for its ids are not the vocabulary's."""
    if c.b_pieces is None:
        return None
    for i, piece in zip(c.b, c.b_pieces):
        if 0 <= i < c.vocab.size and piece != c.vocab.tokens[i] and c.vocab.type_of(i) == TokenType.NORMAL:
            return c.found("vocab-mismatch", f"the backend calls id {i} {piece!r} where the oracle's vocabulary "
                                             f"holds {c.vocab.tokens[i]!r}: they do not share a vocabulary")
    return None


def ends_only(c: Context) -> Classification | None:
    """bos-eos: the ids differ only by special ids at the ends."""
    if _strip_ends(c.a, c.end_ids) != _strip_ends(c.b, c.end_ids):
        return None
    extra_a = [i for i in c.a if i in c.end_ids]
    extra_b = [i for i in c.b if i in c.end_ids]
    return c.found("bos-eos", f"ids differ only at the ends by special ids: oracle has {c.ids(extra_a)}, "
                              f"backend has {c.ids(extra_b)}")


def special_text_parsed(c: Context) -> Classification | None:
    """special-parsing: the input spells a special token and one side parsed it as one."""
    for cid, special_text in c.vocab.control_texts():
        if special_text in c.text and c.a.count(cid) != c.b.count(cid):
            return c.found("special-parsing", f"the input holds the special token text {c.vocab.tokens[cid]!r}; "
                                              f"oracle has id {cid} {c.a.count(cid)}×, backend {c.b.count(cid)}× "
                                              f"(parse_special?)")
    return None


def unk_text_parsed(c: Context) -> Classification | None:
    """special-parsing: the input spells the unknown token's text ('<unk>') and one side has an
    <unk> that stands for exactly that text: it parsed the text as the token."""
    unk = c.vocab.special_ids.get("unk")
    if unk is None or not 0 <= unk < c.vocab.size or c.vocab.tokens[unk] not in c.text:
        return None
    spelled = c.vocab.tokens[unk].encode("utf-8", "surrogatepass")
    for seg in c.segments:
        for side, mine, theirs in (("oracle", seg.a, seg.b), ("backend", seg.b, seg.a)):
            for run in c.unk_runs(side, seg) or []:
                times = len(run) // len(spelled)
                if run and run == spelled * times:
                    other = "backend" if side == "oracle" else "oracle"
                    return c.found("special-parsing", f"the input holds the special token text {c.vocab.tokens[unk]!r}; "
                                                      f"the {side} writes <unk> for {_quoted([run.decode()])}, that "
                                                      f"text {'once' if times == 1 else f'{times} times'}, where the "
                                                      f"{other} has {c.ids(theirs)} (parse_special?)")
    return None


def control_token_inside(c: Context) -> Classification | None:
    """special-ids: a control token the input does not spell, inside the text (one at either end
    is a BOS/EOS, unless it stands where the other side has <unk>)."""
    d = c.divergence
    assert d.first is not None and d.last is not None
    (i1, j1), (i2, j2) = d.first, d.last
    control = c.vocab.control_ids()
    for side, ids, (lo, hi), other in (("backend", c.b, (j1, j2), "types_a"), ("oracle", c.a, (i1, i2), "types_b")):
        if control.isdisjoint(ids[lo:hi]):  # (most stretches hold none: looked for at once, not token by token)
            continue
        for k in range(lo, hi):
            i = ids[k]
            if not (i in control and c.vocab.tokens[i] not in c.text):
                continue
            other_types = getattr(c, other)  # the other side's token types, read only once a control token is found
            if k in (0, len(ids) - 1) and TokenType.UNKNOWN not in other_types:
                continue
            what = ("<unk>" if TokenType.UNKNOWN in other_types
                    else "nothing (its normalizer dropped the text)" if not other_types else "ordinary pieces")
            return c.found("special-ids", f"the {side} emits control token {i} {c.piece(i)} inside the text, "
                                          f"where the other side has {what}: a special id (unk, bos, eos, pad) "
                                          f"points at another token on that side")
    return None


def _after_special(c: Context) -> tuple[bytes, bytes, int] | None:
    """(the oracle's rest, the backend's rest, the special's id) when the first differing token
    follows the same control token on both sides."""
    assert c.divergence.first is not None
    i1, j1 = c.divergence.first
    if i1 > 0 and j1 > 0 and c.a[i1 - 1] == c.b[j1 - 1] and _types(c.vocab, [c.a[i1 - 1]])[0] == TokenType.CONTROL:
        return _decoded(c.vocab, c.a[i1:]), _decoded(c.vocab, c.b[j1:]), c.a[i1 - 1]
    return None


def _one_more_space_after_special(c: Context) -> tuple[str, int] | None:
    """(the side with the extra space, the special's id) when, after the same control token, the
    two sides differ only by one side having one more space."""
    after = _after_special(c)
    if after is None:
        return None
    rest_a, rest_b, special = after
    if rest_b == b" " + rest_a:
        return "backend", special
    if rest_a == b" " + rest_b:
        return "oracle", special
    return None


def special_keeps_whitespace(c: Context) -> Classification | None:
    """special-strip: the input has whitespace after a special token; one side strips it
    (rstrip), the other keeps it as one more '▁' (Phi-3's <|end|>, llama.cpp PR #7375)."""
    extra = _one_more_space_after_special(c)
    if extra is None:
        return None
    with_space, special = extra
    if not re.search(re.escape(c.vocab.tokens[special]) + r"[ \t]", c.text):
        return None
    without = "oracle" if with_space == "backend" else "backend"
    return c.found("special-strip", f"the input has whitespace after special {c.piece(special)}: the {without} "
                                    f"strips it (rstrip), the {with_space} keeps it as one more '▁': oracle "
                                    f"{c.ids(c.hunk_a)} vs backend {c.ids(c.hunk_b)}")


def space_after_special(c: Context) -> Classification | None:
    """space-after-special: right after a special token one side adds a '▁' the input lacks."""
    extra = _one_more_space_after_special(c)
    if extra is None:
        return None
    with_space, special = extra
    return c.found("space-after-special", f"right after special {c.piece(special)} the {with_space} adds a '▁': "
                                          f"oracle {c.ids(c.hunk_a)} vs backend {c.ids(c.hunk_b)}")


def whitespace_beside_special(c: Context) -> Classification | None:
    """special-strip: after a special token the two sides differ only in whitespace."""
    after = _after_special(c)
    if after is None:
        return None
    rest_a, rest_b, special = after
    if rest_a.strip() != rest_b.strip() or rest_a == rest_b:
        return None
    return c.found("special-strip", f"whitespace next to special {c.piece(special)} differs: "
                                    f"oracle {c.ids(c.hunk_a)} vs backend {c.ids(c.hunk_b)}")


# --- the start of the text ---------------------------------------------------------------------------------


def leading_space(c: Context) -> Classification | None:
    """space-prefix: one side starts with one more space (the dummy prefix)."""
    lead_a, lead_b = _strip_ends(c.a, c.end_ids), _strip_ends(c.b, c.end_ids)
    if not (lead_a and lead_b and lead_a[0] != lead_b[0]):
        return None
    da, db = _decoded(c.vocab, lead_a), _decoded(c.vocab, lead_b)
    if not (da == b" " + db or db == b" " + da):
        return None
    more = "oracle" if da.startswith(b" ") and not db.startswith(b" ") or len(da) > len(db) else "backend"
    flag = c.vocab.flags.add_space_prefix
    said = ("unset in the file (llama.cpp then adds the prefix for SPM and UGM vocabularies)"
            if flag is None else str(flag).lower())
    return c.found("space-prefix", f"the {more} starts with one more space: oracle {c.ids(lead_a[:2])} vs "
                                   f"backend {c.ids(lead_b[:2])}; the vocabulary's add_space_prefix is {said}")


# --- <unk> and byte tokens -----------------------------------------------------------------------------------


def _only_unks(vocab: Vocab, ids: list[int]) -> bool:
    return bool(ids) and all(t == TokenType.UNKNOWN for t in _types(vocab, ids))


def unk_per_run(c: Context) -> Classification | None:
    """unk-merge: the same span (between the same shared tokens) holds one <unk> on one side and
    several, and nothing else, on the other."""
    for seg in c.segments:
        if not (_only_unks(c.vocab, seg.a) and _only_unks(c.vocab, seg.b)) or len(seg.a) == len(seg.b):
            continue
        if 1 not in (len(seg.a), len(seg.b)):
            continue
        one, many = ("oracle", "backend") if len(seg.a) == 1 else ("backend", "oracle")
        return c.found("unk-merge", f"the same span ({_between(c.vocab, seg)}) holds {len(seg.a)} <unk> on the "
                                    f"oracle's side and {len(seg.b)} on the backend's: the {one} writes one <unk> for "
                                    f"the whole run of unknown characters, the {many} several")
    return None


def bytes_on_one_side(c: Context) -> Classification | None:
    """byte-fallback: <0xNN> byte tokens on one side only."""
    bytes_a, bytes_b = c.types_a.count(TokenType.BYTE), c.types_b.count(TokenType.BYTE)
    if bool(bytes_a) == bool(bytes_b):
        return None
    side, other = ("oracle", "backend") if bytes_a else ("backend", "oracle")
    other_unk = (c.types_b if bytes_a else c.types_a).count(TokenType.UNKNOWN)
    what = f"{other_unk} <unk>" if other_unk else "pieces"
    return c.found("byte-fallback", f"the {side} has byte tokens where the {other} has {what}: "
                                    f"oracle {c.ids(c.hunk_a)} vs backend {c.ids(c.hunk_b)}")


@dataclass
class _UnkStretch:
    """A segment where one side has <unk> and the other has something else, read off the input."""

    segment: Segment
    side: str  # the side with the <unk>: "oracle" or "backend"
    other: str
    runs: list[bytes]  # what each run of <unk> stands for
    covered: bytes  # the input the segment covers, as the <unk> side spells it
    theirs: list[int]  # the other side's tokens there

    def where(self, c: Context) -> str:
        texts = [run.decode("utf-8", "replace") for run in self.runs]
        return (f"the {self.side} writes <unk> for {_quoted(texts)} where the {self.other} has "
                f"{c.ids(self.theirs) if self.theirs else 'nothing'} ({_between(c.vocab, self.segment)})")


def _unk_stretches(c: Context) -> list[_UnkStretch]:
    """Each segment where one side's <unk> stand against other pieces or nothing (or against
    <unk> only, when that side has pieces there too), with what the <unk> stand for when that
    side's pieces spell the input."""
    out = []
    for seg in c.segments:
        for side, mine, theirs in (("oracle", seg.a, seg.b), ("backend", seg.b, seg.a)):
            if TokenType.UNKNOWN not in _types(c.vocab, mine) or (_only_unks(c.vocab, theirs)
                                                                  and _only_unks(c.vocab, mine)):
                continue
            runs = c.unk_runs(side, seg)
            if runs:
                out.append(_UnkStretch(seg, side, "backend" if side == "oracle" else "oracle", runs,
                                       c.segment_input(side, seg) or b"", theirs))
    return out


def unk_for_normalized_text(c: Context) -> Classification | None:
    """normalization: an <unk> stands for characters NFKC rewrites, and the other side has what
    NFKC makes of them: characters only the NFKC form holds, or nothing where NFKC makes
    whitespace (a normalizer on one side only)."""
    for u in c.unk_stretches:
        text = u.covered.decode("utf-8", "replace")
        nfkc = unicodedata.normalize("NFKC", text)
        if nfkc == text:
            continue
        changed = _nfkc_changes(text.strip(" ")) or _nfkc_changes(text)  # shown without the dummy prefix
        said = ", ".join(f"{_show(ch)} to {_show(to)}" for ch, to in changed[:3]) + (", …" if len(changed) > 3 else "")
        theirs = _decoded(c.vocab, u.theirs).decode("utf-8", "replace")
        only_nfkc = "".join(ch for ch in dict.fromkeys(theirs) if ch not in text and ch in nfkc)
        if only_nfkc:
            return c.found("normalization", f"{u.where(c)}; NFKC changes {said}, and the {u.other}'s pieces there "
                                            f"spell {_show(only_nfkc)}, which only the NFKC form holds: one side "
                                            f"normalizes these characters, the other does not")
        if not theirs.strip() and not nfkc.strip():
            return c.found("normalization", f"{u.where(c)}; NFKC changes {said}, whitespace that the {u.other} "
                                            f"strips: one side normalizes these characters, the other does not")
        if TokenType.UNKNOWN in _types(c.vocab, u.theirs) and not theirs.strip():
            return c.found("normalization", f"{u.where(c)}; NFKC changes {said}, and the {u.other} has only <unk> "
                                            f"(and spaces) there: the sides differ where a normalizer rewrites the text")
    return None


def _same_unknowns(c: Context) -> bool:
    """Whether both sides write <unk> for the same characters in the same order: then neither drops
    what the other keeps as <unk>, whatever the alignment of the tokens around them (a tie next to
    an <unk> moves it from one hunk to the next)."""
    a, b = c._side_runs("oracle"), c._side_runs("backend")
    return a is not None and b is not None and list(a.values()) == list(b.values())


def unk_for_dropped_whitespace(c: Context) -> Classification | None:
    """whitespace-collapse: an <unk> stands for whitespace that the other side does not keep."""
    if _same_unknowns(c):
        return None
    for u in c.unk_stretches:
        kept = _decoded(c.vocab, u.theirs)
        if TokenType.UNKNOWN in _types(c.vocab, u.theirs):
            continue  # an <unk> of theirs may stand for it
        if not b"".join(u.runs).decode("utf-8", "replace").strip() and not any(run in kept for run in u.runs):
            return c.found("whitespace-collapse", f"{u.where(c)}: whitespace the {u.side} keeps (as <unk>) and the "
                                                  f"{u.other} does not")
    return None


def unk_for_dropped_text(c: Context) -> Classification | None:
    """byte-fallback: an <unk> stands for characters the other side has nothing for: it drops
    what no piece covers instead of writing <unk> (as byte fallback does on a vocabulary
    without <0xNN> pieces)."""
    if _same_unknowns(c):
        return None
    for u in c.unk_stretches:
        kept = _decoded(c.vocab, u.theirs)
        if TokenType.UNKNOWN in _types(c.vocab, u.theirs):
            continue  # an <unk> of theirs may stand for them
        if not any(ch.encode("utf-8", "surrogatepass") in kept for run in u.runs for ch in run.decode("utf-8", "replace")):
            return c.found("byte-fallback", f"{u.where(c)}: the {u.other} drops characters that no piece covers "
                                            f"instead of writing <unk> (as byte fallback does on a vocabulary without "
                                            f"<0xNN> pieces)")
    return None


# --- user-defined pieces ---------------------------------------------------------------------------------


def _user_defined_in_hunks(c: Context) -> tuple[int, str] | None:
    """The first user-defined piece the input spells that only one side matched, and that side."""
    if c.vocab.token_types is None:
        return None
    for i in set(c.hunk_a) ^ set(c.hunk_b):
        if 0 <= i < c.vocab.size and c.vocab.token_types[i] == TokenType.USER_DEFINED and c.vocab.tokens[i] in c.text:
            return i, "oracle" if i in c.hunk_a else "backend"
    return None


def added_token_inside_word(c: Context) -> Classification | None:
    """added-token-priority: an added token inside a word beat the model's pieces on one side."""
    hit = _user_defined_in_hunks(c)
    if hit is None or not _inside_word(c.text, c.vocab.tokens[hit[0]]):
        return None
    i, side = hit
    return c.found("added-token-priority", f"added token {i} {c.piece(i)} sits inside a word of the input and "
                                           f"only the {side} let it beat the model's pieces")


def user_defined_piece(c: Context) -> Classification | None:
    """user-defined: a user-defined piece in the input matched whole on one side only."""
    hit = _user_defined_in_hunks(c)
    if hit is None:
        return None
    i, side = hit
    return c.found("user-defined", f"user-defined piece {i} {c.piece(i)} is in the input and only the {side} "
                                   f"matched it whole")


# --- the two sides do not decode to the same text ------------------------------------------------------------


def collapsed_whitespace(c: Context) -> Classification | None:
    """whitespace-collapse: the decoded texts differ only in runs of whitespace."""
    if c.same_text or not (c.dec_a.strip() and c.dec_b.strip()):
        return None
    if _WS.sub(b" ", c.dec_a).strip() != _WS.sub(b" ", c.dec_b).strip():
        return None
    return c.found("whitespace-collapse", "the decoded texts differ only in runs of whitespace: one side "
                                          "collapses or strips spaces (remove_extra_whitespaces)")


def whitespace_text_stripped(c: Context) -> Classification | None:
    """whitespace-collapse: the text is only whitespace (or '▁', which SentencePiece cannot tell
    from an escaped space) and one side strips all of it."""
    if c.same_text or c.dec_a.strip() or c.dec_b.strip() or (c.dec_a and c.dec_b):
        return None
    side = "oracle" if not c.dec_a else "backend"
    return c.found("whitespace-collapse", f"the text is only whitespace and the {side} strips all of it: "
                                          f"oracle {c.ids(c.hunk_a)} vs backend {c.ids(c.hunk_b)}")


def unicode_normal_form(c: Context) -> Classification | None:
    """normalization: the decoded texts differ but are equal after a Unicode normalization."""
    if c.same_text:
        return None
    try:
        sa, sb = c.dec_a.decode("utf-8"), c.dec_b.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not any(unicodedata.normalize(f, sa) == unicodedata.normalize(f, sb) for f in ("NFKC", "NFC", "NFKD", "NFD")):
        return None
    d = c.divergence
    assert d.a_span is not None and d.b_span is not None
    return c.found("normalization", f"the decoded texts differ but are equal after Unicode normalization: "
                                    f"oracle {_spelled(c.dec_a, d.a_span)} vs backend {_spelled(c.dec_b, d.b_span)}")


def normalizers_disagree(c: Context) -> Classification | None:
    """normalization: both sides expose their normalizer and its outputs differ."""
    if c.same_text or not (c.a_stages and c.b_stages):
        return None
    na, nb = c.a_stages.normalized, c.b_stages.normalized
    if na is None or nb is None or na == nb:
        return None
    return c.found("normalization", "the normalizers already disagree on this input")


def other_text(c: Context) -> Classification | None:
    """unclassified: the decoded texts differ in a way no rule above names."""
    if c.same_text:
        return None
    return c.found("unclassified", f"the decoded texts differ from byte {_first_diff(c.dec_a, c.dec_b)}: oracle "
                                   f"{c.ids(c.hunk_a)} vs backend {c.ids(c.hunk_b)}")


# --- the same text, other tokens -------------------------------------------------------------------------------


def viterbi_tie(c: Context) -> Classification | None:
    """viterbi-tie: a unigram model, the same text, and the two segmentations score exactly the
    same (ties.py: the same check as the cause ``model.viterbi-tie``'s)."""
    if c.vocab.algorithm != "ugm" or not c.same_text:
        return None
    pipeline = _unigram_pipeline(c.vocab)
    if pipeline is None:
        return None
    from tokparity.diff.ties import viterbi_tie as tie
    # Stretch by stretch: the tokens around them are the same on both sides, so equal scores
    # over every differing stretch are equal totals (and an <unk> elsewhere does not matter).
    ties = [tie(pipeline, c.vocab, list(c.a[i1:i2]), list(c.b[j1:j2])) for (i1, i2), (j1, j2) in c.stretches]
    if not ties or not all(ties):
        whole = tie(pipeline, c.vocab, list(c.a), list(c.b))
        if whole is None:
            return None
        ties = [whole]
    said = ties[0] if len(ties) == 1 else \
        f"in each of the {len(ties)} differing stretches the two segmentations score the same (the first: {ties[0]})"
    return c.found("viterbi-tie", f"same text {c.span_text!r}, other segmentation: oracle {c.ids(c.hunk_a)} vs "
                                  f"backend {c.ids(c.hunk_b)}; {said}")


def disputed_code_point(c: Context) -> Classification | None:
    """unicode-categories: a code point next to the divergence that the Unicode tables of the
    two sides' regex engines read differently (one side's \\p{N} is the other's unassigned).
    Before any other reading of a BPE or WordPiece split."""
    d = c.divergence
    if c.vocab.algorithm not in ("bpe", "wpm") or not c.same_text or d.a_span is None:
        return None
    if d.a_span[1] > len(c.text.encode("utf-8", "surrogatepass")):
        return None
    for ch in unicode_tables.chars_around(c.text, d.a_span):
        if (dispute := unicode_tables.disputed(ch)) is not None:
            return c.found("unicode-categories", f"the split differs at {dispute}: the two sides' regex engines "
                                                 f"read its class from different Unicode tables")
    return None


def whitespace_run_split(c: Context) -> Classification | None:
    """whitespace-runs: a run of whitespace is split differently."""
    if not c.same_text:
        return None
    covered_a, covered_b = _decoded(c.vocab, c.hunk_a), _decoded(c.vocab, c.hunk_b)
    if not ((covered_a and not covered_a.strip()) or (covered_b and not covered_b.strip())
            or _only_ws_differs(c.vocab, c.hunk_a, c.hunk_b)):
        return None
    return c.found("whitespace-runs", f"a run of whitespace is split differently: oracle {c.ids(c.hunk_a)} vs "
                                      f"backend {c.ids(c.hunk_b)}")


def pre_tokenizers_disagree(c: Context) -> Classification | None:
    """pre-tokenizer: both sides expose their pre-tokenizer and their splits differ."""
    if not c.same_text or not (c.a_stages and c.b_stages):
        return None
    pa, pb = c.a_stages.pre_tokens, c.b_stages.pre_tokens
    if pa is None or pb is None or pa == pb:
        return None
    return c.found("pre-tokenizer", "the pre-tokenizers already split the input differently")


def crosses_oracle_split(c: Context) -> Classification | None:
    """pre-tokenizer: a backend token crosses a boundary of the oracle's pre-tokenizer split (the
    oracle's split is enough: a ``cmd:`` engine exposes no stage of its own)."""
    if not c.same_text or not (c.a_stages and c.a_stages.pre_tokens is not None):
        return None
    spans = _pre_token_spans(c.a_stages.pre_tokens, c.dec_b)
    if spans is None:
        return None  # the pre-tokens are not a split of the same bytes (normalized, prefixed): no verdict
    boundaries = {end for _, end in spans[:-1]}
    offsets = byte_offsets(c.vocab, c.b)
    for k, i in enumerate(c.b):
        inside = [x for x in boundaries if offsets[k] < x < offsets[k + 1]]
        if inside:
            return c.found("pre-tokenizer", f"backend token {i} {c.piece(i)} crosses a boundary of the oracle's "
                                            f"pre-tokenizer split (at byte {min(inside)})")
    return None


def odd_code_point(c: Context) -> Classification | None:
    """unicode-categories: a BPE split differs at a code point whose class Unicode tables and
    regex engines disagree on (separators, format characters, unassigned, private use)."""
    if c.vocab.algorithm != "bpe" or not c.same_text:
        return None
    odd = [ch for ch in c.span_text if unicodedata.category(ch) in _ODD_CATEGORIES]
    if not odd:
        return None
    ch = odd[0]
    return c.found("unicode-categories", f"the split differs at U+{ord(ch):04X} ({unicodedata.category(ch)}, "
                                         f"{unicodedata.name(ch, 'unnamed')}), a separator, format, private-use or "
                                         f"unassigned code point: the kinds whose class (\\s, \\p{{L}}, \\p{{P}}) "
                                         f"Unicode tables and regex engines most often read differently")


def whole_word_lookup(c: Context) -> Classification | None:
    """ignore-merges: on a model that looks whole words up (Llama 3), every differing run is one
    token on one side that covers exactly the bytes of the other side's pieces, and that token is
    one whole pre-token of the oracle's split (a word, not a stretch across a boundary)."""
    if c.vocab.algorithm != "bpe" or not _ignores_merges(c.vocab) or not c.same_text:
        return None
    if not (c.a_stages and c.a_stages.pre_tokens is not None):
        return None  # without the oracle's split, a whole word cannot be told from a crossed boundary
    words = _pre_token_spans(c.a_stages.pre_tokens, c.dec_a)
    if words is None:
        return None
    offsets_a, offsets_b = byte_offsets(c.vocab, c.a), byte_offsets(c.vocab, c.b)
    first = None
    for (i1, i2), (j1, j2) in c.divergence.hunks:
        if (i2 - i1 == 1) == (j2 - j1 == 1) or i1 == i2 or j1 == j2:
            return None
        span_a, span_b = (offsets_a[i1], offsets_a[i2]), (offsets_b[j1], offsets_b[j2])
        if span_a != span_b or span_a not in words:
            return None
        if first is None:
            first = ("oracle", c.a[i1], j2 - j1) if i2 - i1 == 1 else ("backend", c.b[j1], i2 - i1)
    if first is None:
        return None
    side, whole, pieces = first
    other = "backend" if side == "oracle" else "oracle"
    word = token_bytes(c.vocab, whole).decode("utf-8", "replace")
    return c.found("ignore-merges", f"the {side} takes the whole word {whole} {c.piece(whole)} ({word!r}, one "
                                    f"pre-token of the oracle's split) from the vocabulary; the {other} spells the "
                                    f"same bytes with {pieces} pieces")


def other_segmentation(c: Context) -> Classification | None:
    """merge-order: the same text, other valid pieces in every differing run (no <unk> or other
    token that stands for no text: one against an empty run is not another segmentation)."""
    if not c.same_text:
        return None
    if not all(token_bytes(c.vocab, i) for i in [*c.hunk_a, *c.hunk_b]):
        return None
    return c.found("merge-order", f"same text {c.span_text!r}, other segmentation: oracle {c.ids(c.hunk_a)} vs "
                                  f"backend {c.ids(c.hunk_b)}; both are valid pieces (merge order or greedy "
                                  f"longest-match)")


def normalizers_disagree_beside_unk(c: Context) -> Classification | None:
    """normalization: the same decoded text, but a differing run holds a token that stands for no
    text (an <unk> that cannot be read off), and both sides expose normalizers that disagree."""
    if not c.same_text or not (c.a_stages and c.b_stages):
        return None
    na, nb = c.a_stages.normalized, c.b_stages.normalized
    if na is None or nb is None or na == nb:
        return None
    return c.found("normalization", f"the normalizers already disagree on this input; the tokens that differ stand "
                                    f"for no text on one side: oracle {c.ids(c.hunk_a)} vs backend {c.ids(c.hunk_b)}")


def no_rule_fits(c: Context) -> Classification:
    """unclassified: the same text, but a differing run holds a token that stands for no input
    (an <unk> whose characters cannot be read off, a control token) against other tokens."""
    return c.found("unclassified", f"the same decoded text, but a differing run holds tokens that stand for no "
                                   f"text: oracle {c.ids(c.hunk_a)} vs backend {c.ids(c.hunk_b)}")


# The table: most specific symptom first; the first rule that returns a Classification wins.
RULES: tuple[Rule, ...] = (
    backend_failed, ids_equal,
    foreign_vocabulary, ends_only, special_text_parsed, unk_text_parsed, control_token_inside,
    special_keeps_whitespace, space_after_special, whitespace_beside_special, leading_space,
    unk_per_run, bytes_on_one_side, unk_for_normalized_text, unk_for_dropped_whitespace, unk_for_dropped_text,
    added_token_inside_word, user_defined_piece,
    # the two sides tokenized different texts
    collapsed_whitespace, whitespace_text_stripped, unicode_normal_form, normalizers_disagree, other_text,
    # the same text, other tokens
    viterbi_tie, disputed_code_point, whitespace_run_split, pre_tokenizers_disagree, crosses_oracle_split,
    odd_code_point, whole_word_lookup, other_segmentation, normalizers_disagree_beside_unk, no_rule_fits,
)


def classify(text: str, a: Sequence[int], b: Sequence[int], vocab: Vocab, *,
             a_stages: Stages | None = None, b_stages: Stages | None = None,
             b_pieces: Sequence[str] | None = None,
             status: str = "ok", detail: str = "") -> Classification:
    """The class of the mismatch between ``a`` (oracle) and ``b`` (backend) on ``text``.

    ``b_pieces`` are the token texts the backend itself reports for ``b``: when they are not
    the vocabulary's, the two sides do not share a vocabulary and nothing else can be judged.
    """
    c = Context(text, a, b, vocab, a_stages, b_stages, b_pieces, status, detail)
    for rule in RULES:
        found = rule(c)
        if found is not None:
            return found
    raise AssertionError("no_rule_fits always answers")  # pragma: no cover


def rule_of(text: str, a: Sequence[int], b: Sequence[int], vocab: Vocab, **kw) -> str:
    """The name of the rule that decides ``classify(text, a, b, vocab, **kw)`` (for tests and
    for reading a class back to the rule that gave it)."""
    c = Context(text, a, b, vocab, **kw)
    return next(rule.__name__ for rule in RULES if rule(c) is not None)


# --- helpers -------------------------------------------------------------------------------------------------


def _piece(vocab: Vocab, i: int) -> str:
    return repr(vocab.tokens[i]) if 0 <= i < vocab.size else f"<id {i} out of range>"


def _ids(vocab: Vocab, ids: Sequence[int], limit: int = 8) -> str:
    shown = ", ".join(f"{i} {_piece(vocab, i)}" for i in ids[:limit])
    return f"[{shown}{', …' if len(ids) > limit else ''}]"


def _decoded(vocab: Vocab, ids: Sequence[int]) -> bytes:
    return b"".join(token_bytes(vocab, i) for i in ids)


def _types(vocab: Vocab, ids: Sequence[int]) -> list[TokenType]:
    out = []
    for i in ids:
        try:
            out.append(vocab.type_of(i) if 0 <= i < vocab.size else TokenType.UNDEFINED)
        except ValueError:
            out.append(TokenType.UNDEFINED)
    return out


def _strip_ends(ids: Sequence[int], ends: set[int]) -> list[int]:
    ids = list(ids)
    while ids and ids[0] in ends:
        ids.pop(0)
    while ids and ids[-1] in ends:
        ids.pop()
    return ids


def _ignores_merges(vocab: Vocab) -> bool:
    model = vocab.extra.get("model") or {}
    return bool(model.get("ignore_merges")) or vocab.pre_tokenizer in ("llama-bpe", "llama3", "llama-v3")


def _inside_word(text: str, piece: str) -> bool:
    """Whether ``piece`` occurs in ``text`` with a letter or digit right before and after it."""
    start = text.find(piece)
    while start >= 0:
        end = start + len(piece)
        if start > 0 and end < len(text) and text[start - 1].isalnum() and text[end].isalnum():
            return True
        start = text.find(piece, start + 1)
    return False


def _around(data: bytes, span: tuple[int, int], context: int = 8) -> str:
    return data[max(0, span[0] - context):span[1] + context].decode("utf-8", "replace")


def _spelled(data: bytes, span: tuple[int, int]) -> str:
    """The text around ``span`` and the code points of the span itself: two forms that look alike
    (``'café'`` with U+00E9, or with U+0065 U+0301) are told apart only by them."""
    part = data[span[0]:span[1]].decode("utf-8", "replace")
    return f"{_around(data, span)!r} ({' '.join(f'U+{ord(ch):04X}' for ch in part[:12])}{' …' if len(part) > 12 else ''})"


def _first_diff(x: bytes, y: bytes) -> int:
    for k, (p, q) in enumerate(zip(x, y)):
        if p != q:
            return k
    return min(len(x), len(y))


def _only_ws_differs(vocab: Vocab, hunk_a: list[int], hunk_b: list[int]) -> bool:
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


def _pre_token_spans(pre_tokens: list[str], decoded: bytes) -> list[tuple[int, int]] | None:
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


def _segments(vocab: Vocab, a: Sequence[int], b: Sequence[int], d: Divergence) -> list[Segment]:
    """The stretches between the tokens both sides share. An <unk> matched with an <unk> is not
    shared: it stands for characters that may differ, and a run of them must stay whole."""
    anchors = [(-1, -1)]
    for tag, i1, i2, j1, j2 in d.opcodes:
        if tag == "equal":
            anchors += [(i1 + k, j1 + k) for k in range(i2 - i1) if _types(vocab, [a[i1 + k]])[0] != TokenType.UNKNOWN]
    anchors.append((len(a), len(b)))
    out = []
    for (pi, pj), (ni, nj) in zip(anchors, anchors[1:]):
        seg_a, seg_b = list(a[pi + 1:ni]), list(b[pj + 1:nj])
        if seg_a != seg_b:
            out.append(Segment(seg_a, seg_b, pi + 1, pj + 1, a[pi] if pi >= 0 else None, a[ni] if ni < len(a) else None))
    return out


def _between(vocab: Vocab, seg: Segment) -> str:
    before = f"after {_piece(vocab, seg.before)}" if seg.before is not None else "at the start"
    after = f"before {_piece(vocab, seg.after)}" if seg.after is not None else "at the end"
    return f"{before}, {after}"


def _show(text: str, width: int = 24) -> str:
    """``repr(text)`` with combining marks escaped as well (a lone U+0301 would show as nothing),
    cut after ``width`` characters."""
    shown = "".join(f"\\u{ord(ch):04x}" if unicodedata.category(ch).startswith("M") else repr(ch)[1:-1]
                    for ch in text[:width])
    return f"'{shown}'" + ("…" if len(text) > width else "")


def _quoted(texts: list[str], limit: int = 3) -> str:
    return " and ".join(_show(t) for t in texts[:limit]) + (" and more" if len(texts) > limit else "")


def _nfkc_changes(text: str) -> list[tuple[str, str]]:
    """The characters of ``text`` NFKC rewrites, with what it makes of them (the whole text when
    only a sequence changes, e.g. a letter and a combining mark)."""
    changes = [(ch, unicodedata.normalize("NFKC", ch)) for ch in dict.fromkeys(text)]
    changes = [(ch, to) for ch, to in changes if ch != to]
    if not changes and unicodedata.normalize("NFKC", text) != text:
        changes = [(text, unicodedata.normalize("NFKC", text))]
    return changes


def _unk_runs(text: str, vocab: Vocab, ids: Sequence[int]) -> dict[int, bytes] | None:
    """Each run of <unk> in ``ids``: the index of its first token -> the input bytes it stands for,
    read off the pieces around it: the pieces must spell the input in order, and a run covers
    what lies between them. SentencePiece's own liberties are allowed: the dummy-prefix space,
    a '▁' for a run of spaces (remove_extra_whitespaces) and whitespace stripped at the end.
    ``None`` when no such reading exists (a normalizer rewrote the text)."""
    data = text.encode("utf-8", "surrogatepass")
    types = _types(vocab, ids)
    kept = [k for k, t in enumerate(types) if t != TokenType.CONTROL]
    pieces = {k: token_bytes(vocab, ids[k]) for k in kept if types[k] != TokenType.UNKNOWN}
    if any(not piece for piece in pieces.values()):
        return None  # a token that stands for nothing and is no <unk>: no reading

    marks = vocab.algorithm in ("spm", "ugm")  # a '▁' piece may stand for a literal '▁' of the input

    def fit(piece: bytes, p: int) -> int | None:
        """Where ``piece`` ends if it is spelled verbatim at ``p``."""
        for k, part in enumerate(piece.split(b" ") if marks else [piece]):
            if k:
                if data.startswith(b" ", p):
                    p += 1
                elif data.startswith(_MARK, p):
                    p += len(_MARK)
                else:
                    return None
            if not data.startswith(part, p):
                return None
            p += len(part)
        return p

    def ends(piece: bytes, p: int) -> list[int]:
        """Where ``piece`` can end if it starts at ``p``."""
        out = [end] if (end := fit(piece, p)) is not None else []
        if piece[:1] == b" ":
            rest = piece[1:]
            if p == 0 and (end := fit(rest, 0)) is not None:
                out.append(end)  # the dummy prefix
            r = p
            while data[r:r + 1] == b" ":
                r += 1
            if r - p > 1 and (end := fit(rest, r)) is not None:
                out.append(end)  # one '▁' for a run of spaces
        return out

    # Breadth-first over the tokens: the text positions each token can start at, with how it got
    # there (the previous state and, after a run of <unk>, the run's first token and start).
    states: dict[int, tuple | None] = {0: None}
    k = 0
    while k < len(kept):
        if types[kept[k]] == TokenType.UNKNOWN:
            run_end = k
            while run_end < len(kept) and types[kept[run_end]] == TokenType.UNKNOWN:
                run_end += 1
            after: dict[int, tuple | None] = {}
            if run_end == len(kept):  # the run ends the text: it stands for the rest
                for p in states:
                    if p < len(data):
                        after.setdefault(len(data), (p, states[p], kept[k], p, len(data)))
            else:
                # The run ends where the next piece first fits: an unknown character is never
                # the start of a piece (else it would not be unknown).
                piece = pieces[kept[run_end]]
                for p in states:
                    q = next((q for q in range(p + 1, len(data)) if ends(piece, q)), None)
                    for end in ends(piece, q) if q is not None else ():
                        after.setdefault(end, (p, states[p], kept[k], p, q))
                run_end += 1
            states, k = after, run_end
        else:
            piece = pieces[kept[k]]
            states = {end: (p, states[p], None) for p in states for end in ends(piece, p)}
            k += 1
        if not states:
            return None
        if len(states) > 64:
            return None  # too many readings to trust any
    finals = [p for p in states if not data[p:].strip()]
    if len(finals) != 1:
        return None
    runs: dict[int, bytes] = {}
    link = states[finals[0]]
    while link is not None:
        if len(link) == 5:
            _, previous, first, start, stop = link
            runs[first] = data[start:stop]
        else:
            _, previous, _ = link
        link = previous
    return dict(sorted(runs.items()))


_PIPELINES: dict[int, tuple[weakref.ref, object]] = {}


def _unigram_pipeline(vocab: Vocab):
    """The reference pipeline of a unigram vocabulary (its model's piece scores), made once per
    vocabulary; ``None`` when the reference has none for it."""
    held = _PIPELINES.get(id(vocab))
    if held is not None and held[0]() is vocab:
        return held[1]
    from tokparity.reference import RefTokenizer
    try:
        pipeline = RefTokenizer(vocab).pipeline
    except TokparityError:
        pipeline = None
    if len(_PIPELINES) > 8:
        _PIPELINES.clear()
    _PIPELINES[id(vocab)] = (weakref.ref(vocab), pipeline)
    return pipeline
