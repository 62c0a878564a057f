"""GGUF (``llama`` or ``t5``) -> SentencePiece ``.model``, built as a ``ModelProto``.

A SentencePiece-family GGUF holds what a ``.model`` holds, under other names:

    tokenizer.ggml.tokens / scores / token_type   ->  pieces (piece, score, type; same numbering)
    tokenizer.ggml.model  llama / t5              ->  trainer_spec.model_type  BPE / UNIGRAM
    <0xNN> byte pieces present                    ->  trainer_spec.byte_fallback
    unk / bos / eos / pad token ids               ->  trainer_spec.*_id and *_piece
    tokenizer.ggml.add_space_prefix               ->  normalizer_spec.add_dummy_prefix
    tokenizer.ggml.remove_extra_whitespaces       ->  normalizer_spec.remove_extra_whitespaces
    tokenizer.ggml.precompiled_charsmap           ->  normalizer_spec.precompiled_charsmap
    user-defined token with spaces ("  ")         ->  user-defined piece with ▁ ("▁▁")

The last line undoes a rule of llama.cpp's converter: it writes the ▁ of user-defined tokens as
spaces, because llama.cpp matches them in the raw text; SentencePiece matches user-defined pieces
after escaping whitespace as ▁, so a piece holding a space would never match (Gemma 3's runs of
spaces, ids 138-168, are such tokens).

llama.cpp's SPM tokenizer normalizes nothing, so a ``llama`` GGUF becomes a .model whose
normalizer is the identity (no charsmap, no whitespace collapsing); its defaults are llama.cpp's
(add_space_prefix true for ``llama`` and ``t5``, remove_extra_whitespaces false).
"""

from __future__ import annotations

import os

from tokparity.convert.base import Warnings
from tokparity.errors import MissingDependency, TokparityError
from tokparity.vocab.gguf import load_gguf
from tokparity.vocab.model import TokenType

MODEL_TYPE = {"spm": 2, "ugm": 1}  # trainer_spec.model_type: BPE, UNIGRAM
# Roles a .model can hold, with their TrainerSpec field names.
SPM_ROLES = ("unk", "bos", "eos", "pad")
_SPM_TYPES = {int(t) for t in TokenType if t != TokenType.UNDEFINED}


def _pb2():
    try:
        from sentencepiece import sentencepiece_model_pb2
    except ImportError as e:
        missing = "protobuf" if "google" in str(e) or "protobuf" in str(e) else "sentencepiece"
        raise MissingDependency("writing a SentencePiece .model", missing) from None
    return sentencepiece_model_pb2


def gguf_to_spm_model(src: str | os.PathLike, out: str | os.PathLike) -> Warnings:
    vocab = load_gguf(src)
    ggml_model = vocab.extra.get("tokenizer.ggml.model")
    if vocab.algorithm not in MODEL_TYPE:
        raise TokparityError(f"{src}: tokenizer.ggml.model is {ggml_model!r} ({vocab.algorithm}); only SentencePiece "
                             "models ('llama' = BPE, 't5' = unigram) can become a .model")
    if vocab.scores is None:
        raise TokparityError(f"{src}: has no tokenizer.ggml.scores; a SentencePiece model needs a score per piece")
    pb2 = _pb2()
    warnings = Warnings()
    types = vocab.token_types or [int(TokenType.NORMAL)] * vocab.size
    _check_types(src, vocab.tokens, types)

    # SentencePiece allows one UNKNOWN piece. Extra ones (Phi-3 types its [PAD…] fillers so)
    # become UNUSED, which neither library ever produces from text.
    unk_id = vocab.special_ids.get("unk")
    unknowns = [i for i, t in enumerate(types) if t == TokenType.UNKNOWN]
    if unk_id is None or not 0 <= unk_id < vocab.size or types[unk_id] != TokenType.UNKNOWN:
        unk_id = unknowns[0] if unknowns else unk_id
    extra_unknowns = [i for i in unknowns if i != unk_id]
    if extra_unknowns:
        types = list(types)
        for i in extra_unknowns:
            types[i] = int(TokenType.UNUSED)
        warnings.add("token_type", f"{len(extra_unknowns)} more tokens of type UNKNOWN (e.g. "
                                   f"{vocab.tokens[extra_unknowns[0]]!r}); SentencePiece allows one, so they "
                                   "are written as UNUSED")

    m = pb2.ModelProto()
    seen: dict[str, int] = {}
    undefined = invalid = 0
    tokens = _user_defined_spaces_as_u2581(vocab.tokens, types, warnings)
    for i, (token, score, ttype) in enumerate(zip(tokens, vocab.scores, types)):
        if token in seen:
            raise TokparityError(f"{src}: token {i} {token!r} repeats token {seen[token]}; SentencePiece "
                                 "refuses a model with duplicate pieces")
        if token == "":
            raise TokparityError(f"{src}: token {i} is empty; SentencePiece refuses empty pieces")
        seen[token] = i
        piece = m.pieces.add()
        text = token.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        if text != token:
            invalid += 1
        piece.piece = text
        piece.score = score
        if ttype not in _SPM_TYPES:
            undefined += 1
            ttype = TokenType.NORMAL
        piece.type = int(ttype)
    if invalid:
        warnings.add("tokens", f"{invalid} tokens are not valid UTF-8, which a .model cannot hold; written with "
                               "U+FFFD in place of the bad bytes")
    if undefined:
        warnings.add("token_type", f"{undefined} tokens have llama.cpp type 0 (undefined), which SentencePiece "
                                   "lacks; written as NORMAL")

    has_bytes = any(t == TokenType.BYTE for t in types)
    ts = m.trainer_spec
    ts.model_type = MODEL_TYPE[vocab.algorithm]
    ts.vocab_size = vocab.size
    ts.byte_fallback = has_bytes
    for role in SPM_ROLES:
        i = vocab.special_ids.get(role, -1)
        if not 0 <= i < vocab.size:
            i = -1
        setattr(ts, f"{role}_id", i)
        if i >= 0:
            setattr(ts, f"{role}_piece", vocab.tokens[i])
    if ts.unk_id < 0:
        unk = [i for i, t in enumerate(types) if t == TokenType.UNKNOWN]
        if not unk:
            raise TokparityError(f"{src}: has no unknown token (no unk id and no token of type UNKNOWN); "
                                 "SentencePiece requires one")
        ts.unk_id, ts.unk_piece = unk[0], vocab.tokens[unk[0]]
    # Clash: a role id may not be shared, and unused ids must differ from used ones.
    ids = [getattr(ts, f"{r}_id") for r in SPM_ROLES if getattr(ts, f"{r}_id") >= 0]
    if len(ids) != len(set(ids)):
        for role in ("pad", "eos", "bos"):
            rid = getattr(ts, f"{role}_id")
            if rid >= 0 and [getattr(ts, f"{r}_id") for r in SPM_ROLES].count(rid) > 1:
                warnings.add(f"{role}_token_id", f"id {rid} is also another role's id, which SentencePiece "
                                                 "refuses; not written")
                setattr(ts, f"{role}_id", -1)
    for role in SPM_ROLES:
        rid = getattr(ts, f"{role}_id")
        if rid >= 0 and types[rid] not in (TokenType.CONTROL, TokenType.UNKNOWN, TokenType.USER_DEFINED):
            warnings.add(f"{role}_token_id", f"id {rid} ({vocab.tokens[rid]!r}) is a {TokenType(types[rid]).name.lower()} "
                                             "token; SentencePiece wants control pieces for its roles; not written")
            setattr(ts, f"{role}_id", -1)

    flags = vocab.flags
    ns = m.normalizer_spec
    ns.add_dummy_prefix = True if flags.add_space_prefix is None else flags.add_space_prefix
    ns.escape_whitespaces = True
    if vocab.algorithm == "spm":
        # llama.cpp's SPM tokenizer does neither: an identity normalizer is the faithful one.
        ns.name = "identity"
        ns.remove_extra_whitespaces = False
        if flags.remove_extra_whitespaces:
            warnings.add("remove_extra_whitespaces", "true in the GGUF, but llama.cpp's SPM tokenizer ignores it; "
                                                     "written false to match llama.cpp")
        if vocab.precompiled_charsmap:
            warnings.add("precompiled_charsmap", "present in the GGUF, but llama.cpp's SPM tokenizer ignores it; "
                                                 "not written, to match llama.cpp")
    else:
        ns.remove_extra_whitespaces = bool(flags.remove_extra_whitespaces)
        if vocab.precompiled_charsmap:
            ns.name = "user_defined"
            ns.precompiled_charsmap = vocab.precompiled_charsmap
        else:
            ns.name = "identity"

    _lost_fields(vocab, warnings)
    data = m.SerializeToString()
    with open(out, "wb") as f:
        f.write(data)
    return warnings


def _check_types(src, tokens: list[str], types: list[int]) -> None:
    """Every token type one llama.cpp defines (0-6): a .model written from any other would be a guess."""
    bad = next((i for i, t in enumerate(types) if not 0 <= t <= 6), None)
    if bad is not None:
        raise TokparityError(f"{src}: token {bad} {tokens[bad]!r} has tokenizer.ggml.token_type {types[bad]}, which "
                             "llama.cpp does not define (0-6); the file is corrupt, nothing written")


def _user_defined_spaces_as_u2581(tokens: list[str], types, warnings: Warnings) -> list[str]:
    """User-defined tokens written with spaces (llama.cpp's converter rule) back to ▁, unless the
    ▁ spelling is already another piece (then the token is kept and never matches)."""
    taken = set(tokens)
    out, rewritten, kept = list(tokens), [], []
    for i, (token, ttype) in enumerate(zip(tokens, types)):
        if ttype == TokenType.USER_DEFINED and " " in token:
            escaped = token.replace(" ", "\u2581")
            if escaped in taken:
                kept.append(token)
                continue
            out[i] = escaped
            rewritten.append(i)
    if rewritten:
        warnings.add("user_defined", f"{len(rewritten)} user-defined tokens hold spaces (e.g. id {rewritten[0]} "
                                     f"{tokens[rewritten[0]]!r}), as llama.cpp's converter writes them; written "
                                     "with ▁, the spelling SentencePiece matches")
    if kept:
        warnings.add("user_defined", f"{len(kept)} user-defined tokens hold spaces and their ▁ spelling is another "
                                     f"piece (e.g. {kept[0]!r}); kept with spaces, so SentencePiece never matches them")
    return out


def _lost_fields(vocab, warnings: Warnings) -> None:
    """Everything the GGUF says about tokenization that a .model has no field for."""
    f = vocab.flags
    if f.add_bos is not None or vocab.algorithm == "spm":
        warnings.add("add_bos_token", "a .model has no field for it (SentencePiece adds BOS only when "
                                      f"encode is asked to); the GGUF says {str(f.add_bos).lower() if f.add_bos is not None else 'nothing (llama.cpp default true)'}")
    if f.add_eos is not None:
        warnings.add("add_eos_token", f"a .model has no field for it; the GGUF says {str(f.add_eos).lower()}")
    pre = vocab.pre_tokenizer
    if pre not in (None, "default"):
        warnings.add("tokenizer.ggml.pre", f"{pre!r} has no .model field; SentencePiece has no pre-tokenizer")
    if vocab.merges_count:
        warnings.add("merges", f"{vocab.merges_count:,} merges not written; a SentencePiece BPE model merges by "
                               "piece score")
    for role, i in vocab.special_ids.items():
        if role not in SPM_ROLES:
            warnings.add(f"{role}_token_id", f"id {i}: a .model holds only unk/bos/eos/pad ids")
    if vocab.chat_template:
        warnings.add("chat_template", "a .model has no field for it")
    other = sorted(k for k in vocab.extra if k.startswith("tokenizer.") and k not in _CARRIED)
    for key in other:
        warnings.add(key, "no .model field for it")


_CARRIED = {
    "tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_eos_token",
    "tokenizer.ggml.add_space_prefix", "tokenizer.ggml.remove_extra_whitespaces",
    "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
    "tokenizer.ggml.padding_token_id",
} | {f"tokenizer.ggml.{k}_token_id" for k in ("eot", "eom", "seperator", "cls", "mask", "fim_pre", "fim_suf",
                                               "fim_mid", "fim_pad", "fim_rep", "fim_sep", "prefix", "suffix",
                                               "middle")}
