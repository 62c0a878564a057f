"""tokenizers' normalizers, one frozen dataclass each, with the library's defaults.

``parse(path, where, obj)`` turns the JSON object into its class; ``flatten`` lists the steps of
nested ``Sequence``s in order. What each does is in tokparity.reference.hf_normalizers.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from tokparity.components._fields import Fields, component_type


@dataclass(frozen=True)
class NFC:
    kind: ClassVar[str] = "NFC"


@dataclass(frozen=True)
class NFD:
    kind: ClassVar[str] = "NFD"


@dataclass(frozen=True)
class NFKC:
    kind: ClassVar[str] = "NFKC"


@dataclass(frozen=True)
class NFKD:
    kind: ClassVar[str] = "NFKD"


@dataclass(frozen=True)
class Lowercase:
    kind: ClassVar[str] = "Lowercase"


@dataclass(frozen=True)
class Nmt:
    """SentencePiece's nmt control-character filter and space mapping, without its NFKC."""
    kind: ClassVar[str] = "Nmt"


@dataclass(frozen=True)
class StripAccents:
    kind: ClassVar[str] = "StripAccents"


@dataclass(frozen=True)
class Strip:
    kind: ClassVar[str] = "Strip"
    strip_left: bool = True
    strip_right: bool = True


@dataclass(frozen=True)
class Replace:
    kind: ClassVar[str] = "Replace"
    pattern: str
    is_regex: bool
    content: str


@dataclass(frozen=True)
class Prepend:
    kind: ClassVar[str] = "Prepend"
    prepend: str


@dataclass(frozen=True)
class Precompiled:
    kind: ClassVar[str] = "Precompiled"
    charsmap: bytes  # empty: the identity (tokenizers accepts "" and changes nothing)


@dataclass(frozen=True)
class BertNormalizer:
    kind: ClassVar[str] = "BertNormalizer"
    clean_text: bool = True
    handle_chinese_chars: bool = True
    strip_accents: bool | None = None  # None: as lowercase
    lowercase: bool = True


@dataclass(frozen=True)
class ByteLevel:
    """GPT-2's byte-to-character map as a normalizer."""
    kind: ClassVar[str] = "ByteLevel"


@dataclass(frozen=True)
class Sequence:
    kind: ClassVar[str] = "Sequence"
    normalizers: tuple[Normalizer, ...] = ()


Normalizer = (NFC | NFD | NFKC | NFKD | Nmt | Lowercase | StripAccents | Strip | Replace | Prepend | Precompiled |
    BertNormalizer | ByteLevel | Sequence)
_SIMPLE = {c.kind: c for c in (NFC, NFD, NFKC, NFKD, Nmt, Lowercase, StripAccents, ByteLevel)}
KNOWN = {**_SIMPLE, **{c.kind: c for c in (Strip, Replace, Prepend, Precompiled, BertNormalizer, Sequence)}}


def parse(path: Path, where: str, obj, steps: list[int] | None = None) -> Normalizer:
    """``where``: the stage ("normalizer"); its steps are named by their place in the flattened
    pipeline ("normalizer step 2 (Replace)"), as ``flatten`` lists them."""
    steps = [0] if steps is None else steps
    cls = component_type(path, f"{where} step {steps[0]}", obj, KNOWN)
    f = Fields(path, f"{where} step {steps[0]} ({cls.kind})", obj)
    if cls is not Sequence:
        steps[0] += 1
    if cls.kind in _SIMPLE:
        return cls()
    if cls is Strip:
        return Strip(f.bool("strip_left", True), f.bool("strip_right", True))
    if cls is Replace:
        pattern, is_regex = f.pattern()
        if pattern == "":  # tokenizers panics on it ("index out of bounds")
            raise f.bad("has an empty pattern, which tokenizers cannot run (it panics); remove the step or "
                        "give it a pattern")
        return Replace(pattern, is_regex, f.str("content"))
    if cls is Prepend:
        return Prepend(f.str("prepend"))
    if cls is Precompiled:
        text = f.str("precompiled_charsmap", "")
        try:
            return Precompiled(base64.b64decode(text, validate=True))
        except (ValueError, binascii.Error):
            raise f.bad("precompiled_charsmap is not valid base64") from None
    if cls is BertNormalizer:
        return BertNormalizer(f.bool("clean_text", True), f.bool("handle_chinese_chars", True),
                              f.optional_bool("strip_accents"), f.bool("lowercase", True))
    f.where = f"{where} (Sequence)"
    return Sequence(tuple(parse(path, where, item, steps) for item in f.list("normalizers")))


def flatten(normalizer: Normalizer | None) -> list[Normalizer]:
    """The steps in order, nested ``Sequence``s opened; ``[]`` for none."""
    if normalizer is None:
        return []
    if isinstance(normalizer, Sequence):
        return [step for inner in normalizer.normalizers for step in flatten(inner)]
    return [normalizer]
