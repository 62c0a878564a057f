"""Malformed tokenizer files: one clear line naming the file and the problem, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import gguf_builder as gb
import pytest

from tokparity.errors import BadModelFile
from tokparity.vocab import load_vocab


def test_tiny_gguf_loads(tmp_path):
    p = tmp_path / "tiny.gguf"
    p.write_bytes(gb.tiny_spm_gguf())
    v = load_vocab(p)
    assert (v.algorithm, v.tokens[5], v.special_ids, v.flags.add_bos) == ("spm", "▁a", {"bos": 1, "eos": 2}, True)


def test_truncated_at_every_byte_is_a_clear_error(tmp_path):
    data = gb.tiny_spm_gguf()
    p = tmp_path / "t.gguf"
    for cut in range(0, len(data)):
        p.write_bytes(data[:cut])
        with pytest.raises(BadModelFile) as e:
            load_vocab(p)
        assert str(e.value).startswith(str(p) + ": "), cut


@pytest.mark.parametrize("data, message", [
    pytest.param(gb.gguf(magic=b"GGML"), "not a GGUF file (magic b'GGML'", id="wrong-magic"),
    pytest.param(gb.gguf(version=1), "unsupported GGUF version 1", id="version-1"),
    pytest.param(gb.gguf(gb.kv_string("tokenizer.ggml.tokens", "x"), gb.kv_string("tokenizer.ggml.model", "llama")),
                 "key 'tokenizer.ggml.tokens' has type string", id="wrong-type"),
    pytest.param(gb.gguf(gb.kv_string("tokenizer.ggml.model", "llama")),
                 "missing required key 'tokenizer.ggml.tokens'", id="missing-tokens"),
    pytest.param(gb.gguf(gb.kv_strings("tokenizer.ggml.tokens", ["a"])),
                 "missing required key 'tokenizer.ggml.model'", id="missing-model"),
    pytest.param(gb.gguf(gb.kv_string("tokenizer.ggml.model", "llama"),
                         gb.kv_strings("tokenizer.ggml.tokens", ["a"], claimed=1 << 60)),
                 "claims 1152921504606846976 strings", id="absurd-length"),
    pytest.param(gb.gguf(gb.kv_string("tokenizer.ggml.model", "llama"), gb.kv_string("tokenizer.ggml.model", "t5")),
                 "duplicate metadata key 'tokenizer.ggml.model'", id="duplicate-key"),
    pytest.param(gb.gguf(gb.kv_string("tokenizer.ggml.model", "wordlevel"), gb.kv_strings("tokenizer.ggml.tokens", ["a"])),
                 "tokenizer.ggml.model is 'wordlevel', which tokparity does not know", id="unknown-model"),
])
def test_bad_gguf(tmp_path, data, message):
    p = tmp_path / "bad.gguf"
    p.write_bytes(data)
    with pytest.raises(BadModelFile) as e:
        load_vocab(p)
    assert message in str(e.value)
    assert str(e.value).startswith(f"{p}: ")


def test_unknown_hf_model_type(tmp_path):
    p = tmp_path / "tokenizer.json"
    p.write_text(json.dumps({"model": {"type": "Morfessor", "vocab": {"a": 0}}}))
    with pytest.raises(BadModelFile, match=r"unknown model type 'Morfessor'; tokparity reads BPE, Unigram, WordPiece, WordLevel"):
        load_vocab(p)


@pytest.mark.parametrize("text, message", [
    pytest.param("{", "invalid JSON at line 1", id="invalid-json"),
    pytest.param("[1, 2]", "top level is a JSON list", id="not-object"),
    pytest.param('{"model": {"type": "BPE", "vocab": {"a": -1}, "merges": []}}', "expected a non-negative id",
                 id="negative-id"),
    pytest.param('{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [3]}}', "model.merges[0] is neither",
                 id="bad-merge"),
])
def test_bad_hf_json(tmp_path, text, message):
    p = tmp_path / "tokenizer.json"
    p.write_text(text)
    with pytest.raises(BadModelFile) as e:
        load_vocab(p)
    assert message in str(e.value)


def test_truncated_spm_model(zoo, tmp_path):
    data = zoo("botchan-unigram").files["spm_model"].read_bytes()
    p = tmp_path / "cut.model"
    for cut in (1, 2, 10, 1000, len(data) // 2, len(data) - 1):
        p.write_bytes(data[:cut])
        with pytest.raises(BadModelFile) as e:
            load_vocab(p)
        assert "truncated protobuf" in str(e.value), cut


def test_cli_truncated_gguf_is_one_line_exit_2(zoo, tmp_path):
    """What a user sees: exit 2 and one line naming the file and the problem."""
    data = zoo("gemma-4").files["gguf"].read_bytes()
    p = tmp_path / "gemma-4-truncated.gguf"
    p.write_bytes(data[: len(data) // 3])
    proc = subprocess.run([sys.executable, "-m", "tokparity.cli", "inspect", str(p)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"tokparity: error: {p}: ")
    assert "truncated" in lines[0]
    assert proc.stdout == ""


@pytest.mark.parametrize("args, message", [
    pytest.param(["inspect", "no-such-model"], "unknown model 'no-such-model'", id="unknown-model"),
    pytest.param(["inspect", "/nonexistent/x.gguf"], "unknown model '/nonexistent/x.gguf'", id="missing-file"),
])
def test_cli_bad_arguments(args, message):
    proc = subprocess.run([sys.executable, "-m", "tokparity.cli", *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
