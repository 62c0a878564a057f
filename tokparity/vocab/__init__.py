"""Vocabularies: one data model (``Vocab``) and a loader per file format."""

from __future__ import annotations

import copy
import functools
import hashlib
import os
from collections import OrderedDict
from pathlib import Path

from tokparity.errors import BadModelFile
from tokparity.vocab.model import ALGORITHMS, Flags, TokenType, Vocab, VocabComparison
from tokparity.vocab.rwkv_vocab import FIRST_LINE

__all__ = ["ALGORITHMS", "Flags", "TokenType", "Vocab", "VocabComparison", "load_vocab", "detect_format"]

FORMATS = ("gguf", "spm-model", "hf-json", "tiktoken", "rwkv-vocab")


def detect_format(path: str | os.PathLike) -> str:
    """``gguf``, ``spm-model``, ``hf-json``, ``tiktoken`` or ``rwkv-vocab``, from the first bytes (the
    suffix only breaks ties)."""
    from tokparity.vocab.tiktoken import looks_like_tiktoken

    path = Path(path)
    try:
        with open(path, "rb") as f:
            head = f.read(4096)  # a tekken file names its kind a few hundred bytes in
    except FileNotFoundError:
        raise BadModelFile(path, "no such file") from None
    except IsADirectoryError:
        raise BadModelFile(path, "is a directory; name the tokenizer file inside it") from None
    except OSError as e:  # permission denied, a device, …
        raise BadModelFile(path, f"cannot read it ({e.strerror or e})") from None
    if head[:4] == b"GGUF":
        return "gguf"
    if looks_like_tiktoken(head):
        return "tiktoken"
    if head.lstrip()[:1] == b"{":
        return "hf-json"
    if path.suffix == ".gguf":
        return "gguf"  # the GGUF reader will say what is wrong with it
    if path.suffix == ".json":
        return "hf-json"
    # "1 '\\x00' 1": the rwkv package's vocabulary (by name too, so a bad first line is named by the loader)
    if path.name.startswith("rwkv_vocab") or FIRST_LINE.match(head) and path.suffix in (".txt", ""):
        return "rwkv-vocab"
    if path.suffix == ".model" or head[:1] == b"\x0a":  # ModelProto field 1, length-delimited
        return "spm-model"
    raise BadModelFile(path, "unknown tokenizer format; expected a .gguf, a SentencePiece .model, a tokenizer.json, "
                             "a tiktoken rank file or an RWKV vocabulary (rwkv_vocab_*.txt)")


# One run loads the same file several times (compare's vocabulary, the ref backend, hf-gguf, the
# sentencepiece backend's pieces, the chat template's tokens): the last few vocabularies are kept,
# keyed by the content of the files they were read from, and each caller gets its own copy of the
# parts anyone may change.
_CACHE: OrderedDict[tuple[str, bytes], Vocab] = OrderedDict()
_CACHE_SIZE = 4


def _content_key(path: str | os.PathLike, fmt: str) -> bytes | None:
    """A digest of what the loader reads: the file, and for a tokenizer.json the tokenizer_config.json
    beside it (or its absence). None where one is not a regular file: its loader names the problem."""
    from tokparity.vocab.hf_json import CONFIG_BYTES

    main = Path(path)
    config = main.with_name("tokenizer_config.json") if fmt == "hf-json" else None
    if not main.is_file() or config is not None and (config.exists() or config.is_symlink()) and not config.is_file():
        return None
    digest = hashlib.blake2b(digest_size=16)
    _digest_file(digest, main, None)
    if config is not None:  # (read up to its limit only: the loader refuses a larger one)
        digest.update(b"\0config\0")
        if config.is_file():
            _digest_file(digest, config, CONFIG_BYTES + 1)
        else:
            digest.update(b"none")
    return digest.digest()


def _digest_file(digest, file: Path, limit: int | None) -> None:
    left = limit
    with open(file, "rb") as f:
        while left is None or left > 0:
            chunk = f.read(1 << 20 if left is None else min(1 << 20, left))
            if not chunk:
                return
            digest.update(chunk)
            if left is not None:
                left -= len(chunk)


def load_vocab(path: str | os.PathLike, fmt: str | None = None) -> Vocab:
    """Load any supported tokenizer file into a ``Vocab``."""
    fmt = fmt or detect_format(path)
    try:
        content = _content_key(path, fmt)
    except OSError:
        content = None
    if content is None:
        return _load(path, fmt)  # let the loader name the problem
    key = (fmt, content)
    cached = _CACHE.get(key)
    if cached is None or cached.source != str(path):
        cached = _load(path, fmt)
        _share_lazy_merges(cached)
        _CACHE[key] = cached
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    _CACHE.move_to_end(key)
    vocab = copy.copy(cached)  # the lists (tokens, scores, types) are shared: nothing changes them
    vocab.flags = copy.copy(cached.flags)
    vocab.special_ids, vocab.extra = dict(cached.special_ids), dict(cached.extra)
    return vocab


def _share_lazy_merges(vocab: Vocab) -> None:
    """Copies decode the merges at most once between them."""
    loader = vocab._merges_loader
    if loader is not None:
        vocab._merges_loader = functools.cache(loader)


def _load(path: str | os.PathLike, fmt: str) -> Vocab:
    if fmt == "gguf":
        from tokparity.vocab.gguf import load_gguf
        return load_gguf(path)
    if fmt == "spm-model":
        from tokparity.vocab.spm_model import load_spm_model
        return load_spm_model(path)
    if fmt == "hf-json":
        from tokparity.vocab.hf_json import load_hf_json
        return load_hf_json(path)
    if fmt == "rwkv-vocab":
        from tokparity.vocab.rwkv_vocab import load_rwkv_vocab
        return load_rwkv_vocab(path)
    if fmt == "tiktoken":
        from tokparity.vocab.tiktoken import load_tiktoken
        return load_tiktoken(path)
    raise BadModelFile(path, f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
