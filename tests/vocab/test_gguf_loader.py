"""The GGUF loader against llama.cpp itself, on every zoo GGUF."""

from __future__ import annotations

import pytest
from zoo_params import GGUF_MODELS

from tokparity.vocab import load_vocab
from tokparity.vocab.model import TokenType

llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed: pip install 'tokparity[llama]'")

# llama.cpp fills special ids a GGUF does not set with defaults per vocab type
# (llama_vocab::impl::load); only ids the file states are compared.
LLAMA_GETTERS = {"bos": "llama_vocab_bos", "eos": "llama_vocab_eos", "sep": "llama_vocab_sep",
                 "pad": "llama_vocab_pad", "mask": "llama_vocab_mask"}


# Tokens a GGUF does not type CONTROL but llama.cpp 0.3.36 marks control when it loads the file,
# because their text names an end-of-generation or fill-in-the-middle token.
PROMOTED_BY_LLAMA_CPP = {
    "phi-3": {2: "</s>"},
    "gemma-4": {50: "<|tool_response>"},
    "qwen2": {128247: "</s>"},
    "qwen35": {128247: "</s>"},
    "deepseek-coder": {32015: "<｜fim▁hole｜>", 32016: "<｜fim▁begin｜>", 32017: "<｜fim▁end｜>"},
    "aquila": {0: "<|endoftext|>"},
}


@pytest.fixture(scope="module")
def llama_vocab():
    handles = {}

    def get(path):
        if path not in handles:
            llm = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
            handles[path] = (llm, llama_cpp.llama_model_get_vocab(llm.model))
        return handles[path][1]

    yield get
    handles.clear()


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in GGUF_MODELS])
def test_gguf_loader_agrees_with_llama_cpp(name, zoo, llama_vocab):
    path = zoo(name).files["gguf"]
    vocab = load_vocab(path)
    lv = llama_vocab(path)
    assert vocab.size == llama_cpp.llama_vocab_n_tokens(lv)
    # Every token's text, byte for byte.
    for i in range(vocab.size):
        stored = vocab.tokens[i].encode("utf-8", "surrogateescape")
        assert stored == llama_cpp.llama_vocab_get_text(lv, i), f"token {i}"
    # Special ids the file states are the ones llama.cpp uses.
    for role, getter in LLAMA_GETTERS.items():
        if role in vocab.special_ids:
            assert getattr(llama_cpp, getter)(lv) == vocab.special_ids[role], role
    # Control tokens are the ones llama.cpp treats as control, except those llama.cpp itself
    # promotes to control at load time by their text (EOG / FIM markers, llama_vocab::load).
    types = vocab.token_types
    promoted = [i for i in range(vocab.size) if llama_cpp.llama_vocab_is_control(lv, i) and types[i] != TokenType.CONTROL]
    demoted = [i for i in range(vocab.size) if not llama_cpp.llama_vocab_is_control(lv, i) and types[i] == TokenType.CONTROL]
    assert {i: vocab.tokens[i] for i in promoted} == PROMOTED_BY_LLAMA_CPP.get(name, {})
    assert demoted == []
    if vocab.flags.add_bos is not None:
        assert bool(llama_cpp.llama_vocab_get_add_bos(lv)) == vocab.flags.add_bos
    if vocab.scores is not None:
        for i in range(0, vocab.size, max(1, vocab.size // 200)):
            assert llama_cpp.llama_vocab_get_score(lv, i) == pytest.approx(vocab.scores[i], rel=0, abs=0)


def test_gemma4_reads_everything_it_should(zoo):
    """The 262k vocabulary: counts checked against what the file really holds."""
    vocab = load_vocab(zoo("gemma-4").files["gguf"])
    assert (vocab.algorithm, vocab.size, vocab.merges_count) == ("bpe", 262144, 514906)
    assert vocab.extra["tokenizer.ggml.model"] == "gemma4"
    assert vocab.flags.add_space_prefix is False
    assert vocab.type_counts() == {"normal": 261864, "byte": 256, "control": 17, "user_defined": 7}
    assert vocab.special_tokens()["bos"] == (2, "<bos>")
    # merges are decoded lazily, split at the first space after the first character
    assert vocab.merges[1] == ("▁" * 30, "▁")
    assert len(vocab.merges) == 514906


def test_nomic_ugm_charsmap(zoo):
    vocab = load_vocab(zoo("nomic-bert-moe").files["gguf"])
    assert vocab.algorithm == "ugm"
    assert len(vocab.precompiled_charsmap) == 237539
    assert vocab.flags.remove_extra_whitespaces is True
    assert (vocab.flags.add_bos, vocab.flags.add_eos) == (True, True)
