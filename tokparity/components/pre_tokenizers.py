"""tokenizers' pre-tokenizers, one frozen dataclass each, with the library's defaults.

What each does is in tokparity.reference.hf_pretokenizers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from tokparity.components._fields import BEHAVIORS, Fields, component_type

SPACE_MARK = "\u2581"
PREPEND_SCHEMES = ("always", "first", "never")


@dataclass(frozen=True)
class ByteLevel:
    kind: ClassVar[str] = "ByteLevel"
    add_prefix_space: bool = True
    trim_offsets: bool = True  # offsets only; no effect on ids
    use_regex: bool = True


@dataclass(frozen=True)
class Metaspace:
    """Spaces become ``replacement``; ``prepend_scheme`` says which pieces get one in front:
    "always" every piece, "first" only a piece that starts the original text (so not one after
    an added token), "never" none. The legacy ``add_prefix_space: false`` means "never"."""
    kind: ClassVar[str] = "Metaspace"
    replacement: str = SPACE_MARK
    prepend_scheme: str = "always"
    split: bool = True


@dataclass(frozen=True)
class Split:
    kind: ClassVar[str] = "Split"
    pattern: str
    is_regex: bool
    behavior: str = "Isolated"
    invert: bool = False


@dataclass(frozen=True)
class Whitespace:
    kind: ClassVar[str] = "Whitespace"


@dataclass(frozen=True)
class WhitespaceSplit:
    kind: ClassVar[str] = "WhitespaceSplit"


@dataclass(frozen=True)
class BertPreTokenizer:
    kind: ClassVar[str] = "BertPreTokenizer"


@dataclass(frozen=True)
class UnicodeScripts:
    kind: ClassVar[str] = "UnicodeScripts"


@dataclass(frozen=True)
class Punctuation:
    kind: ClassVar[str] = "Punctuation"
    behavior: str = "Isolated"


@dataclass(frozen=True)
class Digits:
    kind: ClassVar[str] = "Digits"
    individual_digits: bool = False


@dataclass(frozen=True)
class CharDelimiterSplit:
    kind: ClassVar[str] = "CharDelimiterSplit"
    delimiter: str


@dataclass(frozen=True)
class FixedLength:
    kind: ClassVar[str] = "FixedLength"
    length: int = 5


@dataclass(frozen=True)
class Sequence:
    kind: ClassVar[str] = "Sequence"
    pretokenizers: tuple[PreTokenizer, ...] = ()


PreTokenizer = (ByteLevel | Metaspace | Split | Whitespace | WhitespaceSplit | BertPreTokenizer | UnicodeScripts |
    Punctuation | Digits | CharDelimiterSplit | FixedLength | Sequence)
_SIMPLE = {c.kind: c for c in (Whitespace, WhitespaceSplit, BertPreTokenizer, UnicodeScripts)}
KNOWN = {**_SIMPLE, **{c.kind: c for c in (ByteLevel, Metaspace, Split, Punctuation, Digits, CharDelimiterSplit,
                                           FixedLength, Sequence)}}


def _metaspace(f: Fields) -> Metaspace:
    legacy = f.optional_bool("add_prefix_space")
    scheme = f.choice("prepend_scheme", PREPEND_SCHEMES, "always")
    if legacy is False:
        if "prepend_scheme" in f.obj and f.obj["prepend_scheme"] is not None and scheme != "never":
            raise f.bad(f"add_prefix_space false does not match prepend_scheme {scheme!r} (tokenizers refuses it)")
        scheme = "never"
    return Metaspace(f.char("replacement", SPACE_MARK), scheme, f.bool("split", True))


def parse(path: Path, where: str, obj, steps: list[int] | None = None) -> PreTokenizer:
    """``where``: the stage ("normalizer"); its steps are named by their place in the flattened
    pipeline ("normalizer step 2 (Replace)"), as ``flatten`` lists them."""
    steps = [0] if steps is None else steps
    cls = component_type(path, f"{where} step {steps[0]}", obj, KNOWN)
    f = Fields(path, f"{where} step {steps[0]} ({cls.kind})", obj)
    if cls is not Sequence:
        steps[0] += 1
    if cls.kind in _SIMPLE:
        return cls()
    if cls is ByteLevel:
        return ByteLevel(f.bool("add_prefix_space", True), f.bool("trim_offsets", True), f.bool("use_regex", True))
    if cls is Metaspace:
        return _metaspace(f)
    if cls is Split:
        pattern, is_regex = f.pattern()
        return Split(pattern, is_regex, f.choice("behavior", BEHAVIORS, "Isolated"), f.bool("invert", False))
    if cls is Punctuation:
        return Punctuation(f.choice("behavior", BEHAVIORS, "Isolated"))
    if cls is Digits:
        return Digits(f.bool("individual_digits", False))
    if cls is CharDelimiterSplit:
        return CharDelimiterSplit(f.char("delimiter"))
    if cls is FixedLength:
        return FixedLength(f.int("length", 5, minimum=1))
    f.where = f"{where} (Sequence)"
    return Sequence(tuple(parse(path, where, item, steps) for item in f.list("pretokenizers")))


def flatten(pre_tokenizer: PreTokenizer | None) -> list[PreTokenizer]:
    if pre_tokenizer is None:
        return []
    if isinstance(pre_tokenizer, Sequence):
        return [step for inner in pre_tokenizer.pretokenizers for step in flatten(inner)]
    return [pre_tokenizer]
