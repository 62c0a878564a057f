"""The reference with deviations applied: what a diagnosis runs to reproduce a backend's ids.

A ``Candidate`` is a model's reference pipeline, possibly a copy with some stage switched
(``tokparity.diagnose.variants`` makes the copies), plus the deviations that act around the
pipeline rather than inside it: a transformation of the input (NFC, lower-casing, …), the
``parse_special`` flag flipped, a BOS or EOS added, dropped or doubled.

Copies are shallow: the vocabulary, merge tables and tries stay shared, and only what a
deviation changes (and every cache whose entries depend on it) is new.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tokparity.vocab.model import Vocab


def fork(pipeline, **changes):
    """A shallow copy of ``pipeline`` with ``changes`` set, its caches emptied and its flags
    (a dataclass in llama.cpp's pipelines) copied, so the original is never touched."""
    q = copy.copy(pipeline)
    if getattr(q, "cache", None) is not None:
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
    flip_parse: bool = False
    bos: str = ""  # "" | "toggle" | "double"
    eos: bool = False  # toggle the EOS at the end
    bos_id: int | None = None
    eos_id: int | None = None
    drop_ids: frozenset[int] = frozenset()  # ids removed from the output (text dropped, not <unk>)
    keys: tuple[str, ...] = field(default_factory=tuple)  # the variants applied, in order

    def replace(self, **changes) -> Candidate:
        return dataclasses.replace(self, **changes)

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        for text_map in self.text_maps:
            text = text_map(text)
        ids = self.pipeline.encode(text, add_special, parse_special != self.flip_parse)
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
        return ids

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
