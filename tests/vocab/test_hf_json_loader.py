"""The tokenizer.json loader against Hugging Face tokenizers itself."""

from __future__ import annotations

import pytest

from tokparity.vocab import load_vocab

tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed: pip install 'tokparity[hf]'")

HF_MODELS = ["gemma-3", "qwen3", "lenml-llama2", "llama-bpe"]


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in HF_MODELS])
def test_hf_loader_agrees_with_tokenizers(name, zoo):
    path = zoo(name).files["tokenizer_json"]
    vocab = load_vocab(path)
    tok = tokenizers.Tokenizer.from_file(str(path))
    assert vocab.size == tok.get_vocab_size(with_added_tokens=True)
    for i in range(vocab.size):
        expected = tok.id_to_token(i)
        # llama.cpp's converter stores user-defined added tokens with ▁ turned into spaces
        assert vocab.tokens[i] in (expected, expected.replace("\u2581", " ")), i


def test_hf_flags_gemma3(zoo):
    vocab = load_vocab(zoo("gemma-3").files["tokenizer_json"])
    assert vocab.algorithm == "spm"
    assert vocab.flags.byte_fallback is True
    assert vocab.flags.add_bos is True and vocab.flags.add_eos is False
    assert vocab.flags.add_space_prefix is False
    assert vocab.special_tokens()["bos"] == (2, "<bos>")
    assert vocab.merges_count == 514906
    assert vocab.extra["decoder"]["type"] == "Sequence"  # pipeline configs are kept


def test_hf_flags_llama2_lenml(zoo):
    vocab = load_vocab(zoo("lenml-llama2").files["tokenizer_json"])
    assert vocab.algorithm == "spm"
    assert vocab.flags.add_space_prefix is True  # normalizer Prepend("▁")
    assert vocab.special_tokens()["bos"] == (1, "<s>")


def test_hf_qwen3_bpe(zoo):
    vocab = load_vocab(zoo("qwen3").files["tokenizer_json"])
    assert vocab.algorithm == "bpe"
    assert vocab.extra["normalizer"] == {"type": "NFC"}
    assert vocab.tokens[151668] == "</think>"
    assert vocab.type_of(151668).name == "USER_DEFINED"
    assert vocab.type_of(151644).name == "CONTROL"


def test_a_tokenizer_json_is_read_again_when_its_config_changes(zoo, tmp_path):
    """Loads are kept per process, keyed by the content of both files the loader reads: a changed
    tokenizer_config.json beside the same tokenizer.json is read again, and each caller gets its own
    copy of what it may change."""
    import json
    import shutil

    files = zoo("lenml-llama2").files
    shutil.copy(files["tokenizer_json"], tmp_path / "tokenizer.json")
    config = json.loads(open(files["tokenizer_config"], encoding="utf-8").read())
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config | {"add_bos_token": True}), "utf-8")
    first = load_vocab(tmp_path / "tokenizer.json")
    assert first.flags.add_bos is True
    first.special_ids["bos"] = -1  # (a caller's own copy)
    again = load_vocab(tmp_path / "tokenizer.json")
    assert again.flags.add_bos is True and again.special_ids["bos"] != -1 and again.tokens is first.tokens
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config | {"add_bos_token": False}), "utf-8")
    assert load_vocab(tmp_path / "tokenizer.json").flags.add_bos is False
    (tmp_path / "tokenizer_config.json").unlink()
    assert load_vocab(tmp_path / "tokenizer.json").tokens is not first.tokens  # (no config: read again)
