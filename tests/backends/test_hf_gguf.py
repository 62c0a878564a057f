"""hf-gguf: the tokenizer transformers builds from a GGUF, against llama.cpp's golden ids.

These counts are transformers' real behaviour (5.23.0, fed the metadata tokparity reads, the way
its own GGUF loader would feed it without torch), measured on llama.cpp's .inp/.out texts. They
are not tokparity's bugs and not hidden: a change in any of them means transformers changed.
"""

from __future__ import annotations

import pytest

from tokparity.backends.registry import make_backend
from tokparity.errors import TokparityError

# model -> texts whose ids differ from the .out file (of 46; qwen35 has 50 texts)
MISMATCHES = {
    "llama-spm": 15,  # a leading space: " Hello" loses one "▁" (LlamaTokenizer's prefix handling)
    "phi-3": 0,
    "gemma-4": 0,
    "llama-bpe": 1,
    "qwen2": 0,
    "qwen35": 0,
    "gpt-2": 0,
    "falcon": 9,  # "falcon" is not in the converter's GGUF_PRE_TOKENIZER_SPLITS: GPT-2's split is used
    "deepseek-llm": 1,
    "deepseek-coder": 1,
    "starcoder": 1,
    "refact": 1,
    "mpt": 5,  # likewise "mpt"
    "command-r": 1,
}


@pytest.mark.parametrize("model", [pytest.param(m, id=m) for m in MISMATCHES])
def test_agreement_with_golden_ids(backend, golden, model):
    hf_gguf = backend("hf-gguf", model)
    cases = golden(model)
    wrong = [c.index for c in cases if hf_gguf.encode(c.text) != list(c.ids)]
    assert len(wrong) == MISMATCHES[model], f"{model}: texts {wrong} differ"


def test_llama_spm_leading_space(backend):
    hf_gguf, llama = backend("hf-gguf", "llama-spm"), backend("llama.cpp", "llama-spm")
    assert llama.encode(" Hello") == [29871, 15043]
    assert hf_gguf.encode(" Hello") == [15043]


def test_wordpiece_files_are_refused(zoo):
    with pytest.raises(TokparityError, match=r"ggml-vocab-bert-bge.gguf: transformers 5\.\d+\.\d+ cannot build a "
                                             r"tokenizer from this GGUF \(ValueError: .*'bert'"):
        make_backend("hf-gguf", zoo("bert-bge"))


def test_version_names_both_libraries(backend):
    assert backend("hf-gguf", "gpt-2").version.startswith("5.23.0 (tokenizers 0.")
