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
from collections.abc import Sequence

from tokparity.diff import unicode_tables
from tokparity.diff.align import byte_offsets
from tokparity.diff.context import Classification, Context, Rule, Stages, only_unks
from tokparity.diff.evidence import (
    between_shared,
    decoded_bytes,
    first_difference,
    ignores_merges,
    inside_word,
    nfkc_changes,
    only_whitespace_differs,
    pre_token_spans,
    shown_text,
    spelled_span,
    types_of,
    without_ends,
)
from tokparity.diff.explain import class_names
from tokparity.diff.special_rules import (
    control_token_inside,
    ends_only,
    foreign_vocabulary,
    space_after_special,
    special_keeps_whitespace,
    special_text_parsed,
    unk_text_parsed,
    whitespace_beside_special,
)
from tokparity.diff.unk_runs import unigram_pipeline
from tokparity.vocab.model import TokenType, Vocab
from tokparity.vocab.token_bytes import token_bytes

# Every class of the catalogue, in the order classes.toml (the one list, with what each means) gives.
CLASSES = tuple(class_names())

_WS = re.compile(rb"\s+")
# Code points whose category split tables disagree on (line/paragraph separators, format
# characters, unassigned and private-use code points): the kinds split tables most often disagree on.
_ODD_CATEGORIES = {"Zl", "Zp", "Cf", "Cn", "Co", "Cs"}


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


# --- the start of the text ---------------------------------------------------------------------------------


def leading_space(c: Context) -> Classification | None:
    """space-prefix: one side starts with one more space (the dummy prefix)."""
    lead_a, lead_b = without_ends(c.a, c.end_ids), without_ends(c.b, c.end_ids)
    if not (lead_a and lead_b and lead_a[0] != lead_b[0]):
        return None
    da, db = decoded_bytes(c.vocab, lead_a), decoded_bytes(c.vocab, lead_b)
    if not (da == b" " + db or db == b" " + da):
        return None
    more = "oracle" if da.startswith(b" ") and not db.startswith(b" ") or len(da) > len(db) else "backend"
    flag = c.vocab.flags.add_space_prefix
    said = ("unset in the file (llama.cpp then adds the prefix for SPM and UGM vocabularies)"
            if flag is None else str(flag).lower())
    # A byte-level space (Ġ) is text, not a dummy prefix: there the flag is named only where the file
    # sets it. A SentencePiece-style space (▁, or the byte piece <0x20>) may be the prefix.
    byte_level = any("\u0120" in c.vocab.tokens[i] for i in (lead_a[0], lead_b[0]) if 0 <= i < len(c.vocab.tokens))
    flag_said = f"; the vocabulary's add_space_prefix is {said}" if not byte_level or flag else ""
    return c.found("space-prefix", f"the {more} starts with one more space: oracle {c.ids(lead_a[:2])} vs "
                                   f"backend {c.ids(lead_b[:2])}{flag_said}")


# --- <unk> and byte tokens -----------------------------------------------------------------------------------


def unk_per_run(c: Context) -> Classification | None:
    """unk-merge: the same span (between the same shared tokens) holds one <unk> on one side and
    several, and nothing else, on the other."""
    for seg in c.segments:
        if not (only_unks(c.vocab, seg.a) and only_unks(c.vocab, seg.b)) or len(seg.a) == len(seg.b):
            continue
        if 1 not in (len(seg.a), len(seg.b)):
            continue
        one, many = ("oracle", "backend") if len(seg.a) == 1 else ("backend", "oracle")
        return c.found("unk-merge", f"the same span ({between_shared(c.vocab, seg)}) holds {len(seg.a)} <unk> on the "
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


def unk_for_normalized_text(c: Context) -> Classification | None:
    """normalization: an <unk> stands for characters NFKC rewrites, and the other side has what
    NFKC makes of them: characters only the NFKC form holds, or nothing where NFKC makes
    whitespace (a normalizer on one side only)."""
    for u in c.unk_stretches:
        text = u.covered.decode("utf-8", "replace")
        nfkc = unicodedata.normalize("NFKC", text)
        if nfkc == text:
            continue
        changed = nfkc_changes(text.strip(" ")) or nfkc_changes(text)  # shown without the dummy prefix
        said = ", ".join(f"{shown_text(ch)} to {shown_text(to)}" for ch, to in changed[:3]) + (", …" if len(changed) > 3 else "")
        theirs = decoded_bytes(c.vocab, u.theirs).decode("utf-8", "replace")
        only_nfkc = "".join(ch for ch in dict.fromkeys(theirs) if ch not in text and ch in nfkc)
        if only_nfkc:
            return c.found("normalization", f"{u.where(c)}; NFKC changes {said}, and the {u.other}'s pieces there "
                                            f"spell {shown_text(only_nfkc)}, which only the NFKC form holds: one side "
                                            f"normalizes these characters, the other does not")
        if not theirs.strip() and not nfkc.strip():
            return c.found("normalization", f"{u.where(c)}; NFKC changes {said}, whitespace that the {u.other} "
                                            f"strips: one side normalizes these characters, the other does not")
        if TokenType.UNKNOWN in types_of(c.vocab, u.theirs) and not theirs.strip():
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
        kept = decoded_bytes(c.vocab, u.theirs)
        if TokenType.UNKNOWN in types_of(c.vocab, u.theirs):
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
        kept = decoded_bytes(c.vocab, u.theirs)
        if TokenType.UNKNOWN in types_of(c.vocab, u.theirs):
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
    if hit is None or not inside_word(c.text, c.vocab.tokens[hit[0]]):
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
                                    f"oracle {spelled_span(c.dec_a, d.a_span)} vs backend {spelled_span(c.dec_b, d.b_span)}")


def normalizers_disagree(c: Context) -> Classification | None:
    """normalization: both sides expose their normalizer and its outputs differ."""
    if c.same_text or not (c.a_stages and c.b_stages):
        return None
    na, nb = c.a_stages.normalized, c.b_stages.normalized
    if na is None or nb is None or na == nb:
        return None
    return c.found("normalization", "the normalizers already disagree on this input")


def cut_short(c: Context) -> Classification | None:
    """ids-cut-short: the backend gives the oracle's first ids and stops, and what it leaves out
    is more than special tokens at the end (bos-eos says those). Not where the backend ends with an
    <unk>: that one may stand for the rest of the text (two unknown words read as one)."""
    n = len(c.b)
    if c.same_text or not 0 < n < len(c.a) or list(c.a[:n]) != list(c.b) or all(i in c.end_ids for i in c.a[n:]) \
            or c.vocab.type_of(c.b[-1]) == TokenType.UNKNOWN:
        return None
    return c.found("ids-cut-short", f"the backend gives the oracle's first {n} of {len(c.a)} ids and stops: "
                                    f"oracle goes on with {c.ids(c.a[n:], 3)}")


def other_text(c: Context) -> Classification | None:
    """unclassified: the decoded texts differ in a way no rule above names."""
    if c.same_text:
        return None
    return c.found("unclassified", f"the decoded texts differ from byte {first_difference(c.dec_a, c.dec_b)}: oracle "
                                   f"{c.ids(c.hunk_a)} vs backend {c.ids(c.hunk_b)}")


# --- the same text, other tokens -------------------------------------------------------------------------------


def viterbi_tie(c: Context) -> Classification | None:
    """viterbi-tie: a unigram model, the same text, and the two segmentations score exactly the
    same (ties.py: the same check as the cause ``model.viterbi-tie``'s)."""
    if c.vocab.algorithm != "ugm" or not c.same_text:
        return None
    pipeline = unigram_pipeline(c.vocab)
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
    covered_a, covered_b = decoded_bytes(c.vocab, c.hunk_a), decoded_bytes(c.vocab, c.hunk_b)
    if not ((covered_a and not covered_a.strip()) or (covered_b and not covered_b.strip())
            or only_whitespace_differs(c.vocab, c.hunk_a, c.hunk_b)):
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
    spans = pre_token_spans(c.a_stages.pre_tokens, c.dec_b)
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
    if c.vocab.algorithm != "bpe" or not ignores_merges(c.vocab) or not c.same_text:
        return None
    if not (c.a_stages and c.a_stages.pre_tokens is not None):
        return None  # without the oracle's split, a whole word cannot be told from a crossed boundary
    words = pre_token_spans(c.a_stages.pre_tokens, c.dec_a)
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
    collapsed_whitespace, whitespace_text_stripped, unicode_normal_form, normalizers_disagree, cut_short,
    other_text,
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


