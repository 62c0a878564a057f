"""The model stage: another segmentation (greedy longest match, backtracking, merges ordered
otherwise) or another way to look pieces up (packed keys, JavaScript objects)."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Iterable
from functools import partial

import regex

from tokparity.diagnose import plain_object
from tokparity.diagnose.candidate import Candidate, fork
from tokparity.diagnose.variants.lookup_keys import DecodedRanks, PackedRanks
from tokparity.diagnose.variants.pretokenizer import splits
from tokparity.diagnose.variants.rules import MERGE_MISSING
from tokparity.diagnose.variants.variant import Variant, per_vocab, with_pipeline
from tokparity.reference.backtracking import Backtracking
from tokparity.reference.bpe import AnyJoin, RightmostFirst, Without
from tokparity.reference.greedy import BestScore, Deferred, LongestMatch
from tokparity.reference.hf import HfBpe, KeyedRanks
from tokparity.reference.iree_backtrack import IreeBackTrack
from tokparity.reference.llama import LlamaBpe, LlamaSpm, LlamaWpm
from tokparity.reference.sentencepiece import SentencePieceBpe
from tokparity.vocab.model import TokenType, Vocab
from tokparity.vocab.token_bytes import gpt2_unicode_to_byte

_GREEDY_TYPES = (TokenType.NORMAL, TokenType.USER_DEFINED)
ASTRAL = regex.compile("[\U00010000-\U0010FFFF]")  # the characters JavaScript writes as two UTF-16 code units


class CodeUnitWalk:
    """A longest match that walks the text by UTF-16 code units in a table built by code points (a
    trie walked with JavaScript's ``text[i]``): a character past U+FFFF starts no piece and none
    holds one. A run of characters that start none is one piece if the vocabulary has it whole
    (looked up as a string), else the fallback's.

        >>> CodeUnitWalk(LongestMatch(["a", "ab"])).split("ab\U0001F602\u2601\U0001F3FBa")
        ['ab', '\U0001f602\u2601\U0001f3fb', 'a']
    """

    def __init__(self, matcher: LongestMatch):
        self.matcher = matcher  # (its pieces that hold such a character never match: the walk stops before it)

    def split(self, text: str) -> list[str]:
        out: list[str] = []
        run, pos = "", 0
        stops, k = [m.start() for m in ASTRAL.finditer(text)] + [len(text)], 0
        while pos < len(text):
            while stops[k] < pos:
                k += 1
            n = 0 if stops[k] == pos else self.matcher.length_at(text, pos, stops[k])
            if not n:
                run, pos = run + text[pos], pos + 1
                continue
            out += [run, text[pos:pos + n]] if run else [text[pos:pos + n]]
            run, pos = "", pos + n
        return out + [run] if run else out


def _greedy(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, LlamaWpm):
        return None  # WordPiece is greedy longest match already
    vocab = c.vocab
    if isinstance(p, HfBpe):  # (a byte piece's text, '<0x0A>', is not text to match; nor is a control token's)
        # A user-defined added token (Gemma 3's '▁▁', in its model's vocabulary too) is a piece like
        # any other to a port that reads the vocabulary's pieces.
        added = frozenset(i for i in p.added_ids if vocab.type_of(i) != TokenType.USER_DEFINED)
        matcher = per_vocab(vocab, ("greedy", added), lambda: LongestMatch(tuple(
            t for i, t in enumerate(p.tokens) if i not in added and vocab.type_of(i) != TokenType.BYTE)))
    else:
        types = vocab.token_types or [TokenType.NORMAL] * vocab.size
        matcher = per_vocab(vocab, ("greedy",), lambda: LongestMatch(tuple(
            t for t, ty in zip(vocab.tokens, types) if ty in _GREEDY_TYPES)))
    return with_pipeline(c, fork(p, greedy=matcher))


def _greedy_by_code_units(c: Candidate) -> Candidate | None:
    """``_greedy``'s longest match, walked by UTF-16 code units (its pieces past U+FFFF left out)."""
    greedy = _greedy(c)
    matcher = greedy.pipeline.greedy if greedy is not None else None
    if not isinstance(matcher, LongestMatch):
        return None
    # (with no piece past U+FFFF, a byte-level vocabulary's say, the walk is the greedy match on every text)
    if not per_vocab(c.vocab, ("astral pieces",), lambda: any(ASTRAL.search(q) for q in matcher.pieces), (matcher,)):
        return None
    return with_pipeline(c, fork(c.pipeline, greedy=CodeUnitWalk(matcher)))


def _backtracking(c: Candidate) -> Candidate | None:
    """The `bpe` crate's backtracking encoder over the model's own tokens ranked by id (no added
    token: an engine that ports the crate reads the tokenizer.json's model vocabulary, or a
    tiktoken file), in place of the merges; only where one character of a token is one byte."""
    p = c.pipeline
    if not splits(p) or isinstance(p, LlamaBpe) and not p.pre.byte_encode:
        return None
    if _affixed(p):
        return None  # (its tokens are not byte strings alone)
    added = frozenset(p.added_ids) if isinstance(p, HfBpe) else frozenset()
    encoder = per_vocab(c.vocab, ("backtracking", added), lambda: _backtracking_encoder(p, c.vocab, added))
    return with_pipeline(c, fork(p, greedy=encoder)) if encoder is not None else None


def _iree_backtracking(c: Candidate) -> Candidate | None:
    """IREE's backtracking encoder (iree-tokenizer) over a tokenizer.json's byte-level BPE, in
    place of the merges: its own pair checks and suffix blocking, its window path for a long word."""
    p = c.pipeline
    if not splits(p) or isinstance(p, LlamaBpe) and not p.pre.byte_encode or _affixed(p):
        return None
    if isinstance(p, HfBpe):
        ignore_merges, special = p.ignore_merges, frozenset(p.special_ids)
    else:
        types = c.vocab.token_types or [TokenType.NORMAL] * c.vocab.size
        ignore_merges = p.flags.ignore_merges
        special = frozenset(i for i, t in enumerate(types) if t == TokenType.CONTROL)
    if not per_vocab(c.vocab.tokens, ("byte-level",), lambda: set(gpt2_unicode_to_byte()) <= set(c.vocab.tokens)):
        return None  # (some byte is no token: IREE's encoder needs a byte-level vocabulary)
    # (kept by the token list, which every copy of a loaded vocabulary shares; a build takes seconds,
    # so it waits for the first word this candidate encodes)
    vocab = c.vocab
    encoder = per_vocab(vocab.tokens, ("iree", ignore_merges, special), lambda: Deferred(
        lambda: IreeBackTrack(vocab.tokens, vocab.merges, ignore_merges=ignore_merges, special=special)))
    return with_pipeline(c, fork(p, greedy=encoder))


def _affixed(p) -> bool:
    """Whether a transformers BPE marks its tokens with a subword prefix (``##``) or a word-end suffix."""
    return isinstance(p, HfBpe) and bool(p.spec.model.continuing_subword_prefix  # type: ignore[union-attr]
                                         or p.spec.model.end_of_word_suffix)  # type: ignore[union-attr]


def _backtracking_encoder(p, vocab: Vocab, added: frozenset[int]) -> Backtracking | None:
    """The encoder over the pipeline's own tokens (once per vocabulary: a candidate is built again
    and again), or None where some byte is no token, which the crate's encoder needs (the blind
    port refuses such a vocabulary)."""
    if isinstance(p, HfBpe):
        tokens = [None if i in added else t for i, t in enumerate(p.tokens)]
    else:
        types = vocab.token_types or [TokenType.NORMAL] * vocab.size
        tokens = [t if ty == TokenType.NORMAL else None for t, ty in zip(vocab.tokens, types)]
    return Backtracking(tokens) if set(gpt2_unicode_to_byte()) <= set(tokens) else None


MISSING_MERGES_TRIED = 8  # the merges a case tries leaving out, the lowest ranks first


def merge_missing_variant(spec: str) -> Variant:
    """``model.merge-missing``: the merge of rank ``spec`` left out of the merge list; with ``spec``
    ``^#``, every merge whose left part starts with ``#`` (a reader that skips lines it takes for
    comments)."""
    first = spec[1:] if spec.startswith("^") else None
    rank = int(spec) if first is None else -1

    def apply(c: Candidate) -> Candidate | None:
        p, merges = c.pipeline, c.vocab.merges
        if not isinstance(p, (LlamaBpe, HfBpe)) or type(p.ranks) is not dict or not merges:
            return None  # (not BPE, or its merges already ordered otherwise by another variant)
        if first is None:
            return with_pipeline(c, fork(p, ranks=Without(p.ranks, [(merges[rank][0], merges[rank][1])]))) \
                if 0 <= rank < len(merges) else None
        # (a frozenset, made once per vocabulary: Without keeps it as it is, and it may hold most merges)
        lost = per_vocab(c.vocab, ("merges whose left starts", first),
                         lambda: frozenset((a, b) for a, b in merges if a.startswith(first)))
        return with_pipeline(c, fork(p, ranks=Without(p.ranks, lost))) if lost else None

    said = (f"every merge whose left part starts with {first!r} left out of the merge list" if first is not None else
            f"merge {rank} of the merge list left out" + (" (the first)" if rank == 0 else ""))
    return Variant(f"{MERGE_MISSING}:{spec}", MERGE_MISSING, said, apply)


def missing_merge_keys(pipeline, vocab: Vocab, oracle: list[int], target: list[int]) -> list[str]:
    """The keys of the merges whose loss may give the backend's ids: those that build a token the
    oracle has more often than the backend, and the merges below them, the lowest ranks first; then
    for each first character of their left parts, every merge whose left part starts with it."""
    if not isinstance(pipeline, (LlamaBpe, HfBpe)) or type(pipeline.ranks) is not dict or not vocab.merges:
        return []
    made_by = per_vocab(vocab, ("merges by result",), lambda: _merges_by_result(vocab.merges))
    had, got = Counter(oracle), Counter(target)
    texts = [vocab.tokens[i] for i in had if 0 <= i < vocab.size and had[i] > got[i] and vocab.tokens[i]]
    ranks: set[int] = set()
    while texts and len(ranks) < 4 * MISSING_MERGES_TRIED:
        for rank in made_by.get(texts.pop(), ())[:2]:
            if rank not in ranks:
                ranks.add(rank)
                texts += vocab.merges[rank]
    tried = sorted(ranks)[:MISSING_MERGES_TRIED]
    firsts = dict.fromkeys(vocab.merges[rank][0][0] for rank in tried if vocab.merges[rank][0][:1].strip())
    return [f"{MERGE_MISSING}:{rank}" for rank in tried] + [f"{MERGE_MISSING}:^{ch}" for ch in list(firsts)[:2]]


def _merges_by_result(merges: list[tuple[str, str]]) -> dict[str, list[int]]:
    """Each text a merge makes, with the ranks of the merges that make it (once per merge list)."""
    out: dict[str, list[int]] = {}
    for rank, (left, right) in enumerate(merges):
        out.setdefault(left + right, []).append(rank)
    return out


def _merge_by_score(c: Candidate) -> Candidate | None:
    """Merges allowed by the merge list but ordered by the merged token's score (or, with no
    scores, by its id: "a lower id was learned earlier", a common shortcut)."""
    p = c.pipeline
    if not isinstance(p, (LlamaBpe, HfBpe)) or not p.ranks:
        return None
    ranks = per_vocab(c.vocab, ("merge-by-score",), lambda: _scored_ranks(p, c.vocab.scores),
                      sources=(p.ranks, p.token_to_id))
    return with_pipeline(c, fork(p, ranks=ranks))


def _scored_ranks(p, scores: list[float] | None) -> dict[tuple[str, str], float]:
    """The merge list's pairs ranked by the merged token's score, else its id (once per merge list:
    a candidate is built again and again)."""
    ids = p.token_to_id
    by_score = scores is not None and len(set(scores[:1000])) > 1
    ranks: dict[tuple[str, str], float] = {}
    for pair in p.ranks:
        merged = ids.get(pair[0] + pair[1])
        if merged is not None:
            ranks[pair] = -scores[merged] if by_score and scores is not None else merged
    return ranks


def _merge_by_rank(c: Candidate) -> Candidate | None:
    """SentencePiece-BPE merged in the order of a merge list (as converters write one: by the
    merged piece's id) instead of by the merged piece's score."""
    p = c.pipeline
    if not isinstance(p, (LlamaSpm, SentencePieceBpe)):
        return None
    ids = p.token_to_id
    return with_pipeline(c, fork(p, score_of={t: -float(ids[t]) for t in p.score_of if t in ids}))


def _best_score(c: Candidate) -> Candidate | None:
    """SentencePiece-BPE segmented by one Viterbi over the pieces' scores, as a unigram model is."""
    p = c.pipeline
    if not isinstance(p, (LlamaSpm, SentencePieceBpe)):
        return None
    return with_pipeline(c, fork(p, greedy=per_vocab(c.vocab, ("best-score",), lambda: BestScore(p.score_of),
                                                     sources=(p.score_of,))))


def rightmost_ties(c: Candidate) -> Candidate | None:
    """The model's own merge priorities, equal-priority candidates merged rightmost first instead
    of leftmost first ("..." as '.'+'..' where every library writes '..'+'.'). Not a catalogue
    variant: a backend reproduced by it broke a tie, it has no bug (search.py, stages.merge_tie)."""
    p = c.pipeline
    if isinstance(p, (LlamaSpm, SentencePieceBpe)):
        return with_pipeline(c, fork(p, score_of=RightmostFirst(p.score_of)))
    if isinstance(p, (LlamaBpe, HfBpe)) and p.ranks:
        return with_pipeline(c, fork(p, ranks=RightmostFirst(p.ranks)))
    return None


def _merges_unranked(c: Candidate) -> Candidate | None:
    """No merge list: any two neighbours whose join is one of the model's own tokens merge, the
    leftmost first, again and again (bpe.AnyJoin)."""
    p = c.pipeline
    if _affixed(p):
        return None  # (its symbols carry a prefix or suffix their joins do not: this bug is not its)
    if isinstance(p, HfBpe) and p.ranks:
        added = frozenset(p.added_ids)
        tokens = per_vocab(c.vocab, ("merges-unranked", added),
                           lambda: frozenset(t for t, i in p.model.vocab.items() if i not in added))
    elif isinstance(p, LlamaBpe) and p.ranks:
        types = c.vocab.token_types or [TokenType.NORMAL] * c.vocab.size
        tokens = per_vocab(c.vocab, ("merges-unranked",),
                           lambda: frozenset(t for t, ty in zip(c.vocab.tokens, types) if ty == TokenType.NORMAL))
    else:
        return None
    return with_pipeline(c, fork(p, ranks=AnyJoin(tokens)))


def _by_clusters(c: Candidate) -> Candidate | None:
    p = c.pipeline
    return with_pipeline(c, fork(p, by_clusters=True)) if isinstance(p, HfBpe) and p.greedy is None else None


def _clusters_of_several(c: Candidate, text: str) -> bool:
    return any(len(cluster) > 1 for cluster in regex.findall(r"\X", text))


def _ignore_merges(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, LlamaBpe):
        q = fork(p)
        q.flags.ignore_merges = not q.flags.ignore_merges
        return with_pipeline(c, q)
    if isinstance(p, HfBpe):
        return with_pipeline(c, fork(p, ignore_merges=not p.ignore_merges))
    return None



def _lookup_key(make: Callable[[Candidate], KeyedRanks], kind: str, c: Candidate) -> Candidate | None:
    """tiktoken's merge by rank with every lookup through an engine's own rank map, whose keys
    lose bytes (``make``: built once per vocabulary). Byte-level BPE only (one character of a
    token is one byte)."""
    p, vocab = c.pipeline, c.vocab
    if not isinstance(p, HfBpe) or p.keyed is not None or vocab.id_of("\u0100") is None:
        return None
    return with_pipeline(c, fork(p, keyed=per_vocab(vocab, (kind,), lambda: make(c))))


def _plain_object(table: str, c: Candidate) -> Candidate | None:
    """Every pre-token looked up whole in a plain JavaScript object first (``table``: "vocabulary",
    the tokens its keys, or "cache", empty; byte-level BPE: the engines that look a piece up by
    its text)."""
    if not isinstance(c.pipeline, (HfBpe, LlamaBpe)) or c.plain_object:
        return None
    return c.replace(plain_object=table)


_GLYPH_OF_BYTE = {b: c for c, b in gpt2_unicode_to_byte().items()}


def _php_range_alphabet() -> dict[int, str]:
    """GPT-2's byte alphabet built with ranges that include their end (PHP's ``range``): bytes 0x7F
    and 0xAD spelt as themselves, 0x80..0xA0 as GPT-2 spells the byte before. Each byte's character."""
    printable = [*range(0x21, 0x80), *range(0xA1, 0xAE), *range(0xAE, 0x100)]
    others = [b for b in range(256) if b not in printable]
    return {b: chr(b) for b in printable} | {b: chr(256 + n) for n, b in enumerate(others)}


_PHP_RANGE = _php_range_alphabet()


def _php_range(word: str) -> str:
    return "".join(_PHP_RANGE[b] for b in word.encode("utf-8"))


def _code_units(word: str) -> str:
    """Each UTF-16 code unit below 256 as that byte's glyph, any other as nothing (JavaScript's
    ``str.split('')`` and ``charCodeAt``, each looked up in the byte table)."""
    units = word.encode("utf-16-le", "surrogatepass")
    codes = [int.from_bytes(units[k:k + 2], "little") for k in range(0, len(units), 2)]
    return "".join(_GLYPH_OF_BYTE[u] if u < 256 else "" for u in codes)


def _ascii_runs(word: str) -> list[str]:
    """The word's runs of ASCII bytes, each a word of its own in GPT-2's glyphs. Each byte from 0x80
    up is spelt as a byte-fallback name (``<0xE9>``) that no merge joins and no token is. So it
    splits the word, and then it is dropped."""
    return ["".join(_GLYPH_OF_BYTE[b] for b in run)
            for run in re.split(rb"[\x80-\xff]+", word.encode("utf-8", "surrogatepass")) if run]


class _Respelt:
    """A pre-tokenizer whose words are spelt by another byte alphabet: ``respell`` takes a word's
    text and gives its spelling. Hugging Face's byte-level pre-tokenizer gives each word in GPT-2's
    alphabet (``__call__``: read back to text first); llama.cpp's split regexes give the text
    (``split``)."""

    byte_level = True

    def __init__(self, inner, respell: Callable[[str], str | list[str]]):
        self.inner, self.respell = inner, respell

    def __call__(self, text: str, at_start: bool = True) -> list[str]:
        to_byte = gpt2_unicode_to_byte()
        return self._spelt(bytes(to_byte[c] for c in w).decode("utf-8", "surrogatepass")
                           for w in self.inner(text, at_start))

    def split(self, text: str) -> list[str]:
        return self._spelt(self.inner.split(text))

    def _spelt(self, words: Iterable[str]) -> list[str]:
        spelt = (self.respell(w) for w in words)
        return [w for one in spelt for w in ([one] if isinstance(one, str) else one) if w]


def _respelt(respell: Callable[[str], str | list[str]], c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, LlamaBpe) and p.pre.byte_encode and p.greedy is None:
        return with_pipeline(c, fork(p, pre=dataclasses.replace(p.pre, byte_encode=False),
                                     pretokenizer=_Respelt(p.pretokenizer, respell)))
    if not isinstance(p, HfBpe) or not p.pretokenizer.byte_level or p.greedy is not None:
        return None
    return with_pipeline(c, fork(p, pretokenizer=_Respelt(p.pretokenizer, respell)))


def variants() -> list[Variant]:
    """The model's variants, in catalogue order."""
    return [
        Variant("model.greedy-longest-match", "model.greedy-longest-match",
                "the longest vocabulary piece at each position", _greedy),
        Variant("model.greedy-by-code-units", "model.greedy-by-code-units",
                "the longest vocabulary piece at each position, the text walked by UTF-16 code units: a character past "
                "U+FFFF starts no piece, and a run of characters that start none is one piece if the vocabulary has it "
                "whole, else its bytes", _greedy_by_code_units, lambda c, text: ASTRAL.search(text) is not None,
                refines="model.greedy-longest-match"),
        Variant("model.backtracking", "model.backtracking",
                "the `bpe` crate's backtracking encoder in place of the merges: the longest token at each position "
                "whose pair with the one before is one rank BPE would leave side by side (tokens ranked by id), else "
                "a shorter one, else the previous token taken back", _backtracking),
        Variant("model.backtracking:iree", "model.backtracking",
                "IREE's backtracking encoder in place of the merges: the longest token at each position, backed off "
                "by IREE's own checks of a pair and of merges a token hides, and a window of merges for a long word",
                _iree_backtracking, costly=True),
        Variant("model.merge-by-score", "model.merge-by-score",
                "merges ordered by the merged token's score (or id), not by rank", _merge_by_score),
        Variant("model.merge-by-rank", "model.merge-by-rank",
                "SentencePiece-BPE merges ordered by the merged piece's id (a merge list), not its score", _merge_by_rank),
        Variant("model.best-score", "model.best-score",
                "one Viterbi over the pieces' scores, as a unigram model segments, in place of SentencePiece-BPE's "
                "merges", _best_score),
        Variant("model.merges-unranked", "model.merges-unranked",
                "any two neighbours whose join is a token merged, the leftmost first: the merge list's ranks unread",
                _merges_unranked),
        Variant("model.cluster-symbols", "model.cluster-symbols",
                "a word's first symbols its grapheme clusters, not its characters: a cluster that is no token "
                "falls back to its bytes", _by_clusters, _clusters_of_several),
        Variant("model.byte-alphabet:php-range", "model.byte-alphabet",
                "GPT-2's byte alphabet built with ranges that include their end (PHP's range()): bytes 0x80 to 0xA0 "
                "spelt as GPT-2 spells the byte before", partial(_respelt, _php_range),
                lambda c, text: any(0x7F <= b <= 0xA0 or b == 0xAD for b in text.encode("utf-8", "surrogatepass"))),
        Variant("model.byte-alphabet:code-units", "model.byte-alphabet",
                "each UTF-16 code unit of a word taken for a byte: one below 256 as that byte, any other (an emoji's "
                "halves, CJK) as nothing", partial(_respelt, _code_units), lambda c, text: not text.isascii()),
        Variant("model.byte-alphabet:ascii-only", "model.byte-alphabet",
                "each byte from 0x80 up spelt as a byte-fallback name (<0xE9>) that no merge joins and no token is: "
                "the byte is dropped, and the ASCII runs around it are merged apart", partial(_respelt, _ascii_runs),
                lambda c, text: not text.isascii()),
        Variant("model.ignore-merges", "model.ignore-merges", "whole-word lookup before merging toggled",
                _ignore_merges),
        Variant("model.lookup-key", "model.lookup-key",
                "every byte string looked up by a key packed into integers that loses trailing NUL bytes (a piece that "
                "ends in NULs reads as the same bytes without them; where two tokens' keys meet, the later id)",
                partial(_lookup_key, lambda c: PackedRanks(c.vocab), "packed keys"), lambda c, text: "\0" in text),
        Variant("model.lookup-key:bom", "model.lookup-key",
                "every byte string that is UTF-8 looked up first as the text JavaScript's TextDecoder makes of it, a "
                "leading BOM (U+FEFF) dropped: EF BB BF + 'b' reads as 'b'; a whole piece that starts with a BOM is "
                "never found",
                partial(_lookup_key, lambda c: DecodedRanks(c.pipeline.model.vocab), "decoded keys"),
                lambda c, text: "\ufeff" in text),
        Variant("model.prototype-lookup", "model.prototype-lookup",
                "every piece looked up whole in a plain JavaScript object of the vocabulary first: one that is no "
                "token and names a member of Object.prototype (toString, constructor, …) finds that member, not "
                "nothing, and the engine fails", partial(_plain_object, "vocabulary"),
                lambda c, text: plain_object.may_hold_one(text)),
        Variant("model.prototype-lookup:cache", "model.prototype-lookup",
                "every piece looked up first in a cache kept in a plain JavaScript object: any piece named like a "
                "member of Object.prototype (toString, constructor, …), a token or not, finds that member, and the "
                "engine fails", partial(_plain_object, "cache"), lambda c, text: plain_object.may_hold_one(text)),
    ]
