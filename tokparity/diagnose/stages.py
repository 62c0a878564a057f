"""What can be proven about a mismatch when no variant reproduces it (ties: tokparity.diff.ties).

``stage_level``: the stage at which the two sides are proven to differ, when no named variant
reproduces the backend's ids (``stage.other``):

* the input bytes the two sides' tokens stand for differ: the text was normalized differently
  (``normalizer.other``), or differs only in whitespace (``whitespace.other``);
* the same bytes, and a backend token crosses a boundary of the reference's pre-tokenizer
  split: the split differs (``pretokenizer.other``);
* the same bytes, every boundary respected, and the backend cuts a pre-token where a split
  regex can cut (not inside a run of letters) and the model's own merges on that finer split
  give the backend's ids: the split differs (``pretokenizer.other``, an engine that splits more
  than the model, such as one that no longer takes a tab into the word after it);
* the same bytes, every boundary respected otherwise: the segmentation alone differs
  (``model.other``).
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Sequence

from tokparity.diagnose.cause import Cause
from tokparity.diff.ties import text_ids
from tokparity.reference.hf import HfBpe
from tokparity.reference.llama import LlamaBpe
from tokparity.vocab.model import TokenType, Vocab
from tokparity.vocab.token_bytes import byte_to_unicode, gpt2_unicode_to_byte, token_bytes

_WS = re.compile(rb"\s+")


def _inner_controls(vocab: Vocab, ids: Sequence[int]) -> list[int]:
    return [i for i in ids[1:-1] if vocab.type_of(i) == TokenType.CONTROL]


def _decoded(vocab: Vocab, ids: Sequence[int]) -> bytes:
    return b"".join(token_bytes(vocab, i) for i in ids)


def stage_level(pipeline, vocab: Vocab, text: str, oracle: list[int], target: list[int]):
    a, b = text_ids(vocab, oracle), text_ids(vocab, target)
    if any(vocab.type_of(i) == TokenType.UNKNOWN for i in a + b):
        return None  # an <unk> hides the text it stands for: no comparison of texts
    if _inner_controls(vocab, oracle) != _inner_controls(vocab, target):
        return None  # a control token stands for text on one side (parsed, or a misplaced unk id)
    if any(vocab.type_of(i) == TokenType.USER_DEFINED for i in set(oracle) ^ set(target)):
        return None  # a piece matched whole on one side only: the texts cannot tell which stage
    da, db = _decoded(vocab, a), _decoded(vocab, b)
    if da != db:
        if _WS.sub(b"", da) == _WS.sub(b"", db):
            return Cause("whitespace.other", "the two sides tokenized texts that differ only in whitespace, "
                                             "and no named variant reproduces how")
        return Cause("normalizer.other", f"the two sides' ids spell different texts: {_text_diff(da, db)}; the text "
                                         "was changed before it was split (or pieces stand for the ids of other "
                                         "text), and no named variant reproduces how")
    boundaries = _word_boundaries(pipeline, text, len(da))
    if boundaries:
        pos = 0
        for i in b:
            end = pos + len(token_bytes(vocab, i))
            inside = [x for x in boundaries if pos < x < end]
            if inside:
                return Cause("pretokenizer.other", f"backend token {i} {vocab.tokens[i]!r} crosses a boundary of "
                                                   f"the reference's pre-tokenizer split (at byte {inside[0]}): "
                                                   "the backend splits the text differently before merging")
            pos = end
        finer = _finer_split(pipeline, vocab, text, a, b, da)
        if finer is not None:
            return Cause("pretokenizer.other", finer)
    return Cause("model.other", "the two sides tokenized the same text, with every pre-tokenizer boundary kept, "
                                "into different pieces; no named variant of the model stage reproduces it")


def _token_ends(vocab: Vocab, ids: Sequence[int]) -> set[int]:
    out, pos = set(), 0
    for i in ids:
        pos += len(token_bytes(vocab, i))
        out.add(pos)
    return out


def _wordlike(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LM"


def _finer_split(pipeline, vocab: Vocab, text: str, a: list[int], b: list[int], decoded: bytes) -> str | None:
    """Evidence that the backend pre-tokenizes more finely than the model, or None.

    The backend's tokens end at some points inside the oracle's tokens. Those a split regex could
    have made (every regex of the table takes a run of letters whole, so: not between two letters
    or marks) cut the reference's pre-tokens further, and each piece is merged by the model alone;
    when that gives the backend's ids exactly, the model's own merges on a finer split are what
    the backend ran. A segmentation bug cuts inside words too, and its pieces are not the model's
    own merges."""
    words = _raw_words(pipeline, text)
    if words is None or sum(len(w) for w, _ in words) != len(decoded):
        return None
    extra = sorted(_token_ends(vocab, b) - _token_ends(vocab, a) - {len(decoded)})
    cuts = []
    for x in extra:
        left, right = decoded[:x].decode("utf-8", "ignore"), decoded[x:].decode("utf-8", "ignore")
        if left and right and not (_wordlike(left[-1]) and _wordlike(right[0])):
            cuts.append(x)
    if not cuts:
        return None
    ids: list[int] = []
    start = 0
    try:
        for word, encode in words:
            end = start + len(word)
            inner = [x - start for x in cuts if start < x < end]
            for i, j in zip([0] + inner, inner + [len(word)]):
                ids += encode(word[i:j])
            start = end
    except Exception:  # a piece that is not valid UTF-8 on its own: no finer split there
        return None
    if text_ids(vocab, ids) != b:
        return None
    at = cuts[0]
    before, after = decoded[:at].decode("utf-8", "replace")[-1], decoded[at:].decode("utf-8", "replace")[0]
    return (f"the backend splits the text where the reference's pre-tokenizer does not, between {before!r} and "
            f"{after!r} (byte {at}); the model's own merges on that finer split give the backend's ids exactly")


def _raw_words(pipeline, text: str):
    """The reference's pre-tokens as (bytes, encode-one-piece) pairs, or None."""
    try:
        if isinstance(pipeline, LlamaBpe):
            return [(w.encode("utf-8"), lambda piece: pipeline.encode_word(piece.decode("utf-8")))
                    for w in pipeline.pretokenizer.split(pipeline.normalize(text))]
        if isinstance(pipeline, HfBpe) and pipeline.pretokenizer.byte_level:
            to_byte, to_char = gpt2_unicode_to_byte(), byte_to_unicode()
            return [(bytes(to_byte[c] for c in w), lambda piece: pipeline.encode_word("".join(to_char[x] for x in piece)))
                    for w in pipeline.pre_tokenize(text)]
    except Exception:
        return None
    return None


def _word_boundaries(pipeline, text: str, total: int) -> set[int]:
    """Byte offsets between the reference's pre-tokens (empty when it has none or they do not
    cover exactly the bytes the tokens stand for)."""
    if not isinstance(pipeline, (LlamaBpe, HfBpe)):
        return set()
    try:
        words = pipeline.pre_tokenize(text)
    except Exception:
        return set()
    table = gpt2_unicode_to_byte()
    byte_level = pipeline.pre.byte_encode if isinstance(pipeline, LlamaBpe) else pipeline.pretokenizer.byte_level
    out, pos = set(), 0
    for w in words:
        pos += len(w) if byte_level and all(c in table for c in w) else len(w.encode("utf-8", "surrogatepass"))
        out.add(pos)
    if pos != total:
        return set()
    out.discard(total)
    return out


def _text_diff(a: bytes, b: bytes) -> str:
    sa, sb = a.decode("utf-8", "replace"), b.decode("utf-8", "replace")
    parts = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, sa, sb, autojunk=False).get_opcodes():
        if op != "equal":
            parts.append(f"oracle {sa[i1:i2]!r} vs backend {sb[j1:j2]!r}")
        if len(parts) >= 3:
            break
    return ", ".join(parts)
