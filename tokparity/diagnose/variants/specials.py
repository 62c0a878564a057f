"""Special tokens, user-defined pieces, BOS and EOS: parsed or not, stripped or not, matched whole
or not, another release's table; and the variants made for one case's tokens."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from tokparity.components import AddedToken
from tokparity.diagnose import special_releases
from tokparity.diagnose.candidate import Candidate, fork
from tokparity.diagnose.variants.variant import Variant, per_vocab, with_pipeline
from tokparity.reference.hf import HfBpe, HfPipeline
from tokparity.reference.llama import LlamaCppPipeline, LlamaSpm, LlamaUgm
from tokparity.reference.rwkv import RwkvPipeline
from tokparity.reference.sentencepiece import SentencePieceBpe, SentencePiecePipeline
from tokparity.reference.specials import Special
from tokparity.reference.ugm import UgmModel
from tokparity.vocab.model import TokenType


def _specials_parse(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, RwkvPipeline):  # llama.cpp's RWKV trie matches control-token text whatever parse_special says
        return c.replace(pipeline=p.matching_every_token())
    if isinstance(p, SentencePiecePipeline) and not p.specials:
        # SentencePiece never parses them, whatever parse_special says: the engine parses them
        # always (with --parse-special, as asked; without, as tokenizers does).
        types = c.vocab.token_types or []
        controls = [Special(i, c.vocab.tokens[i]) for i, t in enumerate(types)
                    if t in (TokenType.CONTROL, TokenType.UNKNOWN) and c.vocab.tokens[i]]
        controls.sort(key=lambda s: (-len(s.text), s.id))
        return c.replace(pipeline=fork(p, specials=controls)) if controls else None
    return c.replace(flip_parse=not c.flip_parse)


BYTE_TEXT = re.compile(r"<0x[0-9A-Fa-f]{2}>")


def _byte_text_matched(c: Candidate) -> Candidate | None:
    """Every byte token's spelling (``<0x41>``) cut out of the text as that byte token, whatever
    parse_special says, as an engine that matches each piece of a type other than normal does."""
    types = c.vocab.token_types or []
    ids = per_vocab(c.vocab, ("byte texts",), lambda: [  # (a scan of the whole vocabulary: once)
        i for i, t in enumerate(c.vocab.tokens)
        if BYTE_TEXT.fullmatch(t) and (not types or i >= len(types) or types[i] == TokenType.BYTE)])
    p = c.pipeline
    if not ids:
        return None
    if isinstance(p, (LlamaCppPipeline, SentencePiecePipeline)):
        return with_pipeline(c, fork(p, specials=[*p.specials, *(Special(i, c.vocab.tokens[i]) for i in ids)]))
    if isinstance(p, HfPipeline):
        return with_pipeline(c, fork(p, added=[*p.added, *(AddedToken(i, c.vocab.tokens[i], normalized=False)
                                                           for i in ids)]))
    return None


class _BytesCutAfterNormalizing:
    """The byte tokens' spellings cut out of the normalized text, as openvino-tokenizers does: the
    dummy prefix is added once to the whole text, so text after a byte token gets none."""

    def __init__(self, pipeline: HfPipeline, ids: list[int]):
        self.pipeline, self.ids = pipeline, {pipeline.tokens[i]: i for i in ids}
        # (the vocabulary's own spellings only: `<0x0a>` of a vocabulary that spells `<0x0A>` is text)
        self.spelling = re.compile("(" + "|".join(map(re.escape, sorted(self.ids))) + ")")

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        p = self.pipeline
        out = list(p.prefix) if add_special else []
        for frag in p.partition(text, parse_special):
            if isinstance(frag, int):
                out.append(frag)
                continue
            normalized, at_start = frag
            for k, piece in enumerate(self.spelling.split(normalized)):
                if k % 2:
                    out.append(self.ids[piece])
                elif piece:
                    for word in p.pretokenizer(piece, at_start and k == 0):
                        out += p.encode_word(word)
        return out + (list(p.suffix) if add_special else [])


def _byte_text_after_normalizing(c: Candidate) -> Candidate | None:
    matched = _byte_text_matched(c)
    if matched is None or not isinstance(c.pipeline, HfPipeline):
        return None
    ids = [a.id for a in matched.pipeline.added[len(c.pipeline.added):]]
    return c.replace(pipeline=_BytesCutAfterNormalizing(c.pipeline, ids))


def _has_byte_text(c: Candidate, text: str) -> bool:
    return BYTE_TEXT.search(text) is not None


class _ParseAfterNormalizing:
    """tokenizers' added tokens marked ``normalized``: the whole text is normalized first (the dummy
    prefix included) and the special tokens are cut out of the normalized text; llama.cpp cuts
    them out of the raw text and normalizes each fragment."""

    def __init__(self, pipeline, specials):
        self.pipeline, self.specials = pipeline, specials

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        from tokparity.reference.specials import partition
        p = self.pipeline
        if not parse_special:
            return p.encode(text, add_special, parse_special)
        out = list(p.prefix_ids()) if add_special else []
        unk = unk_id_of(p)
        for frag in partition(p.normalize(text), self.specials, parse_special=True):
            if isinstance(frag, int):
                out.append(frag)
                continue
            for token_id, _ in p.segment(frag):
                if not (token_id == unk and out and out[-1] == unk and p.merge_unk_runs):
                    out.append(token_id)
        return out + (list(p.suffix_ids()) if add_special else [])


def _parse_before_normalizing(prefixed: str) -> Callable[[Candidate], Candidate | None]:
    """On a SentencePiece model: its control and unknown tokens parsed, as specials.parse does, but cut out of
    the raw text, so each part between them is normalized on its own. ``prefixed``: which parts
    get the dummy prefix, "each" or only the "first" (a part at the start of the text)."""

    def apply(c: Candidate) -> Candidate | None:
        p = c.pipeline
        if not isinstance(p, SentencePiecePipeline) or p.specials:
            return None
        parsed = _specials_parse(c)
        return parsed.replace(pipeline=fork(parsed.pipeline, cut_before_normalizing=prefixed)) if parsed else None

    return apply


def _parse_after_normalizing(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if not isinstance(p, LlamaUgm) or c.flip_parse:
        return None
    specials = [s for s in p.specials if s.parse_only]
    return c.replace(pipeline=_ParseAfterNormalizing(p, specials), flip_parse=True) if specials else None


MOST_SPECIAL_TEXTS = 4096  # (Llama 3 has 256; a file with a million control tokens gets no such variant)


def _segmented_at_specials(c: Candidate) -> Candidate | None:
    """The text cut at each special token's text, every part tokenized apart with parsing off
    (at another release's, where the candidate has them: specials.other-release)."""
    if c.other_release is not None:
        return c.replace(segment_at=c.other_release.pattern)
    segment_at = _special_texts(c)
    return c.replace(segment_at=segment_at) if segment_at is not None else None


def _refused_at_specials(c: Candidate) -> Candidate | None:
    """With parsing off, a text that holds a special token's text refused. A tokenizer.json's
    special tokens are its added tokens marked special (tiktoken's ``special_tokens_set``); its
    control tokens besides (Gemma 3's thousands of ``<unusedN>``) are not."""
    return _refused(c, every_added=False)


def _refused(c: Candidate, every_added: bool) -> Candidate | None:
    """``every_added``: the text of any added token refused, marked special or not (a tokenizer.json's
    only: another pipeline's specials are its control tokens)."""
    p = c.pipeline
    if not isinstance(p, HfPipeline):
        refuse_at = _special_texts(c) if not every_added else None
    else:
        texts = frozenset(a.content for a in p.added if (a.special or every_added) and a.content)
        refuse_at = per_vocab(c.vocab, ("added texts", texts), lambda: special_releases.alternation(texts)
                              if 0 < len(texts) <= MOST_SPECIAL_TEXTS else None)
    return c.replace(refuse_at=refuse_at) if refuse_at is not None else None


def _special_texts(c: Candidate) -> re.Pattern | None:
    """A pattern of the special tokens' texts: the control and unknown tokens, and the added
    tokens marked special. None where there are none, or too many."""
    p = c.pipeline
    vocab = c.vocab
    added = tuple(a.content for a in p.added if a.special and a.content) if isinstance(p, HfPipeline) else ()

    def pattern() -> re.Pattern | None:
        types = vocab.token_types or []
        texts = {vocab.tokens[i] for i, t in enumerate(types) if t in (TokenType.CONTROL, TokenType.UNKNOWN)}
        texts = (texts | set(added)) - {""}
        if not texts or len(texts) > MOST_SPECIAL_TEXTS:
            return None
        return special_releases.alternation(texts)

    return per_vocab(vocab, ("specials", added), pattern)


@dataclass(frozen=True)
class AroundAdded:
    """The whitespace on both sides of each added token's text taken off before the text is
    tokenized, as transformers' slow ``tokenize`` did to its no-split tokens. ``always``: the
    tokens matched whatever parse_special says; ``parsed``: every one, matched with it on."""

    always: re.Pattern | None
    parsed: re.Pattern | None

    def of(self, text: str, parse: bool) -> str:
        pattern = self.parsed if parse else self.always
        if pattern is None:
            return text
        parts = pattern.split(text)  # (odd parts: the added tokens' texts)
        for k in range(0, len(parts), 2):  # (the text between them: stripped on each side a token is)
            if k > 0:
                parts[k] = parts[k].lstrip()
            if k < len(parts) - 1:
                parts[k] = parts[k].rstrip()
        return "".join(parts)


MOST_ADDED_TEXTS = 1 << 16  # (Gemma 3 has 6,406 added tokens not marked special)


def _around(texts: frozenset[str]) -> re.Pattern | None:
    return special_releases.alternation(texts) if texts and len(texts) <= MOST_ADDED_TEXTS else None


def _every_added_stripped(c: Candidate) -> Candidate | None:
    """Each added token's text with no whitespace around it, whatever its own lstrip and rstrip
    say. A token of whitespace alone (Gemma 3's runs of line breaks) strips nothing."""
    p = c.pipeline
    if isinstance(p, HfPipeline):
        tokens = [(a.content, a.special) for a in p.added]
    elif isinstance(p, LlamaCppPipeline):
        tokens = [(s.text, s.parse_only) for s in p.specials]
    else:
        return None
    kept = [(text, parse_only) for text, parse_only in tokens if text.strip(" \t\n\r\u2581")]
    always = frozenset(text for text, parse_only in kept if not parse_only)
    every = frozenset(text for text, _ in kept)
    around = per_vocab(c.vocab, ("around added", every, always),
                       lambda: AroundAdded(_around(always), _around(every)) if every else None)
    return c.replace(strip_around=around) if around is not None and c.strip_around is None else None


def other_release_variant(release) -> Variant:
    """``specials.other-release:NAME``: the special tokens of ``release`` (special_releases.py) in
    place of the model's: parsed to that release's ids, and cut at where the text is cut at
    special-token text (with specials.segmented)."""
    def apply(c: Candidate) -> Candidate | None:
        if not per_vocab(c.vocab, ("other release", release.key), lambda: release.sibling_of(c.vocab)):
            return None
        return c.replace(other_release=release, segment_at=release.pattern if c.segment_at is not None else None,
                         refuse_at=release.pattern if c.refuse_at is not None else None)
    def affects(c: Candidate, text: str) -> bool:
        differing = per_vocab(c.vocab, ("other release differs", release.key), lambda: release.differing(c.vocab))
        return differing is not None and differing.search(text) is not None

    return Variant(f"specials.other-release:{release.key}", "specials.other-release",
                   f"the special tokens of {release.name} in place of the model's ({release.source})", apply, affects,
                   needs_another=True)


def _specials_strip(c: Candidate) -> Candidate | None:
    from dataclasses import replace
    p = c.pipeline
    if isinstance(p, LlamaCppPipeline) and any(s.lstrip or s.rstrip for s in p.specials):
        return with_pipeline(c, fork(p, specials=[replace(s, lstrip=False, rstrip=False) for s in p.specials]))
    if isinstance(p, HfBpe) and any(a.lstrip or a.rstrip for a in p.added):
        return with_pipeline(c, fork(p, added=[replace(a, lstrip=False, rstrip=False) for a in p.added]))
    return None


def _user_defined(c: Candidate) -> Candidate | None:
    p = c.pipeline
    if isinstance(p, LlamaCppPipeline):
        specials = [s for s in p.specials if s.parse_only]
        if len(specials) == len(p.specials):
            return None
        q = fork(p, specials=specials)
        if isinstance(p, LlamaUgm):
            q.normalizer = p.normalizer.replaced(user_defined=[])
        return with_pipeline(c, q)
    if isinstance(p, SentencePiecePipeline) and p.user_defined:
        q = fork(p, normalizer=p.normalizer.replaced(user_defined=[]))
        if isinstance(p, SentencePieceBpe):
            q.user_sorted = []
        return with_pipeline(c, q)
    if isinstance(p, HfBpe) and any(not a.special for a in p.added):
        return with_pipeline(c, fork(p, added=[a for a in p.added if a.special]))
    return None


def _out_of_the_model(c: Candidate) -> tuple[frozenset[int], object, bool] | None:
    """A tokenizer.json BPE's user-defined pieces (the added tokens that are not special) taken
    out of its model: their ids, the model with no merge that makes one, and whether any merge
    did. None where the pipeline is not one or has none."""
    p = c.pipeline
    if not isinstance(p, HfBpe):
        return None
    absent = frozenset(a.id for a in p.added if not a.special)
    if not absent:
        return None
    merges = per_vocab(c.vocab, ("merges without", absent),
                        lambda: {pair: hit for pair, hit in p.model.merges.items() if hit[1] not in absent})
    model = copy.copy(p.model)
    model.merges = merges
    return absent, model, len(merges) < len(p.model.merges)


def _user_defined_absent(c: Candidate) -> Candidate | None:
    """An engine that loaded only the normal pieces: the user-defined ones are not matched whole,
    no merge makes one, a character that is one falls back to its bytes, a longest match never
    takes one (Gemma 3's tab pieces come out as byte pieces, its runs of spaces as single ones)."""
    found = _out_of_the_model(c)
    if found is None:
        return None
    absent, model, merged = found
    # Where no such piece is one character and no merge makes one, this is user-defined.atomic (the
    # pieces not matched whole) under another name: not offered.
    if not merged and not any(len(c.vocab.tokens[i]) == 1 for i in absent):
        return None
    p = c.pipeline
    return with_pipeline(c, fork(p, added=[a for a in p.added if a.special], absent=absent, model=model))


def _user_defined_unmergeable(c: Candidate) -> Candidate | None:
    """The user-defined pieces still matched whole in the text, but taken out of the model's
    vocabulary: no merge makes one (Gemma 3's '▁▁' from two '▁'), as an engine that keeps its
    added tokens apart from the BPE model's tokens."""
    found = _out_of_the_model(c)
    if found is None or not found[2]:  # (no merge makes one: nothing to take away)
        return None
    absent, model, _ = found
    return with_pipeline(c, fork(c.pipeline, absent=absent, model=model))


def _first_listed(c: Candidate) -> Candidate | None:
    """Added tokens matched as one alternation in id order (the first listed wins where several
    start at a position), not leftmost-longest: '\\n\\n' is two '\\n' where '\\n' has the lower id."""
    p = c.pipeline
    if not isinstance(p, HfPipeline) or p.added_first_listed is not None or not _prefixes_of_added(c):
        return None
    return with_pipeline(c, fork(p, added_first_listed={}))


def _prefixes_of_added(c: Candidate) -> re.Pattern | None:
    """The added tokens' texts that start a longer one's (where the order of matching shows), as
    one pattern; None where there are none. Made once per list of added tokens."""
    added = c.pipeline.added
    found = _PREFIXES_OF_ADDED.get(id(added))
    if found is None or found[0] is not added:  # (an id outlives its list)
        texts = sorted({a.content for a in added if a.content})
        shorter = [t for t, after in zip(texts, texts[1:]) if after.startswith(t)]
        if len(_PREFIXES_OF_ADDED) > 16:
            _PREFIXES_OF_ADDED.clear()
        found = _PREFIXES_OF_ADDED[id(added)] = (added, re.compile("|".join(map(re.escape, shorter))) if shorter else None)
    return found[1]


_PREFIXES_OF_ADDED: dict[int, tuple[list, re.Pattern | None]] = {}


class _PiecesAfterNormalizing:
    """SentencePiece's user-defined pieces: the text is normalized first (dummy prefix, '▁'), then
    the pieces are matched whole inside it and the rest is segmented (llama.cpp instead cuts them
    out of the raw text, so no '▁' is written before a piece that starts the text)."""

    def __init__(self, pipeline, pieces):
        self.pipeline, self.pieces = pipeline, pieces

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        from tokparity.reference.specials import partition
        p = self.pipeline
        out = list(p.prefix_ids()) if add_special else []
        for frag in partition(text, p.specials, parse_special):
            if isinstance(frag, int):
                out.append(frag)
                continue
            for part in partition(p.normalize(frag), self.pieces, parse_special=False):
                out += [part] if isinstance(part, int) else p.encode_escaped(part)
        return out + (list(p.suffix_ids()) if add_special else [])


def user_defined_variant(token_id: int, whole: bool) -> Variant:
    """``user-defined.atomic`` for one piece: matched whole where the reference does not
    (``whole``), or not matched where it does; e.g. llama.cpp promotes ``</s>`` to a control token
    that plain text never matches, where SentencePiece and tokenizers keep it user-defined."""

    def apply(c: Candidate) -> Candidate | None:
        from dataclasses import replace

        p = c.pipeline
        text = c.vocab.tokens[token_id]
        if isinstance(p, LlamaCppPipeline):
            if not whole:
                specials = [s for s in p.specials if s.id != token_id]
                return with_pipeline(c, fork(p, specials=specials)) if len(specials) < len(p.specials) else None
            if isinstance(p, LlamaSpm):
                return c.replace(pipeline=_PiecesAfterNormalizing(p, [Special(token_id, text.replace(" ", "\u2581"))]))
            specials = [replace(s, parse_only=False) if s.id == token_id else s for s in p.specials]
            if not any(s.id == token_id for s in specials):
                specials.append(Special(token_id, text))
            return with_pipeline(c, fork(p, specials=specials))
        if isinstance(p, HfBpe):
            if not whole:
                added = [a for a in p.added if a.id != token_id]
                return with_pipeline(c, fork(p, added=added)) if len(added) < len(p.added) else None
            added = [replace(a, special=False) if a.id == token_id else a for a in p.added]
            if not any(a.id == token_id for a in added):
                added.append(AddedToken(token_id, text, normalized=False))
            return with_pipeline(c, fork(p, added=added))
        return None

    sign, what = ("+", "matched whole as a user-defined piece") if whole else ("-", "not matched whole")
    return Variant(f"user-defined.atomic:{sign}{token_id}", "user-defined.atomic", f"token {token_id} {what}", apply)


def _bos(mode: str, c: Candidate) -> Candidate | None:
    return c.replace(bos=mode) if c.bos_id is not None and not c.bos else None


def _eos(c: Candidate) -> Candidate | None:
    return c.replace(eos=True) if c.eos_id is not None and not c.eos else None


def unk_id_of(p) -> int | None:
    if isinstance(p, LlamaUgm):
        return p.model.unk_id
    if isinstance(p, LlamaCppPipeline):
        return p.flags.specials.get("unk")
    return getattr(p, "unk_id", None)


def special_ids_variant(role: str, target: int) -> Variant:
    """``specials.ids``: the ``role`` id (unk, bos, eos) pointing at ``target``, as when a converter
    takes another model family's default ids (T5's unknown id 2 is Llama's ``</s>``)."""

    def apply(c: Candidate) -> Candidate | None:
        if role == "bos":
            return c.replace(bos_id=target) if c.bos_id not in (None, target) else None
        if role == "eos":
            return c.replace(eos_id=target) if c.eos_id not in (None, target) else None
        p = c.pipeline
        if unk_id_of(p) in (None, target):
            return None
        # (a UGM model with another unk id: the same pieces and scores, so the same segmentations,
        # and its word cache shared, which writes an unknown stretch as whichever model reads it)
        if isinstance(p, LlamaUgm):
            model = p.model
            new = UgmModel(model.pieces, target, model.unk_score, model.options, model.prefixes, model.max_len,
                           model.word_cache, model.max_abs_score)
            return with_pipeline(c, fork(p, _model=new))
        if isinstance(p, LlamaCppPipeline):
            q = fork(p)
            q.flags.specials["unk"] = target
            return with_pipeline(c, q)
        if isinstance(p, SentencePiecePipeline):
            q = fork(p, unk_id=target)
            if hasattr(p, "model"):
                m = p.model
                q.model = UgmModel(m.pieces, target, m.unk_score, m.options, m.prefixes, m.max_len,
                                   m.word_cache, m.max_abs_score)
            return with_pipeline(c, q)
        return with_pipeline(c, fork(p, unk_id=target))

    return Variant(f"specials.ids:{role}={target}", "specials.ids", f"the {role} id is {target}", apply)


def variants() -> list[Variant]:
    """The special-token, user-defined, BOS and EOS variants, in catalogue order."""
    return [
        Variant("specials.parse", "specials.parse", "parse_special flipped (on a SentencePiece model, which never parses it: special-token text parsed)", _specials_parse),
        Variant("specials.parse:after-normalizing", "specials.parse",
                "special-token text parsed, out of the normalized text (tokenizers' normalized added tokens)",
                _parse_after_normalizing),
        Variant("specials.parse:before-normalizing", "specials.parse",
                "special-token text parsed and cut out before normalizing: each part between them normalized "
                "apart, with its own dummy prefix (tokenizers' added tokens)", _parse_before_normalizing("each")),
        Variant("specials.parse:before-normalizing-one-prefix", "specials.parse",
                "special-token text parsed and cut out before normalizing: each part between them normalized "
                "apart, the dummy prefix only on a part at the start of the text (tokenizers' Metaspace, "
                "prepend_scheme first)", _parse_before_normalizing("first")),
        Variant("specials.byte-text-matched", "specials.byte-text-matched",
                "a byte token's spelling in the text (<0x41>) matched as that byte token", _byte_text_matched,
                _has_byte_text),
        Variant("specials.byte-text-matched:after-normalizing", "specials.byte-text-matched",
                "a byte token's spelling (<0x41>) matched as that byte token in the normalized text: the dummy prefix "
                "once, before the whole text", _byte_text_after_normalizing, _has_byte_text),
        Variant("specials.strip", "specials.strip", "no lstrip/rstrip around special tokens", _specials_strip),
        Variant("specials.strip:every-added", "specials.strip", "the whitespace on both sides of every added "
                "token's text taken off, whatever its lstrip/rstrip say (transformers' slow tokenize)",
                _every_added_stripped),
        Variant("specials.segmented", "specials.segmented",
                "with parsing off, the text still cut at each special token's text and every part, the special "
                "text too, tokenized apart", _segmented_at_specials,
                lambda c, text: c.segment_at is not None and c.segment_at.search(text) is not None),
        Variant("specials.refused", "specials.refused", "with parsing off, a text that holds a special token's "
                "text refused (tiktoken's encode, disallowed_special=\"all\")", _refused_at_specials,
                lambda c, text: c.refuse_at is not None and c.refuse_at.search(text) is not None),
        Variant("specials.refused:every-added", "specials.refused", "with parsing off, a text that holds any added "
                "token's text refused, marked special or not", partial(_refused, every_added=True),
                lambda c, text: c.refuse_at is not None and c.refuse_at.search(text) is not None),
        *(other_release_variant(release) for release in special_releases.RELEASES),
        Variant("user-defined.atomic", "user-defined.atomic", "user-defined pieces not matched whole first",
                _user_defined),
        Variant("user-defined.absent", "user-defined.absent",
                "user-defined pieces not in the vocabulary at all: never matched whole nor made by a merge, a character "
                "that is one as its bytes (an engine that loaded only the normal pieces)", _user_defined_absent),
        Variant("user-defined.unmergeable", "user-defined.unmergeable",
                "user-defined pieces matched whole in the text but never made by a merge (taken out of the model's "
                "vocabulary)", _user_defined_unmergeable),
        Variant("user-defined.first-listed", "user-defined.first-listed",
                "added tokens matched in id order, the first listed winning, not leftmost-longest", _first_listed,
                lambda c, text: (pattern := _prefixes_of_added(c)) is not None and pattern.search(text) is not None),
        Variant("bos", "bos", "BOS added where the oracle has none, or dropped", partial(_bos, "toggle")),
        Variant("bos.double", "bos.double", "BOS added twice", partial(_bos, "double")),
        Variant("eos", "eos", "EOS added where the oracle has none, or dropped", _eos),
    ]
