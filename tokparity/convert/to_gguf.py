"""tokenizer.json or SentencePiece ``.model`` -> a vocab-only GGUF that llama.cpp loads.

The keys are the ones llama.cpp's own ``convert_hf_to_gguf.py`` writes, with the same values
where it has a rule for them:

* ``tokenizer.ggml.model``: ``llama`` for SentencePiece BPE, ``t5`` for unigram, ``gpt2`` for
  byte-level BPE (what ``_set_vocab_sentencepiece``, ``T5Model.set_vocab`` and
  ``_set_vocab_gpt2`` write);
* ``tokenizer.ggml.pre``: ``default`` for SentencePiece models; for byte-level BPE the name
  llama.cpp's converter gives by hashing the ids of a check text (``pre_hashes.py``);
* tokens, token types (as the tokenizer.json loader derives them, which is
  ``get_vocab_base``'s rule), scores, merges (spaces inside a merge part written as ``Ġ``, as
  ``SpecialVocab`` does), special ids, ``add_bos_token`` / ``add_eos_token`` /
  ``add_space_prefix`` / ``remove_extra_whitespaces``, ``precompiled_charsmap`` and the chat
  template.

One rule is tokparity's own: a tokenizer.json of SentencePiece-style BPE (``▁`` for spaces,
``<0xNN>`` byte fallback, as Gemma 3's and Llama 2's) has merges but no scores, and llama.cpp's
``llama`` tokenizer ranks by score alone. llama.cpp's ``LlamaHfVocab`` gives every token
-1000.0, which makes its tokenizer merge left to right instead of by rank; here each token
gets ``-(rank of the first merge that makes it)``, so the best-ranked merge wins as in HF.

A vocab-only GGUF still needs a few architecture keys, because llama.cpp reads the model's
hyper-parameters before its vocabulary even with ``vocab_only``; they are written with
placeholder values (``general.architecture = llama``, one block, 4096 context).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from tokparity.convert.base import Warnings
from tokparity.errors import MissingDependency, TokparityError
from tokparity.vocab.hf_json import load_hf_json
from tokparity.vocab.model import TokenType, Vocab
from tokparity.vocab.spm_model import load_spm_model

# algorithm -> tokenizer.ggml.model
GGML_MODEL = {"spm": "llama", "ugm": "t5", "bpe": "gpt2"}

# special role -> the GGUFWriter method that writes its id (GGUF spells "seperator").
SPECIAL_WRITERS = {
    "bos": "add_bos_token_id", "eos": "add_eos_token_id", "unk": "add_unk_token_id",
    "sep": "add_sep_token_id", "pad": "add_pad_token_id", "cls": "add_cls_token_id",
    "mask": "add_mask_token_id", "eot": "add_eot_token_id", "eom": "add_eom_token_id",
}

# llama.cpp 0.3.36's SPM tokenizer falls back to <0xNN> pieces for text its pieces cannot cover;
# when there are none, llama_vocab::byte_to_token throws std::out_of_range and the process aborts.
NO_BYTE_PIECES = ("the vocabulary has no <0xNN> byte pieces; llama.cpp's SPM ('llama') tokenizer aborts the "
                  "whole process (std::out_of_range in byte_to_token) on any character its pieces do not "
                  "cover, where SentencePiece gives <unk>")

# Placeholder hyper-parameters that let llama.cpp open a vocab-only file (see module docstring).
_PLACEHOLDER_HPARAMS = {"context_length": 4096, "embedding_length": 4096, "block_count": 1,
                        "feed_forward_length": 11008, "attention.head_count": 32}


def _token_bytes(tokens: list[str]) -> list[bytes]:
    return [t.encode("utf-8", "surrogateescape") for t in tokens]


def write_vocab_gguf(vocab: Vocab, out: str | os.PathLike, *, ggml_model: str, pre: str | None,
                     scores: list[float] | None, merges: list[str] | None, name: str) -> None:
    """Write ``vocab`` as a vocab-only GGUF. Flags that are ``None`` are left out (llama.cpp's
    default applies), as llama.cpp's converter leaves out what the source does not say."""
    try:
        import gguf
    except ImportError:
        raise MissingDependency("converting to GGUF", "gguf") from None

    arch = "llama"
    w = gguf.GGUFWriter(str(out), arch=arch)
    w.add_name(name)
    for key, value in _PLACEHOLDER_HPARAMS.items():
        w.add_uint32(f"{arch}.{key}", value)
    w.add_uint32(f"{arch}.vocab_size", vocab.size)
    w.add_tokenizer_model(ggml_model)
    if pre is not None:
        w.add_tokenizer_pre(pre)
    w.add_token_list(_token_bytes(vocab.tokens))
    if scores is not None:
        w.add_token_scores(scores)
    types = vocab.token_types or [int(TokenType.NORMAL)] * vocab.size
    w.add_token_types(types)
    if merges:
        w.add_token_merges(merges)
    for role, method in SPECIAL_WRITERS.items():
        i = vocab.special_ids.get(role)
        if i is not None and 0 <= i < vocab.size:
            getattr(w, method)(i)
    f = vocab.flags
    if f.add_bos is not None:
        w.add_add_bos_token(f.add_bos)
    if f.add_eos is not None:
        w.add_add_eos_token(f.add_eos)
    if f.add_space_prefix is not None and ggml_model in ("llama", "t5"):
        w.add_add_space_prefix(f.add_space_prefix)
    if f.remove_extra_whitespaces is not None and ggml_model == "t5":
        w.add_remove_extra_whitespaces(f.remove_extra_whitespaces)
    if vocab.precompiled_charsmap and ggml_model == "t5":
        w.add_precompiled_charsmap(vocab.precompiled_charsmap)
    if vocab.chat_template:
        w.add_chat_template(vocab.chat_template)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def _out_of_range_specials(vocab: Vocab, warnings: Warnings) -> None:
    for role, i in vocab.special_ids.items():
        if not 0 <= i < vocab.size:
            warnings.add(f"{role}_token_id", f"id {i} is outside the vocabulary of {vocab.size}; not written")
        elif role not in SPECIAL_WRITERS:
            warnings.add(f"{role}_token_id", "llama.cpp's converter writes no key for this role; not written")


# -------------------------------------------------------------------------------------------
# SentencePiece .model -> GGUF


def spm_model_to_gguf(src: str | os.PathLike, out: str | os.PathLike) -> Warnings:
    """``.model`` -> GGUF: ``llama`` for BPE models, ``t5`` for unigram models.

    Tokens, scores and types are the pieces as stored (``_set_vocab_sentencepiece`` /
    ``T5Model.set_vocab``). A .model says nothing about adding BOS/EOS (SentencePiece's
    ``encode`` adds neither unless asked), so ``add_bos_token`` and ``add_eos_token`` are
    written as false: llama.cpp with ``add_special`` then gives what ``encode`` gives.
    """
    vocab = load_spm_model(src)
    warnings = Warnings()
    ggml_model = GGML_MODEL[vocab.algorithm]
    f = vocab.flags
    warnings.add("add_bos_token", "a .model does not say whether BOS is added; wrote false "
                                  "(SentencePiece's encode adds none unless asked)")
    f.add_bos, f.add_eos = False, False
    if ggml_model == "llama":
        # llama.cpp's SPM tokenizer does no normalization at all: no charsmap, no whitespace
        # collapsing. Say so for each normalizer setting the .model asks for.
        if vocab.precompiled_charsmap:
            name = vocab.extra.get("normalizer_name") or "precompiled"
            warnings.add("precompiled_charsmap", f"llama.cpp's SPM ('llama') tokenizer does not normalize; "
                                                 f"the .model's {name} normalization ({len(vocab.precompiled_charsmap):,} "
                                                 "bytes) is dropped")
        if f.remove_extra_whitespaces:
            warnings.add("remove_extra_whitespaces", "llama.cpp's SPM ('llama') tokenizer does not collapse or "
                                                     "strip whitespace; SentencePiece will, llama.cpp will not")
    else:
        if not vocab.precompiled_charsmap and vocab.extra.get("normalizer_name") not in (None, "identity"):
            warnings.add("normalizer", f"the .model names normalizer {vocab.extra.get('normalizer_name')!r} "
                                       "but holds no precompiled_charsmap; none written")
    if f.escape_whitespaces is False:
        warnings.add("escape_whitespaces", "false in the .model; llama.cpp always escapes spaces as ▁")
    if f.treat_whitespace_as_suffix:
        warnings.add("treat_whitespace_as_suffix", "llama.cpp has no key for it; its tokenizers put ▁ first")
    has_bytes = any(t == TokenType.BYTE for t in vocab.token_types or [])
    if f.byte_fallback is False and has_bytes:
        warnings.add("byte_fallback", "false in the .model, but llama.cpp falls back to its byte pieces anyway")
    if ggml_model == "llama" and not has_bytes:
        warnings.add("byte_fallback", NO_BYTE_PIECES)
    _out_of_range_specials(vocab, warnings)
    _check_not_empty(vocab, src)
    write_vocab_gguf(vocab, out, ggml_model=ggml_model, pre="default", scores=vocab.scores, merges=None,
                     name=Path(src).stem)
    return warnings


def _check_not_empty(vocab: Vocab, src) -> None:
    if not vocab.tokens:
        raise TokparityError(f"{src}: holds no tokens; nothing to convert")


# -------------------------------------------------------------------------------------------
# tokenizer.json -> GGUF


def hf_json_to_gguf(src: str | os.PathLike, out: str | os.PathLike) -> Warnings:
    """tokenizer.json (+ tokenizer_config.json beside it) -> GGUF."""
    vocab = load_hf_json(src)
    warnings = Warnings()
    if vocab.algorithm == "wpm":
        raise TokparityError(f"{src}: WordPiece (BERT) tokenizer.json -> GGUF is not supported yet; "
                             "supported: BPE (byte-level or SentencePiece-style) and Unigram")
    ggml_model = GGML_MODEL[vocab.algorithm]
    model_cfg = vocab.extra.get("model") or {}
    scores = vocab.scores
    merges = None
    pre: str | None = "default"
    if vocab.algorithm == "bpe":
        pre = _bpe_pre_name(src, vocab, warnings)
        merges = [" ".join(_escape_merge_space(p) for p in pair) for pair in vocab.merges]
        scores = None  # llama.cpp's gpt2 tokenizer ranks by merges; its converter writes no scores
    elif vocab.algorithm == "spm":
        scores = scores_from_merges(vocab, warnings)
        if not any(t == TokenType.BYTE for t in vocab.token_types or []):
            warnings.add("byte_fallback", NO_BYTE_PIECES)
        if vocab.merges:
            warnings.add("merges", f"{len(vocab.merges):,} merges not written: llama.cpp's SPM ('llama') tokenizer "
                                   "ranks by token scores, derived here from merge ranks")
    elif vocab.algorithm == "ugm":
        if model_cfg.get("byte_fallback"):
            warnings.add("byte_fallback", "llama.cpp's UGM tokenizer has no byte fallback; unknown text "
                                          "becomes the unk token")
    _bytelevel_post_adds_nothing(vocab)
    _hf_pipeline_warnings(vocab, ggml_model, warnings)
    _out_of_range_specials(vocab, warnings)
    write_vocab_gguf(vocab, out, ggml_model=ggml_model, pre=pre, scores=scores, merges=merges,
                     name=Path(src).parent.name or Path(src).stem)
    return warnings


def _bytelevel_post_adds_nothing(vocab: Vocab) -> None:
    """A ``ByteLevel`` post-processor adds no BOS/EOS: gguf-py's SpecialVocab then writes
    add_bos_token/add_eos_token false (unless tokenizer_config says otherwise), which matters
    because llama.cpp otherwise turns add_bos on for the llama3 pre-tokenizers."""
    post = vocab.extra.get("post_processor") or {}
    processors = post.get("processors") or [post] if isinstance(post, dict) else []
    if any(isinstance(p, dict) and p.get("type") == "ByteLevel" for p in processors):
        if vocab.flags.add_bos is None:
            vocab.flags.add_bos = False
        if vocab.flags.add_eos is None:
            vocab.flags.add_eos = False


def _escape_merge_space(part: str) -> str:
    """A space inside a merge part is written as U+0120 ('Ġ'), as gguf-py's SpecialVocab does for
    the ``[["a b", "c"]]`` merges format, so that ``"a b c"`` still splits into two parts."""
    return "".join(chr(ord(c) + 256) if c == " " else c for c in part)


def scores_from_merges(vocab: Vocab, warnings: Warnings) -> list[float]:
    """Scores for llama.cpp's SPM tokenizer from a BPE merge list.

    llama.cpp merges the adjacent pair whose joined text is the highest-scoring token; HF merges
    the pair with the lowest merge rank. With ``score(token) = -rank of the first merge making
    it`` both pick the same pair, except when a token can be made from two pairs (``ab c`` and
    ``a bc``) and only the later one applies in the text. Tokens no merge makes (single
    characters, bytes, specials) get 0.0; llama.cpp never forms those by merging.

    ``merges [("▁", "t"), ("▁t", "he")] -> scores ▁t: -0.0, ▁the: -1.0``
    """
    ids = vocab.token_to_id()
    scores = [0.0] * vocab.size
    made = [False] * vocab.size
    unreachable = 0
    for rank, (a, b) in enumerate(vocab.merges):
        i = ids.get(a + b)
        if i is None:
            unreachable += 1
            continue
        if not made[i]:
            made[i] = True
            scores[i] = -float(rank)
    normal = [i for i, t in enumerate(vocab.token_types or []) if t == TokenType.NORMAL]
    orphans = [i for i in normal if not made[i] and len(vocab.tokens[i]) > 1]
    if orphans:
        # A multi-character token that no merge makes cannot appear in HF's output (except
        # through ignore_merges); llama.cpp may still form it, last of all.
        for i in orphans:
            scores[i] = -float(len(vocab.merges) + i)
        shown = ", ".join(repr(vocab.tokens[i]) for i in orphans[:3])
        warnings.add("scores", f"{len(orphans):,} multi-character tokens are made by no merge (e.g. {shown}); "
                               "they get the lowest scores, but llama.cpp may still form them where HF does not")
    if unreachable:
        warnings.add("merges", f"{unreachable:,} merges make a token that is not in the vocabulary; ignored")
    return scores


# Pre-tokenizer names for which llama.cpp sets ignore_merges (llama-vocab.cpp, llama3 family).
IGNORE_MERGES_PRES = {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0",
                      "lfm2", "jina-v5-nano", "minicpm5"}


def _bpe_pre_name(src, vocab: Vocab, warnings: Warnings) -> str:
    """The ``tokenizer.ggml.pre`` llama.cpp's converter would write: hash the ids of its check
    text, encoded with special tokens as ``AutoTokenizer.encode`` does, and look the hash up.

    One correction: llama.cpp's table hashes Llama 3 *with* its BOS. A tokenizer.json whose
    post-processor adds no BOS (older exports of Llama 3 have a bare ``ByteLevel`` one) hashes
    like ``smaug-bpe``, which llama.cpp tokenizes without ``ignore_merges``, although the file
    sets it. When the file ignores merges, the name found does not, and the hash with BOS
    prepended names a pre-tokenizer that does, that name is written (with a warning).
    """
    from tokparity.convert.pre_hashes import CHECK_TEXT, PRE_BY_HASH

    try:
        import tokenizers
    except ImportError:
        raise MissingDependency("naming the pre-tokenizer of a byte-level BPE tokenizer.json", "tokenizers") from None
    try:
        tok = tokenizers.Tokenizer.from_file(str(src))
    except Exception as e:  # tokenizers raises a bare Exception on files it cannot read
        raise TokparityError(f"{src}: the tokenizers library cannot load it: {str(e).splitlines()[0]}") from None

    def lookup(ids: list[int]) -> str | None:
        return PRE_BY_HASH.get(hashlib.sha256(str(ids).encode()).hexdigest())

    ids = tok.encode(CHECK_TEXT).ids
    name = lookup(ids)
    bos = vocab.special_ids.get("bos")
    if ((vocab.extra.get("model") or {}).get("ignore_merges") and name not in IGNORE_MERGES_PRES
            and bos is not None and ids[:1] != [bos]):
        with_bos = lookup([bos] + ids)
        if with_bos in IGNORE_MERGES_PRES:
            warnings.add("tokenizer.ggml.pre", f"llama.cpp's converter would write {name or 'nothing'!r} (its check "
                                               f"text hashes without BOS here) and lose ignore_merges; wrote "
                                               f"{with_bos!r}, which the hash gives with BOS prepended")
            return with_bos
    if name is None:
        warnings.add("tokenizer.ggml.pre", "the pre-tokenizer is not one llama.cpp knows (its check-text hash "
                                           "is not in llama.cpp's table); wrote 'default', which splits "
                                           "text differently")
        return "default"
    return name


def _hf_pipeline_warnings(vocab: Vocab, ggml_model: str, warnings: Warnings) -> None:
    """Say which parts of the tokenizer.json pipeline a GGUF cannot describe."""
    extra = vocab.extra
    model_cfg = extra.get("model") or {}
    if ggml_model == "gpt2":
        warnings.add("pre_tokenizer", "a GGUF names the pre-tokenizer only ('tokenizer.ggml.pre'); "
                                      "llama.cpp uses its own regexes for that name")
        if model_cfg.get("ignore_merges"):
            warnings.add("ignore_merges", "a GGUF has no key for it; llama.cpp sets it from the pre-tokenizer "
                                          "name (llama3 family only)")
    else:
        normalizer = extra.get("normalizer")
        kinds = _component_types(normalizer)
        handled = {"Replace", "Prepend", "Precompiled"}
        lost = sorted(k for k in kinds if k not in handled)
        if lost:
            warnings.add("normalizer", f"{', '.join(lost)} has no GGUF key; llama.cpp's tokenizer does not apply it")
        pre_kinds = _component_types(extra.get("pre_tokenizer"))
        if pre_kinds - {"Metaspace"}:
            warnings.add("pre_tokenizer", f"{', '.join(sorted(pre_kinds - {'Metaspace'}))} has no GGUF key; "
                                          f"llama.cpp's {ggml_model} tokenizer runs on the whole text")
    if model_cfg.get("dropout"):
        warnings.add("dropout", "BPE dropout has no GGUF key")
    for entry in extra.get("added_tokens") or []:
        if entry.get("lstrip") or entry.get("rstrip"):
            warnings.add("added_tokens", "lstrip/rstrip of added tokens have no GGUF key; llama.cpp decides "
                                         "them by token name")
            break
    post = extra.get("post_processor") or {}
    if post.get("type") in ("TemplateProcessing",) and post.get("pair"):
        warnings.add("post_processor", "only whether BOS/EOS start or end a single text is kept "
                                       "(add_bos_token/add_eos_token); the pair template is not")
    if extra.get("decoder"):
        warnings.add("decoder", "a GGUF has no decoder description; llama.cpp decodes by its own rules "
                                "for the tokenizer model")


def _component_types(config) -> set[str]:
    if not isinstance(config, dict):
        return set()
    if config.get("type") == "Sequence":
        inner = config.get("normalizers") or config.get("pretokenizers") or []
        return {t for c in inner for t in _component_types(c)}
    kind = config.get("type")
    return {kind} if isinstance(kind, str) else set()


# -------------------------------------------------------------------------------------------
# RWKV World vocabulary (the rwkv package's rwkv_vocab_*.txt) -> GGUF

# What llama.cpp's converter writes for RWKV World (conversion/base.py, _set_vocab_rwkv_world):
# the models' vocab_size, with "[PAD{i}]" tokens after the file's; "\n\n" (id 261) as EOT.
RWKV_WORLD_VOCAB_SIZE = 65536
RWKV_WORLD_EOT = 261
# A vocab-only load reads general.architecture and the tokenizer keys only (llama.cpp's
# load_hparams returns before any hyper-parameter when vocab_only is set); RWKV World is the
# vocabulary of rwkv6 and rwkv7 models alike.
RWKV_ARCH = "rwkv7"


def rwkv_vocab_to_gguf(src: str | os.PathLike, out: str | os.PathLike) -> Warnings:
    """``rwkv_vocab_v20230424.txt`` -> a vocab-only GGUF, as llama.cpp's converter writes RWKV World.

    Tokens: id 0 ``<s>`` (control), then each token of the file as ``repr(bytes)[2:-1]`` (so
    ``b"\\xe4\\xb8\\x80"`` is written as the ASCII text ``\\xe4\\xb8\\x80``, which llama.cpp unescapes
    with ``llama_unescape_rwkv_token``), then ``[PAD{i}]`` (unused) up to 65,536 tokens; bos and
    eos are 0, eot is 261 (``"\\n\\n"``). The file's ids must count up from 1 (the converter numbers
    tokens by line, the rwkv package by id; tokparity's loader refuses a file where they differ).
    """
    from tokparity.vocab.rwkv_vocab import END_OF_TEXT, escape_llama_rwkv, read_rwkv_vocab

    try:
        import gguf
    except ImportError:
        raise MissingDependency("converting to GGUF", "gguf") from None
    tokens = read_rwkv_vocab(src)
    warnings = Warnings()
    texts = [END_OF_TEXT] + [escape_llama_rwkv(t) for t in tokens]
    types = [int(TokenType.CONTROL)] + [int(TokenType.NORMAL)] * len(tokens)
    if len(texts) < RWKV_WORLD_VOCAB_SIZE:
        warnings.add("tokens", f"padded with [PAD{len(texts)}]..[PAD{RWKV_WORLD_VOCAB_SIZE - 1}] to "
                               f"{RWKV_WORLD_VOCAB_SIZE:,} tokens, as llama.cpp's converter does for RWKV World models; "
                               "llama.cpp's RWKV tokenizer matches their text in the input")
    for i in range(len(texts), RWKV_WORLD_VOCAB_SIZE):
        texts.append(f"[PAD{i}]")
        types.append(int(TokenType.UNUSED))
    warnings.add("chat_template", "not written (llama.cpp's converter adds its rwkv-world template); "
                                  "it does not change tokenization")
    w = gguf.GGUFWriter(str(out), arch=RWKV_ARCH)
    w.add_name(Path(src).stem)
    w.add_tokenizer_model("rwkv")
    w.add_token_list([t.encode("utf-8") for t in texts])
    w.add_token_types(types)
    w.add_bos_token_id(0)
    w.add_eos_token_id(0)
    if RWKV_WORLD_EOT < len(texts):
        w.add_eot_token_id(RWKV_WORLD_EOT)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return warnings
