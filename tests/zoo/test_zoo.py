"""The zoo: manifest, resolution of MODEL arguments, fetch with sha256 pinning, Hub errors."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest
from zoo_params import ZOO_MODELS

from tokparity.errors import FetchError, TokparityError
from tokparity.vocab import load_vocab
from tokparity.zoo import load_manifest, resolve_model
from tokparity.zoo.fetch import fetch_files, is_cached
from tokparity.zoo.golden import read_golden


def test_manifest_has_the_design_card_models():
    m = load_manifest()
    assert len(m.models) >= 20
    for name in ("llama-spm", "phi-3", "baichuan", "nomic-bert-moe", "gemma-4", "bert-bge", "llama-bpe", "qwen2",
                 "qwen35", "gpt-2", "falcon", "deepseek-llm", "deepseek-coder", "starcoder", "refact", "mpt",
                 "command-r", "aquila", "gpt-neox", "botchan-unigram", "botchan-bpe", "kyoto-ja-unigram",
                 "gemma-3", "qwen3", "lenml-llama2"):
        assert name in m.models
    for model in m.models.values():
        for f in model.files.values():
            assert len(f.sha256) == 64 and f.source in m.sources


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in ZOO_MODELS])
def test_every_zoo_model_loads_as_the_manifest_says(name, zoo):
    model = zoo(name)
    assert model.missing == {}
    manifest_model = load_manifest().models[name]
    for role in ("gguf", "spm_model", "tokenizer_json", "tiktoken", "rwkv_vocab"):
        if role in model.files:
            vocab = load_vocab(model.files[role])
            # An RWKV World GGUF is padded to the models' 65,536 tokens, as llama.cpp's converter pads it.
            tokens = 65536 if vocab.algorithm == "rwkv" and role in model.derived else manifest_model.tokens
            assert (vocab.algorithm, vocab.size) == (manifest_model.algorithm, tokens)
    if "golden_out" in model.files:
        cases = read_golden(model.files["golden_inp"], model.files["golden_out"])
        assert len(cases) >= 46 and cases[0].text == "ied 4 ½ months"


def test_fetch_verifies_and_caches_a_real_sdist(tmp_path, monkeypatch):
    """A real `pip download` of the sentencepiece sdist into an empty cache."""
    monkeypatch.setenv("TOKPARITY_CACHE", str(tmp_path))
    model = load_manifest().models["botchan-unigram"]
    assert not is_cached(model.files["spm_model"])
    messages = []
    fetch_files(model.files.values(), log=messages.append)
    assert is_cached(model.files["spm_model"])
    assert (tmp_path / "zoo" / "sentencepiece" / "test" / "botchan_en_unigram_1000.model").stat().st_size == 253152
    assert messages[0] == "fetching sentencepiece==0.2.3 from pypi ..."
    assert not list((tmp_path / "downloads").iterdir())  # the archive is not kept

    # A file whose pinned sha256 does not match is refused and never cached.
    manifest = load_manifest()
    bad_file = dataclasses.replace(manifest.models["kyoto-ja-unigram"].files["spm_model"], sha256="0" * 64)
    bad_model = dataclasses.replace(manifest.models["kyoto-ja-unigram"], files={"spm_model": bad_file})
    bad = dataclasses.replace(manifest, models={"kyoto-ja-unigram": bad_model}, texts={})
    (tmp_path / "zoo" / "sentencepiece" / "test" / "kyoto_ja_unigram_8000.model").unlink()
    with pytest.raises(FetchError, match=r"kyoto_ja_unigram_8000.model: sha256 e39551e7.* differs from the pinned 0{64}"):
        fetch_files([bad_file], bad, log=lambda m: None)
    assert not (tmp_path / "zoo" / "sentencepiece" / "test" / "kyoto_ja_unigram_8000.model").exists()


def test_local_paths_are_models(zoo, tmp_path):
    gguf = zoo("llama-spm").files["gguf"]
    local = resolve_model(str(gguf))
    assert local.origin == "local" and local.name == "llama-spm"
    assert set(local.files) == {"gguf", "golden_inp", "golden_out"}  # the .inp/.out beside it are found
    folder = zoo("gemma-3").files["tokenizer_json"].parent
    assert set(resolve_model(str(folder)).files) == {"tokenizer_json", "tokenizer_config"}
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(TokparityError, match="no .gguf, .model or tokenizer.json in this folder"):
        resolve_model(str(empty))


def test_hub_model_offline_is_a_clear_error(monkeypatch):
    """Here the Hub is unreachable: hf:ORG/NAME must fail with one clear sentence."""
    pytest.importorskip("huggingface_hub", reason="huggingface_hub is not installed (pip install 'tokparity[hf]')")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(TokparityError) as e:
        resolve_model("hf:google/gemma-3-1b-it")
    message = str(e.value)
    assert message.startswith("hf:google/gemma-3-1b-it: cannot get tokenizer.json from the Hugging Face Hub")
    assert "pass their folder instead" in message and "\n" not in message

    # Without HF_HUB_OFFLINE the same, in seconds rather than after the Hub client's retries.
    monkeypatch.delenv("HF_HUB_OFFLINE")
    with pytest.raises(TokparityError) as e:
        resolve_model("hf:google/gemma-3-1b-it")
    assert str(e.value).startswith("hf:google/gemma-3-1b-it: cannot reach the Hugging Face Hub at huggingface.co")


@pytest.mark.parametrize("endpoint", ["http://[", "http://hub:99999", "http://hub:port", "http://user:s3cret@[::1"])
def test_an_hf_endpoint_that_is_no_url_is_one_line(monkeypatch, endpoint):
    """``HF_ENDPOINT='http://['`` was a ValueError traceback (issue: hostile input, round 3)."""
    pytest.importorskip("huggingface_hub", reason="huggingface_hub is not installed (pip install 'tokparity[hf]')")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    with pytest.raises(TokparityError, match=r"^HF_ENDPOINT='.*': not a URL \(.*\); set it to the Hub's address") as e:
        resolve_model("hf:google/gemma-3-1b-it")
    assert "s3cret" not in str(e.value)  # (a password in the address is never said: a hostile-input helper's find)


@pytest.mark.parametrize("endpoint", ["not-a-url", "ftp://hub", "https://", "user:s3cret@hub"])
def test_an_hf_endpoint_without_a_scheme_or_host_is_said_so(monkeypatch, endpoint):
    """``HF_ENDPOINT=not-a-url`` was blamed on huggingface.co (a sixteenth hostile campaign's find)."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    with pytest.raises(TokparityError, match=r"^HF_ENDPOINT='.*': not an http\(s\) URL with a host") as e:
        resolve_model("hf:google/gemma-3-1b-it")
    assert "s3cret" not in str(e.value) and "huggingface.co at" not in str(e.value)


def test_cli_zoo_list_and_path(zoo):
    zoo("llama-spm")
    proc = subprocess.run([sys.executable, "-m", "tokparity.cli", "zoo", "list", "--json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in json.loads(proc.stdout)}
    assert len(rows) >= 20
    assert rows["gemma-4"]["vocab_size"] == 262144 and rows["gemma-4"]["algorithm"] == "bpe"
    assert rows["llama-spm"]["cached"] is True
    proc = subprocess.run([sys.executable, "-m", "tokparity.cli", "zoo", "path", "llama-spm", "--role", "gguf"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == str(zoo("llama-spm").files["gguf"])


@pytest.mark.parametrize("mode", ["silent", "drip"])
def test_a_hub_that_never_answers_or_drips_is_stopped(monkeypatch, mode):
    """``hf:`` against a loopback server that never answers failed after 397 s, and one that drips a
    byte every few seconds hung (issue: hostile input, round 3). The download runs in a child that
    is stopped after ``HUB_SECONDS`` (5 here)."""
    import socket
    import threading
    import time

    import tokparity.zoo as zoo_module

    pytest.importorskip("huggingface_hub", reason="huggingface_hub is not installed (pip install 'tokparity[hf]')")
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        held = []
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            held.append(conn)
            if mode == "drip":
                conn.settimeout(0.2)
                threading.Thread(target=drip, args=(conn,), daemon=True).start()
        for conn in held:
            conn.close()

    def drip(conn: socket.socket) -> None:
        try:
            conn.recv(65536)
            while not stop.is_set():
                conn.send(b"H")
                time.sleep(1.0)
        except OSError:
            pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.getsockname()[1]}")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(zoo_module, "HUB_SECONDS", 5.0)
    started = time.monotonic()
    try:
        with pytest.raises(TokparityError, match=r"^hf:org/name: cannot get tokenizer.json from the Hugging Face Hub "):
            resolve_model("hf:org/name")
    finally:
        stop.set()
        thread.join(5)
        server.close()
    assert time.monotonic() - started < 20
