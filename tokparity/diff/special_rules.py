"""The rules of ``tokparity.diff.classify.RULES`` about the vocabulary and special tokens: the
two sides do not share a vocabulary, differ only at the ends, or read special-token text, a
control token or the whitespace beside a special token differently."""

from __future__ import annotations

import re

from tokparity.diff.context import Classification, Context
from tokparity.diff.evidence import decoded_bytes, quoted, types_of, without_ends
from tokparity.vocab.model import TokenType


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
    if without_ends(c.a, c.end_ids) != without_ends(c.b, c.end_ids):
        return None
    extra_a = [i for i in c.a if i in c.end_ids]
    extra_b = [i for i in c.b if i in c.end_ids]
    return c.found("bos-eos", f"ids differ only at the ends by special ids: oracle has {c.ids(extra_a)}, "
                              f"backend has {c.ids(extra_b)}")


def special_text_parsed(c: Context) -> Classification | None:
    """special-parsing: the input spells a special token and one side parsed it as one."""
    for cid, special_text in c.vocab.control_texts_in(c.text):
        if c.a.count(cid) != c.b.count(cid):
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
                                                      f"the {side} writes <unk> for {quoted([run.decode()])}, that "
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
    if i1 > 0 and j1 > 0 and c.a[i1 - 1] == c.b[j1 - 1] and types_of(c.vocab, [c.a[i1 - 1]])[0] == TokenType.CONTROL:
        return decoded_bytes(c.vocab, c.a[i1:]), decoded_bytes(c.vocab, c.b[j1:]), c.a[i1 - 1]
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
