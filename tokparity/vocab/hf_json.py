"""Hugging Face ``tokenizer.json`` (+ ``tokenizer_config.json`` beside it) -> ``Vocab``.

``tokenizer.json`` describes a pipeline (normalizer, pre_tokenizer, model, post_processor,
decoder); the model part becomes the Vocab's tokens/scores/merges and the other stages are
kept as they are in ``vocab.extra`` for the backends and the reference to read.

Token types are not stored in a tokenizer.json. They are derived the way llama.cpp's
``convert_hf_to_gguf.py`` derives them (``get_vocab_base`` and ``does_token_look_special``),
so that a tokenizer.json and the GGUF converted from it get the same fingerprint:
an added token that is special, or looks special (``<|…|>``, ``<pad>``, ``<unused…>``), is
CONTROL, any other added token USER_DEFINED, an id with no token ``[PAD{id}]`` UNUSED.
SentencePiece-style vocabularies also have BYTE (``<0x0A>``) and UNKNOWN (the unk token).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from tokparity.components import (
    AddedToken,
    TokenizerSpec,
    decoders,
    models,
    normalizers,
    parse_tokenizer_json,
    pre_tokenizers,
    processors,
)
from tokparity.errors import BadModelFile
from tokparity.textview import clipped
from tokparity.vocab.model import Flags, TokenType, Vocab

_BYTE_PIECE = re.compile(r"<0x[0-9A-F]{2}>")
# JSON's \uD800 escapes can spell a lone surrogate, which is not text: no UTF-8 encoding, no token.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_text(path: Path, what: str, strings: list[str]) -> None:
    if _SURROGATE.search("".join(strings)):
        i = next(i for i, t in enumerate(strings) if _SURROGATE.search(t))
        raise BadModelFile(path, f"{what} {i} {clipped(strings[i])} holds a lone surrogate (a \\uD800-\\uDFFF "
                                 "escape), which is not text; the file is corrupt")


def _looks_special(token: str) -> bool:
    """llama.cpp's ``does_token_look_special`` (convert_hf_to_gguf), word for word."""
    return (token in ("<pad>", "<mask>", "<2mass>", "[@BOS@]")
            or (token.startswith("<|") and token.endswith("|>"))
            or (token.startswith("<｜") and token.endswith("｜>"))
            or (token.startswith("<unused") and token.endswith(">")))


CONFIG_BYTES = 64 << 20  # tokenizer_config.json (Gemma 3's, with every added token, is about 1.2 MB)
# tokenizer.json: Gemma 3's, of 262,144 tokens, is about 33 MB. A sparse file of gigabytes would be
# read whole before its JSON fails.
TOKENIZER_JSON_BYTES = 1 << 30


def _read_json(path: Path, what: str, max_bytes: int | None = None) -> dict:
    """``path``'s JSON; with ``max_bytes``, a larger file is refused before it is read."""
    try:
        if max_bytes is not None and path.stat().st_size > max_bytes:
            raise BadModelFile(path, f"larger than {max_bytes:,} bytes; a {what} that large is refused (a damaged "
                                     "or hostile file)")
        with open(path, "rb") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise BadModelFile(path, "no such file") from None
    except IsADirectoryError:
        raise BadModelFile(path, f"is a directory, not a {what}") from None
    except OSError as e:
        raise BadModelFile(path, f"cannot read it ({e.strerror or e})") from None
    except UnicodeDecodeError as e:
        raise BadModelFile(path, f"not UTF-8 text at byte {e.start}; not a {what}") from None
    except json.JSONDecodeError as e:
        raise BadModelFile(path, f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    except ValueError as e:  # e.g. an integer of more than 4300 digits
        raise BadModelFile(path, f"invalid JSON: {str(e).split(';')[0]}") from None
    except RecursionError:
        raise BadModelFile(path, "JSON nested too deeply; not a tokenizer file") from None
    if not isinstance(data, dict):
        raise BadModelFile(path, f"top level is a JSON {type(data).__name__}, expected an object; not a {what}")
    return data


# --- steps no implementation survives -------------------------------------------------------------
#
# Some pipelines are valid JSON that tokenizers accepts and then panics on, or that make every
# implementation grow the text beyond any memory: they are refused at load, for every backend
# that reads a tokenizer.json, with the step named (the typed parse refuses empty or malformed
# patterns; this refuses growth).

# A chain of Replace steps may grow a text at most this many times over (real files: 1 to 4;
# 22 steps that each triple it make 3**22 and exhaust any memory).
MAX_GROWTH = 64


def _growth(step: normalizers.Replace) -> float:
    """How many times over one Replace step can make a text at most: each match of at least
    ``len(pattern)`` characters (one for a regex) becomes ``content``."""
    shortest = 1 if step.is_regex else max(1, len(step.pattern))
    return max(1.0, len(step.content) / shortest)


def check_pipeline(path: str | os.PathLike, data: dict) -> TokenizerSpec:
    """The typed pipeline of ``data``, refused when no implementation can run it: a component
    tokenizers does not know or cannot read, a Replace chain that can grow the text more than
    ``MAX_GROWTH`` times over."""
    path = Path(path)
    spec = parse_tokenizer_json(data, path)
    growth = 1.0
    for step in spec.normalizer_steps():
        if isinstance(step, normalizers.Replace):
            growth *= _growth(step)
    if growth > MAX_GROWTH:
        factor = f"{growth:.0f}" if growth < 1e15 else f"{growth:.1e}"
        raise BadModelFile(path, f"normalizer can grow text {factor}-fold (its Replace steps; tokparity allows "
                                 f"{MAX_GROWTH}); refusing")
    return spec


_CHECKED: set[tuple] = set()  # (the files that passed, as they were: a run makes one backend per run of a model)


def file_state(path: str | os.PathLike) -> tuple | None:
    """What a file is now, as a key of what was made of it: its real path, inode, size and time
    (None where it cannot be read: the read says why). A file changed on disk gets another key."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (os.path.realpath(path), found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns)


def check_tokenizer_json(path: str | os.PathLike) -> None:
    """``check_pipeline`` on a file (for backends that hand the file to another library). A file
    that passed is not read again until it changes (its size, its time, another file at its path)."""
    key = file_state(path)
    if key in _CHECKED:
        return
    check_pipeline(path, _read_json(Path(path), "tokenizer.json", TOKENIZER_JSON_BYTES))
    if key is not None:
        _CHECKED.add(key)


def load_hf_json(path: str | os.PathLike) -> Vocab:
    path = Path(path)
    data = _read_json(path, "tokenizer.json", TOKENIZER_JSON_BYTES)
    spec = check_pipeline(path, data)
    model = spec.model
    config_path = path.with_name("tokenizer_config.json")
    config = _read_json(config_path, "tokenizer_config.json", CONFIG_BYTES) if config_path.is_file() else {}

    # --- tokens and scores by id -----------------------------------------------------------
    scores: list[float] | None = None
    by_id: dict[int, str] = {}
    if isinstance(model, models.Unigram):
        by_id = {i: piece for i, (piece, _) in enumerate(model.vocab)}
    else:
        by_id = {i: token for token, i in model.vocab.items()}
    added_by_id: dict[int, AddedToken] = {}
    for added in spec.added_tokens:
        added_by_id[added.id] = added
        by_id[added.id] = added.content
    if not by_id:
        raise BadModelFile(path, "holds no tokens")
    size = max(by_id) + 1
    if size > 16 * len(by_id) + 1024:
        raise BadModelFile(path, f"token ids go up to {size - 1} for only {len(by_id)} tokens; the file is corrupt")
    if isinstance(model, models.Unigram):
        scores = [model.vocab[i][1] if i < len(model.vocab) else 0.0 for i in range(size)]

    # --- algorithm ----------------------------------------------------------------------------
    byte_level = any(isinstance(c, pre_tokenizers.ByteLevel) for c in spec.pre_tokenizer_steps()) or any(
        isinstance(c, (normalizers.ByteLevel,)) for c in spec.normalizer_steps()) or any(
        isinstance(c, decoders.ByteLevel) for c in spec.decoder_steps())
    if isinstance(model, models.Unigram):
        algorithm = "ugm"
    elif isinstance(model, models.WordPiece):
        algorithm = "wpm"
    elif isinstance(model, models.WordLevel):
        algorithm = "wordlevel"  # no llama.cpp counterpart: the reference and tokenizers only
    elif byte_level:
        algorithm = "bpe"  # byte-level BPE (llama.cpp "gpt2")
    else:
        algorithm = "spm"  # SentencePiece-style BPE: ▁ for spaces, <0xNN> byte fallback

    unk_token = getattr(model, "unk_token", None)
    if isinstance(model, models.Unigram) and model.unk_id is not None:
        unk_token = by_id.get(model.unk_id)
    tokens: list[str] = []
    types: list[int] = []
    for i in range(size):
        token = by_id.get(i)
        if token is None:
            tokens.append(f"[PAD{i}]")
            types.append(TokenType.UNUSED)
            continue
        added_entry = added_by_id.get(i)
        if added_entry is not None:
            ttype = TokenType.CONTROL if added_entry.special or _looks_special(token) else TokenType.USER_DEFINED
            if ttype == TokenType.USER_DEFINED:
                token = token.replace("\u2581", " ")  # llama.cpp pre-normalizes user-defined spaces
        elif token == unk_token:
            ttype = TokenType.UNKNOWN
        elif algorithm in ("spm", "ugm") and _BYTE_PIECE.fullmatch(token):
            ttype = TokenType.BYTE
        else:
            ttype = TokenType.NORMAL
        tokens.append(token)
        types.append(ttype)

    merges = list(model.merges) if isinstance(model, models.BPE) else []
    _check_text(path, "token", tokens)
    if merges:
        _check_text(path, "merge", [a + b for a, b in merges])

    # --- special ids and flags ----------------------------------------------------------------
    token_ids = {t: i for i, t in sorted(by_id.items(), reverse=True)}  # first id wins
    special_ids: dict[str, int] = {}

    def config_token(key: str) -> str | None:
        value = config.get(key)
        if isinstance(value, dict):  # {"content": "<s>", ...} in older configs
            value = value.get("content")
        return value if isinstance(value, str) else None

    for role, key in (("bos", "bos_token"), ("eos", "eos_token"), ("unk", "unk_token"), ("pad", "pad_token"),
                      ("sep", "sep_token"), ("cls", "cls_token"), ("mask", "mask_token")):
        text = config_token(key)
        if text is not None and text in token_ids:
            special_ids[role] = token_ids[text]
    if "unk" not in special_ids and isinstance(unk_token, str) and unk_token in token_ids:
        special_ids["unk"] = token_ids[unk_token]

    flags = Flags(byte_fallback=getattr(model, "byte_fallback", False)
                  if isinstance(model, (models.BPE, models.Unigram)) else None)
    add_bos, add_eos, template_ids = _template_specials(spec.post_processor)
    for role, i in template_ids.items():
        special_ids.setdefault(role, i)
    flags.add_bos = config["add_bos_token"] if isinstance(config.get("add_bos_token"), bool) else add_bos
    flags.add_eos = config["add_eos_token"] if isinstance(config.get("add_eos_token"), bool) else add_eos

    norm_steps = spec.normalizer_steps()
    pre_steps = spec.pre_tokenizer_steps()
    precompiled = next((c.charsmap for c in norm_steps if isinstance(c, normalizers.Precompiled) and c.charsmap), None)
    if algorithm in ("spm", "ugm"):
        metaspace = [c for c in pre_steps if isinstance(c, pre_tokenizers.Metaspace)]
        prepends = any(isinstance(c, normalizers.Prepend) and c.prepend == "\u2581" for c in norm_steps)
        # "first" prepends to the text's first piece as "always" does; they differ only after an
        # added token, which llama.cpp's flag cannot say (the reference follows tokenizers).
        flags.add_space_prefix = prepends or bool(metaspace and metaspace[0].prepend_scheme in ("always", "first"))
        flags.escape_whitespaces = bool(metaspace) or any(
            isinstance(c, normalizers.Replace) and c.content == "\u2581" for c in norm_steps)
        flags.remove_extra_whitespaces = any(
            isinstance(c, normalizers.Replace) and c.is_regex and c.pattern == " {2,}" for c in norm_steps)
    elif algorithm == "bpe":
        flags.add_space_prefix = any(isinstance(c, pre_tokenizers.ByteLevel) and c.add_prefix_space for c in pre_steps)

    chat_template = config.get("chat_template")
    vocab = Vocab(
        algorithm=algorithm,
        tokens=tokens,
        token_types=[int(t) for t in types],
        scores=scores,
        special_ids=special_ids,
        flags=flags,
        pre_tokenizer=None,  # tokenizer.json names no llama.cpp pre-tokenizer; its config is in extra
        precompiled_charsmap=precompiled,
        chat_template=chat_template if isinstance(chat_template, str) else None,
        source=str(path),
        source_format="hf-json",
        extra={
            "model_type": model.kind,
            # the model's own table: a port that reads only it knows no id from here on
            "model_size": len(model.vocab) if isinstance(model, models.Unigram) else max(model.vocab.values(), default=-1) + 1,
            "spec": spec,  # the typed pipeline: what the reference reads
            # The JSON as written, for the converters (to_gguf) that copy it on
            "model": {k: v for k, v in data["model"].items() if k not in ("vocab", "merges")},
            "normalizer": data.get("normalizer"),
            "pre_tokenizer": data.get("pre_tokenizer"),
            "post_processor": data.get("post_processor"),
            "decoder": data.get("decoder"),
            "added_tokens": data.get("added_tokens") or [],
            "tokenizer_config": {k: v for k, v in config.items() if k not in ("added_tokens_decoder", "chat_template")},
        },
    )
    vocab.set_merges(merges)
    return vocab


def _template_specials(post) -> tuple[bool | None, bool | None, dict[str, int]]:
    """What a post-processor adds around a single sequence: (add_bos, add_eos, role ids).

    ``TemplateProcessing`` names the tokens it adds (``<s> $A``); ``BertProcessing`` /
    ``RobertaProcessing`` add cls and sep. The first of a ``Sequence`` that adds any is used.
    """
    for p in processors.flatten(post):
        if isinstance(p, processors.BertProcessing):  # and RobertaProcessing
            return True, True, {"cls": p.cls[1], "sep": p.sep[1]}
        if isinstance(p, processors.TemplateProcessing):
            ids = dict(p.special_tokens)
            single = p.single

            first = _special_id(single[0], ids) if single else None
            last = _special_id(single[-1], ids) if single else None
            roles = {}
            if first is not None:
                roles["bos"] = first
            if last is not None and len(single) > 1:
                roles["eos"] = last
            return first is not None, last is not None and len(single) > 1, roles
    return None, None, {}


def _special_id(item: tuple[str, str], ids: dict[str, tuple[int, ...]]) -> int | None:
    what, name = item
    return ids[name][0] if what == "special" and ids.get(name) else None
