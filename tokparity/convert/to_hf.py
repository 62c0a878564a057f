"""SentencePiece ``.model`` -> ``tokenizer.json``, through transformers' own converter.

transformers 5.x converts a ``.model`` in two halves, both used here as they are, no torch needed:
``SentencePieceExtractor(path).extract(BPE | Unigram)`` gives the vocabulary, the merges
(``generate_merges``, for BPE) and the user-defined / control pieces as added tokens, and
``SpmConverter``'s ``normalizer`` / ``pre_tokenizer`` / ``decoder`` give the pipeline
(Precompiled charsmap, ``Strip`` right + ``Replace(" {2,}", "▁")`` for SentencePiece's
whitespace collapsing, ``Metaspace`` for the dummy prefix).

Why not ``SpmConverter(tok).converted()`` in one call: in transformers 5.23 it crashes on every
BPE ``.model`` (``SpmConverter.tokenizer`` calls ``extract(vocab_scores)``, whose first parameter
is now the model class: ``AttributeError: 'list' object has no attribute '__name__'``); unigram
models convert fine that way, and the pipeline built here is the same.
"""

from __future__ import annotations

import os
import types
import warnings as _warnings
from typing import Any, cast

from tokparity.convert.base import Warnings
from tokparity.errors import MissingDependency
from tokparity.vocab.spm_model import load_spm_model


def spm_model_to_hf_json(src: str | os.PathLike, out: str | os.PathLike) -> Warnings:
    vocab = load_spm_model(src)
    try:
        from tokenizers import AddedToken, Tokenizer
        from tokenizers.models import BPE, Unigram
        from transformers.convert_slow_tokenizer import SentencePieceExtractor, SpmConverter
    except ImportError as e:
        raise MissingDependency("converting a .model to tokenizer.json", getattr(e, "name", None) or "transformers") from None
    try:  # (transformers' converter reads the .model with protobuf, imported only once it is asked)
        import google.protobuf  # noqa: F401
    except ImportError:
        raise MissingDependency("converting a .model to tokenizer.json", "protobuf", "spm") from None
    warnings = Warnings()
    flags = vocab.flags
    # The minimal "slow tokenizer" SpmConverter reads: its file and its add_prefix_space.
    original = types.SimpleNamespace(vocab_file=str(src), add_prefix_space=bool(flags.add_space_prefix), legacy=True)
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")  # its byte-fallback warning does not apply: byte_fallback is set below
        converter = SpmConverter(original)
    proto = converter.proto
    model_cls = BPE if vocab.algorithm == "spm" else Unigram
    # transformers 5 returns a dict of constructor arguments here; its annotation still says a tuple
    kwargs: dict[str, Any] = cast(Any, SentencePieceExtractor(str(src)).extract(model_cls))
    byte_fallback = bool(proto.trainer_spec.byte_fallback)
    model: BPE | Unigram
    if model_cls is BPE:
        model = BPE(kwargs["vocab"], kwargs["merges"], unk_token=proto.trainer_spec.unk_piece, fuse_unk=True,
                    byte_fallback=byte_fallback, dropout=None)
    else:
        model = Unigram(kwargs["vocab"], unk_id=kwargs["unk_id"], byte_fallback=byte_fallback)
    tok = Tokenizer(model)
    tok.add_tokens([AddedToken(t.content, normalized=False, special=t.special)
                    for t in kwargs.get("additional_special_tokens", [])])
    tok.normalizer = converter.normalizer(proto)
    pre = converter.pre_tokenizer("\u2581", original.add_prefix_space)
    if pre is not None and not proto.trainer_spec.split_by_whitespace and hasattr(pre, "split"):
        # Trained with split_by_whitespace=false, the model has pieces across words ('▁of▁the');
        # SentencePiece segments the whole text, so Metaspace must not cut it at each '▁'
        # (transformers' converter always does, and those pieces were never produced).
        pre.split = False
    if pre is not None:
        tok.pre_tokenizer = pre
    decoder = converter.decoder("\u2581", original.add_prefix_space)
    if byte_fallback:
        # SpmConverter's decoder writes a byte piece as its text ('<0x23>'): it has no byte fallback
        # (it warns). transformers' converter for byte-fallback SentencePiece models (LlamaConverter)
        # writes this one, the shape real Llama files have and tools that read decoders know.
        from tokenizers import decoders
        steps = [decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse()]
        if original.add_prefix_space:
            steps.append(decoders.Strip(content=" ", left=1, right=0))
        decoder = decoders.Sequence(steps)
    tok.decoder = decoder

    # What transformers' converter does not carry over, or carries differently.
    if not flags.remove_extra_whitespaces:
        warnings.add("remove_extra_whitespaces", "false in the .model, but transformers' converter always strips "
                                                 "trailing spaces and collapses runs of spaces")
    else:
        warnings.add("remove_extra_whitespaces", "transformers' converter strips trailing spaces and collapses runs "
                                                 "of spaces, but keeps leading ones and does not collapse other "
                                                 "whitespace the way SentencePiece does")
    if flags.treat_whitespace_as_suffix:
        warnings.add("treat_whitespace_as_suffix", "transformers' converter puts ▁ first; not carried over")
    if flags.escape_whitespaces is False:
        warnings.add("escape_whitespaces", "transformers' Metaspace always escapes spaces")
    warnings.add("bos/eos", "a .model says which pieces are BOS/EOS but not when to add them; no post-processor "
                            "written (tokenizers adds none, like SentencePiece's encode)")
    if proto.trainer_spec.model_type == 2:
        warnings.add("scores", "a tokenizers BPE model has no scores; merges are generated from piece ids "
                               "(transformers' generate_merges), which follow the scores in a trained model")
    try:
        tok.save(str(out))
    except Exception as e:  # tokenizers raises a bare Exception; convert() names the file
        raise OSError(f"tokenizers could not save it: {e}") from None
    return warnings
