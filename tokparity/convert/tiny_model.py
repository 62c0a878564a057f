"""A tiny model around a real tokenizer: what a server needs to load a vocabulary and generate.

A server loads weights, not a tokenizer alone. ``write_tiny_model`` copies every ``tokenizer.*``
key of a GGUF (the vocabulary, its flags, the chat template) into a new GGUF of a one-layer
Llama with random weights: about 13 MB per 100,000 tokens. It loads in about a second. Its
tokenizer is the source's own, so the server tokenizes, renders and decodes as it would with the
real model. Its generation is noise with a fixed seed: byte tokens and split characters
come up, the very ids that break streamers.
"""

from __future__ import annotations

import os

from tokparity.errors import MissingDependency

EMBED, HEADS, FEED_FORWARD = 32, 2, 64  # (a head of 16 dimensions: the smallest the CPU kernels take)
CONTEXT = 8192
SEED = 0
FORMAT = 2  # part of a cached tiny model's key: a model written otherwise is written again
TEMPLATE_KEY = "tokenizer.chat_template"


def write_tiny_model(source: str | os.PathLike, out: str | os.PathLike, templates: dict[str, str] | None = None) -> None:
    """Write a one-layer Llama with random weights and ``source``'s tokenizer keys to ``out``;
    ``templates`` (by name, "default" first) in place of the source's chat templates."""
    try:
        import gguf
        import numpy as np
    except ImportError:
        raise MissingDependency("writing a tiny model for llama-server", "gguf") from None
    reader = gguf.GGUFReader(str(source))
    fields = {name: f for name, f in reader.fields.items() if name.startswith("tokenizer.")
              and not (templates and name.startswith(TEMPLATE_KEY))}
    tokens = fields["tokenizer.ggml.tokens"]
    vocab_size = len(tokens.data)
    arch = "llama"
    w = gguf.GGUFWriter(str(out), arch=arch)
    # The source's own name: llama.cpp keys a vocabulary rule on it (Phi-3's specials strip the
    # space after them). A rule keyed on the architecture (nomic-bert-moe's <mask>) is lost here.
    name = reader.fields.get("general.name")
    w.add_name(str(name.contents()) if name is not None else os.path.basename(source))
    for key, value in (("context_length", CONTEXT), ("embedding_length", EMBED), ("block_count", 1),
                       ("feed_forward_length", FEED_FORWARD), ("attention.head_count", HEADS),
                       ("attention.head_count_kv", HEADS), ("rope.dimension_count", EMBED // HEADS),
                       ("vocab_size", vocab_size)):
        w.add_uint32(f"{arch}.{key}", value)
    w.add_float32(f"{arch}.attention.layer_norm_rms_epsilon", 1e-5)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    for name, field in fields.items():
        kind = field.types[0]
        sub = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
        w.add_key_value(name, field.contents(), kind, sub)
    for name, text in (templates or {}).items():
        w.add_string(TEMPLATE_KEY if name == "default" else f"{TEMPLATE_KEY}.{name}", text)
    rng = np.random.default_rng(SEED)

    def weights(*shape: int, scale: float = 0.5):
        return (rng.standard_normal(shape, dtype=np.float32) * scale).astype(np.float16)

    ones = np.ones(EMBED, dtype=np.float32)
    w.add_tensor("token_embd.weight", weights(vocab_size, EMBED))
    w.add_tensor("output_norm.weight", ones)
    w.add_tensor("output.weight", weights(vocab_size, EMBED, scale=2.0))
    w.add_tensor("blk.0.attn_norm.weight", ones)
    w.add_tensor("blk.0.ffn_norm.weight", ones)
    for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
        w.add_tensor(f"blk.0.{name}.weight", weights(EMBED, EMBED))
    w.add_tensor("blk.0.ffn_gate.weight", weights(FEED_FORWARD, EMBED))
    w.add_tensor("blk.0.ffn_up.weight", weights(FEED_FORWARD, EMBED))
    w.add_tensor("blk.0.ffn_down.weight", weights(EMBED, FEED_FORWARD))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
