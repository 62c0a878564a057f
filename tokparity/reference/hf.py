"""The reference pipeline for ``tokenizer.json``: Hugging Face ``tokenizers``, stage by stage.

The file is read once into typed components (tokparity.components); each stage runs them:

1. **added tokens** (``partition``): the tokens that are not ``normalized`` are cut out of the
   raw text, leftmost-longest, skipping ``special`` ones unless specials are parsed, a
   ``single_word`` one only where no word character touches it, ``lstrip``/``rstrip`` taking
   the whitespace beside it. Each remaining fragment is normalized, then the ``normalized``
   tokens (their text normalized too, as tokenizers does) are cut out of it the same way.
2. **normalizer** (hf_normalizers.py), 3. **pre-tokenizer** (hf_pretokenizers.py; a fragment
   that does not start the text is not "first" for Metaspace), 4. **model** (hf_models.py).
5. **post-processor**: the ids its single template puts around the sequence (add_special).
6. **decoder** for ``decode``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Protocol, TypeVar, cast

import regex

from tokparity.components import AddedToken, TokenizerSpec
from tokparity.components import models as m
from tokparity.errors import RegexTimeout, TokparityError
from tokparity.reference import bpe as bpe_mod
from tokparity.reference import hf_models
from tokparity.reference.greedy import Segmenter
from tokparity.reference.hf_normalizers import WHITE_SPACE, Normalizer
from tokparity.reference.hf_pretokenizers import GPT2_HF, PreTokenizer
from tokparity.reference.hf_regex import TimedRegex, seconds_left, time_limit
from tokparity.reference.pretokenize import GPT2
from tokparity.reference.spm import byte_piece
from tokparity.vocab.model import Vocab
from tokparity.vocab.special_texts import SpecialTextFinder

SPACE_MARK = "\u2581"
WORDS_CACHED = 100_000  # words whose ids a pipeline keeps (emptied beyond: a bound, as llama.py's)
_WORD_CHAR = regex.compile(r"\w")

__all__ = ["HfPipeline", "HfBpe", "HfUnigram", "HfWordPiece", "HfWordLevel", "pipeline_for", "GPT2", "GPT2_HF",
           "Normalizer", "PreTokenizer", "RegexTimeout", "TimedRegex", "seconds_left", "time_limit"]


def spec_of(vocab: Vocab) -> TokenizerSpec:
    spec = vocab.extra.get("spec")
    if not isinstance(spec, TokenizerSpec):
        raise TokparityError(f"{vocab.source}: not loaded from a tokenizer.json (no typed pipeline)")
    return spec


# --- added tokens -----------------------------------------------------------------------------------


class LeftmostLongest:
    """tokenizers' matches of added tokens (its Aho-Corasick leftmost-longest walk): non-overlapping,
    leftmost first, the longest there, the first listed of equal texts. Made once per token list:
    Gemma 3 has 6,415 added tokens, and a diagnosis encodes thousands of texts."""

    def __init__(self, tokens: list[AddedToken]):
        self.tokens = tokens
        self.by_content: dict[str, AddedToken] = {}
        for a in tokens:
            if a.content:
                self.by_content.setdefault(a.content, a)
        self.finder = SpecialTextFinder(self.by_content)

    def __bool__(self) -> bool:
        return bool(self.tokens)

    def matches(self, text: str) -> list[tuple[int, AddedToken]]:
        return [(at, self.by_content[found]) for at, found in self.finder.find(text)]


class FirstListed:
    """Matches of added tokens as one regex alternation in their list's (id) order: at each
    position the first token listed that matches wins, a shorter one before a longer one it
    starts ('\\n' before '\\n\\n'), as an engine that joins its added tokens into one pattern
    does. A diagnosis's switch (tokenizers matches leftmost-longest); the pattern is made once
    per token list."""

    def __init__(self, tokens: list[AddedToken]):
        listed = sorted((a for a in tokens if a.content), key=lambda a: a.id)
        self.by_content: dict[str, AddedToken] = {}
        for a in listed:
            self.by_content.setdefault(a.content, a)
        self.pattern = regex.compile("|".join(regex.escape(a.content) for a in listed)) if listed else None

    def matches(self, text: str) -> list[tuple[int, AddedToken]]:
        if self.pattern is None:
            return []
        return [(m.start(), self.by_content[m.group()]) for m in self.pattern.finditer(text)]


def added_patterns(tokens: list[tuple[str, AddedToken]]) -> LeftmostLongest:
    """Each added token as matched: ``(the text to match, the token)`` -> the token with that text.
    Made once per pipeline (a model may have thousands of added tokens)."""
    return LeftmostLongest([AddedToken(a.id, pattern, a.single_word, a.lstrip, a.rstrip, a.normalized, a.special)
                            for pattern, a in tokens])


# The patterns of the last token lists seen, by their tokens (and normalizer): a diagnosis forks
# a pipeline hundreds of times, and its variants make the same list again (Gemma 3 has 6,415).
_PATTERNS: OrderedDict[Hashable, tuple[object, object]] = OrderedDict()
PATTERNS_KEPT = 8
P = TypeVar("P")


def _patterns_of(kind: str, tokens: list[AddedToken], make: Callable[[], P], normalizer: object = None) -> P:
    """``make()``, kept for this kind of pattern, these tokens and this normalizer (by identity:
    it is held while kept, so its id is not reused meanwhile)."""
    key = (kind, id(normalizer), tuple(tokens))
    found = _PATTERNS.get(key)
    if found is not None and found[0] is normalizer:
        _PATTERNS.move_to_end(key)
        return cast(P, found[1])
    patterns = make()
    _PATTERNS[key] = (normalizer, patterns)
    while len(_PATTERNS) > PATTERNS_KEPT:
        _PATTERNS.popitem(last=False)
    return patterns


def cut_added(text: str, by_pattern: LeftmostLongest, parse_special: bool,
              first_listed: FirstListed | None = None) -> list[str | int]:
    """tokenizers' ``AddedVocabulary::find_matches``: the text with the added tokens cut out
    (``by_pattern``: ``added_patterns``; ``first_listed``: the same tokens matched in id order
    instead of leftmost-longest)."""
    out: list[str | int] = []
    start_offset = 0
    found = (first_listed or by_pattern).matches(text)
    for at, a in found:
        start, stop = at, at + len(a.content)
        if a.special and not parse_special:
            continue  # the match still hides what overlaps it, as in tokenizers
        if a.single_word and ((start > 0 and _WORD_CHAR.match(text[start - 1]))
                              or (stop < len(text) and _WORD_CHAR.match(text[stop]))):
            continue
        if a.lstrip:
            new_start = start
            while new_start > 0 and text[new_start - 1] in WHITE_SPACE:
                new_start -= 1
            start = max(new_start, start_offset)
        if a.rstrip:
            while stop < len(text) and text[stop] in WHITE_SPACE:
                stop += 1
        if start_offset < start:
            out.append(text[start_offset:start])
        out.append(a.id)
        start_offset = stop
    if start_offset < len(text):
        out.append(text[start_offset:])
    return out


# --- the pipeline -----------------------------------------------------------------------------------


class HfPipeline:
    """What every model shares: added tokens, normalizer, pre-tokenizer, post-processor, decoder."""

    algorithm = "hf"

    def __init__(self, vocab: Vocab):
        self.vocab = vocab
        self.spec = spec = spec_of(vocab)
        source = vocab.source or "tokenizer.json"
        # tokenizers uses the text of added_tokens (the loader spells user-defined ones as llama.cpp does)
        self.added = list(spec.added_tokens)
        self.tokens = list(vocab.tokens)
        for a in self.added:
            if 0 <= a.id < len(self.tokens):
                self.tokens[a.id] = a.content
        self.token_to_id: dict[str, int] = {}
        for i, t in enumerate(self.tokens):
            self.token_to_id.setdefault(t, i)
        self.types = vocab.token_types
        self.normalizer = Normalizer(spec.normalizer, source)
        self.pretokenizer = PreTokenizer(spec.pre_tokenizer, source)
        self.added_ids = {a.id for a in self.added}
        self.special_ids = {a.id for a in self.added if a.special}
        self.prefix, self.suffix = spec.post_processor.around() if spec.post_processor else ([], [])
        self.decoders = spec.decoder_steps()
        self.cache: dict[str, list[int]] = {}
        self._normalized_added: tuple[Normalizer, list, LeftmostLongest] | None = None
        self._raw_added: tuple[list, LeftmostLongest] | None = None
        # Switch (tokparity.diagnose): added tokens matched in id order, the first listed winning
        # (FirstListed), as an engine that joins them into one alternation; None: leftmost-longest.
        self.added_first_listed: dict[int, tuple[list[AddedToken], FirstListed]] | None = None

    # -- stages ----------------------------------------------------------------------------------

    def _added_normalized(self) -> LeftmostLongest:
        """The ``normalized`` added tokens with their text through the normalizer (kept per normalizer
        and token list: a diagnosis swaps either)."""
        kept = self._normalized_added
        if kept is None or kept[0] is not self.normalizer or kept[1] is not self.added:
            normalizer, added = self.normalizer, self.added
            patterns = _patterns_of("normalized", added, lambda: added_patterns(
                [(normalizer(a.content), a) for a in added if a.normalized]), normalizer)
            kept = self._normalized_added = (normalizer, added, patterns)
        return kept[2]

    def _added_raw(self) -> LeftmostLongest:
        """The added tokens matched on the raw text (kept per token list)."""
        if self._raw_added is None or self._raw_added[0] is not self.added:
            added = self.added
            self._raw_added = (added, _patterns_of("raw", added, lambda: added_patterns(
                [(a.content, a) for a in added if not a.normalized])))
        return self._raw_added[1]

    def _first_listed(self, added: LeftmostLongest) -> FirstListed | None:
        """``added``'s tokens matched in id order where the switch is on (made once per token list)."""
        if self.added_first_listed is None:
            return None
        tokens = added.tokens
        found = self.added_first_listed.get(id(tokens))
        if found is None or found[0] is not tokens:  # (an id outlives its list)
            found = self.added_first_listed[id(tokens)] = (tokens, _patterns_of("first listed", tokens,
                                                                                lambda: FirstListed(tokens)))
        return found[1]

    def partition(self, text: str, parse_special: bool) -> list[tuple[str, bool] | int]:
        """Added tokens cut out; the rest as (normalized fragment, starts the text) pairs."""
        raw = self._added_raw()
        out: list[tuple[str, bool] | int] = []
        pos = 0
        normalized_added = self._added_normalized()
        first_raw = self._first_listed(raw)
        for frag in cut_added(text, raw, parse_special, first_raw) if raw else [text]:
            if isinstance(frag, int):
                out.append(frag)
                pos = -1
                continue
            at_start = pos == 0
            pos = -1
            normalized = self.normalizer(frag)
            first = True
            parts = cut_added(normalized, normalized_added, parse_special, self._first_listed(normalized_added)) \
                if normalized_added else [normalized]
            for inner in parts:
                if isinstance(inner, int):
                    out.append(inner)
                elif inner:
                    out.append((inner, at_start and first))
                first = False
        return out

    def normalize(self, text: str) -> str:
        with time_limit(text):
            return self.normalizer(text)

    def pre_tokenize(self, text: str) -> list[str]:
        with time_limit(text):
            return self.pretokenizer(self.normalizer(text))

    def encode_word(self, word: str) -> list[int]:
        raise NotImplementedError

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        with time_limit(text):  # one deadline for all the text's regex calls
            return self._encode(text, add_special, parse_special)

    def _encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        out = list(self.prefix) if add_special else []
        for frag in self.partition(text, parse_special):
            if isinstance(frag, int):
                out.append(frag)
                continue
            for word in self.pretokenizer(*frag):
                ids = self.cache.get(word)
                if ids is None:
                    if len(self.cache) > WORDS_CACHED:  # (a kept reference serves run after run)
                        self.cache.clear()
                    ids = self.cache[word] = self.encode_word(word)
                out += ids
        if add_special:
            out += self.suffix
        return out

    def decode(self, ids: list[int], errors: str = "replace", skip_special: bool = True) -> str:
        from tokparity.reference.hf_decode import decode
        return decode(self, ids, errors, skip_special)


class KeyedRanks(Protocol):
    """An engine's own rank map as tiktoken's merge by rank reads it (``HfBpe.keyed``), for a
    byte-level vocabulary (one character of a spelling is one byte)."""

    def whole(self, word: str) -> int | None:
        """The id of a whole piece, looked up before any merge (None: merge it)."""

    def rank(self, part: str) -> int | None:
        """The rank and id of a byte string: a pair's join while merging, a part at the end."""


class HfBpe(HfPipeline):
    algorithm = "bpe"

    def __init__(self, vocab: Vocab):
        super().__init__(vocab)
        model = self.spec.model
        assert isinstance(model, m.BPE)
        self.model = hf_models.Bpe(model, self.token_to_id)
        merges = vocab.merges
        # String merges (bpe.py) for a diagnosis, which swaps in other orders; while they are
        # the file's own, encode_word merges by id as tokenizers does (merge_ids).
        self.ranks = self._own_ranks = dict(zip(reversed(merges), range(len(merges) - 1, -1, -1)))
        self.byte_fallback = model.byte_fallback
        self.fuse_unk = model.fuse_unk
        self.ignore_merges = model.ignore_merges
        self.unk_id = self.model.unk_id
        # Switch (tokparity.diagnose sets it to reproduce an engine): longest match (or backtracking), no merges.
        self.greedy: Segmenter | None = None
        # Switch: pieces taken as not in the vocabulary (never matched; a character that is one
        # falls back to its bytes), as an engine that loaded only the normal pieces.
        self.absent: frozenset[int] = frozenset()
        # Switch: tiktoken's merge by rank with every lookup, the whole piece's included, through
        # an engine's own rank map, whose keys lose bytes.
        self.keyed: KeyedRanks | None = None
        # Switch: a word's first symbols are its grapheme clusters, not its characters (a Swift
        # port's Array(word)); a cluster that is no token falls back to its bytes.
        self.by_clusters = False

    def encode_word(self, word: str) -> list[int]:
        if self.keyed is not None:  # (before the exact whole-word lookup: the engine's map answers that too)
            return self._encode_keyed(word)
        whole = self.model.vocab.get(word)
        if self.ignore_merges and whole is not None and whole not in self.absent:
            return [whole]
        if self.greedy is not None:
            return self._encode_greedy(word)
        symbols = self.model.symbols(word, self.byte_fallback, self.fuse_unk, self.by_clusters)
        if self.absent:
            symbols = [i for s in symbols for i in (self._without_piece(s) if s in self.absent else [s])]
        if self.ranks is self._own_ranks:
            return hf_models.merge_ids(symbols, self.model.merges)
        return self._merge_by_strings(symbols)

    def _merge_by_strings(self, symbols: list[int]) -> list[int]:
        """A diagnosis's merge order (``ranks``): bpe.py's string merges, each run between
        unknown tokens on its own (no merge involves the unknown token)."""
        vocab = self.model.vocab
        out: list[int] = []
        run: list[str] = []
        for token_id in symbols + [-1]:
            if token_id == self.unk_id or token_id == -1:
                out += [vocab.get(t, self.token_to_id.get(t, -1)) for t in bpe_mod.merge_word_heap(run, self.ranks)]
                run = []
                if token_id != -1:
                    out.append(token_id)
            else:
                run.append(self.tokens[token_id])
        return out

    def _encode_keyed(self, word: str) -> list[int]:
        """tiktoken's byte-pair merge (the whole piece looked up first, then the adjacent pair
        whose join ranks lowest, leftmost first), every rank and id read through ``keyed``."""
        keyed = self.keyed
        assert keyed is not None
        whole = keyed.whole(word)
        if whole is not None:
            return [whole]
        parts = list(word)
        while len(parts) > 1:
            joined = [keyed.rank(a + b) for a, b in zip(parts, parts[1:])]
            found = [(rank, i) for i, rank in enumerate(joined) if rank is not None]
            if not found:
                break
            _, i = min(found)
            parts[i:i + 2] = [parts[i] + parts[i + 1]]
        out = []
        for part in parts:
            token_id = keyed.rank(part)
            token_id = self.token_to_id.get(part) if token_id is None else token_id
            if token_id is not None:
                out.append(token_id)
            elif self.unk_id is not None:
                out.append(self.unk_id)
        return out

    def _without_piece(self, token_id: int) -> list[int]:
        """What a character that is the piece ``token_id`` becomes where that piece is absent:
        its bytes' pieces, or the unknown token."""
        raw = self.tokens[token_id].encode()
        if self.byte_fallback and all(byte_piece(b) in self.token_to_id for b in raw):
            return [self.token_to_id[byte_piece(b)] for b in raw]
        return [self.unk_id] if self.unk_id is not None else []

    def _encode_greedy(self, word: str) -> list[int]:
        assert self.greedy is not None
        out: list[int] = []
        for piece in self.greedy.split(word):
            token_id = self.token_to_id.get(piece)
            if token_id is not None and token_id not in self.absent:
                out.append(token_id)
            elif self.byte_fallback and all(byte_piece(b) in self.token_to_id for b in piece.encode()):
                out += [self.token_to_id[byte_piece(b)] for b in piece.encode()]
            elif self.unk_id is not None and not (self.fuse_unk and out and out[-1] == self.unk_id):
                out.append(self.unk_id)
        return out


class HfUnigram(HfPipeline):
    algorithm = "ugm"

    def __init__(self, vocab: Vocab):
        super().__init__(vocab)
        assert isinstance(self.spec.model, m.Unigram)
        self.model = hf_models.Unigram(self.spec.model)
        self.encode_word = self.model.encode  # type: ignore[method-assign]


class HfWordPiece(HfPipeline):
    algorithm = "wpm"

    def __init__(self, vocab: Vocab):
        super().__init__(vocab)
        assert isinstance(self.spec.model, m.WordPiece)
        self.model = hf_models.WordPiece(self.spec.model)
        self.encode_word = self.model.encode  # type: ignore[method-assign]


class HfWordLevel(HfPipeline):
    algorithm = "wordlevel"

    def __init__(self, vocab: Vocab):
        super().__init__(vocab)
        assert isinstance(self.spec.model, m.WordLevel)
        self.model = hf_models.WordLevel(self.spec.model)
        self.encode_word = self.model.encode  # type: ignore[method-assign]


PIPELINES = {"BPE": HfBpe, "Unigram": HfUnigram, "WordPiece": HfWordPiece, "WordLevel": HfWordLevel}


def pipeline_for(vocab: Vocab) -> HfPipeline:
    return PIPELINES[spec_of(vocab).model.kind](vocab)

