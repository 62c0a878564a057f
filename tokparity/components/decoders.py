"""tokenizers' decoders, one frozen dataclass each, with the library's defaults.

Each turns the list of token strings into another list (``decode_chain``); the text is their
concatenation. What each does is in tokparity.reference.hf_post.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from tokparity.components._fields import Fields, component_type
from tokparity.components.pre_tokenizers import PREPEND_SCHEMES, SPACE_MARK


@dataclass(frozen=True)
class ByteLevel:
    kind: ClassVar[str] = "ByteLevel"


@dataclass(frozen=True)
class Metaspace:
    kind: ClassVar[str] = "Metaspace"
    replacement: str = SPACE_MARK
    prepend_scheme: str = "always"
    split: bool = True


@dataclass(frozen=True)
class WordPiece:
    kind: ClassVar[str] = "WordPiece"
    prefix: str = "##"
    cleanup: bool = True


@dataclass(frozen=True)
class BPEDecoder:
    kind: ClassVar[str] = "BPEDecoder"
    suffix: str = "</w>"


@dataclass(frozen=True)
class ByteFallback:
    kind: ClassVar[str] = "ByteFallback"


@dataclass(frozen=True)
class Fuse:
    kind: ClassVar[str] = "Fuse"


@dataclass(frozen=True)
class Strip:
    kind: ClassVar[str] = "Strip"
    content: str = " "
    start: int = 0
    stop: int = 0


@dataclass(frozen=True)
class Replace:
    kind: ClassVar[str] = "Replace"
    pattern: str
    is_regex: bool
    content: str


@dataclass(frozen=True)
class CTC:
    kind: ClassVar[str] = "CTC"
    pad_token: str = "<pad>"
    word_delimiter_token: str = "|"
    cleanup: bool = True


@dataclass(frozen=True)
class Sequence:
    kind: ClassVar[str] = "Sequence"
    decoders: tuple[Decoder, ...] = ()


Decoder = ByteLevel | Metaspace | WordPiece | BPEDecoder | ByteFallback | Fuse | Strip | Replace | CTC | Sequence
KNOWN = {c.kind: c for c in (ByteLevel, Metaspace, WordPiece, BPEDecoder, ByteFallback, Fuse, Strip, Replace, CTC,
                             Sequence)}


def parse(path: Path, where: str, obj) -> Decoder:
    cls = component_type(path, where, obj, KNOWN)
    f = Fields(path, f"{where} ({cls.kind})", obj)
    if cls in (ByteLevel, ByteFallback, Fuse):
        return cls()
    if cls is Metaspace:
        scheme = f.choice("prepend_scheme", PREPEND_SCHEMES, "always")
        if f.optional_bool("add_prefix_space") is False:
            scheme = "never"
        return Metaspace(f.char("replacement", SPACE_MARK), scheme, f.bool("split", True))
    if cls is WordPiece:
        return WordPiece(f.str("prefix", "##"), f.bool("cleanup", True))
    if cls is BPEDecoder:
        return BPEDecoder(f.str("suffix", "</w>"))
    if cls is Strip:
        return Strip(f.char("content", " "), f.int("start", 0), f.int("stop", 0))
    if cls is Replace:
        return Replace(*f.pattern(), f.str("content"))
    if cls is CTC:
        return CTC(f.str("pad_token", "<pad>"), f.str("word_delimiter_token", "|"), f.bool("cleanup", True))
    items = f.list("decoders")
    return Sequence(tuple(parse(path, f"{where}.decoders[{i}]", item) for i, item in enumerate(items)))


def flatten(decoder: Decoder | None) -> list[Decoder]:
    if decoder is None:
        return []
    if isinstance(decoder, Sequence):
        return [d for inner in decoder.decoders for d in flatten(inner)]
    return [decoder]
