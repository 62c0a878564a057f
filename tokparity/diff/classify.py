"""Name the bug class of one mismatch, with the evidence that decided it.

Each mismatch gets exactly one class from ``shared/BUGCLASSES.md``. The rules run from the most
specific symptom to the most general and the first that holds wins; ``unclassified`` is the
honest default, because a wrong name sends a user down the wrong road.

The inputs are the two id lists (``a`` the oracle's, ``b`` the backend's), the input text and
the vocabulary both sides share; optionally what each side's normalizer and pre-tokenizer made
of the text, when the backends expose those stages.

    >>> classify("Hello world", [15043, 3186], [10994, 3186], llama_spm_vocab).cls
    'space-prefix'
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from tokparity.diff import unicode_tables
from tokparity.diff.align import Divergence, add_byte_spans, align
from tokparity.vocab.model import TokenType, Vocab
from tokparity.vocab.token_bytes import token_bytes

CLASSES = (
    "merge-order", "space-prefix", "space-after-special", "whitespace-runs", "byte-fallback", "unk-merge",
    "normalization", "whitespace-collapse", "pre-tokenizer", "unicode-categories", "ignore-merges",
    "special-parsing", "special-strip", "bos-eos", "user-defined", "added-token-priority", "decode-roundtrip",
    "decode-cleanup", "vocab-mismatch", "special-ids", "crash", "timeout", "unclassified",
)

_WS = re.compile(rb"\s+")
# Code points whose category split tables disagree on (line/paragraph separators, format
# characters, unassigned and private-use code points, NEL): a divergence there is about tables.
_ODD_CATEGORIES = {"Zl", "Zp", "Cf", "Cn", "Co", "Cs"}


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


def classify(text: str, a: Sequence[int], b: Sequence[int], vocab: Vocab, *,
             a_stages: Stages | None = None, b_stages: Stages | None = None,
             b_pieces: Sequence[str] | None = None,
             status: str = "ok", detail: str = "") -> Classification:
    """The class of the mismatch between ``a`` (oracle) and ``b`` (backend) on ``text``.

    ``b_pieces`` are the token texts the backend itself reports for ``b``: when they are not
    the vocabulary's, the two sides do not share a vocabulary and nothing else can be judged.
    """
    if status in ("crash", "timeout"):
        return Classification(status, detail or f"the backend {'died' if status == 'crash' else 'hung'} on this input")
    d = add_byte_spans(align(a, b), vocab, a, b)
    if d.equal:
        return Classification("unclassified", "the ids are equal", d)

    def found(cls: str, evidence: str) -> Classification:
        return Classification(cls, evidence, d)

    # --- not the same vocabulary: the backend's own pieces are not ours ----------------------------
    if b_pieces is not None:
        for i, piece in zip(b, b_pieces):
            if 0 <= i < vocab.size and piece != vocab.tokens[i] and vocab.type_of(i) == TokenType.NORMAL:
                return found("vocab-mismatch", f"the backend calls id {i} {piece!r} where the oracle's vocabulary "
                                               f"holds {vocab.tokens[i]!r}: they do not share a vocabulary")

    # --- BOS / EOS: the ids differ only by specials at the ends -----------------------------------
    end_ids = {vocab.special_ids[r] for r in ("bos", "eos", "cls", "sep", "eot") if r in vocab.special_ids}
    if _strip_ends(a, end_ids) == _strip_ends(b, end_ids):
        extra_a = [i for i in a if i in end_ids]
        extra_b = [i for i in b if i in end_ids]
        return found("bos-eos", f"ids differ only at the ends by special ids: oracle has {_ids(vocab, extra_a)}, "
                                f"backend has {_ids(vocab, extra_b)}")

    assert d.first is not None and d.last is not None and d.a_span is not None and d.b_span is not None  # a != b
    (i1, j1), (i2, j2) = d.first, d.last
    hunk_a, hunk_b = list(a[i1:i2]), list(b[j1:j2])
    types_a, types_b = _types(vocab, hunk_a), _types(vocab, hunk_b)
    text_bytes = text.encode("utf-8", "surrogatepass")
    dec_a, dec_b = _decoded(vocab, a), _decoded(vocab, b)

    # --- special tokens: parsed on one side only ---------------------------------------------------
    for cid, special_text in vocab.control_texts():
        if special_text in text and a.count(cid) != b.count(cid):
            return found("special-parsing", f"the input holds the special token text {vocab.tokens[cid]!r}; oracle "
                                            f"has id {cid} {a.count(cid)}×, backend {b.count(cid)}× (parse_special?)")

    # --- a control token in the middle of the text that the input does not spell -------------------
    # (one at either end is a BOS/EOS, judged above, unless it stands where the other side has <unk>)
    for side, ids, (lo, hi), other_types in (("backend", b, (j1, j2), types_a), ("oracle", a, (i1, i2), types_b)):
        for k in range(lo, hi):
            i = ids[k]
            if not (0 <= i < vocab.size and vocab.type_of(i) == TokenType.CONTROL and vocab.tokens[i] not in text):
                continue
            if k in (0, len(ids) - 1) and TokenType.UNKNOWN not in other_types:
                continue
            what = ("<unk>" if TokenType.UNKNOWN in other_types
                    else "nothing (its normalizer dropped the text)" if not other_types else "ordinary pieces")
            return found("special-ids", f"the {side} emits control token {i} {_piece(vocab, i)} inside the text, "
                                        f"where the other side has {what}: a special id (unk, bos, eos, pad) "
                                        f"points at another token on that side")

    # --- the first differing token follows a special token on both sides -------------------------
    if i1 > 0 and j1 > 0 and a[i1 - 1] == b[j1 - 1] and _types(vocab, [a[i1 - 1]])[0] == TokenType.CONTROL:
        rest_a, rest_b = _decoded(vocab, a[i1:]), _decoded(vocab, b[j1:])
        if rest_a == b" " + rest_b or rest_b == b" " + rest_a:
            with_space = "backend" if rest_b == b" " + rest_a else "oracle"
            without = "oracle" if with_space == "backend" else "backend"
            special = vocab.tokens[a[i1 - 1]]
            if re.search(re.escape(special) + r"[ \t]", text):
                # The input has whitespace after the special token: one side strips it (rstrip), the
                # other keeps it as one more '▁' (Phi-3's <|end|>, llama.cpp PR #7375).
                return found("special-strip", f"the input has whitespace after special {_piece(vocab, a[i1 - 1])}: "
                                              f"the {without} strips it (rstrip), the {with_space} keeps it as one more "
                                              f"'▁': oracle {_ids(vocab, hunk_a)} vs backend {_ids(vocab, hunk_b)}")
            return found("space-after-special", f"right after special {_piece(vocab, a[i1 - 1])} the {with_space} adds "
                                                f"a '▁': oracle {_ids(vocab, hunk_a)} vs backend {_ids(vocab, hunk_b)}")
        if rest_a.strip() == rest_b.strip() and rest_a != rest_b:
            return found("special-strip", f"whitespace next to special {_piece(vocab, a[i1 - 1])} differs: "
                                          f"oracle {_ids(vocab, hunk_a)} vs backend {_ids(vocab, hunk_b)}")

    # --- a leading ▁ too many or too few ------------------------------------------------------------
    lead_a, lead_b = _strip_ends(a, end_ids), _strip_ends(b, end_ids)
    if lead_a and lead_b and lead_a[0] != lead_b[0]:
        da, db = _decoded(vocab, lead_a), _decoded(vocab, lead_b)
        if da == b" " + db or db == b" " + da:
            more = "oracle" if da.startswith(b" ") and not db.startswith(b" ") or len(da) > len(db) else "backend"
            flag = vocab.flags.add_space_prefix
            said = ("unset in the file (llama.cpp then adds the prefix for SPM and UGM vocabularies)"
                    if flag is None else str(flag).lower())
            return found("space-prefix", f"the {more} starts with one more space: oracle {_ids(vocab, lead_a[:2])} vs "
                                         f"backend {_ids(vocab, lead_b[:2])}; the vocabulary's add_space_prefix is "
                                         f"{said}")

    # --- bytes on one side, <unk> or pieces on the other --------------------------------------------
    unk_a, unk_b = types_a.count(TokenType.UNKNOWN), types_b.count(TokenType.UNKNOWN)
    bytes_a, bytes_b = types_a.count(TokenType.BYTE), types_b.count(TokenType.BYTE)
    # An <unk> stands for no bytes, so an extra one may sit in an insert hunk of its own: count
    # them over the whole lists once a hunk holds one.
    if (unk_a or unk_b) and not bytes_a and not bytes_b:
        unk_a, unk_b = _types(vocab, a).count(TokenType.UNKNOWN), _types(vocab, b).count(TokenType.UNKNOWN)
    if unk_a and unk_b and unk_a != unk_b and not bytes_a and not bytes_b:
        return found("unk-merge", f"the same span holds {unk_a} <unk> on the oracle's side and {unk_b} on the "
                                  f"backend's: one <unk> per run vs one per character")
    if (bytes_a and not bytes_b) or (bytes_b and not bytes_a):
        side, other = ("oracle", "backend") if bytes_a else ("backend", "oracle")
        other_unk = unk_b if bytes_a else unk_a
        what = f"{other_unk} <unk>" if other_unk else "pieces"
        return found("byte-fallback", f"the {side} has byte tokens where the {other} has {what}: "
                                      f"oracle {_ids(vocab, hunk_a)} vs backend {_ids(vocab, hunk_b)}")

    # --- user-defined pieces matched atomically on one side ------------------------------------------
    if vocab.token_types is not None:
        for i in set(hunk_a) ^ set(hunk_b):
            if 0 <= i < vocab.size and vocab.token_types[i] == TokenType.USER_DEFINED and vocab.tokens[i] in text:
                side = "oracle" if i in hunk_a else "backend"
                piece = vocab.tokens[i]
                if _inside_word(text, piece):
                    return found("added-token-priority", f"added token {i} {_piece(vocab, i)} sits inside a word of "
                                                         f"the input and only the {side} let it beat the model's pieces")
                return found("user-defined", f"user-defined piece {i} {_piece(vocab, i)} is in the input and only "
                                             f"the {side} matched it whole")

    # --- the two sides do not decode to the same text ---------------------------------------------
    if dec_a != dec_b:
        if _WS.sub(b" ", dec_a).strip() == _WS.sub(b" ", dec_b).strip() and dec_a.strip() and dec_b.strip():
            return found("whitespace-collapse", "the decoded texts differ only in runs of whitespace: one side "
                                                "collapses or strips spaces (remove_extra_whitespaces)")
        if not dec_a.strip() and not dec_b.strip() and (not dec_a or not dec_b):
            # The whole text is whitespace (or ▁, which SentencePiece cannot tell from an escaped
            # space) and one side strips all of it.
            side = "oracle" if not dec_a else "backend"
            return found("whitespace-collapse", f"the text is only whitespace and the {side} strips all of it: "
                                                f"oracle {_ids(vocab, hunk_a)} vs backend {_ids(vocab, hunk_b)}")
        sa: str | None
        sb: str | None
        try:
            sa, sb = dec_a.decode("utf-8"), dec_b.decode("utf-8")
        except UnicodeDecodeError:
            sa = sb = None
        if sa is not None and sb is not None and any(unicodedata.normalize(f, sa) == unicodedata.normalize(f, sb)
                                  for f in ("NFKC", "NFC", "NFKD", "NFD")):
            return found("normalization", f"the decoded texts differ but are equal after Unicode normalization: "
                                          f"oracle {_around(dec_a, d.a_span)!r} vs backend {_around(dec_b, d.b_span)!r}")
        if a_stages and b_stages and a_stages.normalized is not None and b_stages.normalized is not None \
                and a_stages.normalized != b_stages.normalized:
            return found("normalization", "the normalizers already disagree on this input")
        return found("unclassified", f"the decoded texts differ from byte {_first_diff(dec_a, dec_b)}: oracle "
                                     f"{_ids(vocab, hunk_a)} vs backend {_ids(vocab, hunk_b)}")

    # --- an equivalent split: same text, other tokens ---------------------------------------------
    span = text_bytes[d.a_span[0]:d.a_span[1]] if d.a_span[1] <= len(text_bytes) else dec_a[d.a_span[0]:d.a_span[1]]
    covered_a, covered_b = _decoded(vocab, hunk_a), _decoded(vocab, hunk_b)
    if vocab.algorithm in ("bpe", "wpm") and d.a_span[1] <= len(text_bytes):
        # Before any other reading of the split: a code point the Unicode tables disagree on
        # next to the divergence explains it (one side's \p{N} is the other's unassigned).
        for ch in unicode_tables.chars_around(text, d.a_span):
            if (dispute := unicode_tables.disputed(ch)) is not None:
                return found("unicode-categories", f"the split differs at {dispute}: the two sides' regex "
                                                   f"engines read its class from different Unicode tables")
    if (covered_a and not covered_a.strip()) or (covered_b and not covered_b.strip()) \
            or _only_ws_differs(vocab, hunk_a, hunk_b):
        return found("whitespace-runs", f"a run of whitespace is split differently: oracle {_ids(vocab, hunk_a)} vs "
                                        f"backend {_ids(vocab, hunk_b)}")
    if a_stages and b_stages and a_stages.pre_tokens is not None and b_stages.pre_tokens is not None \
            and a_stages.pre_tokens != b_stages.pre_tokens:
        return found("pre-tokenizer", "the pre-tokenizers already split the input differently")
    if a_stages and a_stages.pre_tokens is not None:
        crossing = _crosses_boundary(vocab, b, a_stages.pre_tokens, dec_b)
        if crossing is not None:
            return found("pre-tokenizer", f"backend token {crossing} {_piece(vocab, crossing)} crosses a boundary of "
                                          f"the oracle's pre-tokenizer split")
    odd = [ch for ch in span.decode("utf-8", "replace") if unicodedata.category(ch) in _ODD_CATEGORIES]
    if vocab.algorithm == "bpe" and odd:
        ch = odd[0]
        return found("unicode-categories", f"the split differs at U+{ord(ch):04X} ({unicodedata.category(ch)}, "
                                           f"{unicodedata.name(ch, 'unnamed')}), a code point whose class (\\s, \\p{{L}}, "
                                           f"\\p{{P}}) Unicode tables and regex engines disagree on")
    if vocab.algorithm == "bpe" and _ignores_merges(vocab):
        # every differing run is one whole-word token on one side and its pieces on the other
        singles = [(ha, hb) for (ha, hb) in d.hunks if (ha[1] - ha[0] == 1) != (hb[1] - hb[0] == 1)]
        if singles and len(singles) == len(d.hunks):
            (ha, hb) = singles[0]
            side, whole = ("oracle", a[ha[0]]) if ha[1] - ha[0] == 1 else ("backend", b[hb[0]])
            pieces = max(ha[1] - ha[0], hb[1] - hb[0])
            return found("ignore-merges", f"the {side} takes the whole word {whole} {_piece(vocab, whole)} from the "
                                          f"vocabulary; the other side merges it from {pieces} pieces")
    return found("merge-order", f"same text {span.decode('utf-8', 'replace')!r}, other segmentation: oracle "
                                f"{_ids(vocab, hunk_a)} vs backend {_ids(vocab, hunk_b)}; both are valid pieces "
                                f"(merge order or greedy longest-match)")


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
    ws = b" \t\n\r\x0b\x0c"
    return bool(moved) and all((0 < p <= len(data) and data[p - 1] in ws) or (p < len(data) and data[p] in ws)
                               for p in moved)


def _crosses_boundary(vocab: Vocab, ids: Sequence[int], pre_tokens: list[str], decoded: bytes) -> int | None:
    """The first token of ``ids`` that spans a boundary between two of ``pre_tokens``."""
    boundaries, pos = set(), 0
    for piece in pre_tokens:
        pos += len(piece.encode("utf-8", "surrogatepass"))
        boundaries.add(pos)
    if pos != len(decoded):
        return None  # the pre-tokens are not a split of the same bytes (normalized, prefixed): no verdict
    start = 0
    for i in ids:
        end = start + len(token_bytes(vocab, i))
        if any(start < bnd < end for bnd in boundaries):
            return i
        start = end
    return None
