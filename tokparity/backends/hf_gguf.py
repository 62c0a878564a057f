"""The ``hf-gguf`` backend: the tokenizer transformers builds from a GGUF's metadata.

``AutoTokenizer.from_pretrained(folder, gguf_file=...)`` reads the GGUF with transformers' own
reader, which imports torch. Its tokenizer converter does not: ``convert_gguf_tokenizer(
architecture, tokenizer_dict)`` takes the metadata as a dict keyed by the values of
``GGUF_TOKENIZER_MAPPING["tokenizer"]`` (``tokens``, ``scores``, ``merges``, ``bos_token_id``, …).
So tokparity reads the file with its own loader and hands the converter that dict; what comes
back is the ``tokenizers.Tokenizer`` a transformers user gets from the GGUF.

It is not always the tokenizer the model was trained with: on the llama.cpp test files it
disagrees with the original ids on several models (see tests/backends/test_hf_gguf.py), and it
has no builder for WordPiece (``bert``) files at all. That is transformers' behaviour, and
exactly what this backend exists to show.

``add_special`` is whatever post-processor the converter built; it does not read
``tokenizer.ggml.add_bos_token`` (transformers applies that later, in the tokenizer class).
"""

from __future__ import annotations

from pathlib import Path

import tokenizers

from tokparity.backends.hf import TokenizersBackend, quiet_transformers
from tokparity.errors import TokparityError
from tokparity.vocab import Vocab, load_vocab
from tokparity.zoo import ModelFiles

# GGUF keys (after "tokenizer.") holding plain values, passed on as the file has them.
_SCALARS = ("ggml.model", "ggml.pre", "ggml.bos_token_id", "ggml.eos_token_id", "ggml.unknown_token_id",
            "ggml.padding_token_id", "ggml.add_space_prefix")


def _utf8(s: str) -> str:
    # tokparity keeps invalid UTF-8 as surrogate escapes; transformers' reader decodes strictly,
    # and tokenizers cannot hold a surrogate, so such a token is spelled with U+FFFD.
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def tokenizer_dict(vocab: Vocab, mapping: dict[str, str]) -> dict:
    """The dict ``convert_gguf_tokenizer`` wants, from a GGUF ``Vocab``. ``mapping`` is
    ``GGUF_TOKENIZER_MAPPING["tokenizer"]`` (GGUF key -> dict key), so exactly the keys
    transformers reads are passed, under its names: ``{"tokenizer_type": "llama", "tokens": [...]}``."""
    values = {
        "ggml.tokens": [_utf8(t) for t in vocab.tokens],
        "ggml.scores": vocab.scores,
        "ggml.token_type": vocab.token_types,
        "ggml.merges": [_utf8(f"{a} {b}") for a, b in vocab.merges] if vocab.merges_count else None,
        "ggml.precompiled_charsmap": list(vocab.precompiled_charsmap) if vocab.precompiled_charsmap else None,
    }
    for key in _SCALARS:
        values[key] = vocab.extra.get(f"tokenizer.{key}")
    return {mapping[key]: value for key, value in values.items() if key in mapping and value is not None}


class HFGGUFBackend(TokenizersBackend):
    name = "hf-gguf"

    def __init__(self, model: ModelFiles, **opts):
        if opts:
            raise TokparityError(f"hf-gguf backend: unknown option(s) {', '.join(sorted(opts))}")
        path = model.path("gguf")
        if path is None:
            raise TokparityError(f"model {model.name}: the hf-gguf backend needs a .gguf file, and it has none "
                                 f"(it has: {', '.join(model.files) or 'nothing'})")
        self.path = Path(path)
        vocab = load_vocab(path)
        with quiet_transformers() as transformers:
            from transformers.integrations.gguf.gguf_tokenizer_mapping import (
                GGUF_TOKENIZER_MAPPING,
                convert_gguf_tokenizer,
            )
            self._version = f"{transformers.__version__} (tokenizers {tokenizers.__version__})"
            architecture = vocab.extra.get("general.architecture") or vocab.extra.get("tokenizer.ggml.model")
            if not isinstance(architecture, str):
                raise TokparityError(f"{self.path.name}: no general.architecture or tokenizer.ggml.model; transformers "
                                     "needs one to pick its tokenizer converter")
            mapping = GGUF_TOKENIZER_MAPPING["tokenizer"]
            try:
                tok, _ = convert_gguf_tokenizer(architecture, tokenizer_dict(vocab, mapping))
            except (ValueError, KeyError, TypeError) as e:
                raise TokparityError(f"{self.path.name}: transformers {transformers.__version__} cannot build a "
                                     f"tokenizer from this GGUF ({type(e).__name__}: {e})") from None
        super().__init__(tok)

    @property
    def version(self) -> str:
        return self._version
