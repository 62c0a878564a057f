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

import base64
import json
import os
import re
from pathlib import Path

from tokparity.errors import BadModelFile
from tokparity.textview import clipped
from tokparity.vocab.model import Flags, TokenType, Vocab

SUPPORTED_MODELS = ("BPE", "Unigram", "WordPiece")
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


def _walk(config) -> list[dict]:
    """Every component of a (possibly nested ``Sequence``) normalizer / pre-tokenizer / decoder."""
    if not isinstance(config, dict):
        return []
    inner = config.get("normalizers") or config.get("pretokenizers") or config.get("decoders")
    if config.get("type") == "Sequence" and isinstance(inner, list):
        return [c for item in inner for c in _walk(item)]
    return [config]


def _read_json(path: Path, what: str) -> dict:
    try:
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
# that reads a tokenizer.json, with the step named.

# A chain of Replace steps may grow a text at most this many times over (real files: 1 to 4;
# 22 steps that each triple it make 3**22 and exhaust any memory).
MAX_GROWTH = 64


def _pattern(path: Path, where: str, c: dict) -> tuple[str, bool]:
    """A Replace or Split ``pattern``: ``{"String": " "}`` or ``{"Regex": "..."}`` -> (text, is_regex)."""
    p = c.get("pattern")
    if "pattern" not in c:
        raise BadModelFile(path, f"{where} has no 'pattern'; expected {{\"String\": ...}} or {{\"Regex\": ...}}")
    if not (isinstance(p, dict) and len(p) == 1 and next(iter(p)) in ("String", "Regex")
            and isinstance(next(iter(p.values())), str)):
        raise BadModelFile(path, f"{where} pattern is {clipped(p)}; expected {{\"String\": \"...\"}} or "
                                 '{"Regex": "..."}')
    kind, text = next(iter(p.items()))
    if text == "" and c.get("type") == "Replace":  # tokenizers panics on it ("index out of bounds")
        raise BadModelFile(path, f"{where} has an empty pattern, which tokenizers cannot run (it panics); "
                                 "remove the step or give it a pattern")
    return text, kind == "Regex"


def _growth(pattern: str, is_regex: bool, content: str) -> float:
    """How many times over one Replace step can make a text at most: each match of at least
    ``len(pattern)`` characters (one for a regex) becomes ``content``."""
    shortest = 1 if is_regex else max(1, len(pattern))
    return max(1.0, len(content) / shortest)


def check_pipeline(path: str | os.PathLike, data: dict) -> None:
    """Refuse a tokenizer.json whose normalizer or pre-tokenizer no implementation can run:
    a Replace or Split without a proper ``pattern``, a Replace with an empty one, a chain of
    Replace steps that can grow the text more than ``MAX_GROWTH`` times over."""
    path = Path(path)
    growth = 1.0
    for i, c in enumerate(_walk(data.get("normalizer"))):
        if c.get("type") != "Replace":
            continue
        where = f"normalizer step {i} (Replace)"
        pattern, is_regex = _pattern(path, where, c)
        content = c.get("content")
        if not isinstance(content, str):
            raise BadModelFile(path, f"{where} content is {clipped(content)}; expected a string")
        growth *= _growth(pattern, is_regex, content)
    if growth > MAX_GROWTH:
        factor = f"{growth:.0f}" if growth < 1e15 else f"{growth:.1e}"
        raise BadModelFile(path, f"normalizer can grow text {factor}-fold (its Replace steps; tokparity allows "
                                 f"{MAX_GROWTH}); refusing")
    for i, c in enumerate(_walk(data.get("pre_tokenizer"))):
        if c.get("type") == "Split":
            _pattern(path, f"pre_tokenizer step {i} (Split)", c)


def check_tokenizer_json(path: str | os.PathLike) -> None:
    """``check_pipeline`` on a file (for backends that hand the file to another library)."""
    check_pipeline(path, _read_json(Path(path), "tokenizer.json"))


def load_hf_json(path: str | os.PathLike) -> Vocab:
    path = Path(path)
    data = _read_json(path, "tokenizer.json")
    check_pipeline(path, data)
    model = data.get("model")
    if not isinstance(model, dict) or "type" not in model:
        raise BadModelFile(path, "has no 'model' object with a 'type'; not a Hugging Face tokenizer.json")
    mtype = model["type"]
    if mtype not in SUPPORTED_MODELS:
        raise BadModelFile(path, f"unknown model type {clipped(mtype)}; tokparity reads {', '.join(SUPPORTED_MODELS)}")
    config_path = path.with_name("tokenizer_config.json")
    config = _read_json(config_path, "tokenizer_config.json") if config_path.is_file() else {}

    normalizers = _walk(data.get("normalizer"))
    pre_tokenizers = _walk(data.get("pre_tokenizer"))
    decoders = _walk(data.get("decoder"))
    kinds = {c.get("type") for c in normalizers + pre_tokenizers + decoders if isinstance(c.get("type"), str)}

    # --- tokens and scores by id -----------------------------------------------------------
    vocab_entries = model.get("vocab")
    scores: list[float] | None = None
    by_id: dict[int, str] = {}
    if mtype == "Unigram":
        if not isinstance(vocab_entries, list):
            raise BadModelFile(path, "model.vocab of a Unigram model must be a list of [piece, score]")
        score_by_id = {}
        for i, entry in enumerate(vocab_entries):
            if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)
                    and isinstance(entry[1], (int, float))):
                raise BadModelFile(path, f"model.vocab[{i}] is not a [piece, score] pair")
            by_id[i] = entry[0]
            try:
                score_by_id[i] = float(entry[1])
            except OverflowError:
                raise BadModelFile(path, f"model.vocab[{i}] has a score too large for a float") from None
    else:
        if not isinstance(vocab_entries, dict):
            raise BadModelFile(path, f"model.vocab of a {mtype} model must be an object mapping token to id")
        for token, i in vocab_entries.items():
            if not isinstance(i, int) or i < 0:
                raise BadModelFile(path, f"model.vocab[{clipped(token)}] is {clipped(i)}, expected a non-negative id")
            by_id[i] = token
    added = data.get("added_tokens") or []
    if not isinstance(added, list):
        raise BadModelFile(path, "added_tokens must be a list")
    added_by_id: dict[int, dict] = {}
    for entry in added:
        if not (isinstance(entry, dict) and isinstance(entry.get("id"), int) and isinstance(entry.get("content"), str)):
            raise BadModelFile(path, f"malformed added_tokens entry {clipped(entry)}; "
                                     'expected {"id": <int>, "content": <str>, …}')
        if entry["id"] < 0:
            raise BadModelFile(path, f"added_tokens entry {clipped(entry['content'])} has id {entry['id']}, "
                                     "expected a non-negative id")
        added_by_id[entry["id"]] = entry
        by_id[entry["id"]] = entry["content"]
    if not by_id:
        raise BadModelFile(path, "holds no tokens")
    size = max(by_id) + 1
    if size > 16 * len(by_id) + 1024:
        raise BadModelFile(path, f"token ids go up to {size - 1} for only {len(by_id)} tokens; the file is corrupt")
    if mtype == "Unigram":
        scores = [score_by_id.get(i, 0.0) for i in range(size)]

    # --- algorithm ----------------------------------------------------------------------------
    if mtype == "Unigram":
        algorithm = "ugm"
    elif mtype == "WordPiece":
        algorithm = "wpm"
    elif "ByteLevel" in kinds:
        algorithm = "bpe"  # byte-level BPE (llama.cpp "gpt2")
    else:
        algorithm = "spm"  # SentencePiece-style BPE: ▁ for spaces, <0xNN> byte fallback

    unk_token = model.get("unk_token")
    if mtype == "Unigram" and isinstance(model.get("unk_id"), int):
        unk_token = by_id.get(model["unk_id"])
    tokens: list[str] = []
    types: list[int] = []
    for i in range(size):
        token = by_id.get(i)
        if token is None:
            tokens.append(f"[PAD{i}]")
            types.append(TokenType.UNUSED)
            continue
        entry = added_by_id.get(i)
        if entry is not None:
            ttype = TokenType.CONTROL if entry.get("special") or _looks_special(token) else TokenType.USER_DEFINED
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

    # --- merges ---------------------------------------------------------------------------------
    merges: list[tuple[str, str]] = []
    raw_merges = model.get("merges") or []
    if not isinstance(raw_merges, list):
        raise BadModelFile(path, f"model.merges is a JSON {type(raw_merges).__name__}, expected a list")
    for i, m in enumerate(raw_merges):
        if isinstance(m, str):
            pos = m.find(" ", 1)
            if pos < 0:
                raise BadModelFile(path, f"model.merges[{i}] {clipped(m)} has no space between its two parts")
            merges.append((m[:pos], m[pos + 1:]))
        elif isinstance(m, list) and len(m) == 2 and all(isinstance(x, str) for x in m):
            merges.append((m[0], m[1]))
        else:
            raise BadModelFile(path, f"model.merges[{i}] is neither 'a b' nor ['a', 'b']")
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

    flags = Flags(byte_fallback=bool(model.get("byte_fallback")) if mtype != "WordPiece" else None)
    post = data.get("post_processor")
    add_bos, add_eos, template_ids = _template_specials(post)
    for role, i in template_ids.items():
        special_ids.setdefault(role, i)
    flags.add_bos = config["add_bos_token"] if isinstance(config.get("add_bos_token"), bool) else add_bos
    flags.add_eos = config["add_eos_token"] if isinstance(config.get("add_eos_token"), bool) else add_eos

    precompiled = None
    for c in normalizers:
        if c.get("type") == "Precompiled" and c.get("precompiled_charsmap"):
            try:
                precompiled = base64.b64decode(c["precompiled_charsmap"], validate=True)
            except (ValueError, TypeError):
                raise BadModelFile(path, "normalizer.precompiled_charsmap is not valid base64") from None
    if algorithm in ("spm", "ugm"):
        metaspace = [c for c in pre_tokenizers if c.get("type") == "Metaspace"]
        prepends = any(c.get("type") == "Prepend" and c.get("prepend") == "\u2581" for c in normalizers)
        if metaspace:
            m = metaspace[0]
            scheme = m.get("prepend_scheme", "always" if m.get("add_prefix_space", True) else "never")
            flags.add_space_prefix = scheme in ("always", "first") or prepends
        else:
            flags.add_space_prefix = prepends
        flags.escape_whitespaces = bool(metaspace) or any(
            c.get("type") == "Replace" and c.get("content") == "\u2581" for c in normalizers)
        flags.remove_extra_whitespaces = any(
            c.get("type") == "Replace" and isinstance(c.get("pattern"), dict) and c["pattern"].get("Regex") == " {2,}"
            for c in normalizers)
    elif algorithm == "bpe":
        flags.add_space_prefix = any(c.get("type") == "ByteLevel" and c.get("add_prefix_space")
                                     for c in pre_tokenizers)

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
            "model_type": mtype,
            "model": {k: v for k, v in model.items() if k not in ("vocab", "merges")},
            "normalizer": data.get("normalizer"),
            "pre_tokenizer": data.get("pre_tokenizer"),
            "post_processor": post,
            "decoder": data.get("decoder"),
            "added_tokens": added,
            "tokenizer_config": {k: v for k, v in config.items() if k not in ("added_tokens_decoder", "chat_template")},
        },
    )
    vocab.set_merges(merges)
    return vocab


def _template_specials(post) -> tuple[bool | None, bool | None, dict[str, int]]:
    """What a post-processor adds around a single sequence: (add_bos, add_eos, role ids).

    ``TemplateProcessing`` names the tokens it adds (``<s> $A``); ``BertProcessing`` /
    ``RobertaProcessing`` add cls and sep. Nested ``Sequence`` processors are searched too.
    """
    if not isinstance(post, dict):
        return None, None, {}
    ptype = post.get("type")
    if ptype == "Sequence":
        processors = post.get("processors")
        for p in processors if isinstance(processors, list) else []:
            result = _template_specials(p)
            if result != (None, None, {}):
                return result
        return None, None, {}
    if ptype in ("BertProcessing", "RobertaProcessing"):
        ids = {}
        for role in ("cls", "sep"):
            pair = post.get(role)
            if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[1], int):
                ids[role] = pair[1]
        return True, True, ids
    if ptype != "TemplateProcessing":
        return None, None, {}
    single = post.get("single")
    single = single if isinstance(single, list) else []
    specials = post.get("special_tokens")
    specials = specials if isinstance(specials, dict) else {}

    def special_id(item) -> int | None:
        token = item.get("SpecialToken") if isinstance(item, dict) else None
        name = token.get("id") if isinstance(token, dict) else None
        entry = specials.get(name) if isinstance(name, str) else None
        ids = entry.get("ids") if isinstance(entry, dict) else None
        return ids[0] if isinstance(ids, list) and ids and isinstance(ids[0], int) else None

    first = special_id(single[0]) if single else None
    last = special_id(single[-1]) if single else None
    ids = {}
    if first is not None:
        ids["bos"] = first
    if last is not None and len(single) > 1:
        ids["eos"] = last
    return first is not None, last is not None and len(single) > 1, ids
