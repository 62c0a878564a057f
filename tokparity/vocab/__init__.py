"""Vocabularies: one data model (``Vocab``) and a loader per file format."""

from __future__ import annotations

import os
from pathlib import Path

from tokparity.errors import BadModelFile
from tokparity.vocab.model import ALGORITHMS, Flags, TokenType, Vocab, VocabComparison

__all__ = ["ALGORITHMS", "Flags", "TokenType", "Vocab", "VocabComparison", "load_vocab", "detect_format"]

FORMATS = ("gguf", "spm-model", "hf-json")


def detect_format(path: str | os.PathLike) -> str:
    """``gguf``, ``spm-model`` or ``hf-json``, from the first bytes (the suffix only breaks ties)."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except FileNotFoundError:
        raise BadModelFile(path, "no such file") from None
    except IsADirectoryError:
        raise BadModelFile(path, "is a directory; name the tokenizer file inside it") from None
    except OSError as e:  # permission denied, a device, …
        raise BadModelFile(path, f"cannot read it ({e.strerror or e})") from None
    if head[:4] == b"GGUF":
        return "gguf"
    if head.lstrip()[:1] == b"{":
        return "hf-json"
    if path.suffix == ".gguf":
        return "gguf"  # the GGUF reader will say what is wrong with it
    if path.suffix == ".json":
        return "hf-json"
    if path.suffix == ".model" or head[:1] == b"\x0a":  # ModelProto field 1, length-delimited
        return "spm-model"
    raise BadModelFile(path, "unknown tokenizer format; expected a .gguf, a SentencePiece .model or a tokenizer.json")


def load_vocab(path: str | os.PathLike, fmt: str | None = None) -> Vocab:
    """Load any supported tokenizer file into a ``Vocab``."""
    fmt = fmt or detect_format(path)
    if fmt == "gguf":
        from tokparity.vocab.gguf import load_gguf
        return load_gguf(path)
    if fmt == "spm-model":
        from tokparity.vocab.spm_model import load_spm_model
        return load_spm_model(path)
    if fmt == "hf-json":
        from tokparity.vocab.hf_json import load_hf_json
        return load_hf_json(path)
    raise BadModelFile(path, f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
