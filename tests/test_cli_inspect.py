"""`tokparity inspect`, as a user runs it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tokparity.cli", *args], capture_output=True, text=True, timeout=120)


def test_inspect_gemma4_text(zoo):
    zoo("gemma-4")
    proc = run("inspect", "gemma-4")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "algorithm      bpe (tokenizer.ggml.model=gemma4)" in out
    assert "vocab size     262,144" in out
    assert "token types    normal 261,864 · byte 256 · control 17 · user_defined 7" in out
    assert "special ids    bos 2 '<bos>' · eos 1 '<eos>' · unk 3 '<unk>' · pad 0 '<pad>' · mask 4 '<mask>'" in out
    assert "add_bos=true  add_eos=–  add_space_prefix=false" in out
    assert "merges         514,906" in out
    assert "fingerprint    ad1743067e2d79ff" in out


def test_inspect_json_two_files_same_vocabulary(zoo):
    zoo("llama-bpe")
    proc = run("inspect", "llama-bpe", "--json")
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    assert [f["role"] for f in info["files"]] == ["gguf", "tokenizer_json"]
    assert info["same_vocabulary"]["same"] is True
    gguf = info["files"][0]
    assert gguf["pre_tokenizer"] == "llama-bpe" and gguf["vocab_size"] == 128256 and gguf["merges"] == 280147
    assert gguf["special_ids"]["bos"] == {"id": 128000, "text": "<|begin_of_text|>"}


def test_inspect_ugm_charsmap_and_flags(zoo):
    zoo("kyoto-ja-unigram")
    info = json.loads(run("inspect", "kyoto-ja-unigram", "--json").stdout)
    f = info["files"][0]
    assert (f["algorithm"], f["precompiled_charsmap_bytes"], f["normalizer"]) == ("ugm", 237484, "nfkc")
    assert f["flags"]["add_space_prefix"] is True and f["flags"]["remove_extra_whitespaces"] is True


def test_inspect_names_the_chat_template_ops_chat_renders(zoo):
    """tekken's template is a file of its own, beside the tiktoken file (whose block shows none):
    the model's line names the file `--ops chat` renders; a model without one shows a dash."""
    zoo("tekken")
    proc = run("inspect", "tekken")
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("  chat template (--ops chat):"))
    assert line.endswith("Mistral-Nemo-Instruct-2407.jinja (default 3,945 chars)"), line
    zoo("kyoto-ja-unigram")
    info = json.loads(run("inspect", "kyoto-ja-unigram", "--json").stdout)
    assert info["chat_template"] is None


def test_inspect_spells_out_control_characters_from_files(zoo, tmp_path):
    """A folder name (or any text a file gives) holding ESC[2J or an OSC 52 clipboard write is shown
    spelled out, as compare's and explain's reports show it: the terminal is never driven."""
    folder = tmp_path / "m\x1b[2J\x1b]52;c;cHduZWQ=\x07"
    folder.mkdir()
    shutil.copyfile(zoo("qwen3").path("tokenizer_json"), folder / "tokenizer.json")
    proc = run("inspect", str(folder))
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert "m<0x1B>[2J<0x1B>]52;c;cHduZWQ=<0x07>" in proc.stdout
