"""The reference with deviations applied: what a diagnosis runs to reproduce a backend's ids.

A ``Candidate`` is a model's reference pipeline, possibly a copy with some stage switched
(``tokparity.diagnose.variants`` makes the copies), plus the deviations that act around the
pipeline rather than inside it: a transformation of the input (NFC, lower-casing, a C string's
cut at NUL, …), the ``parse_special`` flag flipped, a BOS or EOS added, dropped or doubled, a
whitespace-only input looked up whole, the text cut apart at special-token text, another release's
special tokens, a text with special-token text refused, the whitespace around added tokens taken off.

Copies are shallow: the vocabulary, merge tables and tries stay shared, and only what a
deviation changes (and every cache whose entries depend on it) is new.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tokparity.diagnose.plain_object import inherited_piece, no_key
from tokparity.errors import InheritedMember, SpecialTextRefused
from tokparity.vocab.model import Vocab

# What a pipeline's ``cache`` (each word's ids, where the pipeline has one) does not depend on: a
# copy that changes only these shares it (another split makes other words, never other ids for a
# word), so a split variant counted over a run's every agreeing text merges only the words it changes.
WORDS_KEPT_BY = frozenset({"pretokenizer"})


def fork(pipeline, **changes):
    """A shallow copy of ``pipeline`` with ``changes`` set, its caches emptied (but for a change of
    ``WORDS_KEPT_BY`` alone) and its flags (a dataclass in llama.cpp's pipelines) copied, so the
    original is never touched. A copy that shares its parent's word cache must give each word the
    ids its parent gives: whatever else it changes is given here too, not set on the copy after."""
    q = copy.copy(pipeline)
    if getattr(q, "cache", None) is not None and not (changes and changes.keys() <= WORDS_KEPT_BY):
        q.cache = {}
    if dataclasses.is_dataclass(getattr(q, "flags", None)):
        q.flags = dataclasses.replace(q.flags, specials=dict(q.flags.specials))
    for name, value in changes.items():
        setattr(q, name, value)
    return q


@dataclass
class Candidate:
    pipeline: Any  # a reference pipeline (llama.py, sentencepiece.py, hf.py) or a wrapper of one
    vocab: Vocab
    text_maps: tuple[Callable[[str], str], ...] = ()  # applied to the input, in order
    id_maps: tuple[Callable[[list[int]], list[int]], ...] = ()  # applied to the pipeline's ids, in order
    flip_parse: bool = False
    bos: str = ""  # "" | "toggle" | "double"
    eos: bool = False  # toggle the EOS at the end
    bos_id: int | None = None
    eos_id: int | None = None
    drop_ids: frozenset[int] = frozenset()  # ids removed from the output (text dropped, not <unk>)
    # A blank input (whitespace only, or empty) taken as one piece: the id of the text as typed, or
    # with its spaces as the vocabulary spells them ('▁', 'Ġ'), else <unk> (an engine's fast path
    # that never tokenizes it).
    whitespace_piece: bool = False
    # With parsing off, the text still cut at each special token's text and every part (the special
    # text too) tokenized apart (an engine that splits on specials before it asks whether to parse).
    segment_at: re.Pattern | None = None
    # With parsing off, a text that holds a special token's text refused (tiktoken's ``encode``,
    # whose ``disallowed_special`` is "all" by default): the engine fails on it.
    refuse_at: re.Pattern | None = None
    # The whitespace around each added token's text taken off first (variants/specials.AroundAdded).
    strip_around: Any = None
    # Another release's special tokens in place of the model's (special_releases.py): with parsing
    # on, its texts are its ids and the model's own other specials plain text.
    other_release: Any = None  # an OtherRelease
    # Every pre-token looked up whole in a plain JavaScript object first: one that names a member of
    # Object.prototype and is no key of that object's own finds the member, and the engine fails
    # (plain_object.py). "vocabulary": the tokens are its keys; "cache": a cache made by {}, no keys.
    plain_object: str = ""
    # The most ids given back (an engine with a length limit it does not say): an IdLimit
    # (variants/ids.py), a fixed number or one set by the text's length.
    id_limit: Any = None
    # The text cut into slices, each encoded on its own (variants/slices.py): a Slicing.
    slicing: Any = None
    keys: tuple[str, ...] = field(default_factory=tuple)  # the variants applied, in order

    def replace(self, **changes) -> Candidate:
        return dataclasses.replace(self, **changes)

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        given = text
        for text_map in self.text_maps:
            text = text_map(text)
        parse = parse_special != self.flip_parse
        if self.strip_around is not None:
            text = self.strip_around.of(text, parse)
        if self.plain_object:
            own = no_key if self.plain_object == "cache" else (lambda piece: self.vocab.id_of(piece) is not None)
            inherited = inherited_piece(self.pipeline.pre_tokenize(text), own)
            if inherited is not None:
                raise InheritedMember(inherited, self.plain_object)
        if self.refuse_at is not None and not parse and (found := self.refuse_at.search(text)) is not None:
            raise SpecialTextRefused(found.group())
        if self.whitespace_piece and not text.strip():
            ids = self._around(add_special, self._whole_piece(text))
        elif self.slicing is not None:
            each = add_special and self.slicing.each
            ids = [i for part in self.slicing.of(text) for i in self.pipeline.encode(part, each, parse)]
            ids = ids if each else self._around(add_special, ids)
        elif self.segment_at is not None and not parse:
            parts = [part for part in self.segment_at.split(text) if part]
            ids = self._around(add_special, [i for part in parts for i in self.pipeline.encode(part, False, False)])
        elif self.other_release is not None and parse:
            table = self.other_release.table
            ids = []
            for n, part in enumerate(self.other_release.pattern.split(text)):  # (odd parts: the specials)
                if n % 2:
                    ids.append(table[part])
                elif part:
                    ids += self.pipeline.encode(part, False, False)
            ids = self._around(add_special, ids)
        else:
            ids = self.pipeline.encode(text, add_special, parse)
        for id_map in self.id_maps:
            ids = id_map(ids)
        if self.bos and self.bos_id is not None:
            # Whether the pipeline put a BOS in front, not whether the ids start with one: with
            # parse_special a "<s>" at the start of the text is the BOS id too, and toggling that
            # one away named "an engine that adds BOS and parses <s>" a doubled BOS.
            added = self._adds_bos(add_special, ids)
            if self.bos == "toggle":
                ids = ids[1:] if added else [self.bos_id] + ids
            else:  # "double"
                ids = [self.bos_id] + ids if added else [self.bos_id, self.bos_id] + ids
        if self.eos and self.eos_id is not None:
            ids = ids[:-1] if ids[-1:] == [self.eos_id] else ids + [self.eos_id]
        if self.drop_ids:
            ids = [i for i in ids if i not in self.drop_ids]
        if self.id_limit is not None:
            ids = ids[:self.id_limit.of(given)]
        return ids

    def _around(self, add_special: bool, ids: list[int]) -> list[int]:
        """``ids`` between the ids the pipeline puts around a text when asked to add them."""
        if not add_special:
            return ids
        p = self.pipeline
        p = getattr(p, "pipeline", p)  # (a wrapper of a pipeline: what it wraps adds them)
        if hasattr(p, "prefix_ids"):
            return p.prefix_ids() + ids + p.suffix_ids()
        return list(getattr(p, "prefix", [])) + ids + list(getattr(p, "suffix", []))

    def _whole_piece(self, text: str) -> list[int]:
        """A blank text as one piece: its id as typed, or with each space the vocabulary's space
        mark ('▁', or byte-level 'Ġ'); else <unk>, or nothing where there is none."""
        vocab = self.vocab
        mark = "\u0120" if vocab.id_of("\u0120") is not None and vocab.id_of("\u2581") is None else "\u2581"
        for spelled in (text, text.replace(" ", mark)):
            found = vocab.id_of(spelled)
            if found is not None:
                return [found]
        unk = vocab.special_ids.get("unk")
        return [unk] if unk is not None else []

    def _adds_bos(self, add_special: bool, ids: list[int]) -> bool:
        if not add_special or ids[:1] != [self.bos_id]:
            return False
        prefix = getattr(self.pipeline, "prefix", None)  # tokenizers' post-processor template
        if prefix is None and hasattr(self.pipeline, "prefix_ids"):
            prefix = self.pipeline.prefix_ids()
        return True if prefix is None else self.bos_id in prefix

    def footprint(self, text: str, add_special: bool, parse_special: bool) -> tuple:
        """What the stages make of ``text``: the normalized text, the pre-tokens and the ids
        (None for a stage the pipeline does not expose or fails on). Two candidates with equal
        footprints on a text deviate from each other nowhere a diagnosis can see."""
        ids = self.encode(text, add_special, parse_special)
        for text_map in self.text_maps:
            text = text_map(text)
        seen: list = []
        for stage in ("normalize", "pre_tokenize"):
            try:
                seen.append(getattr(self.pipeline, stage)(text))
            except Exception:  # a stage a variant leaves unreadable: only the ids say anything
                seen.append(None)
        return (*seen, ids)
