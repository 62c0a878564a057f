"""The zoo's breadth (#19): 40+ real models whose vocabularies differ, and the tiktoken file role.

Two models may share a vocabulary only for a reason written here: the same tokens under another
llama.cpp pre-tokenizer, or one encoding judged by two original libraries (tiktoken on OpenAI's
own rank file, tokenizers on a tokenizer.json converted from it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tokparity.vocab import TokenType, detect_format, load_vocab
from tokparity.zoo import load_manifest

# model -> (the model it shares a fingerprint with, why both are in the zoo)
SAME_FINGERPRINT = {
    "qwen35": ("qwen2", "same tokens and merges; llama.cpp runs them with another pre-tokenizer ('qwen35'), "
                        "and the goldens differ"),
    "gpt-neox": ("mpt", "MPT reuses GPT-NeoX's vocabulary; two llama.cpp model files, each with its own metadata"),
}
# model -> (the model with the same tokens, why): the merges differ in how they are spelled (all
# splits of each token from the ranks, or the converter's list), so the fingerprints differ.
SAME_TOKENS = {
    "cl100k-tiktoken": ("gpt35turbo", "cl100k_base judged by tiktoken, its own library; gpt35turbo is the "
                                      "tokenizer.json converted from it, judged by tokenizers"),
    "o200k-tiktoken": ("gpt4o", "o200k_base judged by tiktoken; gpt4o is its tokenizer.json conversion"),
}


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}


def _cli(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tokparity.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=_env())


def test_zoo_has_40_models_with_distinct_vocabularies(zoo):
    manifest = load_manifest()
    # Real models only: the trained ones (tokparity.zoo.trained) differ by trainer flags, and a flag
    # such as remove_extra_whitespaces=false leaves the pieces of Botchan's vocabulary as they were.
    real = {name: entry for name, entry in manifest.models.items() if entry.trained is None}
    assert len(real) >= 40
    by_fingerprint: dict[str, str] = {}
    vocabs = {}
    for name, entry in real.items():
        vocab = load_vocab(zoo(name).primary[1])
        assert (vocab.algorithm, vocab.size) == (entry.algorithm, entry.tokens), name
        if entry.fingerprint:
            assert vocab.fingerprint == entry.fingerprint, name
        first = by_fingerprint.setdefault(vocab.fingerprint, name)
        if first != name:
            assert SAME_FINGERPRINT.get(name, ("",))[0] == first, f"{name} has {first}'s vocabulary, unexplained"
        if name in SAME_TOKENS or name in {twin for twin, _ in SAME_TOKENS.values()}:
            vocabs[name] = vocab
    # The explanations are true, not stale.
    for name, (twin, _) in SAME_FINGERPRINT.items():
        assert by_fingerprint.get(load_vocab(zoo(name).primary[1]).fingerprint) == twin
    for name, (twin, _) in SAME_TOKENS.items():
        assert vocabs[name].tokens == vocabs[twin].tokens and vocabs[name].fingerprint != vocabs[twin].fingerprint


def test_new_models_carry_what_sets_them_apart():
    """Every model added for #19 pins its fingerprint and says what makes it different."""
    manifest = load_manifest()
    added = ("claude", "deepseek-v3", "gemini", "gpt35turbo", "gpt4o", "gpt-oss", "mistral-v1", "mistral-v2",
             "mistral-v3", "mistral-v7", "p50k-base", "whisper-multilingual", "tekken", "cl100k-tiktoken",
             "o200k-tiktoken")
    for name in added:
        model = manifest.models[name]
        assert len(model.fingerprint) == 16 and len(model.description) > 80, name
        assert all(len(f.sha256) == 64 and f.size > 0 for f in model.files.values()), name
    assert len({manifest.models[n].fingerprint for n in added}) == len(added)
    assert sum("tiktoken" in manifest.models[n].files for n in added) == 5


def test_tiktoken_files_load_as_their_library_reads_them(zoo):
    # p50k_base: <|endoftext|> sits in a gap of the ranks, the whitespace tokens after it.
    p50k = load_vocab(zoo("p50k-base").files["tiktoken"])
    assert detect_format(zoo("p50k-base").files["tiktoken"]) == "tiktoken"
    assert p50k.tokens[50256] == "<|endoftext|>" and p50k.token_types[50256] == TokenType.CONTROL
    assert p50k.tokens[50257] == "ĠĠ" and p50k.special_ids == {"eos": 50256}
    # Whisper's plain rank file: GPT-2's regex and <|endoftext|> after the last rank are assumed,
    # and its rank 50256 is the empty string, as tiktoken reads "=".
    whisper = load_vocab(zoo("whisper-multilingual").files["tiktoken"])
    assert whisper.tokens[50256] == "" and whisper.tokens[50257] == "<|endoftext|>"
    assert "GPT-2's regex" in whisper.extra["tiktoken"]["assumed"]
    # Tekken: 1,000 special ids first, rank 0 at id 1000.
    tekken = load_vocab(zoo("tekken").files["tiktoken"])
    assert tekken.tokens[:3] == ["<unk>", "<s>", "</s>"] and tekken.tokens[1000] == "Ā"
    assert tekken.special_ids == {"unk": 0, "bos": 1, "eos": 2}


@pytest.mark.parametrize("model", ["p50k-base", "tekken"])
def test_compare_judges_tiktoken_models_by_tiktoken(model, zoo, tmp_path):
    zoo(model)
    out = tmp_path / "out"
    proc = _cli("compare", model, "-c", "edge", "-q", "-o", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    runs = json.loads((out / "summary.json").read_text())["runs"]
    # (tekken is Mistral's file: mistral-common, its own library, is judged on it too)
    assert [(r["oracle"], r["backend"], r["cases"], r["mismatches"]) for r in runs] == [("tiktoken", "ref", 884, 0)] + \
        ([("tiktoken", "mistral-common", 884, 0)] if model == "tekken" else [])


def test_inspect_shows_a_tiktoken_file(zoo):
    zoo("whisper-multilingual")
    proc = _cli("inspect", "whisper-multilingual", "--json", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert '"tiktoken"' in proc.stdout and "0b12b4cf7613a830" in proc.stdout


def test_a_broken_rank_file_is_one_line_and_status_2(tmp_path):
    bad = tmp_path / "bad.tiktoken"
    bad.write_text("IQ== 0\nIg== 1\nnot base64! 2\n")
    proc = _cli("inspect", str(bad), timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.startswith("tokparity: error: ") and "bad.tiktoken" in proc.stderr
    assert "line 3" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_llama_cpp_gpt4o_regex_is_a_reviewed_divergence(zoo, tmp_path):
    """llama.cpp on gpt4o's derived GGUF splits combining marks off their words (its 'gpt-4o' regex
    drops \\p{M}); the shipped list explains every such case, so the run passes."""
    zoo("gpt4o")
    out = tmp_path / "out"
    proc = _cli("compare", "gpt4o", "-c", "multilingual", "-b", "ref", "-b", "llama.cpp", "-q", "-o", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    runs = {r["backend"]: r for r in summary["runs"]}
    assert runs["ref"]["mismatches"] == 0
    assert runs["llama.cpp"]["mismatches"] > 20 and runs["llama.cpp"]["unexplained"] == 0
    assert summary["known"]["used"]["llama-cpp-gpt4o-regex-drops-combining-marks"] == runs["llama.cpp"]["mismatches"]
