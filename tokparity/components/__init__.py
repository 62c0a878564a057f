"""A tokenizer.json as typed components: tokenizers' own pipeline, one class per component type.

``parse_tokenizer_json(data, path)`` reads the file's JSON once into a ``TokenizerSpec`` (frozen
dataclasses with tokenizers' defaults, as its Rust enums are); the loader (vocab.hf_json) and the
reference (reference.hf) both read that, never the dicts. An unknown type or a malformed field
is a ``BadModelFile`` naming the component: ``tokenizer.json: pre_tokenizer.pretokenizers[1]
(Metaspace): prepend_scheme is 'sometimes', expected one of always, first, never``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tokparity.components import added_tokens, decoders, models, normalizers, pre_tokenizers, processors
from tokparity.components.added_tokens import AddedToken
from tokparity.components.decoders import Decoder
from tokparity.components.models import Model
from tokparity.components.normalizers import Normalizer
from tokparity.components.pre_tokenizers import PreTokenizer
from tokparity.components.processors import PostProcessor

__all__ = ["TokenizerSpec", "parse_tokenizer_json", "AddedToken", "added_tokens", "decoders", "models",
           "normalizers", "pre_tokenizers", "processors"]


@dataclass(frozen=True)
class TokenizerSpec:
    model: Model
    normalizer: Normalizer | None = None
    pre_tokenizer: PreTokenizer | None = None
    post_processor: PostProcessor | None = None
    decoder: Decoder | None = None
    added_tokens: tuple[AddedToken, ...] = ()

    def normalizer_steps(self) -> list[Normalizer]:
        return normalizers.flatten(self.normalizer)

    def pre_tokenizer_steps(self) -> list[PreTokenizer]:
        return pre_tokenizers.flatten(self.pre_tokenizer)

    def decoder_steps(self) -> list[Decoder]:
        return decoders.flatten(self.decoder)


def _optional(parse, path: Path, name: str, obj):
    return None if obj is None else parse(path, name, obj)


def parse_tokenizer_json(data: dict, path: str | Path = "tokenizer.json") -> TokenizerSpec:
    """The typed pipeline of a tokenizer.json's JSON object (``null`` stages are absent)."""
    path = Path(path)
    return TokenizerSpec(
        model=models.parse(path, data.get("model")),
        normalizer=_optional(normalizers.parse, path, "normalizer", data.get("normalizer")),
        pre_tokenizer=_optional(pre_tokenizers.parse, path, "pre_tokenizer", data.get("pre_tokenizer")),
        post_processor=_optional(processors.parse, path, "post_processor", data.get("post_processor")),
        decoder=_optional(decoders.parse, path, "decoder", data.get("decoder")),
        added_tokens=added_tokens.parse(path, data.get("added_tokens")),
    )
